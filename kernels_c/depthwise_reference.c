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
#include "conv_walk.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Index of channel in_c of the input pixel under tap (fy, fx), or -1 when it lies in the
 * padding. */
static int32_t input_index(const tflm_conv_params_t *p, const tflm_conv_window_t *w,
                           int32_t in_c, int32_t fy, int32_t fx) {
  const int32_t in_y = w->y0 + p->dilation_h * fy;
  const int32_t in_x = w->x0 + p->dilation_w * fx;
  if (in_y < 0 || in_y >= p->input_h || in_x < 0 || in_x >= p->input_w) return -1;
  return (in_y * p->input_w + in_x) * p->input_c + in_c;
}

static inline int32_t depthwise_dot_int8(const tflm_conv_params_t *p, const int8_t *input,
                                  const int8_t *filter, const tflm_conv_window_t *w) {
  int32_t acc = 0;
  const int32_t in_c = w->oc / p->depth_multiplier; /* the one input channel it reads */
  int32_t fy, fx;
  for (fy = 0; fy < p->filter_h; ++fy) {
    for (fx = 0; fx < p->filter_w; ++fx) {
      const int32_t i = input_index(p, w, in_c, fy, fx);
      if (i < 0) continue;
      acc = tflm_mac_wrap(acc, filter[(fy * p->filter_w + fx) * p->output_c + w->oc],
                          (int32_t)input[i] + p->input_offset);
    }
  }
  return acc;
}

static inline int64_t depthwise_dot_int16(const tflm_conv_params_t *p, const int16_t *input,
                                   const int8_t *filter, const tflm_conv_window_t *w) {
  int64_t acc = 0;
  const int32_t in_c = w->oc / p->depth_multiplier; /* the one input channel it reads */
  int32_t fy, fx;
  for (fy = 0; fy < p->filter_h; ++fy) {
    for (fx = 0; fx < p->filter_w; ++fx) {
      const int32_t i = input_index(p, w, in_c, fy, fx);
      if (i < 0) continue;
      acc += (int64_t)((int32_t)filter[(fy * p->filter_w + fx) * p->output_c + w->oc] *
                       (int32_t)input[i]);
    }
  }
  return acc;
}

static inline float depthwise_dot_float32(const tflm_conv_params_t *p, const float *input,
                                   const float *filter, const tflm_conv_window_t *w) {
  float acc = 0.0f;
  const int32_t in_c = w->oc / p->depth_multiplier; /* the one input channel it reads */
  int32_t fy, fx;
  for (fy = 0; fy < p->filter_h; ++fy) {
    for (fx = 0; fx < p->filter_w; ++fx) {
      const int32_t i = input_index(p, w, in_c, fy, fx);
      if (i < 0) continue;
      acc += input[i] * filter[(fy * p->filter_w + fx) * p->output_c + w->oc];
    }
  }
  return acc;
}

void tflm_depthwise_conv_int8(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                              const int8_t *input, const int8_t *filter, const int32_t *bias,
                              int8_t *output) {
  tflm_conv_walk_int8(p, requant, input, filter, bias, output, depthwise_dot_int8);
}

void tflm_depthwise_conv_int16(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                               const int16_t *input, const int8_t *filter,
                               const int64_t *bias, int16_t *output) {
  tflm_conv_walk_int16(p, requant, input, filter, bias, output, depthwise_dot_int16);
}

void tflm_depthwise_conv_float32(const tflm_conv_params_t *p, const float *input,
                                 const float *filter, const float *bias, float *output) {
  tflm_conv_walk_float32(p, input, filter, bias, output, depthwise_dot_float32);
}

TFLM_WEIGHTED_RUN_FLOAT(tflm_depthwise_conv_run_float32, tflm_depthwise_conv_float32)
TFLM_WEIGHTED_RUN_QUANT(tflm_depthwise_conv_run_int8, tflm_depthwise_conv_int8)
TFLM_WEIGHTED_RUN_QUANT(tflm_depthwise_conv_run_int16, tflm_depthwise_conv_int16)

const tflm_weighted_kernels_t tflm_depthwise_conv_reference_kernels = {
    tflm_conv_requant, tflm_conv_hybrid_eval, tflm_depthwise_conv_run_float32,
    tflm_depthwise_conv_run_int8, tflm_depthwise_conv_run_int16};
