/* CONV_2D reference kernels: float32, int8 (per-channel or per-tensor int8 filter, int32
 * bias) and int16 activations with int8 filter and int64 bias ("16x8").
 *
 * Each output is the sum over filter_y, filter_x, in_channel (in that order, skipping taps
 * outside the input), then the bias, then the activation clamp: the order of TFLM's
 * reference kernels, so float results are bit-identical too.  Layouts and the persistent
 * block are described in conv_common.h; prepare lives in conv_common.c. */
#include <stddef.h>
#include <stdint.h>

#include "conv_hybrid.h"
#include "conv_reference.h"
#include "conv_walk.h"
#include "tflm_compiler.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Elements of one filter (one output channel). */
static int32_t conv_filter_size(const tflm_conv_params_t *p) {
  return p->filter_h * p->filter_w * p->filter_c;
}

/* The taps of one output's window: per tap, the channels of the output channel's group. */
static inline void conv_taps(const tflm_conv_params_t *p, const void *input,
                                         int32_t in_bytes, const void *filter,
                                         int32_t f_bytes, const tflm_conv_window_t *w,
                                         void *acc, tflm_conv_mac_fn mac) {
  const int32_t in_c0 = (w->oc / p->filters_per_group) * p->filter_c;
  const uint8_t *f = (const uint8_t *)filter + (size_t)(w->oc * conv_filter_size(p)) * f_bytes;
  tflm_conv_taps(p, input, in_bytes, in_c0, f, f_bytes, p->filter_c, p->filter_c, w, acc, mac);
}

void tflm_conv_int8(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                    const int8_t *input, const int8_t *filter, const int32_t *bias,
                    int8_t *output) {
  tflm_conv_walk(p, requant, input, 1, filter, bias, output, 1, conv_taps,
                 tflm_conv_output_int8, 0);
}

void tflm_conv_int16(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                     const int16_t *input, const int8_t *filter, const int64_t *bias,
                     int16_t *output) {
  tflm_conv_walk(p, requant, input, 2, filter, bias, output, 2, conv_taps,
                 tflm_conv_output_int16, 0);
}

void tflm_conv_float32(const tflm_conv_params_t *p, const float *input, const float *filter,
                       const float *bias, float *output) {
  tflm_conv_walk(p, NULL, input, 4, filter, bias, output, 4, conv_taps,
                 tflm_conv_output_float32, 0);
}

TFLM_WEIGHTED_RUN_FLOAT(tflm_conv_run_float32, tflm_conv_float32)
TFLM_WEIGHTED_RUN_QUANT(tflm_conv_run_int8, tflm_conv_int8)
TFLM_WEIGHTED_RUN_QUANT(tflm_conv_run_int16, tflm_conv_int16)

const tflm_weighted_kernels_t tflm_conv_reference_kernels = {
    tflm_conv_requant, tflm_conv_hybrid_eval, tflm_conv_run_float32, tflm_conv_run_int8,
    tflm_conv_run_int16};
