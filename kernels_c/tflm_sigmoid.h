/* Fixed-point logistic, tanh and inverse square root for the int8 LOGISTIC, TANH and RSQRT
 * kernels, reproducing bit for bit the gemmlowp FixedPoint arithmetic of TFLM's reference
 * kernels (built on the exp and 1/(1+x) helpers of tflm_fixedpoint.h).  Integer arithmetic
 * only. */
#ifndef TFLM_SIGMOID_H
#define TFLM_SIGMOID_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 / (1 + exp(-a)) for a in Q(integer_bits).(31 - integer_bits); the result is Q0.31. */
int32_t tflm_fp_logistic(int32_t a, int32_t integer_bits);

/* tanh(a) for a in Q(integer_bits).(31 - integer_bits), integer_bits <= 28; Q0.31 result. */
int32_t tflm_fp_tanh(int32_t a, int32_t integer_bits);

/* 1 / sqrt(x) for x >= 0 as a Q31 multiplier and a left shift (TFLM's
 * GetInvSqrtQuantizedMultiplierExp with reverse_shift -1): 1/sqrt(x) = multiplier * 2^shift
 * / 2^31.  x <= 1 gives INT32_MAX and 0. */
void tflm_fp_inv_sqrt(int32_t x, int32_t *multiplier, int32_t *shift);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_SIGMOID_H */
