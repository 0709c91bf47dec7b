/* The output loop nest CONV_2D and DEPTHWISE_CONV_2D's reference kernels share, one per
 * activation type: for each batch, output row, column and channel, the op's dot product over
 * its window, then the bias, then requantisation (or the float clamp), written in NHWC order.
 *
 * The walks are always inlined (tflm_compiler.h) and take the op's walk over the taps of a
 * window as a function, which takes the type's multiply-accumulate: each kernel calls each
 * walk once with its static tap walk, so the compiler inlines all three and the loops cost
 * what a hand-written nest costs. */
#ifndef TFLM_CONV_WALK_H
#define TFLM_CONV_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "conv_common.h"
#include "tflm_compiler.h"
#include "tflm_quant.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where one output's window starts in the input (negative inside the padding), and its
 * output channel. */
typedef struct {
  int32_t y0;
  int32_t x0;
  int32_t oc;
} tflm_conv_window_t;

/* Adds `count` products of one tap (input against filter elements) to *acc:
 * int8 images with the input offset in an int32 that wraps as TFLM's does, int16 images in
 * an int64, floats in a float. */
static TFLM_ALWAYS_INLINE void tflm_conv_mac_int8(void *acc, const void *in, const void *f,
                                                  int32_t count, int32_t offset) {
  int32_t c;
  for (c = 0; c < count; ++c) {
    *(int32_t *)acc = tflm_mac_wrap(*(int32_t *)acc, ((const int8_t *)f)[c],
                                    (int32_t)((const int8_t *)in)[c] + offset);
  }
}

static TFLM_ALWAYS_INLINE void tflm_conv_mac_int16(void *acc, const void *in, const void *f,
                                                   int32_t count, int32_t offset) {
  int32_t c;
  (void)offset;
  for (c = 0; c < count; ++c) {
    *(int64_t *)acc +=
        (int64_t)((int32_t)((const int8_t *)f)[c] * (int32_t)((const int16_t *)in)[c]);
  }
}

static TFLM_ALWAYS_INLINE void tflm_conv_mac_float32(void *acc, const void *in,
                                                     const void *f, int32_t count,
                                                     int32_t offset) {
  int32_t c;
  (void)offset;
  for (c = 0; c < count; ++c) {
    *(float *)acc += ((const float *)in)[c] * ((const float *)f)[c];
  }
}

typedef void (*tflm_conv_mac_fn)(void *acc, const void *in, const void *f, int32_t count,
                                 int32_t offset);

/* The op's walk over the taps of one output's window (conv: every input channel of the
 * group per tap; depthwise: one), calling `mac` per tap; elements of `in_bytes` /
 * `f_bytes`. */
typedef void (*tflm_conv_taps_fn)(const tflm_conv_params_t *p, const void *input,
                                  int32_t in_bytes, const void *filter, int32_t f_bytes,
                                  const tflm_conv_window_t *w, void *acc, tflm_conv_mac_fn mac);

/* Elements of one input image. */
static inline int32_t tflm_conv_image_size(const tflm_conv_params_t *p) {
  return p->input_h * p->input_w * p->input_c;
}

static TFLM_ALWAYS_INLINE void tflm_conv_window(const tflm_conv_params_t *p, int32_t oy,
                                                int32_t ox, int32_t oc,
                                                tflm_conv_window_t *w) {
  w->y0 = oy * p->stride_h - p->pad_h;
  w->x0 = ox * p->stride_w - p->pad_w;
  w->oc = oc;
}

static TFLM_ALWAYS_INLINE void tflm_conv_walk_int8(const tflm_conv_params_t *p,
                                                   const tflm_requant_t *requant,
                                                   const int8_t *input, const int8_t *filter,
                                                   const int32_t *bias, int8_t *output,
                                                   tflm_conv_taps_fn taps) {
  const int32_t *multipliers = requant->multipliers;
  const int32_t *shifts = requant->shifts;
  int32_t b, oy, ox, oc;
  tflm_conv_window_t w;
  for (b = 0; b < p->batches; ++b) {
    const int8_t *image = input + b * tflm_conv_image_size(p);
    for (oy = 0; oy < p->output_h; ++oy) {
      for (ox = 0; ox < p->output_w; ++ox) {
        for (oc = 0; oc < p->output_c; ++oc) {
          int32_t acc = 0;
          tflm_conv_window(p, oy, ox, oc, &w);
          taps(p, image, 1, filter, 1, &w, &acc, tflm_conv_mac_int8);
          if (bias != NULL) acc = tflm_add_wrap(acc, bias[oc]);
          *output++ = (int8_t)tflm_requantize(acc, multipliers[oc], shifts[oc],
                                              p->output_offset, p->act_min, p->act_max);
        }
      }
    }
  }
}

/* 16x8: no zero points (int16 is symmetric), 64-bit accumulator and bias. */
static TFLM_ALWAYS_INLINE void tflm_conv_walk_int16(const tflm_conv_params_t *p,
                                                    const tflm_requant_t *requant,
                                                    const int16_t *input, const int8_t *filter,
                                                    const int64_t *bias, int16_t *output,
                                                    tflm_conv_taps_fn taps) {
  const int32_t *multipliers = requant->multipliers;
  const int32_t *shifts = requant->shifts;
  int32_t b, oy, ox, oc;
  tflm_conv_window_t w;
  for (b = 0; b < p->batches; ++b) {
    const int16_t *image = input + b * tflm_conv_image_size(p);
    for (oy = 0; oy < p->output_h; ++oy) {
      for (ox = 0; ox < p->output_w; ++ox) {
        for (oc = 0; oc < p->output_c; ++oc) {
          int64_t acc = 0;
          int32_t scaled;
          tflm_conv_window(p, oy, ox, oc, &w);
          taps(p, image, 2, filter, 1, &w, &acc, tflm_conv_mac_int16);
          if (bias != NULL) acc = tflm_add_wrap64(acc, bias[oc]);
          scaled = tflm_multiply_by_quantized_multiplier_64(acc, multipliers[oc], shifts[oc]);
          scaled = scaled > p->act_min ? scaled : p->act_min;
          *output++ = (int16_t)(scaled < p->act_max ? scaled : p->act_max);
        }
      }
    }
  }
}

static TFLM_ALWAYS_INLINE void tflm_conv_walk_float32(const tflm_conv_params_t *p,
                                                      const float *input, const float *filter,
                                                      const float *bias, float *output,
                                                      tflm_conv_taps_fn taps) {
  int32_t b, oy, ox, oc;
  tflm_conv_window_t w;
  for (b = 0; b < p->batches; ++b) {
    const float *image = input + b * tflm_conv_image_size(p);
    for (oy = 0; oy < p->output_h; ++oy) {
      for (ox = 0; ox < p->output_w; ++ox) {
        for (oc = 0; oc < p->output_c; ++oc) {
          float acc = 0.0f;
          tflm_conv_window(p, oy, ox, oc, &w);
          taps(p, image, 4, filter, 4, &w, &acc, tflm_conv_mac_float32);
          /* TFLM adds a bias of 0.0f when there is none; -0.0f + 0.0f is +0.0f. */
          acc += bias != NULL ? bias[oc] : 0.0f;
          *output++ = tflm_clamp_float(acc, p->float_min, p->float_max);
        }
      }
    }
  }
}

#ifdef __cplusplus
}
#endif

#endif /* TFLM_CONV_WALK_H */
