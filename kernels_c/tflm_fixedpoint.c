/* Fixed-point exp and reciprocal: see tflm_fixedpoint.h.  Written from the arithmetic that
 * TFLM's reference softmax performs; the constants are round(value * 2^31) (Q0.31) or
 * round(value * 2^29) (Q2.29) of the real numbers named beside them. */
#include "tflm_fixedpoint.h"

#include "tflm_quant.h"

#define TFLM_FP_Q31_ONE INT32_MAX /* 1.0 is not representable in Q0.31: the closest value */

int32_t tflm_fp_count_leading_zeros(uint32_t x) {
  int32_t count = 0;
  if (x == 0u) {
    return 32;
  }
  while ((x & UINT32_C(0x80000000)) == 0u) {
    x <<= 1;
    ++count;
  }
  return count;
}

int32_t tflm_fp_saturating_mul_by_pot(int32_t x, int32_t exponent) {
  int32_t threshold;
  if (exponent == 0) {
    return x;
  }
  if (exponent < 0) {
    return tflm_rounding_divide_by_pot(x, -exponent);
  }
  /* Largest magnitude that survives the shift; beyond it the result saturates. */
  threshold = (int32_t)((UINT32_C(1) << (31 - exponent)) - 1u);
  if (x > threshold) {
    return INT32_MAX;
  }
  if (x < -threshold) {
    return INT32_MIN;
  }
  return (int32_t)((uint32_t)x << exponent);
}

int32_t tflm_fp_rounding_half_sum(int32_t a, int32_t b) {
  int64_t sum = (int64_t)a + (int64_t)b;
  int64_t sign = sum >= 0 ? 1 : -1;
  /* C99 division truncates toward zero, so adding the sign first rounds ties away. */
  return (int32_t)((sum + sign) / 2);
}

/* exp(a) for a in [-1/4, 0), a and result in Q0.31: a 4th-order Taylor expansion around
 * -1/8, exp(-1/8) * (1 + x + x^2/2 + x^3/6 + x^4/24) with x = a + 1/8. */
static int32_t tflm_fp_exp_quarter_interval(int32_t a) {
  const int32_t exp_minus_one_eighth = 1895147668; /* exp(-1/8) */
  const int32_t one_third = 715827883;             /* 1/3 */
  int32_t x = a + ((int32_t)1 << 28);              /* + 1/8 */
  int32_t x2 = tflm_saturating_rounding_doubling_high_mul(x, x);
  int32_t x3 = tflm_saturating_rounding_doubling_high_mul(x2, x);
  int32_t x4 = tflm_saturating_rounding_doubling_high_mul(x2, x2);
  int32_t x4_over_4 = tflm_rounding_divide_by_pot(x4, 2);
  /* ((x^4/4 + x^3) / 3 + x^2) / 2 = x^4/24 + x^3/6 + x^2/2 */
  int32_t poly = tflm_saturating_rounding_doubling_high_mul(x4_over_4 + x3, one_third) + x2;
  poly = tflm_rounding_divide_by_pot(poly, 1);
  return exp_minus_one_eighth +
         tflm_saturating_rounding_doubling_high_mul(exp_minus_one_eighth, x + poly);
}

/* exp(-2^k) in Q0.31 for k = -2 .. 4: the factors applied for each set bit of -a. */
static const int32_t tflm_fp_exp_pot_factors[7] = {
    1672461947, /* exp(-1/4) */
    1302514674, /* exp(-1/2) */
    790015084,  /* exp(-1) */
    290630308,  /* exp(-2) */
    39332535,   /* exp(-4) */
    720401,     /* exp(-8) */
    242,        /* exp(-16) */
};

int32_t tflm_fp_exp_on_negative_values(int32_t a, int32_t integer_bits) {
  const int32_t fractional_bits = 31 - integer_bits;
  const int32_t one_quarter = (int32_t)1 << (fractional_bits - 2);
  /* Split a = r + q with r in [-1/4, 0) and q a non-positive multiple of 1/4. */
  int32_t r = (a & (one_quarter - 1)) - one_quarter;
  uint32_t minus_q = (uint32_t)r - (uint32_t)a; /* -q, whose bits select the factors */
  int32_t result = tflm_fp_exp_quarter_interval(tflm_fp_saturating_mul_by_pot(r, integer_bits));
  int32_t k;
  for (k = -2; k <= 4 && k < integer_bits; ++k) {
    if ((minus_q & (UINT32_C(1) << (fractional_bits + k))) != 0u) {
      result = tflm_saturating_rounding_doubling_high_mul(result, tflm_fp_exp_pot_factors[k + 2]);
    }
  }
  /* With more than 5 integer bits, inputs below -32 give exp(a) ~ 0 exactly. */
  if (integer_bits > 5 && a < -(int32_t)(UINT32_C(1) << (36 - integer_bits))) {
    result = 0;
  }
  return a == 0 ? TFLM_FP_Q31_ONE : result;
}

int32_t tflm_fp_one_over_one_plus_x(int32_t x) {
  const int32_t constant_48_over_17 = 1515870810;      /* 48/17 in Q2.29 */
  const int32_t constant_neg_32_over_17 = -1010580540; /* -32/17 in Q2.29 */
  const int32_t q2_one = (int32_t)1 << 29;             /* 1.0 in Q2.29 */
  /* Newton-Raphson on d = (1 + x) / 2 in [1/2, 1): y <- y + y * (1 - d * y), y -> 1/d. */
  int32_t half_denominator = tflm_fp_rounding_half_sum(x, TFLM_FP_Q31_ONE);
  int32_t y = constant_48_over_17 +
              tflm_saturating_rounding_doubling_high_mul(half_denominator, constant_neg_32_over_17);
  int32_t i;
  for (i = 0; i < 3; ++i) {
    int32_t d_times_y = tflm_saturating_rounding_doubling_high_mul(half_denominator, y);
    int32_t error = q2_one - d_times_y;                                 /* Q2.29 */
    int32_t step = tflm_saturating_rounding_doubling_high_mul(y, error); /* Q4.27 */
    y = y + tflm_fp_saturating_mul_by_pot(step, 2);                      /* back to Q2.29 */
  }
  /* 1/(1+x) = (1/d) / 2: the same raw value read as Q1.30, then converted to Q0.31. */
  return tflm_fp_saturating_mul_by_pot(y, 1);
}

int32_t tflm_fp_reciprocal(int32_t x, int32_t x_integer_digits, int32_t *num_bits_over_unit) {
  int32_t headroom_plus_one = tflm_fp_count_leading_zeros((uint32_t)x);
  /* Normalise x to [1, 2) by a left shift; (x - 1) then lies in [0, 1) as Q0.31. */
  uint32_t normalised = (uint32_t)x << headroom_plus_one;
  int32_t x_minus_one = (int32_t)(normalised - UINT32_C(0x80000000));
  *num_bits_over_unit = x_integer_digits - headroom_plus_one;
  return tflm_fp_one_over_one_plus_x(x_minus_one);
}
