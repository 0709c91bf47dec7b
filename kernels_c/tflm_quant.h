/* Fixed-point helpers shared by the quantised kernels.  They follow the arithmetic of
 * TFLM's reference kernels bit for bit (gemmlowp-style two-step rounding). */
#ifndef TFLM_QUANT_H
#define TFLM_QUANT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Wrapping accumulation.  A crafted model (huge depth, extreme weights or bias) can
 * overflow an accumulator, which is undefined for signed types in C; unsigned arithmetic
 * wraps instead and gives the same bits as TFLM on every model where nothing overflows. */
static inline int32_t tflm_add_wrap(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* acc + a * b modulo 2^32. */
static inline int32_t tflm_mac_wrap(int32_t acc, int32_t a, int32_t b) {
  return (int32_t)((uint32_t)acc + (uint32_t)a * (uint32_t)b);
}

static inline int64_t tflm_add_wrap64(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* The three requantisation steps run once per output element, so they are static inline
 * here: a call across files costs more than the arithmetic on a Cortex-M. */

/* round(a * b / 2^31), halves rounded toward +infinity (gemmlowp's nudge then truncating
 * division: 0.5 -> 1 but -0.5 -> 0), saturating the single overflow case. */
static inline int32_t tflm_saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  int64_t product, nudge;
  /* The only product that does not fit: (-2^31)^2 * 2 / 2^32 = 2^31. */
  if (a == b && a == INT32_MIN) return INT32_MAX;
  product = (int64_t)a * (int64_t)b;
  nudge = product >= 0 ? INT64_C(1) << 30 : INT64_C(1) - (INT64_C(1) << 30);
  return (int32_t)((product + nudge) / (INT64_C(1) << 31));
}

/* x / 2^exponent rounded to nearest, ties away from zero (exponent 0..31). */
static inline int32_t tflm_rounding_divide_by_pot(int32_t x, int32_t exponent) {
  /* mask is computed in 64 bits so exponent 31 does not overflow. */
  const int32_t mask = (int32_t)((INT64_C(1) << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/* x * multiplier * 2^shift in Q31 (shift > 0 is a left shift), TFLM's two-step rounding. */
static inline int32_t tflm_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier,
                                                            int32_t shift) {
  const int32_t left_shift = shift > 0 ? shift : 0;
  const int32_t right_shift = shift > 0 ? 0 : -shift;
  /* TFLM multiplies by 2^left_shift in int32 and relies on wrap-around; shifting the
   * unsigned value gives the same bits without signed overflow. */
  const int32_t shifted = (int32_t)((uint32_t)x << left_shift);
  return tflm_rounding_divide_by_pot(
      tflm_saturating_rounding_doubling_high_mul(shifted, multiplier), right_shift);
}

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
/* A float rounded or truncated by the caller, as int32_t: values beyond the range saturate
 * and NaN gives 0 (C leaves those conversions undefined; only extreme scales reach them). */
int32_t tflm_float_to_int32_saturating(float value);
/* Clamp range of a fused activation for float outputs. */
void tflm_activation_range_float(int32_t activation, float *lo, float *hi);

/* --- helpers added for the convolution-like kernels (conv, depthwise, fully connected) --- */

/* Requantises an accumulator: tflm_multiply_by_quantized_multiplier, plus offset (the
 * output zero point), clamped to [lo, hi] (the fused activation range). */
static inline int32_t tflm_requantize(int32_t acc, int32_t multiplier, int32_t shift,
                                      int32_t offset, int32_t lo, int32_t hi) {
  int32_t value = tflm_add_wrap(tflm_multiply_by_quantized_multiplier(acc, multiplier, shift),
                                offset);
  value = value > lo ? value : lo;
  return value < hi ? value : hi;
}
/* min(max(x, lo), hi) with the comparisons in TFLM's order, so NaN passes through alike. */
float tflm_clamp_float(float x, float lo, float hi);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_QUANT_H */
