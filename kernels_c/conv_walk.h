/* The output loop nest CONV_2D and DEPTHWISE_CONV_2D's reference kernels share: for each
 * batch, output row, column and channel, the type's output function (the op's taps with the
 * type's MAC, the bias, then requantisation or the float clamp), written in NHWC order.
 *
 * Everything here is always inlined (tflm_compiler.h) and every function argument is a
 * constant at each call (the op's static tap walk, the type's output and MAC functions), so
 * the compiler inlines them all and the loops cost what a hand-written nest costs. */
#ifndef TFLM_CONV_WALK_H
#define TFLM_CONV_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "conv_common.h"
#include "tflm_compiler.h"
#include "tflm_quant.h"
#include "weighted_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where one output's window starts in the input (negative inside the padding), and its
 * output channel. */
typedef struct {
  int32_t y0;
  int32_t x0;
  int32_t oc;
  int32_t f;          /* element of the filter read holding channel oc's first weight */
  int32_t tap_stride; /* depthwise: elements between its taps (conv reads filter_c) */
} tflm_conv_window_t;

/* The output channels one walk writes and where their weights are: the whole filter, or
 * one decoded block of a compressed one (tflm_decode.h, channel-major rows). */
typedef struct {
  int32_t first;          /* output channels first .. first + count - 1 */
  int32_t count;
  int32_t channel_stride; /* elements from one channel's first weight to the next's */
  int32_t tap_stride;     /* depthwise: elements between a channel's taps */
} tflm_conv_block_t;

/* Declares `name`, a MAC of one tap: adds `count` products (input against filter elements)
 * to *acc: int8 images with the input offset in an int32 that wraps as TFLM's does, int16
 * images in an int64, floats in a float. */
#define TFLM_CONV_MAC(name) \
  void name(void *acc, const void *in, const void *f, int32_t count, int32_t offset)

typedef TFLM_CONV_MAC((*tflm_conv_mac_fn));

static inline TFLM_CONV_MAC(tflm_conv_mac_int8) {
  int32_t c;
  for (c = 0; c < count; ++c) {
    *(int32_t *)acc = tflm_mac_wrap(*(int32_t *)acc, ((const int8_t *)f)[c],
                                    (int32_t)((const int8_t *)in)[c] + offset);
  }
}

static inline TFLM_CONV_MAC(tflm_conv_mac_int16) {
  int32_t c;
  (void)offset;
  for (c = 0; c < count; ++c) {
    *(int64_t *)acc +=
        (int64_t)((int32_t)((const int8_t *)f)[c] * (int32_t)((const int16_t *)in)[c]);
  }
}

static inline TFLM_CONV_MAC(tflm_conv_mac_float32) {
  int32_t c;
  (void)offset;
  for (c = 0; c < count; ++c) {
    *(float *)acc += ((const float *)in)[c] * ((const float *)f)[c];
  }
}

/* The op's walk over the taps of one output's window (conv: every input channel of the
 * group per tap; depthwise: one), calling `mac` per tap; elements of `in_bytes` /
 * `f_bytes`. */
typedef void (*tflm_conv_taps_fn)(const tflm_conv_params_t *p, const void *input,
                                  int32_t in_bytes, const void *filter, int32_t f_bytes,
                                  const tflm_conv_window_t *w, void *acc, tflm_conv_mac_fn mac);

/* The taps of one output's window, filter_y then filter_x, skipping taps in the padding:
 * per tap, `count` elements from input channel `in_c` on and from `filter` (the output
 * channel's first weight) plus the tap's index times `tap_stride`; elements of `in_bytes` /
 * `f_bytes`.  Conv reads a group's channels per tap, depthwise one. */
static inline void tflm_conv_taps(const tflm_conv_params_t *p, const void *input,
                                              int32_t in_bytes, int32_t in_c,
                                              const void *filter, int32_t f_bytes,
                                              int32_t tap_stride, int32_t count,
                                              const tflm_conv_window_t *w, void *acc,
                                              tflm_conv_mac_fn mac) {
  const uint8_t *in = (const uint8_t *)input;
  const uint8_t *f = (const uint8_t *)filter;
  int32_t fy, fx;
  for (fy = 0; fy < p->filter_h; ++fy) {
    const int32_t in_y = w->y0 + p->dilation_h * fy;
    for (fx = 0; fx < p->filter_w; ++fx) {
      const int32_t in_x = w->x0 + p->dilation_w * fx;
      if (in_y < 0 || in_y >= p->input_h || in_x < 0 || in_x >= p->input_w) continue;
      mac(acc, in + (size_t)((in_y * p->input_w + in_x) * p->input_c + in_c) * in_bytes,
          f + (size_t)((fy * p->filter_w + fx) * tap_stride) * f_bytes, count,
          p->input_offset);
    }
  }
}

/* Elements of one input image. */
static inline int32_t tflm_conv_image_size(const tflm_conv_params_t *p) {
  return p->input_h * p->input_w * p->input_c;
}

static TFLM_ALWAYS_INLINE void tflm_conv_window(const tflm_conv_params_t *p, int32_t oy,
                                                int32_t ox, int32_t oc,
                                                const tflm_conv_block_t *block,
                                                tflm_conv_window_t *w) {
  w->y0 = oy * p->stride_h - p->pad_h;
  w->x0 = ox * p->stride_w - p->pad_w;
  w->oc = oc;
  w->f = (oc - block->first) * block->channel_stride;
  w->tap_stride = block->tap_stride;
}

/* One output of each type: the op's taps with the type's MAC, the bias, then
 * requantisation (int8; int16 "16x8": no zero points, 64-bit accumulator and bias) or the
 * float clamp.  `requant` is NULL for float32. */
#define TFLM_CONV_OUTPUT(name)                                                           \
  void name(const tflm_conv_params_t *p, const tflm_requant_t *requant, const void *image, \
            const void *filter, const void *bias, const tflm_conv_window_t *w, void *output, \
            tflm_conv_taps_fn taps)

typedef TFLM_CONV_OUTPUT((*tflm_conv_output_fn));

static inline TFLM_CONV_OUTPUT(tflm_conv_output_int8) {
  int32_t acc = 0;
  taps(p, image, 1, filter, 1, w, &acc, tflm_conv_mac_int8);
  if (bias != NULL) acc = tflm_add_wrap(acc, ((const int32_t *)bias)[w->oc]);
  *(int8_t *)output =
      (int8_t)tflm_requantize(acc, requant->multipliers[w->oc], requant->shifts[w->oc],
                              p->output_offset, p->act_min, p->act_max);
}

static inline TFLM_CONV_OUTPUT(tflm_conv_output_int16) {
  int64_t acc = 0;
  int32_t scaled;
  taps(p, image, 2, filter, 1, w, &acc, tflm_conv_mac_int16);
  if (bias != NULL) acc = tflm_add_wrap64(acc, ((const int64_t *)bias)[w->oc]);
  scaled = tflm_multiply_by_quantized_multiplier_64(acc, requant->multipliers[w->oc],
                                                    requant->shifts[w->oc]);
  scaled = scaled > p->act_min ? scaled : p->act_min;
  *(int16_t *)output = (int16_t)(scaled < p->act_max ? scaled : p->act_max);
}

static inline TFLM_CONV_OUTPUT(tflm_conv_output_float32) {
  float acc = 0.0f;
  (void)requant;
  taps(p, image, 4, filter, 4, w, &acc, tflm_conv_mac_float32);
  /* TFLM adds a bias of 0.0f when there is none; -0.0f + 0.0f is +0.0f. */
  acc += bias != NULL ? ((const float *)bias)[w->oc] : 0.0f;
  *(float *)output = tflm_clamp_float(acc, p->float_min, p->float_max);
}

/* The outputs of pixel (oy, ox) of one image, the block's channels (`out`: the pixel's
 * first output, channel 0). */
static TFLM_ALWAYS_INLINE void tflm_conv_pixel(const tflm_conv_params_t *p,
                                               const tflm_requant_t *requant,
                                               const void *image, const void *filter,
                                               const void *bias, int32_t oy, int32_t ox,
                                               uint8_t *out, int32_t out_bytes,
                                               const tflm_conv_block_t *block,
                                               tflm_conv_taps_fn taps,
                                               tflm_conv_output_fn one) {
  tflm_conv_window_t w;
  int32_t oc;
  out += block->first * out_bytes;
  for (oc = block->first; oc < block->first + block->count; ++oc, out += out_bytes) {
    tflm_conv_window(p, oy, ox, oc, block, &w);
    one(p, requant, image, filter, bias, &w, out, taps);
  }
}

/* Every output of the block's channels in NHWC order: images of `in_bytes` elements,
 * outputs of `out_bytes`; `filter` holds the block's weights.  With `may_walk_back`
 * (depthwise), an output the planner started inside its input (one image,
 * tflm_gen.overlap.backward_start; for a compressed filter only when it is one block) is
 * written last pixel first, so each pixel only covers input no pixel still to come reads. */
static TFLM_ALWAYS_INLINE void tflm_conv_walk(const tflm_conv_params_t *p,
                                              const tflm_requant_t *requant, const void *input,
                                              int32_t in_bytes, const void *filter,
                                              const void *bias, void *output,
                                              int32_t out_bytes, const tflm_conv_block_t *block,
                                              tflm_conv_taps_fn taps, tflm_conv_output_fn one,
                                              int may_walk_back) {
  uint8_t *out = (uint8_t *)output;
  /* Local copies: the outputs' stores cannot alias them, so they stay in registers. */
  tflm_requant_t arrays = {NULL, NULL};
  const tflm_conv_block_t channels = *block;
  const size_t pixel_bytes = (size_t)(p->output_c * out_bytes);
  int32_t b, oy, ox;
  if (requant != NULL) arrays = *requant;
  if (may_walk_back && p->batches == 1 &&
      tflm_starts_inside(input, (size_t)tflm_conv_image_size(p) * (size_t)in_bytes, output)) {
    for (oy = p->output_h - 1; oy >= 0; --oy) {
      for (ox = p->output_w - 1; ox >= 0; --ox) {
        tflm_conv_pixel(p, &arrays, input, filter, bias, oy, ox,
                        out + (size_t)(oy * p->output_w + ox) * pixel_bytes, out_bytes,
                        &channels, taps, one);
      }
    }
    return;
  }
  for (b = 0; b < p->batches; ++b) {
    const uint8_t *image =
        (const uint8_t *)input + (size_t)(b * tflm_conv_image_size(p)) * in_bytes;
    for (oy = 0; oy < p->output_h; ++oy) {
      for (ox = 0; ox < p->output_w; ++ox, out += pixel_bytes) {
        tflm_conv_pixel(p, &arrays, image, filter, bias, oy, ox, out, out_bytes, &channels,
                        taps, one);
      }
    }
  }
}

/* The walk of the call's int8 or int16 type (call's params a tflm_conv_params_t) over the
 * block's channels, their weights in `filter` (the node's whole filter, or a decoded
 * block's); `may_walk_back` as tflm_conv_walk (a depthwise block of every channel: the
 * planner overlaps it like the uncoded kernel). */
static TFLM_ALWAYS_INLINE void tflm_conv_walk_quantized(const tflm_weighted_call_t *call,
                                                        const void *filter,
                                                        const tflm_conv_block_t *block,
                                                        tflm_conv_taps_fn taps,
                                                        int may_walk_back) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  if (p->type == TFLM_TYPE_INT8) {
    tflm_conv_walk(p, &call->requant, call->data.input, 1, filter, call->data.bias,
                   call->data.output, 1, block, taps, tflm_conv_output_int8, may_walk_back);
  } else {
    tflm_conv_walk(p, &call->requant, call->data.input, 2, filter, call->data.bias,
                   call->data.output, 2, block, taps, tflm_conv_output_int16, may_walk_back);
  }
}

/* A reference conv or depthwise run of `type` (a constant: TFLM_WEIGHTED_REFERENCE_DEFINE):
 * the whole filter (`whole`), or, when it is compressed (int8 / int16 only), each decoded
 * block of `row` weights per channel through `decoded` (with `dead`, only the live
 * channels: tflm_weighted_decoded_live). */
static TFLM_ALWAYS_INLINE tflm_status_t tflm_conv_run(tflm_context_t *ctx,
                                                      const tflm_weighted_call_t *call,
                                                      int32_t type,
                                                      const tflm_conv_block_t *whole,
                                                      int32_t row,
                                                      tflm_weighted_block_fn decoded,
                                                      tflm_weighted_dead_fn dead,
                                                      tflm_conv_taps_fn taps,
                                                      int may_walk_back) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  const tflm_requant_t *requant = type == TFLM_TYPE_FLOAT32 ? NULL : &call->requant;
  const int32_t bytes = type == TFLM_TYPE_INT8 ? 1 : type == TFLM_TYPE_INT16 ? 2 : 4;
  if (p->decode_scratch >= 0 && dead != NULL) {
    return tflm_weighted_decoded_live(ctx, call, p->decode_scratch, p->output_c, row,
                                      decoded, dead);
  }
  if (p->decode_scratch >= 0) {
    return tflm_weighted_decoded(ctx, call, p->decode_scratch, p->output_c, row, decoded);
  }
  tflm_conv_walk(p, requant, call->data.input, bytes, call->data.filter, call->data.bias,
                 call->data.output, bytes, whole, taps,
                 type == TFLM_TYPE_INT8    ? tflm_conv_output_int8
                 : type == TFLM_TYPE_INT16 ? tflm_conv_output_int16
                                           : tflm_conv_output_float32,
                 may_walk_back);
  return TFLM_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* TFLM_CONV_WALK_H */
