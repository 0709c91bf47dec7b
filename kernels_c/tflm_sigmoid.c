/* Fixed-point logistic and tanh: see tflm_sigmoid.h. */
#include "tflm_sigmoid.h"

#include "tflm_fixedpoint.h"
#include "tflm_quant.h"

#define TFLM_SIGMOID_Q31_ONE INT32_MAX /* 1.0 in Q0.31: the closest value */

int32_t tflm_fp_logistic(int32_t a, int32_t integer_bits) {
  int32_t positive;
  if (a == 0) {
    return (int32_t)1 << 30; /* exactly 1/2 */
  }
  /* logistic(|a|) = 1 / (1 + exp(-|a|)); logistic(-|a|) = 1 - logistic(|a|). */
  positive = tflm_fp_one_over_one_plus_x(
      tflm_fp_exp_on_negative_values(a > 0 ? -a : a, integer_bits));
  return a > 0 ? positive : TFLM_SIGMOID_Q31_ONE - positive;
}

/* (1 - x) / (1 + x) for x in (0, 1], x and the result in Q0.31: Newton-Raphson for
 * 1 / ((1 + x) / 2) in Q2.29, as gemmlowp's one_minus_x_over_one_plus_x_for_x_in_0_1. */
static int32_t tflm_fp_one_minus_x_over_one_plus_x(int32_t x) {
  const int32_t constant_48_over_17 = 1515870810;      /* 48/17 in Q2.29 */
  const int32_t constant_neg_32_over_17 = -1010580540; /* -32/17 in Q2.29 */
  const int32_t q2_one = (int32_t)1 << 29;             /* 1.0 in Q2.29 */
  const int32_t half_denominator = tflm_fp_rounding_half_sum(x, TFLM_SIGMOID_Q31_ONE);
  int32_t y = constant_48_over_17 +
              tflm_saturating_rounding_doubling_high_mul(half_denominator, constant_neg_32_over_17);
  int32_t i;
  for (i = 0; i < 3; ++i) {
    int32_t error = q2_one - tflm_saturating_rounding_doubling_high_mul(half_denominator, y);
    y = y + tflm_fp_saturating_mul_by_pot(tflm_saturating_rounding_doubling_high_mul(y, error),
                                          2);
  }
  /* 2 / (1 + x) - 1 = (1 - x) / (1 + x), from Q2.29 to Q0.31. */
  return tflm_fp_saturating_mul_by_pot(y - q2_one, 2);
}

int32_t tflm_fp_tanh(int32_t a, int32_t integer_bits) {
  int32_t magnitude;
  if (a == 0) {
    return 0;
  }
  /* tanh(|a|) = (1 - exp(-2|a|)) / (1 + exp(-2|a|)); -2|a| is the same raw value read with
   * one more integer bit. */
  magnitude = tflm_fp_one_minus_x_over_one_plus_x(
      tflm_fp_exp_on_negative_values(a < 0 ? a : -a, integer_bits + 1));
  return a < 0 ? -magnitude : magnitude;
}

void tflm_fp_inv_sqrt(int32_t x, int32_t *multiplier, int32_t *shift) {
  const int32_t half_three = ((int32_t)1 << 28) + ((int32_t)1 << 27); /* 1.5 in Q3.28 */
  const int32_t half_sqrt_2 = 1518500250;                              /* sqrt(2)/2, Q0.31 */
  int32_t right_shift = 11, pairs, half_input, y, i;
  if (x <= 1) {
    *multiplier = INT32_MAX;
    *shift = 0;
    return;
  }
  while (x >= ((int32_t)1 << 29)) {
    x /= 4;
    ++right_shift;
  }
  /* Normalise x to [2^27, 2^29) by an even left shift. */
  pairs = (tflm_fp_count_leading_zeros((uint32_t)x) - 1) / 2 - 1;
  right_shift -= pairs;
  x <<= 2 * pairs;
  /* Newton-Raphson in Q3.28 from y = 1: y <- 1.5 y - (x / 2) y^3, five times. */
  half_input = tflm_rounding_divide_by_pot(x >> 1, 1);
  y = (int32_t)1 << 28;
  for (i = 0; i < 5; ++i) {
    const int32_t y3 = tflm_fp_saturating_mul_by_pot(
        tflm_saturating_rounding_doubling_high_mul(tflm_saturating_rounding_doubling_high_mul(y, y),
                                                   y),
        6);                                                    /* Q9 -> Q3 */
    const int32_t diff = tflm_saturating_rounding_doubling_high_mul(half_three, y) -
                         tflm_saturating_rounding_doubling_high_mul(half_input, y3); /* Q6 */
    y = tflm_fp_saturating_mul_by_pot(diff, 3);                /* Q6 -> Q3 */
  }
  y = tflm_saturating_rounding_doubling_high_mul(y, half_sqrt_2);
  if (right_shift < 0) {
    y = (int32_t)((uint32_t)y << -right_shift);
    right_shift = 0;
  }
  *multiplier = y;
  *shift = -right_shift;
}
