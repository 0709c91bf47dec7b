/* Fixed-point helpers shared by the quantised kernels.  They follow the arithmetic of
 * TFLM's reference kernels bit for bit (gemmlowp-style two-step rounding). */
#ifndef TFLM_QUANT_H
#define TFLM_QUANT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* round(a * b / 2^31), halves rounded toward +infinity (gemmlowp's nudge then truncating
 * division: 0.5 -> 1 but -0.5 -> 0), saturating the single overflow case. */
int32_t tflm_saturating_rounding_doubling_high_mul(int32_t a, int32_t b);
/* x / 2^exponent rounded to nearest, ties away from zero (exponent 0..31). */
int32_t tflm_rounding_divide_by_pot(int32_t x, int32_t exponent);
/* x * multiplier * 2^shift in Q31 (shift > 0 is a left shift), TFLM's two-step rounding. */
int32_t tflm_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int32_t shift);
/* The same for a 64-bit accumulator (int16 activations with int64 bias). */
int32_t tflm_multiply_by_quantized_multiplier_64(int64_t x, int32_t multiplier, int32_t shift);
/* Per-channel requantisation arrays of one node (from flash or the arena); eval-time only. */
typedef struct {
  const int32_t *multipliers; /* Q31 significands */
  const int32_t *shifts;      /* power-of-two exponents, > 0 shifts left */
} tflm_requant_t;

/* Splits a real multiplier into a Q31 significand and a power-of-two shift, as TFLM does. */
void tflm_quantize_multiplier(double real_multiplier, int32_t *multiplier, int32_t *shift);

/* Clamp range of a fused activation for a quantised output type (qmin..qmax of the type). */
void tflm_activation_range_quantized(int32_t activation, float scale, int32_t zero_point,
                                     int32_t qmin, int32_t qmax, int32_t *lo, int32_t *hi);
/* Clamp range of a fused activation for float outputs. */
void tflm_activation_range_float(int32_t activation, float *lo, float *hi);

/* --- helpers added for the convolution-like kernels (conv, depthwise, fully connected) --- */

/* Requantises an accumulator: tflm_multiply_by_quantized_multiplier, plus offset (the
 * output zero point), clamped to [lo, hi] (the fused activation range). */
int32_t tflm_requantize(int32_t acc, int32_t multiplier, int32_t shift, int32_t offset,
                        int32_t lo, int32_t hi);
/* min(max(x, lo), hi) with the comparisons in TFLM's order, so NaN passes through alike. */
float tflm_clamp_float(float x, float lo, float hi);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_QUANT_H */
