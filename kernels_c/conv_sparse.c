/* Sparse 1x1 CONV_2D filters; see conv_sparse.h. */
#include "conv_sparse.h"

#include <string.h>

#include "tflm_compiler.h"
#include "tflm_quant.h"

/* Output pixels walked together per pass over a channel's tokens (accumulators held in
 * registers). */
#define SPARSE_PIXELS 4

static uint32_t read_u32(const uint8_t *s) {
  return (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
}

/* The int16 values per input channel in scratch: the pixels rounded up to even, so that
 * every pair of pixels from an even one is an aligned word. */
static int32_t row_stride(int32_t pixels) { return (pixels + 1) & ~1; }

/* Opens the reader on a stream (no token read yet); 0 when the header's W and t give no
 * token (W outside 8 .. 16, t outside 1 .. 128). */
static int32_t reader_open(tflm_conv_sparse_reader_t *r, const uint8_t *s, int32_t step) {
  int32_t gaps;
  r->width = s[2];
  r->floor = s[3];
  r->values = 257 - 2 * r->floor;
  r->next = s + TFLM_CONV_SPARSE_HEADER_BYTES;
  r->buffer = 0;
  r->bits = 0;
  r->position = 0;
  r->at = 0;
  r->weight = 0;
  r->step = step;
  r->gap_codes = 0; /* a stream refused below reads as all skips, never as weights */
  r->skip_step = 0;
  if (r->width < 8 || r->width > 16 || r->floor < 1 || r->floor > 128) return 0;
  gaps = (((int32_t)1 << r->width) - 1) / r->values;
  r->gap_codes = gaps * r->values;
  r->skip_step = gaps * step;
  return gaps >= 1;
}

/* Reads the next token of `r`'s stream (its fixed fields) from the state held by the
 * caller (in registers once inlined).  The 16-bit refill never runs past the payload of a
 * stream check_stream accepted. */
static TFLM_ALWAYS_INLINE void read_token(const tflm_conv_sparse_reader_t *r, const uint8_t **next,
                                          uint32_t *buffer, int32_t *bits, int32_t *position,
                                          int32_t *at, int32_t *weight) {
  int32_t code;
  if (*bits < r->width) {
    *buffer |= ((uint32_t)(*next)[0] | (uint32_t)(*next)[1] << 8) << *bits;
    *next += 2;
    *bits += 16;
  }
  code = (int32_t)(*buffer & (((uint32_t)1 << r->width) - 1u));
  *buffer >>= r->width;
  *bits -= r->width;
  if (code >= r->gap_codes) {
    *position += (code - r->gap_codes + 1) * r->skip_step;
    *at = *position;
    *weight = 0;
  } else {
    const int32_t gap = (int32_t)((uint32_t)code / (uint32_t)r->values);
    /* index i is the weight t + i, wrapped to int8 */
    *weight = (int8_t)(uint8_t)(uint32_t)(code - gap * r->values + r->floor);
    *at = *position + gap * r->step;
    *position = *at + r->step;
  }
}

TFLM_NOINLINE int32_t tflm_conv_sparse_list(tflm_conv_sparse_reader_t *r, int32_t end,
                                           uint32_t *list) {
  const tflm_conv_sparse_reader_t codes = *r; /* a copy: the list's stores cannot change it */
  const uint8_t *next = r->next;
  uint32_t buffer = r->buffer, *out = list;
  int32_t bits = r->bits, position = r->position, at = r->at, weight = r->weight;
  while (at < end) {
    if (weight != 0) *out++ = (uint32_t)at << 16 | (uint16_t)weight;
    read_token(&codes, &next, &buffer, &bits, &position, &at, &weight);
  }
  r->next = next;
  r->buffer = buffer;
  r->bits = bits;
  r->position = position - end;
  r->at = at - end;
  r->weight = weight;
  return (int32_t)(out - list);
}

/* Checks a whole stream for a [channels, row] filter: the header, every token read inside
 * the payload, the last one reaching C * R (which stops the kernel), the payload's length. */
static tflm_status_t check_stream(const uint8_t *s, uint32_t length, int32_t channels,
                                  int32_t row) {
  tflm_conv_sparse_reader_t r;
  const uint8_t *end = s + length;
  const int64_t total = (int64_t)channels * row;
  if (length < TFLM_CONV_SPARSE_HEADER_BYTES || s[0] != TFLM_CONV_SPARSE || s[1] != 0 ||
      read_u32(s + 4) != (uint32_t)channels || read_u32(s + 8) != (uint32_t)row ||
      read_u32(s + 12) != length - TFLM_CONV_SPARSE_HEADER_BYTES || (length & 1u) != 0 ||
      total > 0x3fffffff || !reader_open(&r, s, 1)) {
    return TFLM_ERR_MODEL;
  }
  do {
    if (r.bits < r.width && end - r.next < 2) return TFLM_ERR_MODEL;
    read_token(&r, &r.next, &r.buffer, &r.bits, &r.position, &r.at, &r.weight);
  } while (r.at < total);
  return TFLM_OK;
}

uint32_t tflm_conv_sparse_scratch_bytes(const tflm_conv_params_t *p) {
  const int32_t pixels = p->output_h * p->output_w;
  return 2u * (uint32_t)(p->input_c + 1) * (uint32_t)row_stride(pixels) +
         4u * (uint32_t)(p->input_c + pixels);
}

static int32_t sparse_node(tflm_context_t *ctx, const tflm_node_t *node) {
  tflm_coded_t coded;
  return tflm_node_coded_input(ctx, node, 1, &coded) &&
         coded.bytes >= TFLM_CONV_SPARSE_HEADER_BYTES &&
         ((const uint8_t *)coded.data)[0] == TFLM_CONV_SPARSE;
}

tflm_status_t tflm_conv_sparse_prepare(tflm_context_t *ctx, const tflm_node_t *node,
                                       tflm_conv_params_t *p) {
  tflm_coded_t coded;
  int32_t handle = -1;
  tflm_status_t status;
  if (!sparse_node(ctx, node)) return TFLM_OK;
  (void)tflm_node_coded_input(ctx, node, 1, &coded);
  TFLM_KERNEL_CHECK(ctx, node,
                    p->type == TFLM_TYPE_INT8 && p->filter_h == 1 && p->filter_w == 1 &&
                        p->stride_h == 1 && p->stride_w == 1 && p->pad_h == 0 &&
                        p->pad_w == 0 && p->filter_c == p->input_c &&
                        p->output_h == p->input_h && p->output_w == p->input_w,
                    TFLM_ERR_MODEL);
  TFLM_KERNEL_CHECK(ctx, node,
                    check_stream((const uint8_t *)coded.data, coded.bytes, p->output_c,
                                 p->input_c) == TFLM_OK &&
                        2 * (int64_t)(p->input_c + 1) * row_stride(p->output_h * p->output_w) <=
                            TFLM_CONV_SPARSE_MAX_OFFSET,
                    TFLM_ERR_MODEL);
  status = tflm_request_scratch(ctx, tflm_conv_sparse_scratch_bytes(p), &handle);
  if (status != TFLM_OK) return status;
  p->decode_scratch = (int16_t)TFLM_CONV_SPARSE_SCRATCH(handle);
  return TFLM_OK;
}

/* x[i * row_stride + p] = input[p * depth + i] + offset: the inputs of each input channel
 * contiguous over the pixels. */
static void widen_inputs(const int8_t *input, int32_t pixels, int32_t depth, int32_t offset,
                         int16_t *x) {
  const int32_t stride = row_stride(pixels);
  int32_t p, i;
  for (p = 0; p < pixels; ++p, input += depth) {
    for (i = 0; i < depth; ++i) x[i * stride + p] = (int16_t)(input[i] + offset);
  }
}

/* The int16 inputs of two consecutive pixels at x (4-byte aligned) as one word. */
static inline uint32_t two_inputs(const int16_t *x) {
  uint32_t word;
  memcpy(&word, x, sizeof(word));
  return word;
}

/* The input row of a list entry: x plus the byte offset in its high halfword. */
static inline const int16_t *entry_row(const int16_t *x, uint32_t entry) {
  return (const int16_t *)(const void *)((const uint8_t *)x + (entry >> 16));
}

/* The weight of a list entry (its low halfword) times the low / high input of `word`. */
#define SPARSE_LOW(word, entry) ((int32_t)(int16_t)(uint16_t)(word) * (int16_t)(uint16_t)(entry))
#define SPARSE_HIGH(word, entry) (((int32_t)(word) >> 16) * (int16_t)(uint16_t)(entry))

void tflm_conv_sparse_quads(const uint32_t *list, int32_t count, const int16_t *x,
                            int32_t quads, uint32_t start, uint32_t *sums) {
  const uint32_t *end = list + count;
  for (; quads > 0; --quads, x += SPARSE_PIXELS, sums += SPARSE_PIXELS) {
    uint32_t a0 = start, a1 = start, a2 = start, a3 = start;
    const uint32_t *e;
    for (e = list; e != end; ++e) {
      const uint32_t entry = *e;
      const int16_t *q = entry_row(x, entry);
      const uint32_t lo = two_inputs(q), hi = two_inputs(q + 2);
      a0 += (uint32_t)SPARSE_LOW(lo, entry);
      a1 += (uint32_t)SPARSE_HIGH(lo, entry);
      a2 += (uint32_t)SPARSE_LOW(hi, entry);
      a3 += (uint32_t)SPARSE_HIGH(hi, entry);
    }
    sums[0] = a0;
    sums[1] = a1;
    sums[2] = a2;
    sums[3] = a3;
  }
}

/* The list's weights times the inputs of one pixel from x, plus `start`. */
uint32_t tflm_conv_sparse_one(const uint32_t *list, int32_t count, const int16_t *x,
                              uint32_t start) {
  int32_t t;
  for (t = 0; t < count; ++t) {
    start += (uint32_t)((int32_t)*entry_row(x, list[t]) * (int16_t)(uint16_t)list[t]);
  }
  return start;
}

void tflm_conv_sparse_sums(const uint32_t *list, int32_t count, const int16_t *x,
                           int32_t pixels, uint32_t start, uint32_t *sums) {
  int32_t pixel = pixels - pixels % SPARSE_PIXELS;
  if (pixel > 0) tflm_conv_sparse_quads(list, count, x, pixels / SPARSE_PIXELS, start, sums);
  for (; pixel < pixels; ++pixel) {
    sums[pixel] = tflm_conv_sparse_one(list, count, x + pixel, start);
  }
}

void tflm_conv_sparse_store(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                            int32_t oc, const uint32_t *sums, int32_t pixels, int8_t *out) {
  const int32_t multiplier = requant->multipliers[oc], shift = requant->shifts[oc];
  int32_t pixel;
  for (pixel = 0; pixel < pixels; ++pixel) {
    out[pixel * p->output_c] = (int8_t)tflm_requantize(
        (int32_t)sums[pixel], multiplier, shift, p->output_offset, p->act_min, p->act_max);
  }
}

const tflm_conv_sparse_kernels_t tflm_conv_sparse_portable = {tflm_conv_sparse_list,
                                                              tflm_conv_sparse_sums,
                                                              tflm_conv_sparse_store};

tflm_status_t tflm_conv_sparse_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                                    const tflm_conv_sparse_kernels_t *kernels) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  const int32_t pixels = p->output_h * p->output_w, stride = row_stride(pixels);
  const int32_t row = p->input_c;
  const int32_t *bias = (const int32_t *)call->data.bias;
  int16_t *x = (int16_t *)tflm_get_scratch(ctx, TFLM_CONV_SPARSE_SCRATCH(p->decode_scratch));
  uint32_t *list = (uint32_t *)(void *)(x + (row + 1) * stride), *sums = list + row;
  tflm_coded_t coded;
  int32_t b, oc;
  TFLM_KERNEL_CHECK(ctx, call->node,
                    x != NULL && tflm_node_coded_input(ctx, call->node, 1, &coded),
                    TFLM_ERR_MODEL);
  for (b = 0; b < p->batches; ++b) {
    tflm_conv_sparse_reader_t r;
    int8_t *out = (int8_t *)call->data.output + b * pixels * p->output_c;
    (void)reader_open(&r, (const uint8_t *)coded.data, 2 * stride); /* byte offsets */
    read_token(&r, &r.next, &r.buffer, &r.bits, &r.position, &r.at, &r.weight);
    widen_inputs((const int8_t *)call->data.input + b * pixels * row, pixels, row,
                 p->input_offset, x);
    for (oc = 0; oc < p->output_c; ++oc) {
      const int32_t count = kernels->list(&r, 2 * row * stride, list);
      kernels->sums(list, count, x, pixels, bias != NULL ? (uint32_t)bias[oc] : 0u, sums);
      kernels->store(p, &call->requant, oc, sums, pixels, out + oc);
    }
  }
  return TFLM_OK;
}
