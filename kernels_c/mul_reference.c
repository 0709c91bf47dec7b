/* MUL with numpy-style broadcasting, bit-exact with TFLM's reference kernels.
 *   float32: a * b clamped to the fused activation's range.
 *   int8 / int16: (a - zp1) * (b - zp2) rescaled by scale1 * scale2 / scale_out (a Q31
 *   multiplier computed in double in prepare), plus zp_out, clamped to the activation
 *   range.  TFLM requires zero points of 0 for int16.
 *   int32: a * b clamped to the activation range. */
#include <stddef.h>
#include <stdint.h>

#include "mul_reference.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

void tflm_mul_float(const void *params, const void *const *in, const int32_t *step,
                    void *out, int32_t n) {
  const tflm_mul_params_t *p = (const tflm_mul_params_t *)params;
  const float *x = (const float *)in[0];
  const float *y = (const float *)in[1];
  float *z = (float *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = tflm_clamp_float(x[i * step[0]] * y[i * step[1]], p->act_min_f, p->act_max_f);
  }
}

void tflm_mul_int32(const void *params, const void *const *in, const int32_t *step,
                    void *out, int32_t n) {
  const tflm_mul_params_t *p = (const tflm_mul_params_t *)params;
  const int32_t *x = (const int32_t *)in[0];
  const int32_t *y = (const int32_t *)in[1];
  int32_t *z = (int32_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    /* Wraps on overflow without signed-overflow UB. */
    int32_t v = (int32_t)((uint32_t)x[i * step[0]] * (uint32_t)y[i * step[1]]);
    v = v > p->act_min ? v : p->act_min;
    z[i] = v < p->act_max ? v : p->act_max;
  }
}

int32_t tflm_mul_quantized(const tflm_mul_params_t *p, int32_t a, int32_t b) {
  int32_t v = tflm_multiply_by_quantized_multiplier((a + p->input1_offset) *
                                                        (b + p->input2_offset),
                                                    p->output_multiplier, p->output_shift) +
              p->output_offset;
  v = v > p->act_min ? v : p->act_min;
  return v < p->act_max ? v : p->act_max;
}

void tflm_mul_int8(const void *params, const void *const *in, const int32_t *step,
                   void *out, int32_t n) {
  const tflm_mul_params_t *p = (const tflm_mul_params_t *)params;
  const int8_t *x = (const int8_t *)in[0];
  const int8_t *y = (const int8_t *)in[1];
  int8_t *z = (int8_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = (int8_t)tflm_mul_quantized(p, x[i * step[0]], y[i * step[1]]);
  }
}

void tflm_mul_int16(const void *params, const void *const *in, const int32_t *step,
                    void *out, int32_t n) {
  const tflm_mul_params_t *p = (const tflm_mul_params_t *)params;
  const int16_t *x = (const int16_t *)in[0];
  const int16_t *y = (const int16_t *)in[1];
  int16_t *z = (int16_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = (int16_t)tflm_mul_quantized(p, x[i * step[0]], y[i * step[1]]);
  }
}

