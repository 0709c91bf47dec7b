/* tflm-op: CONV_2D tflm_op_conv_2d types: float32,int8,int16 litert: hybrid */
/* CONV_2D for the cmsis tag: int8 convolutions as a matrix product over patches.
 *
 * Each output pixel's receptive field (its "patch", FH * FW * Cin int8 values in the filter's
 * order) is either read in place (1x1 filters without padding) or gathered into the scratch
 * buffer, padding taps filled with the input zero point so that they add exactly 0, as the
 * reference's skipped taps do.  Then per instruction set (cmsis_simd.h):
 *   MVE  4 patches x 1 output channel per pass, 16 MACs per VMLADAVA, the 4 results
 *        requantised at once (cmsis_mve_requantize) and scattered to the 4 pixels;
 *   DSP  2 patches widened to int16 (offset added) x 2 output channels, SMLAD, both
 *        pixels held in registers while each weight word is expanded once
 *        (cmsis_dot_2x2_held, 17 instructions per 16 MACs); 4 channels per pass, each
 *        pixel's 4 bytes requantised and clamped in one word, when every shift suits
 *        cmsis_requantize_wide, else 2;
 *   C    1 patch x 1 output channel.
 * With the offline layout the generator writes into the model (tflm_gen/layout.py, read
 * through tflm_node_layout): every sum starts at a folded constant bias + input_offset *
 * sum(w), so patches are read raw, and
 *   MVE  patches of up to 32 bytes (narrow 1x1 layers) stay in vector registers over
 *        every output channel (short_patches); longer ones run every channel of their 4
 *        patches in one call (long_patches), without the weight sums;
 *   DSP  the filter is int16 in channel pairs, no SXTB16 on weights: 16 channels of 2
 *        pixels per call (cmsis_dot_pairs, 12 instructions per 16 MACs);
 *   C    1 patch x 1 channel pair over the same int16 stream (the host build's path).
 * When the record also carries the requantisation tail (CONV_INT16_PAIRS_REQUANT: doubled
 * weights, and per channel the constants of cmsis_requantize_folded, exact by the
 * generator's proof, checked against the node by tail_agrees):
 *   DSP  every channel pair of 4 pixels of a 1x1 layer summed, requantised (SMMLAR, ADD,
 *        ASR, SSAT per output) and stored by one call (cmsis_dot_pairs_requant4: 8
 *        accumulators, 16 MACs in 16 or 17 cycles, no sums in memory); of 3 pixels
 *        (cmsis_dot_pairs_requant3: 6 accumulators, 12 MACs in 12 or 13 cycles) for the
 *        pixels left and other layers when patches are read in place or their filter
 *        rows are whole words, widened straight from the image (widen_three); the last
 *        one or two pixels, and other layers, 2 pixels at a time (cmsis_dot_pairs_requant,
 *        windows inside the image whose filter rows are whole words widened straight from
 *        it: widen_pixels);
 *   C    the same requantisation in C (cmsis_requantize_folded).
 * 1x1 layers over K a multiple of 4 (but conv_narrow.h's) get CONV_PAIR_RECORDS instead:
 * each channel pair's folded constants, weights and requantisation in one record, read by
 * one pointer (cmsis_dot_records4 four pixels at a time, whose loop ends on a marked word
 * after the weights and whose pairs end on the last one's mark; cmsis_dot_records1 for
 * the pixels left; C: records_pixels).
 * 1x1 layers of 8 -> 16, 16 -> 32 and 32 -> 32 channels (vww's and person_detect's early
 * layers) run conv_narrow.h's kernels instead: K = 8 the pixel pair widened in registers
 * over every channel, unrolled; K = 16, 32 four pixels x 2 channels per pass.
 * Integer sums are exact, so every order gives the reference's result.  Grouped int8
 * convolutions and the float32 / int16 types run the reference kernels (conv_reference.c).
 *
 * Scratch: 6 * round4(FH * FW * Cin) bytes for every int8 convolution, 8 * for 1x1 ones,
 * whatever the instruction set (DSP: two int8 patches + the pair widened to int16, or
 * three patches widened, or four for 1x1 layers; MVE: four int8 patches; C: one). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cmsis_conv_sparse.h"
#include "cmsis_simd.h"
#include "conv_common.h"
#include "conv_hybrid.h"
#include "conv_reference.h"
#include "tflm_decode.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "weighted_common.h"

/* Persistent block of the tag, in node->user_data.  The shared block's address is kept in
 * a 64-bit integer so the struct is 16 bytes on every target. */
typedef struct {
  uint64_t shared;  /* address of the tflm_conv_params_t made by tflm_conv_prepare */
  int16_t scratch;  /* scratch handle; -1 when the reference kernels run */
  int16_t tail_ok;  /* 1: the layout's requantisation tail is the node's (tail_agrees, run
                       once by prepare: over every channel it cost more than a layer's
                       stores) */
  int32_t patch;    /* FH * FW * Cin: the length of one patch */
} cmsis_conv_node_t;

/* Everything one int8 evaluation needs. */
typedef struct {
  const tflm_conv_params_t *p;
  tflm_requant_t requant;
  const int8_t *image;   /* the current batch of the input */
  const int8_t *filter;
  const int32_t *bias;   /* NULL when absent */
  int8_t *output;        /* the current batch of the output */
  int8_t *scratch;
  int32_t patch;         /* patch length */
  int32_t in_place;      /* 1: patches are read from the input (1x1, no padding) */
  int32_t fast;          /* CMSIS_REQUANT_FAST, _WIDE or 0: the requantisation that is
                            exact for every channel (cmsis_requant_mode) */
  const int32_t *folded; /* offline layout (tflm_gen/layout.py), NULL when absent: per
                            channel bias + input_offset * sum(w); the input is then read raw */
  const int16_t *pairs;  /* its int16 filter, channel pairs interleaved (CONV_INT16_PAIRS) */
  int32_t pair_stride;   /* int16 values per channel pair in `pairs` */
  const int32_t *tail;   /* CONV_INT16_PAIRS_REQUANT's requantisation per channel pair, NULL
                            when absent or not this node's (tail_agrees) */
  int32_t records;       /* 1: CONV_PAIR_RECORDS: `pairs` holds each pair's folded, weights
                            and tail words (pair_records_agree); tail is NULL */
  int32_t in_filter;     /* 1: `filter` holds the record's int16 stream, no int8 bytes */
  int32_t band;          /* 1: CONV_RGB_BAND: `pairs` is its band kernel's weights, `tail`
                            right after them (conv_narrow.h; rgb_band_dot in C) */
  int32_t channels;      /* output channels computed: all, or one decoded block's */
  int32_t stride;        /* output channels per pixel (Cout) */
} cmsis_conv_job_t;

/* The kinds of CONV_2D layout record this kernel reads (tflm_gen/layout.py). */
#define CMSIS_CONV_INT16_PAIRS 1
#define CMSIS_CONV_INT16_PAIRS_REQUANT 2
#define CMSIS_CONV_CODED_REQUANT 20 /* a coded filter's requantisation tail alone */
/* Kinds 41 and 42 are kinds 1 and 2 whose int16 stream the filter's buffer holds instead
 * of its int8 bytes (a project for a DSP core): the kernel must read the stream or fail. */
#define CMSIS_CONV_IN_FILTER 40
/* Kind 43: kind, channels, K and the folded constants only, what the MVE loops read (a
 * project for an MVE core); the other builds ignore it and run on the int8 filter. */
#define CMSIS_CONV_FOLDED 43
/* Kind 70: per channel pair its doubled folded constants, weights and tail words in one
 * record (1x1 layers, K a multiple of 4); kind 71 the same whose records the filter's
 * buffer holds. */
#define CMSIS_CONV_PAIR_RECORDS 70
#define CMSIS_CONV_PAIR_RECORDS_IN_FILTER 71
/* Kind 80: kind 2 of a 3x3x3 -> 8 layer of stride 2 and dilation 1 whose weights are
 * re-laid for conv_narrow_rgb_bands, the tail right after them (a DSP core's project);
 * kind 81 the same whose weights and tail the filter's buffer holds. */
#define CMSIS_CONV_RGB_BAND 80
#define CMSIS_CONV_RGB_BAND_IN_FILTER 81
/* Words around a pair's weights in a CONV_PAIR_RECORDS record, and the marks of its shift
 * words (tflm_gen/layout.py PAIR_MARK). */
#define CMSIS_RECORD_EXTRA 8
#define CMSIS_PAIR_MARK 0x40000000
#if defined(CMSIS_MVE)
#define CMSIS_CONV_READS_STREAM 0 /* MVE's loops read the int8 filter with the constants */
#else
#define CMSIS_CONV_READS_STREAM 1
#endif

/* Patch-sized rows of scratch an int8 convolution takes (see the top): 8 for 1x1 filters
 * (four patches widened, pairs_requantized4), 6 for the others.  tflm_gen/arena.py
 * (_cmsis_conv) declares the same. */
static int32_t scratch_rows(const tflm_conv_params_t *p) {
  return p->filter_h == 1 && p->filter_w == 1 ? 8 : 6;
}

/* 1 when a record of these words is one whose stream the filter holds. */
static int32_t stream_in_filter(const int32_t *record, int32_t words) {
  return record != NULL && words >= 1 &&
         (record[0] == CMSIS_CONV_IN_FILTER + CMSIS_CONV_INT16_PAIRS ||
          record[0] == CMSIS_CONV_IN_FILTER + CMSIS_CONV_INT16_PAIRS_REQUANT ||
          record[0] == CMSIS_CONV_PAIR_RECORDS_IN_FILTER ||
          record[0] == CMSIS_CONV_RGB_BAND_IN_FILTER);
}

static int32_t filter_holds_stream(tflm_context_t *ctx, const tflm_node_t *node) {
  int32_t words;
  const int32_t *record = tflm_node_layout(ctx, node, &words);
  return stream_in_filter(record, words);
}

/* int16 values per channel pair of a CONV_INT16_PAIRS stream for patch length k (rows
 * padded with zero weights to whole groups of 4). */
static int32_t pair_stride_of(int32_t k) { return 8 * ((k + 3) >> 2); }

/* 1 when the layer is one a CONV_RGB_BAND record may be for (tflm_gen/layout.py
 * _rgb_band_applies): 3x3x3 -> 8 channels, stride 2 and dilation 1 both ways. */
static int32_t rgb_band_shape(const tflm_conv_params_t *p) {
  return p->output_c == 8 && p->filter_h == 3 && p->filter_w == 3 && p->input_c == 3 &&
         p->filter_c == 3 && p->stride_h == 2 && p->stride_w == 2 && p->dilation_h == 1 &&
         p->dilation_w == 1;
}

/* Points job->folded and job->pairs at the node's layout record when it is one this
 * kernel reads and agrees with the node's shapes, and job->tail at its requantisation tail
 * when it has one (an even channel count; its pairs are then doubled weights); leaves them
 * NULL otherwise. */
static void find_layout(tflm_context_t *ctx, const tflm_node_t *node, cmsis_conv_job_t *job) {
  int32_t words;
  const int32_t *record = tflm_node_layout(ctx, node, &words);
  const int32_t cout = job->p->output_c, stride = pair_stride_of(job->patch);
  const int32_t in_filter = stream_in_filter(record, words);
  const int32_t kind = record == NULL                                ? 0
                       : record[0] == CMSIS_CONV_PAIR_RECORDS_IN_FILTER ? CMSIS_CONV_PAIR_RECORDS
                       : record[0] == CMSIS_CONV_RGB_BAND_IN_FILTER      ? CMSIS_CONV_RGB_BAND
                       : record[0] - (in_filter ? CMSIS_CONV_IN_FILTER : 0);
  int32_t records = 0;
  const int64_t plain = 3 + (int64_t)(cout + 1) / 2 * (2 + (in_filter ? 0 : stride / 2));
  job->folded = NULL;
  job->pairs = NULL;
  job->tail = NULL;
  job->records = 0;
  job->band = 0;
  job->pair_stride = stride;
  job->in_filter = in_filter;
  if (record == NULL || words < 3 || record[1] != cout || record[2] != job->patch) return;
#if defined(CMSIS_MVE)
  if (record[0] == CMSIS_CONV_FOLDED && (int64_t)words == 3 + (int64_t)(cout + 1) / 2 * 2) {
    job->folded = record + 3;
    return;
  }
#endif
  if (kind == CMSIS_CONV_PAIR_RECORDS && (cout & 1) == 0 && (job->patch & 3) == 0 &&
      job->p->filter_h == 1 && job->p->filter_w == 1 && job->p->pad_h == 0 &&
      job->p->pad_w == 0 && cout < (1 << 22) &&
      (int64_t)words == plain + (in_filter ? 0 : CMSIS_RECORD_EXTRA * (int64_t)(cout / 2))) {
    records = 1;
  } else if (kind == CMSIS_CONV_INT16_PAIRS_REQUANT && (cout & 1) == 0 &&
             (int64_t)words == plain + 4 * (int64_t)cout) {
    job->tail = record + plain;
  } else if (kind == CMSIS_CONV_RGB_BAND && rgb_band_shape(job->p) &&
             (int64_t)words == plain + (in_filter ? 0 : 4 * (int64_t)cout)) {
    job->band = 1;
  } else if (kind != CMSIS_CONV_INT16_PAIRS || (int64_t)words != plain) {
    return;
  }
  if (in_filter && ((uintptr_t)job->filter & 3u) != 0) return;
  job->folded = record + 3;
  job->pairs = in_filter ? (const int16_t *)(const void *)job->filter
                         : (const int16_t *)(const void *)(record + 3 + (cout + 1) / 2 * 2);
  job->records = records;
  if (records) job->pair_stride = 2 * CMSIS_RECORD_EXTRA + stride;
  if (job->band) job->tail = (const int32_t *)(const void *)(job->pairs + cout / 2 * stride);
}

/* Word offsets in a pair's 8 tail words (tflm_gen/layout.py): folded a, b at 0, 1, then
 * the order one LDM fills r0, r8-r12 with in cmsis_dot_pairs_requant: right shift b,
 * multiplier a, b, constant a, b, right shift a. */
#define CMSIS_TAIL_MULTIPLIER 3
#define CMSIS_TAIL_CONSTANT 5
static const int32_t tail_shift[2] = {7, 2};

/* 1 when the requantisation tail is this node's: the folded constants of the record, the
 * multipliers, shifts and output offset the runtime holds, and the whole int8 clamp range
 * (SSAT's).  A channel of multiplier 0 gives one value for every input (the constant's
 * half): the generator proved it from the accumulator's bounds (tflm_gen/layout.py,
 * _channel_requant), so only its form is checked here.  channel_agrees checks channel c's
 * words (doubled folded constant, multiplier, constant, right shift), tail_agrees every
 * channel's. */
static int32_t channel_agrees(const cmsis_conv_job_t *job, int32_t c, int32_t doubled,
                              int32_t multiplier, int32_t constant, int32_t right) {
  const uint32_t offset = (uint32_t)job->p->output_offset;
  if (job->folded != NULL && (uint32_t)doubled != 2u * (uint32_t)job->folded[c]) return 0;
  if (multiplier == 0) return right == 1 && (constant & 1) != 0;
  return multiplier == job->requant.multipliers[c] && right == -job->requant.shifts[c] &&
         right >= 1 && right <= 31 &&
         (uint32_t)constant == (1u << (right - 1)) + (offset << right);
}

static int32_t tail_agrees(const cmsis_conv_job_t *job) {
  const tflm_conv_params_t *p = job->p;
  int32_t c;
  if (p->act_min != -128 || p->act_max != 127) return 0;
  for (c = 0; c < p->output_c; ++c) {
    const int32_t *t = job->tail + 8 * (c >> 1), j = c & 1;
    if (!channel_agrees(job, c, t[j], t[CMSIS_TAIL_MULTIPLIER + j],
                        t[CMSIS_TAIL_CONSTANT + j], t[tail_shift[j]])) {
      return 0;
    }
  }
  return 1;
}

/* Word offsets in the 6 words after a CONV_PAIR_RECORDS pair's weights: constant b, right
 * shift a | mark, multiplier a, constant a, right shift b | channels << 8 | last << 31,
 * multiplier b (the order cmsis_dot_records4 loads them in). */
static const int32_t record_multiplier[2] = {2, 5}, record_constant[2] = {3, 0};
static const int32_t record_shift[2] = {1, 4};

/* tail_agrees for CONV_PAIR_RECORDS: each pair's words (job->pairs, pair_stride int16
 * values apart) and the marks its kernels read: PAIR_MARK on a's shift word, the channel
 * count and the last pair's bit on b's. */
static int32_t pair_records_agree(const cmsis_conv_job_t *job) {
  const tflm_conv_params_t *p = job->p;
  const int32_t count = p->output_c >> 1, weights = job->pair_stride / 2 - CMSIS_RECORD_EXTRA;
  int32_t pair, j;
  if (p->act_min != -128 || p->act_max != 127 || job->pairs == NULL) return 0;
  for (pair = 0; pair < count; ++pair) {
    const int32_t *r = (const int32_t *)(const void *)(job->pairs + pair * job->pair_stride);
    const int32_t *t = r + 2 + weights;
    const uint32_t mark_b = (uint32_t)p->output_c << 8 | (pair == count - 1 ? 0x80000000u : 0u);
    if (((uint32_t)t[record_shift[0]] & ~0xffu) != CMSIS_PAIR_MARK ||
        ((uint32_t)t[record_shift[1]] & ~0xffu) != mark_b) {
      return 0;
    }
    for (j = 0; j < 2; ++j) {
      if (!channel_agrees(job, 2 * pair + j, r[j], t[record_multiplier[j]],
                          t[record_constant[j]], t[record_shift[j]] & 0xff)) {
        return 0;
      }
    }
  }
  return 1;
}

/* The requantisation tail of the node's CONV_CODED_REQUANT record (a coded filter) when it
 * agrees with the node's shapes, else NULL (its requantisation: tail_agrees); never on MVE,
 * whose loops read the int8 rows. */
static const int32_t *coded_tail(tflm_context_t *ctx, const tflm_node_t *node,
                                 cmsis_conv_job_t *job) {
  int32_t words;
  const int32_t *record = tflm_node_layout(ctx, node, &words);
  const int32_t cout = job->p->output_c;
#if defined(CMSIS_MVE)
  record = NULL;
#endif
  if (record == NULL || words < 3 || record[0] != CMSIS_CONV_CODED_REQUANT ||
      record[1] != cout || record[2] != job->patch || (cout & 1) != 0 ||
      (int64_t)words != 3 + 4 * (int64_t)cout) {
    return NULL;
  }
  job->folded = NULL; /* the decoded blocks' sums check the folded constants */
  job->tail = record + 3;
  return job->tail;
}

/* memcpy for the short rows of a patch (a few to a few hundred bytes): words through
 * cmsis_read4 / cmsis_write4 (single LDR / STR), inline, where a libc call costs more than
 * the copy. */
static inline void copy_row(int8_t *dst, const int8_t *src, int32_t n) {
  for (; n >= 4; n -= 4, dst += 4, src += 4) cmsis_write4(dst, cmsis_read4(src));
  for (; n > 0; --n) *dst++ = *src++;
}

/* The first byte of the window whose top left tap (padding included) is y0, x0 in the
 * image when the whole window lies inside it with dilation_w 1 (most pixels: each filter
 * row is FW * Cin consecutive bytes), else NULL; inside_window gives it for a pixel, with
 * *y0, *x0. */
static inline __attribute__((always_inline)) const int8_t *window_at(
    const cmsis_conv_job_t *job, int32_t y0, int32_t x0) {
  const tflm_conv_params_t *p = job->p;
  if (p->dilation_w != 1 || x0 < 0 || x0 + p->filter_w > p->input_w || y0 < 0 ||
      y0 + (p->filter_h - 1) * p->dilation_h >= p->input_h) {
    return NULL;
  }
  return job->image + (y0 * p->input_w + x0) * p->input_c;
}

/* window_at for output pixel `pixel` (raster index). */
static inline __attribute__((always_inline)) const int8_t *inside_window(
    const cmsis_conv_job_t *job, int32_t pixel, int32_t *y0, int32_t *x0) {
  const tflm_conv_params_t *p = job->p;
  *y0 = (pixel / p->output_w) * p->stride_h - p->pad_h;
  *x0 = (pixel % p->output_w) * p->stride_w - p->pad_w;
  return window_at(job, *y0, *x0);
}

/* Copies the patch of output pixel `pixel` into dst, padding taps set to the zero point. */
static void gather_patch(const cmsis_conv_job_t *job, int32_t pixel, int8_t *dst) {
  const tflm_conv_params_t *p = job->p;
  const int32_t cin = p->input_c, row = p->filter_w * cin;
  const int8_t zero_point = (int8_t)-p->input_offset;
  int32_t y0, x0, fy, fx;
  const int8_t *src = inside_window(job, pixel, &y0, &x0);
  if (src != NULL) { /* whole filter rows, no per-row checks */
    const int32_t line = p->dilation_h * p->input_w * cin;
    for (fy = 0; fy < p->filter_h; ++fy, dst += row, src += line) copy_row(dst, src, row);
    return;
  }
  for (fy = 0; fy < p->filter_h; ++fy, dst += row) {
    const int32_t y = y0 + fy * p->dilation_h;
    const int8_t *line = job->image + y * p->input_w * cin;
    if (y < 0 || y >= p->input_h) {
      memset(dst, zero_point, (size_t)row);
    } else if (p->dilation_w == 1 && x0 >= 0 && x0 + p->filter_w <= p->input_w) {
      copy_row(dst, line + x0 * cin, row); /* the whole filter row is inside */
    } else {
      for (fx = 0; fx < p->filter_w; ++fx) {
        const int32_t x = x0 + fx * p->dilation_w;
        if (x < 0 || x >= p->input_w) {
          memset(dst + fx * cin, zero_point, (size_t)cin);
        } else {
          copy_row(dst + fx * cin, line + x * cin, cin);
        }
      }
    }
  }
}

/* The patch of `pixel`: in place, or gathered into scratch slot `slot`. */
static const int8_t *patch_of(const cmsis_conv_job_t *job, int32_t pixel, int32_t slot) {
  const tflm_conv_params_t *p = job->p;
  int8_t *dst;
  if (job->in_place && p->stride_h == 1 && p->stride_w == 1) {
    return job->image + pixel * p->input_c; /* 1x1, stride 1: consecutive pixels */
  }
  if (job->in_place) {
    const int32_t y = (pixel / p->output_w) * p->stride_h;
    const int32_t x = (pixel % p->output_w) * p->stride_w;
    return job->image + (y * p->input_w + x) * p->input_c;
  }
  dst = job->scratch + slot * CMSIS_ROUND4(job->patch);
  gather_patch(job, pixel, dst);
  return dst;
}

#if !defined(CMSIS_MVE) && !defined(CMSIS_DSP)
/* Bias (unless folded), requantisation and clamp of output channel oc: the int8 value. */
static int8_t finish(const cmsis_conv_job_t *job, int32_t acc, int32_t oc) {
  const tflm_conv_params_t *p = job->p;
  if (job->bias != NULL && job->folded == NULL) acc = tflm_add_wrap(acc, job->bias[oc]);
  return (int8_t)cmsis_requantize(acc, job->requant.multipliers[oc], job->requant.shifts[oc],
                                  p->output_offset, p->act_min, p->act_max);
}
#endif

#if defined(CMSIS_MVE)
/* Four pixels per pass; pixels past the end repeat the first one and are not stored.  The
 * four accumulators of one output channel are requantised together (cmsis_mve_requantize,
 * that channel's multiplier and shift in every lane) and stored with one scatter. */
/* The accumulators of 4 patches for one filter row w of n values: sum over i of
 * w[i] * (patch_j[i] + offset) + bias, as sum w * patch + offset * sum w (exact in wrapping
 * int32).  Full blocks of 16 bytes unpredicated, then one predicated tail. */
static inline __attribute__((always_inline)) int32x4_t dot4_with(
    const int8_t *p0, const int8_t *p1, const int8_t *p2, const int8_t *p3, const int8_t *w,
    int32_t n, int32_t bias, int32_t offset, int32_t sum_weights) {
  int32_t d0 = 0, d1 = 0, d2 = 0, d3 = 0, s = 0, i;
  int32x4_t sums;
  for (i = n >> 4; i > 0; --i, w += 16, p0 += 16, p1 += 16, p2 += 16, p3 += 16) {
    const int8x16_t vw = vld1q_s8(w);
    if (sum_weights) s = vaddvaq_s8(s, vw);
    d0 = vmladavaq_s8(d0, vld1q_s8(p0), vw);
    d1 = vmladavaq_s8(d1, vld1q_s8(p1), vw);
    d2 = vmladavaq_s8(d2, vld1q_s8(p2), vw);
    d3 = vmladavaq_s8(d3, vld1q_s8(p3), vw);
  }
  if (n & 15) {
    const mve_pred16_t lanes = vctp8q((uint32_t)(n & 15));
    const int8x16_t vw = vldrbq_z_s8(w, lanes);
    if (sum_weights) s = vaddvaq_s8(s, vw);
    d0 = vmladavaq_s8(d0, vldrbq_z_s8(p0, lanes), vw);
    d1 = vmladavaq_s8(d1, vldrbq_z_s8(p1, lanes), vw);
    d2 = vmladavaq_s8(d2, vldrbq_z_s8(p2, lanes), vw);
    d3 = vmladavaq_s8(d3, vldrbq_z_s8(p3, lanes), vw);
  }
  sums = vsetq_lane_s32(d3, vsetq_lane_s32(d2, vsetq_lane_s32(d1, vdupq_n_s32(d0), 1), 2), 3);
  return vaddq_n_s32(sums, (int32_t)((uint32_t)bias + (uint32_t)offset * (uint32_t)s));
}

/* dot4_with summing the weights (plain layout: bias and offset applied here). */
static __attribute__((noinline)) int32x4_t dot4(const int8_t *p0, const int8_t *p1,
                                                const int8_t *p2, const int8_t *p3,
                                                const int8_t *w, int32_t n, int32_t bias,
                                                int32_t offset) {
  return dot4_with(p0, p1, p2, p3, w, n, bias, offset, 1);
}

/* The 4 dot products of one weight block against 4 patch blocks, as one vector. */
static inline __attribute__((always_inline)) int32x4_t sums4(int8x16_t x0, int8x16_t x1,
                                                             int8x16_t x2, int8x16_t x3,
                                                             int8x16_t vw) {
  int32x4_t acc = vdupq_n_s32(vmladavq_s8(x0, vw));
  acc = vsetq_lane_s32(vmladavq_s8(x1, vw), acc, 1);
  acc = vsetq_lane_s32(vmladavq_s8(x2, vw), acc, 2);
  return vsetq_lane_s32(vmladavq_s8(x3, vw), acc, 3);
}

/* All output channels of 4 patches of at most 16 bytes (blocks == 1: narrow 1x1 layers)
 * or 32 (blocks == 2: first layers, 1x1 over 32 channels) on the folded constants: the
 * patches are loaded once into vector registers, then each channel costs its weight loads
 * and 4 VMLADAV per block, no call. */
static inline __attribute__((always_inline)) void short_patches_with(
    const cmsis_conv_job_t *job, const int8_t *const patches[4], int8_t *out, uint32x4_t rows,
    mve_pred16_t store, int32_t blocks) {
  const tflm_conv_params_t *p = job->p;
  const int32_t k = job->patch, cout = job->channels, rest = blocks == 2 ? k - 16 : 0;
  const int32_t offset = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t *multipliers = job->requant.multipliers, *shifts = job->requant.shifts;
  const int32_t *folded = job->folded;
  const mve_pred16_t lanes = vctp8q((uint32_t)(k - rest)), tail = vctp8q((uint32_t)rest);
  const int8x16_t x0 = vldrbq_z_s8(patches[0], lanes), x1 = vldrbq_z_s8(patches[1], lanes);
  const int8x16_t x2 = vldrbq_z_s8(patches[2], lanes), x3 = vldrbq_z_s8(patches[3], lanes);
  int8x16_t y0 = x0, y1 = x1, y2 = x2, y3 = x3;
  const int8_t *w = job->filter;
  int32_t oc;
  if (blocks == 2) {
    y0 = vldrbq_z_s8(patches[0] + 16, tail);
    y1 = vldrbq_z_s8(patches[1] + 16, tail);
    y2 = vldrbq_z_s8(patches[2] + 16, tail);
    y3 = vldrbq_z_s8(patches[3] + 16, tail);
  }
  for (oc = 0; oc < cout; ++oc, w += k) {
    int32x4_t acc = vaddq_n_s32(sums4(x0, x1, x2, x3, vldrbq_z_s8(w, lanes)), folded[oc]);
    if (blocks == 2) acc = vaddq_s32(acc, sums4(y0, y1, y2, y3, vldrbq_z_s8(w + 16, tail)));
    vstrbq_scatter_offset_p_s32(out + oc, rows,
                                cmsis_mve_requantize(acc, vdupq_n_s32(multipliers[oc]),
                                                     vdupq_n_s32(shifts[oc]), offset, lo, hi),
                                store);
  }
}

/* short_patches_with for patches of job->patch <= 32 bytes. */
static void short_patches(const cmsis_conv_job_t *job, const int8_t *const patches[4],
                          int8_t *out, uint32x4_t rows, mve_pred16_t store) {
  if (job->patch <= 16) {
    short_patches_with(job, patches, out, rows, store, 1);
  } else {
    short_patches_with(job, patches, out, rows, store, 2);
  }
}

/* All output channels of 4 patches of more than 32 bytes on the folded constants: the dot
 * products inline (no call per channel), the node's fields in locals (int8 stores may
 * alias them). */
static void long_patches(const cmsis_conv_job_t *job, const int8_t *const patches[4],
                         int8_t *out, uint32x4_t rows, mve_pred16_t store) {
  const tflm_conv_params_t *p = job->p;
  const int32_t k = job->patch, cout = job->channels;
  const int32_t offset = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t *multipliers = job->requant.multipliers, *shifts = job->requant.shifts;
  const int32_t *folded = job->folded;
  const int8_t *p0 = patches[0], *p1 = patches[1], *p2 = patches[2], *p3 = patches[3];
  const int8_t *w = job->filter;
  int32_t oc;
  for (oc = 0; oc < cout; ++oc, w += k) {
    const int32x4_t acc = dot4_with(p0, p1, p2, p3, w, k, folded[oc], 0, 0);
    vstrbq_scatter_offset_p_s32(out + oc, rows,
                                cmsis_mve_requantize(acc, vdupq_n_s32(multipliers[oc]),
                                                     vdupq_n_s32(shifts[oc]), offset, lo, hi),
                                store);
  }
}

#include "conv_mve.h"

static void conv_pixels(const cmsis_conv_job_t *job, int32_t pixels) {
  const tflm_conv_params_t *p = job->p;
  const int32_t k = job->patch, cout = job->channels, offset = p->input_offset;
  const int32_t stride = job->stride; /* a local: int8 stores may alias job */
  const uint32x4_t rows = vmulq_n_u32(vidupq_n_u32(0u, 1), (uint32_t)stride);
  const int8_t *patches[4];
  int32_t pixel = 0, oc, j;
#if defined(CONV_MVE_ASM)
  if (job->folded != NULL && k <= 32 && (cout & 1) == 0) pixel = conv_mve_pairs(job, pixels);
#endif
  for (; pixel < pixels; pixel += 4) {
    const int32_t count = pixels - pixel < 4 ? pixels - pixel : 4;
    const mve_pred16_t store = vctp32q((uint32_t)count);
    int8_t *out = job->output + pixel * stride;
    const int8_t *w = job->filter;
    for (j = 0; j < 4; ++j) patches[j] = j < count ? patch_of(job, pixel + j, j) : patches[0];
    if (job->folded != NULL) {
      if (k <= 32) short_patches(job, patches, out, rows, store);
      else long_patches(job, patches, out, rows, store);
      continue;
    }
    for (oc = 0; oc < cout; ++oc, w += k) {
      const int32x4_t acc = dot4(patches[0], patches[1], patches[2], patches[3], w, k,
                                 job->bias != NULL ? job->bias[oc] : 0, offset);
      vstrbq_scatter_offset_p_s32(
          out + oc, rows,
          cmsis_mve_requantize(acc, vdupq_n_s32(job->requant.multipliers[oc]),
                               vdupq_n_s32(job->requant.shifts[oc]), p->output_offset,
                               p->act_min, p->act_max),
          store);
    }
  }
}
#elif defined(CMSIS_DSP)
/* The requantisation of one node, copied to locals: int8 stores may alias anything, so
 * fields read through job would be reloaded after every output byte. */
typedef struct {
  const int32_t *multipliers;
  const int32_t *shifts;
  int32_t offset, lo, hi;
  int32_t fast; /* as cmsis_conv_job_t's */
} requant_row_t;

static inline __attribute__((always_inline)) void requant_row_of(const cmsis_conv_job_t *job,
                                                                 int32_t mode,
                                                                 requant_row_t *r) {
  r->multipliers = job->requant.multipliers;
  r->shifts = job->requant.shifts;
  r->offset = job->p->output_offset;
  r->lo = job->p->act_min;
  r->hi = job->p->act_max;
  r->fast = mode;
}

/* Sums acc0, acc1 of output channel oc (bias included) as two bytes, requantised. */
static inline __attribute__((always_inline)) uint32_t channel_bytes(const requant_row_t *r,
                                                                   int32_t acc0, int32_t acc1,
                                                                   int32_t oc) {
  const int32_t multiplier = r->multipliers[oc], shift = r->shifts[oc];
  int32_t v0, v1;
  if (r->fast == CMSIS_REQUANT_STRICT) {
    v0 = cmsis_requantize_strict(acc0, multiplier, shift, r->offset);
    v1 = cmsis_requantize_strict(acc1, multiplier, shift, r->offset);
    v0 = v0 > r->lo ? v0 : r->lo;
    v1 = v1 > r->lo ? v1 : r->lo;
    v0 = v0 < r->hi ? v0 : r->hi;
    v1 = v1 < r->hi ? v1 : r->hi;
  } else if (r->fast == CMSIS_REQUANT_FAST) {
    v0 = cmsis_requantize_fast(acc0, multiplier, -shift, r->offset, r->lo, r->hi);
    v1 = cmsis_requantize_fast(acc1, multiplier, -shift, r->offset, r->lo, r->hi);
  } else if (r->fast == CMSIS_REQUANT_WIDE) {
    v0 = cmsis_requantize_wide(acc0, multiplier, shift, r->offset, r->lo, r->hi);
    v1 = cmsis_requantize_wide(acc1, multiplier, shift, r->offset, r->lo, r->hi);
  } else {
    v0 = cmsis_requantize(acc0, multiplier, shift, r->offset, r->lo, r->hi);
    v1 = cmsis_requantize(acc1, multiplier, shift, r->offset, r->lo, r->hi);
  }
  return ((uint32_t)v0 & 0xffu) | ((uint32_t)v1 & 0xffu) << 8;
}

/* sums0, sums1 (as cmsis_dot_2x2_held's) += the k % 4 last inputs of the pair and of w0, w1. */
static void dot_tail(const int16_t *pair, const int8_t *w0, const int8_t *w1, int32_t k,
                     int32_t sums0[2], int32_t sums1[2]) {
  const int32_t groups = k >> 2, tail = k & 3;
  const int16_t *px = pair + 8 * groups;
  int32_t i;
  w0 += 4 * groups;
  w1 += 4 * groups;
  for (i = 0; i < tail; ++i) {
    sums0[0] = tflm_mac_wrap(sums0[0], w0[i], px[i]);
    sums0[1] = tflm_mac_wrap(sums0[1], w1[i], px[i]);
    sums1[0] = tflm_mac_wrap(sums1[0], w0[i], px[tail + i]);
    sums1[1] = tflm_mac_wrap(sums1[1], w1[i], px[tail + i]);
  }
}

/* Channels oc .. oc + 3 of the two widened pixels: two 2x2 dot products started at the bias,
 * written straight into each pixel's 4 sums, requantised (cmsis_requantize4). */
static inline __attribute__((always_inline)) void four_channels(
    const requant_row_t *r, const int32_t *bias, const int8_t *filter, int32_t k,
    const int16_t *pair, int32_t oc, int8_t *out0, int8_t *out1) {
  const int8_t *w = filter + oc * k;
  int32_t first[4] = {0, 0, 0, 0}, second[4], j;
  if (bias != NULL) {
    for (j = 0; j < 4; ++j) first[j] = bias[oc + j];
  }
  for (j = 0; j < 4; ++j) second[j] = first[j];
  if (k >= 4) {
    cmsis_dot_2x2_held(pair, w, w + k, k >> 2, first, second);
    cmsis_dot_2x2_held(pair, w + 2 * k, w + 3 * k, k >> 2, first + 2, second + 2);
  }
  if (k & 3) {
    dot_tail(pair, w, w + k, k, first, second);
    dot_tail(pair, w + 2 * k, w + 3 * k, k, first + 2, second + 2);
  }
  cmsis_requantize4(r->fast, first, r->multipliers + oc, r->shifts + oc, r->offset, r->lo,
                    r->hi, out0 + oc);
  if (out1 != NULL) {
    cmsis_requantize4(r->fast, second, r->multipliers + oc, r->shifts + oc, r->offset, r->lo,
                      r->hi, out1 + oc);
  }
}

/* Two pixels x two output channels per pass, the sums started at the bias; a missing second
 * pixel or channel repeats the first and is not stored.  mode: job->fast, a constant in each
 * copy conv_pixels makes, so that each holds one requantisation. */
static inline __attribute__((always_inline)) void pixels_with(const cmsis_conv_job_t *job,
                                                              int32_t pixels, int32_t mode) {
  const int32_t k = job->patch, cout = job->channels, round = CMSIS_ROUND4(k);
  const int32_t stride = job->stride; /* a local: int8 stores may alias job */
  const int32_t *bias = job->bias;
  const int8_t *filter = job->filter;
  int16_t *pair = (int16_t *)(void *)(job->scratch + 2 * round);
  const int32_t quads = mode ? cout & ~3 : 0;
  requant_row_t r;
  int32_t pixel, oc;
  requant_row_of(job, mode, &r);
  for (pixel = 0; pixel < pixels; pixel += 2) {
    const int32_t two = pixel + 1 < pixels;
    int8_t *out0 = job->output + pixel * stride;
    int8_t *out1 = out0 + stride;
    const int8_t *first = patch_of(job, pixel, 0);
    cmsis_widen_pair(first, two ? patch_of(job, pixel + 1, 1) : first, pair, k,
                     job->p->input_offset);
    for (oc = 0; oc < quads; oc += 4) {
      four_channels(&r, bias, filter, k, pair, oc, out0, two ? out1 : NULL);
    }
    for (; oc < cout; oc += 2) {
      const int32_t second = oc + 1 < cout;
      const int8_t *w0 = filter + oc * k, *w1 = second ? w0 + k : w0;
      int32_t acc[4]; /* pixel 0's two sums, then pixel 1's */
      uint32_t low, high;
      acc[0] = acc[2] = bias != NULL ? bias[oc] : 0;
      acc[1] = acc[3] = bias != NULL ? bias[oc + second] : 0;
      if (k >= 4) cmsis_dot_2x2_held(pair, w0, w1, k >> 2, acc, acc + 2);
      if (k & 3) dot_tail(pair, w0, w1, k, acc, acc + 2);
      low = channel_bytes(&r, acc[0], acc[2], oc);
      out0[oc] = (int8_t)(low & 0xffu);
      if (two) out1[oc] = (int8_t)(low >> 8);
      if (second) {
        high = channel_bytes(&r, acc[1], acc[3], oc + 1);
        out0[oc + 1] = (int8_t)(high & 0xffu);
        if (two) out1[oc + 1] = (int8_t)(high >> 8);
      }
    }
  }
}

/* Output channels oc .. oc + n - 1 (n <= 2 * CMSIS_PAIRS_CHUNK) of the two pixels whose
 * sums cmsis_dot_pairs wrote (pixel 0's at sums, pixel 1's at sums + 16), requantised;
 * out1 NULL when there is no second pixel. */
static inline __attribute__((always_inline)) void requantize_chunk(const requant_row_t *r,
                                                                   const int32_t *sums,
                                                                   int32_t oc, int32_t n,
                                                                   int8_t *out0, int8_t *out1) {
  int32_t j = 0;
  if (r->fast) {
    for (; j + 4 <= n; j += 4) {
      cmsis_requantize4(r->fast, sums + j, r->multipliers + oc + j, r->shifts + oc + j,
                        r->offset, r->lo, r->hi, out0 + oc + j);
      if (out1 != NULL) {
        cmsis_requantize4(r->fast, sums + 16 + j, r->multipliers + oc + j, r->shifts + oc + j,
                          r->offset, r->lo, r->hi, out1 + oc + j);
      }
    }
  }
  for (; j < n; ++j) {
    const uint32_t bytes = channel_bytes(r, sums[j], sums[16 + j], oc + j);
    out0[oc + j] = (int8_t)(bytes & 0xffu);
    if (out1 != NULL) out1[oc + j] = (int8_t)(bytes >> 8);
  }
}

/* pixels_with over the offline layout: per pair of pixels, up to 16 channels' sums in one
 * call of cmsis_dot_pairs, then requantised 4 channels per word when mode allows. */
static inline __attribute__((always_inline)) void pairs_with(const cmsis_conv_job_t *job,
                                                             int32_t pixels, int32_t mode) {
  const int32_t k = job->patch, cout = job->channels, groups = (k + 3) >> 2;
  const int32_t stride = job->stride; /* a local: int8 stores may alias job */
  const int32_t chunk = 2 * CMSIS_PAIRS_CHUNK;
  int16_t *pair = (int16_t *)(void *)(job->scratch + 2 * CMSIS_ROUND4(k));
  int32_t sums[4 * CMSIS_PAIRS_CHUNK];
  requant_row_t r;
  int32_t pixel, oc;
  requant_row_of(job, mode, &r);
  for (pixel = 0; pixel < pixels; pixel += 2) {
    const int32_t two = pixel + 1 < pixels;
    int8_t *out0 = job->output + pixel * stride;
    const int8_t *first = patch_of(job, pixel, 0);
    cmsis_widen_pair(first, two ? patch_of(job, pixel + 1, 1) : first, pair,
                     CMSIS_ROUND4(k), 0);
    for (oc = 0; oc < cout; oc += chunk) {
      const int32_t n = cout - oc < chunk ? cout - oc : chunk;
      cmsis_dot_pairs(pair, job->pairs + (oc >> 1) * job->pair_stride, groups, (n + 1) >> 1,
                      job->folded + oc, sums);
      requantize_chunk(&r, sums, oc, n, out0, two ? out0 + stride : NULL);
    }
  }
}

/* The 7 words of the 27-byte patch (3 rows of 9 bytes: a 3x3 window over 3 channels,
 * first layers over RGB images) whose top row starts at a, rows `line` bytes apart, the
 * last word's top byte 0 (its weight is a padding 0): the groups that straddle two rows
 * joined from unaligned words, no copy.  Reads stay inside the window's rows: before a
 * row's start only inside the rows above it. */
static inline __attribute__((always_inline)) void rgb_patch_words(const int8_t *a,
                                                                  int32_t line,
                                                                  uint32_t g[7]) {
  const int8_t *r1 = a + line, *r2 = r1 + line;
  g[0] = (uint32_t)cmsis_read4(a);
  g[1] = (uint32_t)cmsis_read4(a + 4);
  g[2] = ((uint32_t)cmsis_read4(r1 - 1) & ~0xffu) | (uint8_t)a[8]; /* a8 r1[0..2] */
  g[3] = (uint32_t)cmsis_read4(r1 + 3);
  g[4] = ((uint32_t)cmsis_read4(r2 - 2) & ~0xffffu) | (uint8_t)r1[7] |
         ((uint32_t)(uint8_t)r1[8] << 8); /* r1[7..8] r2[0..1] */
  g[5] = (uint32_t)cmsis_read4(r2 + 2);
  g[6] = (uint32_t)cmsis_read4(r2 + 5) >> 8; /* r2[6..8] 0 */
}

/* widen_pixels for patches of 3 rows of 9 bytes (direct == 2): both windows inside the
 * image are widened from rgb_patch_words, else 0 (the caller copies). */
static inline __attribute__((always_inline)) int32_t widen_rgb(const cmsis_conv_job_t *job,
                                                               int32_t pixel, int32_t two,
                                                               int16_t *pair) {
  const int32_t line = job->p->dilation_h * job->p->input_w * 3;
  int32_t y0, x0, i;
  uint32_t ga[7], gb[7];
  const int8_t *a = inside_window(job, pixel, &y0, &x0);
  const int8_t *b = two ? inside_window(job, pixel + 1, &y0, &x0) : a;
  if (a == NULL || b == NULL) return 0;
  rgb_patch_words(a, line, ga);
  rgb_patch_words(b, line, gb);
  for (i = 0; i < 7; ++i, pair += 8) { /* cmsis_widen_pair's order, offset 0 */
    cmsis_write4(pair, (int32_t)__sxtb16(ga[i]));
    cmsis_write4(pair + 2, cmsis_sxtb16_ror8((int32_t)ga[i]));
    cmsis_write4(pair + 4, (int32_t)__sxtb16(gb[i]));
    cmsis_write4(pair + 6, cmsis_sxtb16_ror8((int32_t)gb[i]));
  }
  return 1;
}

/* The offline layout with its requantisation tail: per pair of pixels, every channel's
 * sums requantised and stored inside cmsis_dot_pairs_requant. */
/* Widens the patches of pixel and pixel + 1 (or pixel twice) into pair: straight from the
 * image, row by row, when both windows lie inside it (direct 1: a filter row is whole
 * words, so the groups of 4 never straddle two rows; 2: widen_rgb), else through
 * patch_of's copies. */
static inline __attribute__((always_inline)) void widen_pixels(const cmsis_conv_job_t *job,
                                                               int32_t pixel, int32_t two,
                                                               int16_t *pair, int32_t direct) {
  const tflm_conv_params_t *p = job->p;
  const int32_t row = p->filter_w * p->input_c;
  const int8_t *first;
  if (direct == 2 && widen_rgb(job, pixel, two, pair)) return;
  if (direct == 1) {
    int32_t y0, x0;
    const int8_t *a = inside_window(job, pixel, &y0, &x0);
    const int8_t *b = two ? inside_window(job, pixel + 1, &y0, &x0) : a;
    if (a != NULL && b != NULL) {
      const int32_t line = p->dilation_h * p->input_w * p->input_c;
      int32_t fy;
      for (fy = 0; fy < p->filter_h; ++fy, a += line, b += line, pair += 2 * row) {
        cmsis_widen_pair(a, b, pair, row, 0);
      }
      return;
    }
  }
  first = patch_of(job, pixel, 0);
  cmsis_widen_pair(first, two ? patch_of(job, pixel + 1, 1) : first, pair,
                   CMSIS_ROUND4(job->patch), 0);
}

/* The offline layout with its requantisation tail: per pair of pixels from `first`, every
 * channel's sums requantised and stored inside cmsis_dot_pairs_requant.  direct: see
 * widen_pixels. */
static inline __attribute__((always_inline)) void pairs_requantized_with(
    const cmsis_conv_job_t *job, int32_t first, int32_t pixels, int32_t direct) {
  const int32_t k = job->patch, groups = (k + 3) >> 2, count = job->channels >> 1;
  const int32_t stride = job->stride;
  int16_t *pair = (int16_t *)(void *)(job->scratch + 2 * CMSIS_ROUND4(k));
  int32_t pixel;
  for (pixel = first; pixel < pixels; pixel += 2) {
    const int32_t two = pixel + 1 < pixels;
    int8_t *out0 = job->output + pixel * stride;
    widen_pixels(job, pixel, two, pair, direct);
    if (two) {
      cmsis_dot_pairs_requant(pair, job->pairs, groups, count, job->tail, out0, out0 + stride);
    } else { /* an odd last pixel: once, not twice */
      cmsis_dot_pairs_requant1(pair, job->pairs, groups, count, job->tail, out0);
    }
  }
}

/* pairs_requantized_with over 3x3 windows of 3 channels (widen_rgb), apart: the other
 * layers' loops keep their registers. */
static __attribute__((noinline)) void pairs_requantized_rgb(const cmsis_conv_job_t *job,
                                                            int32_t pixels) {
  pairs_requantized_with(job, 0, pixels, 2);
}

/* `quads` groups of 4 input zero points (padding taps) into one pixel's words of a
 * cmsis_dot_pairs_requant3 buffer. */
static void widen_zero_points(const cmsis_conv_job_t *job, int16_t *dst, int32_t quads) {
  const int16_t zero = (int16_t)-job->p->input_offset;
  const int32_t zeros = (int32_t)((uint32_t)(uint16_t)zero * 0x10001u);
  for (; quads > 0; --quads, dst += 12) {
    cmsis_write4(dst, zeros);
    cmsis_write4(dst + 6, zeros);
  }
}

/* Widens the patch of `pixel`, whose window is not inside the image, into its words of a
 * cmsis_dot_pairs_requant3 buffer (dst: the pixel's first word) tap by tap, whole groups of
 * 4 input channels, the padding taps the input zero point. */
static __attribute__((noinline)) void widen_border(const cmsis_conv_job_t *job,
                                                   int32_t pixel, int16_t *dst) {
  const tflm_conv_params_t *p = job->p;
  const int32_t quads = p->input_c >> 2;
  int32_t y0, x0, fy, fx;
  (void)inside_window(job, pixel, &y0, &x0);
  for (fy = 0; fy < p->filter_h; ++fy) {
    const int32_t y = y0 + fy * p->dilation_h;
    for (fx = 0; fx < p->filter_w; ++fx, dst += 12 * quads) {
      const int32_t x = x0 + fx * p->dilation_w;
      if (y >= 0 && y < p->input_h && x >= 0 && x < p->input_w) {
        cmsis_widen_triple(job->image + (y * p->input_w + x) * p->input_c, dst, quads);
      } else {
        widen_zero_points(job, dst, quads);
      }
    }
  }
}

/* One filter row for widen_border_rows across the image's side, value by value from
 * `line` from column x0, zero points outside; tap and channel counted, not divided. */
static __attribute__((noinline)) void widen_row_values(const cmsis_conv_job_t *job,
                                                       const int8_t *line, int32_t x0,
                                                       int16_t *dst) {
  const tflm_conv_params_t *p = job->p;
  const int32_t cin = p->input_c, width = p->input_w, quads = (p->filter_w * cin) >> 2;
  const uint32_t zero = (uint8_t)(int8_t)-p->input_offset;
  int32_t q, i, x = x0, c = 0;
  for (q = 0; q < quads; ++q, dst += 12) {
    uint32_t word = 0;
    for (i = 0; i < 32; i += 8) {
      word |= ((uint32_t)x < (uint32_t)width ? (uint8_t)line[x * cin + c] : zero) << i;
      if (++c == cin) {
        c = 0;
        ++x;
      }
    }
    cmsis_write4(dst, __sxtb16((int32_t)word));
    cmsis_write4(dst + 6, cmsis_sxtb16_ror8((int32_t)word));
  }
}

/* widen_border for input channels not a multiple of 4 and filter rows of whole words
 * (kws' first layer: 1 channel, 4 columns; dilation 1 across), row by row: a row inside
 * the image as words, one above or below it as zero points, one across its side value by
 * value (widen_row_values). */
static __attribute__((noinline)) void widen_border_rows(const cmsis_conv_job_t *job,
                                                        int32_t pixel, int16_t *dst) {
  const tflm_conv_params_t *p = job->p;
  const int32_t cin = p->input_c, quads = (p->filter_w * cin) >> 2;
  int32_t y0, x0, fy;
  (void)inside_window(job, pixel, &y0, &x0);
  for (fy = 0; fy < p->filter_h; ++fy, dst += 12 * quads) {
    const int32_t y = y0 + fy * p->dilation_h;
    if (y < 0 || y >= p->input_h) {
      widen_zero_points(job, dst, quads);
    } else if (x0 >= 0 && x0 + p->filter_w <= p->input_w) {
      cmsis_widen_triple(job->image + (y * p->input_w + x0) * cin, dst, quads);
    } else {
      widen_row_values(job, job->image + y * p->input_w * cin, x0, dst);
    }
  }
}

/* Widens the patches of pixel .. pixel + 2 into a cmsis_dot_pairs_requant3 buffer straight
 * from the image, whole words at a time (in place, or filter rows of whole words): three
 * windows inside the image row by row in one loop, else each on its own (widen_border or
 * widen_border_rows for those on the border). */
static void widen_three(const cmsis_conv_job_t *job, int32_t pixel, int16_t *triple) {
  const tflm_conv_params_t *p = job->p;
  const int32_t row = (p->filter_w * p->input_c) >> 2;
  const int32_t line = p->dilation_h * p->input_w * p->input_c;
  const int8_t *a[3];
  int32_t y0, x0, fy, j;
  if (job->in_place) {
    cmsis_widen_three(patch_of(job, pixel, 0), patch_of(job, pixel + 1, 0),
                      patch_of(job, pixel + 2, 0), triple, job->patch >> 2);
    return;
  }
  for (j = 0; j < 3; ++j) a[j] = inside_window(job, pixel + j, &y0, &x0);
  if (a[0] != NULL && a[1] != NULL && a[2] != NULL) {
    for (fy = 0; fy < p->filter_h; ++fy, triple += 12 * row) {
      cmsis_widen_three(a[0] + fy * line, a[1] + fy * line, a[2] + fy * line, triple, row);
    }
    return;
  }
  for (j = 0; j < 3; ++j) {
    if (a[j] == NULL) {
      if ((p->input_c & 3) == 0) widen_border(job, pixel + j, triple + 2 * j);
      else widen_border_rows(job, pixel + j, triple + 2 * j);
      continue;
    }
    for (fy = 0; fy < p->filter_h; ++fy) {
      cmsis_widen_triple(a[j] + fy * line, triple + 2 * j + 12 * row * fy, row);
    }
  }
}

/* The requantising layout three pixels at a time (cmsis_dot_pairs_requant3) while three
 * remain, when patches are read in place or their filter rows are whole words (with input
 * channels not a multiple of 4, only without dilation across: border windows go value by
 * value); returns the pixels done.  The three widened patches take the 6 * round4(K) bytes
 * of the scratch. */
static int32_t pairs_requantized3(const cmsis_conv_job_t *job, int32_t pixel, int32_t pixels) {
  const tflm_conv_params_t *p = job->p;
  const int32_t k = job->patch, count = job->channels >> 1, stride = job->stride;
  int16_t *triple = (int16_t *)(void *)job->scratch;
  if (!job->in_place && (p->input_c & 3) != 0 &&
      (((p->filter_w * p->input_c) & 3) != 0 || p->dilation_w != 1)) {
    return pixel;
  }
  for (; pixel + 3 <= pixels; pixel += 3) {
    widen_three(job, pixel, triple);
    cmsis_dot_pairs_requant3(triple, job->pairs, k >> 2, count, job->tail,
                             job->output + pixel * stride, stride);
  }
  return pixel;
}

/* The requantising layout four pixels at a time (cmsis_dot_pairs_requant4: 8 accumulators,
 * 16 MACs in 16 cycles, 8 outputs a channel pair) over patches read in place (1x1 layers),
 * widened into the scratch's 8 * round4(K) bytes; returns the pixels done.  A count of
 * 4n + 1 pixels leaves its last 9 to three triples rather than one alone. */
static int32_t pairs_requantized4(const cmsis_conv_job_t *job, int32_t pixels) {
  const int32_t k = job->patch, count = job->channels >> 1, stride = job->stride;
  int16_t *quad = (int16_t *)(void *)job->scratch;
  int32_t pixel, end = pixels & ~3;
  if (!job->in_place) return 0;
  if ((pixels & 3) == 1 && end >= 8) end -= 8;
  for (pixel = 0; pixel < end; pixel += 4) {
    const int8_t *src[4];
    int32_t j;
    for (j = 0; j < 4; ++j) src[j] = patch_of(job, pixel + j, 0);
    cmsis_widen_four(src, quad, k >> 2);
    cmsis_dot_pairs_requant4(quad, job->pairs, k >> 2, count, job->tail,
                             job->output + pixel * stride, stride);
  }
  return pixel;
}

/* CONV_PAIR_RECORDS (1x1 layers read in place, K a multiple of 4): four pixels at a time
 * (cmsis_dot_records4), the 3 or 9 left three at a time (cmsis_dot_records3: three triples
 * took 3 % fewer cycles than vww's 3x3-pixel layers as two quads and one pixel alone),
 * then each pixel left alone (cmsis_dot_records1, on its words widened as
 * cmsis_widen_pair's first pixel). */
static void pairs_records(const cmsis_conv_job_t *job, int32_t pixels) {
  const int32_t groups = job->patch >> 2, stride = job->stride;
  int16_t *widened = (int16_t *)(void *)job->scratch;
  int32_t pixel = 0, j, quads = pixels & ~3;
  if ((pixels & 3) == 1 && quads >= 8) quads -= 8;
  for (; pixel < quads; pixel += 4) {
    const int8_t *src[4];
    for (j = 0; j < 4; ++j) src[j] = patch_of(job, pixel + j, 0);
    cmsis_widen_four(src, widened, groups);
    cmsis_dot_records4(widened, job->pairs, groups, job->output + pixel * stride);
  }
  for (; pixel + 3 <= pixels; pixel += 3) {
    cmsis_widen_three(patch_of(job, pixel, 0), patch_of(job, pixel + 1, 0),
                      patch_of(job, pixel + 2, 0), widened, groups);
    cmsis_dot_records3(widened, job->pairs, groups, job->output + pixel * stride);
  }
  for (; pixel < pixels; ++pixel) {
    const int8_t *x = patch_of(job, pixel, 0);
    cmsis_widen_pair(x, x, widened, job->patch, 0);
    cmsis_dot_records1(widened, job->pairs, groups, job->output + pixel * stride);
  }
}

#include "conv_narrow.h"

/* pairs_requantized_with, its windows read straight from the image where they can be. */
static void pairs_requantized(const cmsis_conv_job_t *job, int32_t pixels) {
  const tflm_conv_params_t *p = job->p;
  int32_t first;
  if (conv_narrow(job, pixels)) return; /* conv_narrow.h: narrow early layers */
  first = pairs_requantized3(job, pairs_requantized4(job, pixels), pixels);
  if (!job->in_place && ((p->filter_w * p->input_c) & 3) == 0) {
    pairs_requantized_with(job, first, pixels, 1);
  } else if (!job->in_place && p->filter_h == 3 && p->filter_w == 3 && p->input_c == 3) {
    pairs_requantized_rgb(job, pixels);
  } else {
    pairs_requantized_with(job, first, pixels, 0);
  }
}

/* One copy of the loops per requantisation mode, on the offline layout or the plain filter. */
static void conv_pixels(const cmsis_conv_job_t *job, int32_t pixels) {
  const int32_t laid_out = job->pairs != NULL;
  if (job->records) { /* 1x1 without padding (find_layout): read in place */
    pairs_records(job, pixels);
    return;
  }
  if (job->tail != NULL) {
    pairs_requantized(job, pixels);
    return;
  }
  switch (job->fast) {
    case CMSIS_REQUANT_STRICT:
      if (laid_out) pairs_with(job, pixels, CMSIS_REQUANT_STRICT);
      else pixels_with(job, pixels, CMSIS_REQUANT_STRICT);
      break;
    case CMSIS_REQUANT_FAST:
      if (laid_out) pairs_with(job, pixels, CMSIS_REQUANT_FAST);
      else pixels_with(job, pixels, CMSIS_REQUANT_FAST);
      break;
    case CMSIS_REQUANT_WIDE:
      if (laid_out) pairs_with(job, pixels, CMSIS_REQUANT_WIDE);
      else pixels_with(job, pixels, CMSIS_REQUANT_WIDE);
      break;
    default:
      if (laid_out) pairs_with(job, pixels, 0);
      else pixels_with(job, pixels, 0);
      break;
  }
}
#else
/* sums[0], sums[1] += the raw patch x times channel pair w of a CONV_INT16_PAIRS stream
 * (round4(k) patch bytes read; the padding weights are 0). */
static void dot_pair(const int8_t *x, const int16_t *w, int32_t k, int32_t sums[2]) {
  int32_t g, i;
  for (g = (k + 3) >> 2; g > 0; --g, x += 4, w += 8) {
    for (i = 0; i < 2; ++i) {
      const int16_t *c = w + 4 * i; /* (w0, w2, w1, w3) */
      sums[i] = tflm_mac_wrap(sums[i], c[0], x[0]);
      sums[i] = tflm_mac_wrap(sums[i], c[1], x[2]);
      sums[i] = tflm_mac_wrap(sums[i], c[2], x[1]);
      sums[i] = tflm_mac_wrap(sums[i], c[3], x[3]);
    }
  }
}

/* conv_pixels_laid_out over CONV_PAIR_RECORDS: each pair's doubled folded constants,
 * weights and requantisation words read from its record. */
static void records_pixels(const cmsis_conv_job_t *job, int32_t pixels) {
  const int32_t k = job->patch, count = job->channels >> 1, stride = job->stride;
  const int32_t weights = job->pair_stride / 2 - CMSIS_RECORD_EXTRA;
  int32_t pixel, pair, j;
  for (pixel = 0; pixel < pixels; ++pixel) {
    const int8_t *patch = patch_of(job, pixel, 0);
    int8_t *out = job->output + pixel * stride;
    for (pair = 0; pair < count; ++pair) {
      const int32_t *r = (const int32_t *)(const void *)(job->pairs + pair * job->pair_stride);
      const int32_t *t = r + 2 + weights;
      int32_t sums[2];
      sums[0] = r[0];
      sums[1] = r[1];
      dot_pair(patch, (const int16_t *)(const void *)(r + 2), k, sums);
      for (j = 0; j < 2; ++j) {
        out[2 * pair + j] = cmsis_requantize_folded(sums[j], t[record_multiplier[j]],
                                                    t[record_constant[j]],
                                                    t[record_shift[j]] & 0xff);
      }
    }
  }
}

/* dot_pair over a CONV_RGB_BAND pair (tflm_gen/layout.py rgb_band_stream): word k of
 * channel s holds the weights of elements k and 9 + k (k < 9), else 2k and 2k + 1. */
static void rgb_band_dot(const int8_t *x, const int16_t *w, int32_t sums[2]) {
  int32_t k, s;
  for (k = 0; k < 14; ++k, w += 4) {
    const int32_t a = k < 9 ? k : 2 * k, b = k < 9 ? 9 + k : 2 * k + 1;
    for (s = 0; s < 2; ++s) {
      sums[s] = tflm_mac_wrap(sums[s], w[2 * s], x[a]);
      sums[s] = tflm_mac_wrap(sums[s], w[2 * s + 1], x[b]);
    }
  }
}

/* The plain C loop over the offline layout: 1 patch x 1 channel pair. */
static void conv_pixels_laid_out(const cmsis_conv_job_t *job, int32_t pixels) {
  const int32_t k = job->patch, cout = job->channels, stride = job->stride;
  int32_t pixel, oc;
  if (job->records) {
    records_pixels(job, pixels);
    return;
  }
  for (pixel = 0; pixel < pixels; ++pixel) {
    const int8_t *patch = patch_of(job, pixel, 0);
    int8_t *out = job->output + pixel * stride;
    for (oc = 0; oc < cout; oc += 2) {
      const int32_t second = oc + 1 < cout;
      const int32_t *t = job->tail != NULL ? job->tail + 4 * oc : NULL;
      int32_t sums[2];
      sums[0] = t != NULL ? t[0] : job->folded[oc];
      sums[1] = t != NULL ? t[1] : job->folded[oc + second];
      if (job->band) {
        rgb_band_dot(patch, job->pairs + (oc >> 1) * job->pair_stride, sums);
      } else {
        dot_pair(patch, job->pairs + (oc >> 1) * job->pair_stride, k, sums);
      }
      if (t != NULL) { /* 2 * acc, an even channel count */
        out[oc] = cmsis_requantize_folded(sums[0], t[CMSIS_TAIL_MULTIPLIER],
                                          t[CMSIS_TAIL_CONSTANT], t[tail_shift[0]]);
        out[oc + 1] = cmsis_requantize_folded(sums[1], t[CMSIS_TAIL_MULTIPLIER + 1],
                                              t[CMSIS_TAIL_CONSTANT + 1], t[tail_shift[1]]);
        continue;
      }
      out[oc] = finish(job, sums[0], oc);
      if (second) out[oc + 1] = finish(job, sums[1], oc + 1);
    }
  }
}

static void conv_pixels(const cmsis_conv_job_t *job, int32_t pixels) {
  const int32_t k = job->patch, cout = job->channels, offset = job->p->input_offset;
  const int32_t stride = job->stride;
  int32_t pixel, oc;
  if (job->pairs != NULL) {
    conv_pixels_laid_out(job, pixels);
    return;
  }
  for (pixel = 0; pixel < pixels; ++pixel) {
    const int8_t *patch = patch_of(job, pixel, 0);
    for (oc = 0; oc < cout; ++oc) {
      const int32_t acc = cmsis_dot_offset(patch, job->filter + oc * k, k, offset);
      job->output[pixel * stride + oc] = finish(job, acc, oc);
    }
  }
}
#endif

/* Every batch of the job's channels. */
static void conv_batches(cmsis_conv_job_t *job, const int8_t *input, int8_t *output) {
  const tflm_conv_params_t *p = job->p;
  const int32_t pixels = p->output_h * p->output_w;
  int32_t b;
  for (b = 0; b < p->batches; ++b) {
    job->image = input + b * p->input_h * p->input_w * p->input_c;
    job->output = output + b * pixels * p->output_c;
    conv_pixels(job, pixels);
  }
}

static void conv_job(tflm_context_t *ctx, const tflm_node_t *node,
                     const cmsis_conv_node_t *node_data, const tflm_weighted_call_t *call,
                     cmsis_conv_job_t *job) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  job->p = p;
  job->requant = call->requant;
  job->filter = (const int8_t *)call->data.filter;
  job->bias = (const int32_t *)call->data.bias;
  job->scratch = (int8_t *)tflm_get_scratch(ctx, node_data->scratch);
  job->patch = node_data->patch;
  job->in_place = p->filter_h == 1 && p->filter_w == 1 && p->pad_h == 0 && p->pad_w == 0;
  job->channels = p->output_c;
  job->stride = p->output_c;
  find_layout(ctx, node, job);
  if ((job->tail != NULL || job->records) && !node_data->tail_ok) {
    job->folded = NULL; /* its doubled filter is of no use either */
    job->pairs = NULL;
    job->tail = NULL;
    job->records = 0;
    job->band = 0;
  }
  /* A pass over every channel's multiplier and shift; the tail's loops requantise with
   * their own constants and never read it. */
  job->fast = job->tail != NULL || job->records ? 0 : cmsis_requant_mode(job->requant.multipliers,
                                                         job->requant.shifts, p->output_c);
  /* The layout's kernels read round4(K) bytes per patch: past the input's end in place. */
  if (job->folded != NULL && (job->patch & 3) != 0) job->in_place = 0;
}

#define CMSIS_LAYOUT_MIN_PIXELS 6

/* Scratch after the patches for one decoded block of `group` channels in the offline
 * layout's form (tflm_gen/layout.py): folded constants for round2(group) channels, then the
 * CONV_INT16_PAIRS stream. */
static uint32_t block_layout_bytes(int32_t group, int32_t k) {
  const uint32_t pairs = (uint32_t)(group + 1) / 2u;
  return 8u * pairs + pairs * 2u * (uint32_t)pair_stride_of(k);
}

/* The offline layout's form of one decoded block (tflm_gen/layout.py): folded[c] =
 * bias[c] + input_offset * sum(rows[c]) in wrapping int32, then the CONV_INT16_PAIRS stream:
 * per channel pair (an odd last channel paired with itself, its constant repeated), per
 * group of 4 inputs, each channel's (w0, w2, w1, w3), zero past k; its weights doubled
 * (the CONV_INT16_PAIRS_REQUANT stream) when `doubled` is 1. */
#if defined(CMSIS_DSP)
/* The pair words (w0, w2), (w1, w3) of 4 weights into out[0], out[1], doubled when
 * `doubled` is 1; returns sum + their sum. */
static inline __attribute__((always_inline)) int32_t widen_weights(int32_t x, int32_t doubled,
                                                                   int32_t *out, int32_t sum) {
  const int32_t even = __sxtb16(x), odd = cmsis_sxtb16_ror8(x);
  out[0] = doubled ? (int32_t)__sadd16(even, even) : even;
  out[1] = doubled ? (int32_t)__sadd16(odd, odd) : odd;
  return __smlad(even, 0x00010001, __smlad(odd, 0x00010001, sum));
}

/* A word of 4 weights gives both pair words (w0, w2) and (w1, w3) by SXTB16 (doubled by
 * SADD16), and their sum by two SMLADs. */
static void layout_block(const int8_t *rows, int32_t count, int32_t k, const int32_t *bias,
                         int32_t input_offset, int32_t *folded, int16_t *pairs,
                         int32_t doubled) {
  int32_t *out = (int32_t *)(void *)pairs;
  const int32_t whole = k >> 2, tail = k & 3;
  int32_t c, g, i, j;
  for (c = 0; c < count; c += 2) {
    const int8_t *row[2];
    int32_t sums[2] = {0, 0};
    row[0] = rows + c * k;
    row[1] = c + 1 < count ? row[0] + k : row[0];
    for (g = 0; g < whole; ++g, out += 4) {
      for (j = 0; j < 2; ++j) {
        sums[j] = widen_weights(cmsis_read4(row[j] + 4 * g), doubled, out + 2 * j, sums[j]);
      }
    }
    if (tail) { /* the last group, zero past k */
      for (j = 0; j < 2; ++j) {
        int8_t last[4] = {0, 0, 0, 0};
        for (i = 0; i < tail; ++i) last[i] = row[j][4 * whole + i];
        sums[j] = widen_weights(cmsis_read4(last), doubled, out + 2 * j, sums[j]);
      }
      out += 4;
    }
    for (j = 0; j < 2; ++j) {
      const uint32_t start = bias != NULL ? (uint32_t)bias[c + (c + j < count ? j : 0)] : 0u;
      folded[c + j] = (int32_t)(start + (uint32_t)input_offset * (uint32_t)sums[j]);
    }
  }
}
#else
static void layout_block(const int8_t *rows, int32_t count, int32_t k, const int32_t *bias,
                         int32_t input_offset, int32_t *folded, int16_t *pairs,
                         int32_t doubled) {
  static const int32_t order[4] = {0, 2, 1, 3};
  const int32_t groups = (k + 3) >> 2;
  int32_t c, g, j, i;
  for (c = 0; c < count; ++c) {
    uint32_t sum = 0;
    for (i = 0; i < k; ++i) sum += (uint32_t)(int32_t)rows[c * k + i];
    folded[c] = (int32_t)((bias != NULL ? (uint32_t)bias[c] : 0u) + (uint32_t)input_offset * sum);
  }
  if (count & 1) folded[count] = folded[count - 1];
  for (c = 0; c < count; c += 2) {
    for (g = 0; g < groups; ++g) {
      for (j = 0; j < 2; ++j) {
        const int8_t *row = rows + (c + j < count ? c + j : c) * k + 4 * g;
        for (i = 0; i < 4; ++i) {
          *pairs++ = (int16_t)(4 * g + order[i] < k ? row[order[i]] * (1 + doubled) : 0);
        }
      }
    }
  }
}
#endif

/* 1 when the doubled folded constants of the requantisation tail's pairs (8 words each)
 * are twice the `count` (even) constants computed from the decoded block. */
static int32_t folded_agree(const int32_t *tail, const int32_t *folded, int32_t count) {
  int32_t c;
  for (c = 0; c < count; ++c) {
    if ((uint32_t)tail[4 * (c & ~1) + (c & 1)] != 2u * (uint32_t)folded[c]) return 0;
  }
  return 1;
}

/* One decoded block of a compressed filter: the node's job (call->own, made once per eval)
 * narrowed to its channels, on the offline layout's form built in scratch (the fast loops
 * of this file): the doubled stream of the requantising kernel when the node's
 * CONV_CODED_REQUANT tail (job.tail) covers the block's whole channel pairs and agrees with
 * its decoded weights, else the plain pairs. */
static void conv_block(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                       const int8_t *rows, int8_t *room, int32_t first, int32_t count) {
  cmsis_conv_job_t job = *(const cmsis_conv_job_t *)call->own;
  const int32_t *tail;
  int32_t *folded;
  int16_t *pairs;
  (void)ctx;
  (void)room;
  if (job.tail != NULL) { /* whole channel pairs: a dead neighbour computed gives its bias */
    rows -= (first & 1) * job.patch;
    count += (first & 1) + ((first + count) & 1);
    first &= ~1;
  }
  tail = job.tail != NULL && ((first | count) & 1) == 0 && first + count <= job.p->output_c
             ? job.tail + 4 * first
             : NULL;
  folded = (int32_t *)(void *)(job.scratch + scratch_rows(job.p) * CMSIS_ROUND4(job.patch));
  pairs = (int16_t *)(void *)(folded + count + (count & 1));
  if (job.bias != NULL) job.bias += first;
  job.folded = NULL;
  job.pairs = NULL;
  job.tail = NULL;
  /* Building the layout costs a few instructions per weight, and saves some per weight
   * and output pixel: worth it from CMSIS_LAYOUT_MIN_PIXELS pixels. */
  if (job.p->output_h * job.p->output_w >= CMSIS_LAYOUT_MIN_PIXELS) {
    layout_block(rows, count, job.patch, job.bias, job.p->input_offset, folded, pairs,
                 tail != NULL);
    if (tail != NULL && folded_agree(tail, folded, count)) {
      job.tail = tail;
    } else if (tail != NULL) { /* not this filter's tail: the plain pairs */
      layout_block(rows, count, job.patch, job.bias, job.p->input_offset, folded, pairs, 0);
    }
    job.folded = folded;
    job.pairs = pairs;
  }
  job.filter = rows;
  job.channels = count;
  job.requant.multipliers += first;
  job.requant.shifts += first;
  if (job.pairs != NULL && (job.patch & 3) != 0) job.in_place = 0; /* they read round4(K) */
  conv_batches(&job, (const int8_t *)call->data.input, (int8_t *)call->data.output + first);
}

/* The layout form of one decoded block when the filter is compressed (checked by the
 * shared prepare), else 0. */
static uint32_t coded_block_bytes(tflm_context_t *ctx, const tflm_node_t *node,
                                  const tflm_conv_params_t *p, int32_t k) {
  tflm_coded_t coded;
  tflm_decode_t d;
  if (p->decode_scratch < 0 || !tflm_node_coded_input(ctx, node, 1, &coded) ||
      tflm_decode_open(&d, coded.data, coded.bytes, coded.table, coded.table_bytes,
                       p->output_c, k) != TFLM_OK) {
    return 0;
  }
  return block_layout_bytes(d.group, k);
}

/* 1 when the node's layout record has a requantisation tail (CONV_INT16_PAIRS_REQUANT, or
 * CONV_CODED_REQUANT for a coded filter) that agrees with its requantisation (tail_agrees),
 * checked once here rather than on every eval. */
static int16_t tail_checked(tflm_context_t *ctx, tflm_node_t *node, const tflm_conv_params_t *p,
                            int32_t patch) {
  cmsis_conv_job_t job;
  memset(&job, 0, sizeof(job));
  job.p = p;
  job.patch = patch;
  job.filter = (const int8_t *)tflm_node_input_data(ctx, node, 1); /* a constant */
  tflm_conv_requant(ctx, node, p, &job.requant);
  if (p->decode_scratch >= 0) {
    (void)coded_tail(ctx, node, &job);
  } else {
    find_layout(ctx, node, &job);
    if (job.records) return (int16_t)pair_records_agree(&job);
  }
  return (int16_t)(job.tail != NULL && tail_agrees(&job));
}

static tflm_status_t cmsis_conv_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  cmsis_conv_node_t *mine;
  const tflm_conv_params_t *p;
  int32_t scratch = -1;
  tflm_status_t status = tflm_conv_prepare(ctx, node);
  if (status != TFLM_OK) return status;
  p = (const tflm_conv_params_t *)node->user_data;
  mine = (cmsis_conv_node_t *)tflm_alloc_persistent(ctx, (uint32_t)sizeof(cmsis_conv_node_t));
  TFLM_KERNEL_CHECK(ctx, node, mine != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  mine->shared = (uint64_t)(uintptr_t)p;
  mine->scratch = -1;
  mine->tail_ok = 0;
  mine->patch = p->filter_h * p->filter_w * p->filter_c;
  if (p->type == TFLM_TYPE_INT8 && p->filter_c == p->input_c) {
    status = tflm_request_scratch(ctx, (uint32_t)scratch_rows(p) *
                                           (uint32_t)CMSIS_ROUND4(mine->patch) +
                                           coded_block_bytes(ctx, node, p, mine->patch),
                                  &scratch);
    if (status != TFLM_OK) return status;
    TFLM_KERNEL_CHECK(ctx, node, scratch >= 0 && scratch <= INT16_MAX, TFLM_ERR_BAD_PARAMS);
    mine->scratch = (int16_t)scratch;
    mine->tail_ok = tail_checked(ctx, node, p, mine->patch);
  }
  /* A filter holding the int16 stream runs the layout loops only (run_int8 checks them). */
  TFLM_KERNEL_CHECK(ctx, node,
                    !filter_holds_stream(ctx, node) ||
                        (CMSIS_CONV_READS_STREAM && mine->scratch >= 0 && p->decode_scratch < 0),
                    TFLM_ERR_BAD_PARAMS);
  node->user_data = mine;
  return TFLM_OK;
}

/* int8: grouped convolutions (no scratch) run the reference loops; a compressed filter
 * runs per decoded block of channels. */
static tflm_status_t cmsis_conv_run_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call) {
  const cmsis_conv_node_t *mine = (const cmsis_conv_node_t *)call->own;
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  cmsis_conv_job_t job;
  if (mine->scratch < 0) {
    return tflm_conv_run_int8(ctx, call);
  }
  if (TFLM_CONV_IS_SPARSE(p)) {
    return tflm_conv_sparse_int8(ctx, call, &cmsis_sparse_kernels); /* a sparse 1x1 filter */
  }
  conv_job(ctx, call->node, mine, call, &job);
  TFLM_KERNEL_CHECK(ctx, call->node, job.pairs != NULL || !job.in_filter, TFLM_ERR_BAD_PARAMS);
  if (p->decode_scratch >= 0) {
    job.tail = mine->tail_ok ? coded_tail(ctx, call->node, &job) : NULL;
    tflm_weighted_call_t blocks = *call;
    blocks.own = &job;
    return tflm_weighted_decoded_live(ctx, &blocks, p->decode_scratch, p->output_c,
                                      mine->patch, conv_block, tflm_conv_dead_int8);
  }
  conv_batches(&job, (const int8_t *)call->data.input, (int8_t *)call->data.output);
  return TFLM_OK;
}

static const tflm_weighted_kernels_t cmsis_conv_kernels = {
    tflm_conv_requant, tflm_conv_hybrid_eval, tflm_conv_run_float32, cmsis_conv_run_int8,
    tflm_conv_run_int16};

/* node->user_data is this tag's record, which starts with the shared parameters' address. */
TFLM_WEIGHTED_OP(tflm_op_conv_2d, TFLM_BUILTIN_CONV_2D, cmsis_conv_prepare,
                 cmsis_conv_kernels, 1);
