/* Fixed-point transcendental helpers (exp, reciprocal) used by quantised SOFTMAX.
 *
 * Values are int32 "Qm.n" numbers: a raw int32 r with m integer bits stands for
 * r / 2^(31 - m).  The arithmetic reproduces, bit for bit, what TFLM's reference softmax
 * computes with gemmlowp's FixedPoint type: every product is a saturating rounding doubling
 * high multiply (tflm_saturating_rounding_doubling_high_mul) and every change of format is
 * a rounding right shift or a saturating left shift.  Only int32/int64 integer arithmetic;
 * no floating point. */
#ifndef TFLM_FIXEDPOINT_H
#define TFLM_FIXEDPOINT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* x * 2^exponent: a saturating left shift when exponent > 0, a rounding (ties away from
 * zero) right shift when exponent < 0.  |exponent| <= 31. */
int32_t tflm_fp_saturating_mul_by_pot(int32_t x, int32_t exponent);

/* (a + b) / 2 rounded to nearest, ties away from zero, without overflow. */
int32_t tflm_fp_rounding_half_sum(int32_t a, int32_t b);

/* exp(a) for a <= 0 given in Q(integer_bits).(31 - integer_bits), 1 <= integer_bits <= 29;
 * the result is Q0.31 (exp(0) gives INT32_MAX, the closest value to 1). */
int32_t tflm_fp_exp_on_negative_values(int32_t a, int32_t integer_bits);

/* 1 / (1 + x) for x in [0, 1) given in Q0.31; the result is Q0.31. */
int32_t tflm_fp_one_over_one_plus_x(int32_t x);

/* Reciprocal of a positive x in Q(x_integer_digits).(31 - x_integer_digits): returns
 * 1 / (x / 2^num_bits_over_unit) in Q0.31 and stores num_bits_over_unit, so that
 * 1 / x = result * 2^-num_bits_over_unit.  x must be > 0. */
int32_t tflm_fp_reciprocal(int32_t x, int32_t x_integer_digits, int32_t *num_bits_over_unit);

/* Number of leading zero bits of x (32 for 0). */
int32_t tflm_fp_count_leading_zeros(uint32_t x);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_FIXEDPOINT_H */
