/* DEPTHWISE_CONV_2D reference kernels: float32, int8 (per-channel or per-tensor int8 filter,
 * int32 bias) and int16 activations with int8 filter and int64 bias.
 *
 * Output channel oc = in_channel * depth_multiplier + m reads only input channel
 * oc / depth_multiplier.  Each output sums over filter_y, filter_x (skipping taps outside the
 * input), then adds the bias, then clamps: TFLM's order, so floats are bit-identical.
 * Layouts and the persistent block: conv_common.h; prepare: conv_common.c. */
#include <stddef.h>
#include <stdint.h>

#include "conv_hybrid.h"
#include "depthwise_reference.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Where one output pixel's window starts in the input (negative inside the padding). */
typedef struct {
  int32_t y0;
  int32_t x0;
  int32_t in_c; /* the input channel feeding the output channel */
  int32_t out_c;
} depthwise_window_t;

/* Index of input pixel (in_y, in_x) channel w->in_c, or -1 when it lies in the padding. */
static int32_t input_index(const tflm_conv_params_t *p, const depthwise_window_t *w, int32_t fy,
                           int32_t fx) {
  const int32_t in_y = w->y0 + p->dilation_h * fy;
  const int32_t in_x = w->x0 + p->dilation_w * fx;
  if (in_y < 0 || in_y >= p->input_h || in_x < 0 || in_x >= p->input_w) return -1;
  return (in_y * p->input_w + in_x) * p->input_c + w->in_c;
}

static int32_t depthwise_dot_int8(const tflm_conv_params_t *p, const int8_t *input,
                                  const int8_t *filter, const depthwise_window_t *w) {
  int32_t acc = 0;
  int32_t fy, fx;
  for (fy = 0; fy < p->filter_h; ++fy) {
    for (fx = 0; fx < p->filter_w; ++fx) {
      const int32_t i = input_index(p, w, fy, fx);
      if (i < 0) continue;
      acc = tflm_mac_wrap(acc, filter[(fy * p->filter_w + fx) * p->output_c + w->out_c],
                          (int32_t)input[i] + p->input_offset);
    }
  }
  return acc;
}

static int64_t depthwise_dot_int16(const tflm_conv_params_t *p, const int16_t *input,
                                   const int8_t *filter, const depthwise_window_t *w) {
  int64_t acc = 0;
  int32_t fy, fx;
  for (fy = 0; fy < p->filter_h; ++fy) {
    for (fx = 0; fx < p->filter_w; ++fx) {
      const int32_t i = input_index(p, w, fy, fx);
      if (i < 0) continue;
      acc += (int64_t)((int32_t)filter[(fy * p->filter_w + fx) * p->output_c + w->out_c] *
                       (int32_t)input[i]);
    }
  }
  return acc;
}

static float depthwise_dot_float32(const tflm_conv_params_t *p, const float *input,
                                   const float *filter, const depthwise_window_t *w) {
  float acc = 0.0f;
  int32_t fy, fx;
  for (fy = 0; fy < p->filter_h; ++fy) {
    for (fx = 0; fx < p->filter_w; ++fx) {
      const int32_t i = input_index(p, w, fy, fx);
      if (i < 0) continue;
      acc += input[i] * filter[(fy * p->filter_w + fx) * p->output_c + w->out_c];
    }
  }
  return acc;
}

static int32_t image_size(const tflm_conv_params_t *p) {
  return p->input_h * p->input_w * p->input_c;
}

static void depthwise_window(const tflm_conv_params_t *p, int32_t oy, int32_t ox, int32_t oc,
                             depthwise_window_t *w) {
  w->y0 = oy * p->stride_h - p->pad_h;
  w->x0 = ox * p->stride_w - p->pad_w;
  w->in_c = oc / p->depth_multiplier;
  w->out_c = oc;
}

void tflm_depthwise_conv_int8(const tflm_conv_params_t *p, const tflm_requant_t *requant, const int8_t *input,
                              const int8_t *filter, const int32_t *bias, int8_t *output) {
  const int32_t *multipliers = requant->multipliers;
  const int32_t *shifts = requant->shifts;
  int32_t b, oy, ox, oc;
  depthwise_window_t w;
  for (b = 0; b < p->batches; ++b) {
    const int8_t *image = input + b * image_size(p);
    for (oy = 0; oy < p->output_h; ++oy) {
      for (ox = 0; ox < p->output_w; ++ox) {
        for (oc = 0; oc < p->output_c; ++oc) {
          int32_t acc;
          depthwise_window(p, oy, ox, oc, &w);
          acc = depthwise_dot_int8(p, image, filter, &w);
          if (bias != NULL) acc = tflm_add_wrap(acc, bias[oc]);
          *output++ = (int8_t)tflm_requantize(acc, multipliers[oc], shifts[oc],
                                              p->output_offset, p->act_min, p->act_max);
        }
      }
    }
  }
}

/* 16x8: no zero points (int16 is symmetric), 64-bit accumulator and bias. */
void tflm_depthwise_conv_int16(const tflm_conv_params_t *p, const tflm_requant_t *requant, const int16_t *input,
                               const int8_t *filter, const int64_t *bias, int16_t *output) {
  const int32_t *multipliers = requant->multipliers;
  const int32_t *shifts = requant->shifts;
  int32_t b, oy, ox, oc;
  depthwise_window_t w;
  for (b = 0; b < p->batches; ++b) {
    const int16_t *image = input + b * image_size(p);
    for (oy = 0; oy < p->output_h; ++oy) {
      for (ox = 0; ox < p->output_w; ++ox) {
        for (oc = 0; oc < p->output_c; ++oc) {
          int64_t acc;
          int32_t scaled;
          depthwise_window(p, oy, ox, oc, &w);
          acc = depthwise_dot_int16(p, image, filter, &w);
          if (bias != NULL) acc = tflm_add_wrap64(acc, bias[oc]);
          scaled = tflm_multiply_by_quantized_multiplier_64(acc, multipliers[oc], shifts[oc]);
          scaled = scaled > p->act_min ? scaled : p->act_min;
          *output++ = (int16_t)(scaled < p->act_max ? scaled : p->act_max);
        }
      }
    }
  }
}

void tflm_depthwise_conv_float32(const tflm_conv_params_t *p, const float *input,
                                 const float *filter, const float *bias, float *output) {
  int32_t b, oy, ox, oc;
  depthwise_window_t w;
  for (b = 0; b < p->batches; ++b) {
    const float *image = input + b * image_size(p);
    for (oy = 0; oy < p->output_h; ++oy) {
      for (ox = 0; ox < p->output_w; ++ox) {
        for (oc = 0; oc < p->output_c; ++oc) {
          float acc;
          depthwise_window(p, oy, ox, oc, &w);
          acc = depthwise_dot_float32(p, image, filter, &w);
          /* TFLM adds a bias of 0.0f when there is none; -0.0f + 0.0f is +0.0f. */
          acc += bias != NULL ? bias[oc] : 0.0f;
          *output++ = tflm_clamp_float(acc, p->float_min, p->float_max);
        }
      }
    }
  }
}

TFLM_WEIGHTED_RUN_FLOAT(tflm_depthwise_conv_run_float32, tflm_depthwise_conv_float32)
TFLM_WEIGHTED_RUN_QUANT(tflm_depthwise_conv_run_int8, tflm_depthwise_conv_int8)
TFLM_WEIGHTED_RUN_QUANT(tflm_depthwise_conv_run_int16, tflm_depthwise_conv_int16)

const tflm_weighted_kernels_t tflm_depthwise_conv_reference_kernels = {
    tflm_conv_requant, tflm_conv_hybrid_eval, tflm_depthwise_conv_run_float32, tflm_depthwise_conv_run_int8,
    tflm_depthwise_conv_run_int16};
