/* Fixed-point helpers shared by the quantised kernels (see tflm_quant.h).
 *
 * Written from the arithmetic TFLM documents for its reference kernels: gemmlowp-style
 * "doubling high multiply" then a rounding right shift (two roundings), and, for 64-bit
 * accumulators, a multiplier reduced to 16 bits with a single rounding shift.
 *
 * Portability: everything that can exceed 32767 is int32_t or int64_t (int may be 16 bits);
 * constants are built with INT32_C / INT64_C for the same reason.  Right shifts of negative
 * values are assumed arithmetic, as on every compiler we target (gcc, clang, armcc, IAR). */
#include "tflm_quant.h"

#include "tflm_schema.h" /* TFLM_ACT_* */

#include <float.h>
#include <math.h>

int32_t tflm_multiply_by_quantized_multiplier_64(int64_t x, int32_t multiplier, int32_t shift) {
  /* The Q31 multiplier is rounded to Q15 so that x (up to 48 bits) times it fits in 64 bits;
   * multipliers that would round up to 2^15 saturate at 0x7FFF instead. */
  const int32_t reduced = multiplier < INT32_C(0x7FFF0000)
                              ? (multiplier + (INT32_C(1) << 15)) >> 16
                              : INT32_C(0x7FFF);
  /* Real models have shift <= 0 here (multipliers below 1); a corrupt scale ratio can give
   * up to 31, where TFLM would shift by a negative amount.  Capping keeps it defined. */
  const int32_t total_shift = shift < 15 ? 15 - shift : 1;
  /* Wrapping multiply: a crafted int64 bias can push x past 48 bits. */
  const int64_t rounded = (int64_t)((uint64_t)x * (uint64_t)(int64_t)reduced +
                                    (UINT64_C(1) << (total_shift - 1)));
  return (int32_t)(rounded >> total_shift);
}

void tflm_quantize_multiplier(double real_multiplier, int32_t *multiplier, int32_t *shift) {
  int exponent = 0; /* frexp's own type */
  double significand;
  int64_t fixed;
  /* Zero, NaN and infinity: converting the last two would be undefined.  They come from
   * the NaN/inf scales converters give all-zero tensors (the graph check allows them on no
   * others) or from a float ratio of extreme scales, and give 0 as in
   * tflm_gen/requant.py's quantize_multiplier. */
  if (real_multiplier == 0.0 || real_multiplier != real_multiplier ||
      real_multiplier > DBL_MAX || real_multiplier < -DBL_MAX) {
    *multiplier = 0;
    *shift = 0;
    return;
  }
  /* real = significand * 2^exponent with significand in [0.5, 1). */
  significand = frexp(real_multiplier, &exponent);
  fixed = (int64_t)round(significand * (double)(INT64_C(1) << 31));
  if (fixed == (INT64_C(1) << 31)) { /* rounding reached 1.0: renormalise */
    fixed /= 2;
    ++exponent;
  }
  if (exponent < -31) { /* too small to represent: TFLM flushes to zero */
    exponent = 0;
    fixed = 0;
  }
  if (exponent > 31) { /* only a corrupt scale gets here: saturate, never shift by 32+ */
    exponent = 31;
    fixed = INT32_C(0x7FFFFFFF);
  }
  *multiplier = (int32_t)fixed;
  *shift = (int32_t)exponent;
}

int32_t tflm_float_to_int32_saturating(float value) {
  if (value != value) return 0;
  if (value <= -2147483648.0f) return INT32_MIN;
  if (value >= 2147483648.0f) return INT32_MAX;
  return (int32_t)value;
}

/* zero_point + round(value / scale) in float, as TFLM quantises activation bounds.  Where
 * TFLM would refuse (the result does not fit int32) the value saturates instead. */
static int32_t quantize_bound(float value, float scale, int32_t zero_point) {
  const float q = roundf(value / scale);
  int64_t result;
  if (!(q > -2147483648.0f)) { /* also catches NaN (scale 0 with value 0) */
    result = INT32_MIN;
  } else if (q >= 2147483648.0f) {
    result = INT32_MAX;
  } else {
    result = (int64_t)q;
  }
  result += zero_point;
  if (result < INT32_MIN) result = INT32_MIN;
  if (result > INT32_MAX) result = INT32_MAX;
  return (int32_t)result;
}

void tflm_activation_range_quantized(int32_t activation, float scale, int32_t zero_point,
                                     int32_t qmin, int32_t qmax, int32_t *lo, int32_t *hi) {
  float bound_lo = 0.0f;
  float bound_hi = 0.0f;
  int32_t q;
  *lo = qmin;
  *hi = qmax;
  /* Other activations (NONE, and TANH/SIGN_BIT which TFLM treats alike) keep the type range. */
  if (activation == TFLM_ACT_RELU_N1_TO_1) {
    bound_lo = -1.0f;
    bound_hi = 1.0f;
  } else if (activation == TFLM_ACT_RELU6) {
    bound_hi = 6.0f;
  } else if (activation != TFLM_ACT_RELU) {
    return;
  }
  q = quantize_bound(bound_lo, scale, zero_point);
  *lo = q > qmin ? q : qmin;
  if (activation != TFLM_ACT_RELU) {
    q = quantize_bound(bound_hi, scale, zero_point);
    *hi = q < qmax ? q : qmax;
  }
}

void tflm_activation_range_float(int32_t activation, float *lo, float *hi) {
  /* Without an activation TFLM still clamps to the finite float range. */
  *lo = -FLT_MAX;
  *hi = FLT_MAX;
  if (activation == TFLM_ACT_RELU) {
    *lo = 0.0f;
  } else if (activation == TFLM_ACT_RELU6) {
    *lo = 0.0f;
    *hi = 6.0f;
  } else if (activation == TFLM_ACT_RELU_N1_TO_1) {
    *lo = -1.0f;
    *hi = 1.0f;
  }
}

float tflm_clamp_float(float x, float lo, float hi) {
  const float low_clamped = x < lo ? lo : x;
  return hi < low_clamped ? hi : low_clamped;
}
