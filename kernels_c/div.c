/* tflm-op: DIV tflm_op_div types: float32,int32,int8 */
/* DIV with numpy-style broadcasting, bit-exact with TFLM's reference kernels:
 *   float32: a / b clamped to the fused activation's range.
 *   int32: a / b (C division, truncating toward zero) clamped to the activation range.
 *   A zero int32 divisor gives 0 here; TFLM's result is undefined there.
 *   int8: with a = x - x_zero_point and b = y - y_zero_point (both negated when b < 0),
 *   a is normalised by its sign headroom h, multiplied in Q31 by the fixed-point
 *   reciprocal of b (1 / (b / 2^r)), then by the output multiplier
 *   x_scale / (y_scale * out_scale) with a rounding right shift by
 *   r + h - output_shift, plus the output zero point, clamped.  A zero b gives the output
 *   zero point here; TFLM's result is undefined there.
 *   When that right shift reaches 32 or more (a small numerator over a large divisor),
 *   TFLM's rounding shift is undefined C++; the tflite-micro build the generator is
 *   checked against (x86-64) then shifts by the count modulo 32 and adds one whenever
 *   the masked remainder exceeds its threshold (so a numerator at its zero point gives
 *   the output zero point + 1, and 1 / 100 can give 127).  This kernel reproduces that
 *   result with defined C arithmetic, so it matches the oracle rather than the real
 *   quotient there (TFLM built for Arm shifts differently and would disagree with both). */
#include <stddef.h>
#include <stdint.h>

#include "tflm_elementwise.h"
#include "tflm_fixedpoint.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  tflm_binary_t binary; /* shape, types, activation clamp (int8: quantised) */
  int32_t input1_offset, input2_offset, output_offset; /* int8: -zero points, +zero point */
  int32_t output_multiplier, output_shift;             /* int8: x_s / (y_s * out_s) */
} tflm_div_params_t;

static float tflm_div_float_value(const tflm_div_params_t *p, float a, float b) {
  return tflm_clamp_float(a / b, p->binary.act_min_f, p->binary.act_max_f);
}

static int32_t tflm_div_int32_value(const tflm_div_params_t *p, int32_t a, int32_t b) {
  return tflm_clamp_int32((b == 0 || (b == -1 && a == INT32_MIN)) ? 0 : a / b,
                          p->binary.act_min, p->binary.act_max);
}

/* x / 2^exponent, ties away from zero, for 0 <= exponent < 64.  Below 32 this is
 * tflm_rounding_divide_by_pot; from 32 on it is what TFLM's reference computes on x86-64,
 * where its int32 mask (2^exponent - 1 truncated) is all ones and the arithmetic shift
 * count is taken modulo 32. */
static int32_t tflm_div_shift_right(int32_t x, int32_t exponent) {
  if (exponent < 32) return tflm_rounding_divide_by_pot(x, exponent);
  /* remainder x & -1 == x against the threshold -1 (0 for negative x) */
  return (x >> (exponent & 31)) + (x > (x < 0 ? 0 : -1) ? 1 : 0);
}

static int32_t tflm_div_int8_value(const tflm_div_params_t *p, int32_t a, int32_t b) {
  int32_t recip_shift, headroom, inverse, quotient, v = p->output_offset;
  if (b != 0) { /* a zero divisor is undefined in TFLM: the (clamped) zero point here */
    if (b < 0) {
      a = -a;
      b = -b;
    }
    inverse = tflm_fp_reciprocal(b, 31, &recip_shift);
    /* Leading sign bits of a, less one (31 for 0 and -1). */
    headroom = (a >= 0 ? tflm_fp_count_leading_zeros((uint32_t)a)
                       : tflm_fp_count_leading_zeros(~(uint32_t)a)) -
               1;
    /* a * 2^headroom fits int32 by the choice of headroom. */
    quotient = tflm_saturating_rounding_doubling_high_mul((int32_t)((uint32_t)a << headroom),
                                                          inverse);
    v += tflm_div_shift_right(
        tflm_saturating_rounding_doubling_high_mul(quotient, p->output_multiplier),
        recip_shift + headroom - p->output_shift);
  }
  return tflm_clamp_int32(v, p->binary.act_min, p->binary.act_max);
}

/* The stored int8 values offset by their zero points, then divided. */
static int32_t tflm_div_int8_stored(const tflm_div_params_t *p, int32_t x, int32_t y) {
  return tflm_div_int8_value(p, x + p->input1_offset, y + p->input2_offset);
}

static TFLM_BINARY_ROW(tflm_div_float, tflm_div_params_t, float, float, tflm_div_float_value)
static TFLM_BINARY_ROW(tflm_div_int32, tflm_div_params_t, int32_t, int32_t, tflm_div_int32_value)
static TFLM_BINARY_ROW(tflm_div_int8, tflm_div_params_t, int8_t, int8_t, tflm_div_int8_stored)

static const tflm_binary_rows_t tflm_div_rows = {
    tflm_div_float, tflm_div_int8, NULL,
    tflm_div_int32, NULL, NULL, 0};

/* int8: the offsets, TFLM's multiplier and the quantised clamp; other types keep zeros. */
static TFLM_BINARY_FINISH(tflm_div_finish) {
  tflm_div_params_t *p = (tflm_div_params_t *)data;
  p->input1_offset = p->input2_offset = p->output_offset = 0;
  p->output_multiplier = p->output_shift = 0;
  if (out->type != TFLM_TYPE_INT8) {
    return TFLM_OK;
  }
  TFLM_KERNEL_CHECK(ctx, node, in[0].scale > 0.0f && in[1].scale > 0.0f && out->scale > 0.0f,
                    TFLM_ERR_BAD_PARAMS);
  p->input1_offset = -in[0].zero_point;
  p->input2_offset = -in[1].zero_point;
  p->output_offset = out->zero_point;
  tflm_quantize_multiplier((double)in[0].scale / ((double)in[1].scale * (double)out->scale),
                           &p->output_multiplier, &p->output_shift);
  /* Keeps every right shift below 64 (see tflm_div_shift_right); a multiplier under
   * 2^-24 would be useless anyway. */
  TFLM_KERNEL_CHECK(ctx, node, p->output_shift >= -24, TFLM_ERR_BAD_PARAMS);
  tflm_activation_range_quantized(activation, out->scale, out->zero_point, -128, 127,
                                  &p->binary.act_min, &p->binary.act_max);
  return TFLM_OK;
}

TFLM_BINARY_OP(tflm_op_div, TFLM_BUILTIN_DIV, tflm_div_rows, tflm_div_params_t,
               TFLM_OPT_DIV_FUSED_ACTIVATION_FUNCTION, 1, tflm_div_finish);
