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

static float tflm_mul_float_value(const tflm_mul_params_t *p, float a, float b) {
  return tflm_clamp_float(a * b, p->binary.act_min_f, p->binary.act_max_f);
}

static int32_t tflm_mul_int32_value(const tflm_mul_params_t *p, int32_t a, int32_t b) {
  /* Wraps on overflow without signed-overflow UB. */
  return tflm_clamp_int32((int32_t)((uint32_t)a * (uint32_t)b), p->binary.act_min,
                          p->binary.act_max);
}

static int32_t tflm_mul_quantized(const tflm_mul_params_t *p, int32_t a, int32_t b) {
  return tflm_clamp_int32(
      tflm_multiply_by_quantized_multiplier((a + p->input1_offset) * (b + p->input2_offset),
                                            p->output_multiplier, p->output_shift) +
          p->output_offset,
      p->binary.act_min, p->binary.act_max);
}

TFLM_BINARY_ARITHMETIC_ROWS(, tflm_mul_rows, tflm_mul_params_t, tflm_mul_float_value,
                            tflm_mul_quantized, tflm_mul_int32_value);
