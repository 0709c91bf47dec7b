/* float32 GELU with Eigen's tanh and erfc approximations; see gelu_float.h. */
#include "gelu_float.h"

#include <math.h>
#include <string.h>

#include "tflm_compiler.h"

/* sqrt(2 / pi) and -1 / sqrt(2) as LiteRT rounds them to float. */
#define TFLM_GELU_SQRT_2_OVER_PI ((float)(1.12837916709551257390 * 0.70710678118654752440))
#define TFLM_GELU_MINUS_SQRT1_2 ((float)-0.70710678118654752440)

/* Eigen's tanh: x clamped to +-7.90738964 (where the approximation reaches 1), then
 * x + x^3 * P(x^2) over Q(x^2), both by Horner's rule, one rounding per step. */
static float tflm_gelu_tanh(float v) {
  const float upper = 7.90738964080810547f < v ? 7.90738964080810547f : v;
  const float x = -7.90738964080810547f > upper ? -7.90738964080810547f : upper;
  const float x2 = x * x, x3 = x2 * x;
  float p = 1.394553628e-8f;
  float q = 8.015776984e-7f;
  p = p * x2 + 2.102733560e-5f;
  p = p * x2 + 3.520756727e-3f;
  p = p * x2 + 1.340216100e-1f;
  q = q * x2 + 3.326951409e-4f;
  q = q * x2 + 2.597254514e-2f;
  q = q * x2 + 4.673548340e-1f;
  q = q * x2 + 1.0f;
  return (p * x3 + x) / q;
}

/* 2^e for an exponent of the normal range, from its bits. */
static float tflm_gelu_pow2(int32_t e) {
  const uint32_t bits = (uint32_t)(e + 127) << 23;
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

/* Eigen's vectorised exp for a <= 0: a = m ln2 + r (ln2 in two parts), a degree-6
 * polynomial in r, then y * 2^m applied as (2^(m/4))^3 * 2^(m - 3 (m/4)); m/4 rounds
 * towards minus infinity (an arithmetic shift).  (Eigen also zeroes results below e^-104;
 * here a is at least -121 and such results are at most 2 subnormal ulps, which vanish in
 * erfc's product all the same.) */
static float tflm_gelu_exp(float a) {
  const float x = 88.7229995727539f < a ? 88.7229995727539f : a;
  const float m = floorf(x * 1.44269502162933350f + 0.5f);
  const float r = m * 2.12194440e-4f + (m * -0.693359375f + x);
  const float r2 = r * r;
  const float odd = r2 * 8.36894474923610687255859375e-3f + 1.66665181517601013183593750e-1f;
  const float even = (r2 * 1.37449637986719608306884765625e-3f + 4.166965186595916748046875e-2f) *
                         r2 + 4.9999988079071044921875e-1f;
  const float clamped = m < -278.0f ? -278.0f : (m > 278.0f ? 278.0f : m);
  const int32_t e = (int32_t)clamped;
  const int32_t quarter = e >= 0 ? e / 4 : -((-e + 3) / 4);
  const float c = tflm_gelu_pow2(quarter);
  float y = (odd * r + even) * r2 + (r + 1.0f);
  y = y * c * c * c;
  y = tflm_gelu_pow2(e - 3 * quarter) * y;
  return a > y ? a : y;
}

/* erfc for |x| <= 1: 1 + x * S(x^2). */
static float tflm_gelu_erfc_small(float x, float x2) {
  float p = 5.61802298761904239654541015625e-4f;
  p = p * x2 - 4.91381669417023658752441406250e-3f;
  p = p * x2 + 2.67075151205062866210937500000e-2f;
  p = p * x2 - 1.12800106406211853027343750000e-1f;
  p = p * x2 + 3.76122951507568359375000000000e-1f;
  p = p * x2 - 1.12837910652160644531250000000e+0f;
  return p * x + 1.0f;
}

/* erfc for |x| > 1: exp(-x^2) (corrected by the low part of x^2, found by Veltkamp's
 * split) / x * P(1/x^2) / Q(1/x^2), plus 2 for negative x.  exp_hi is exp(-x^2 rounded). */
static float tflm_gelu_erfc_large(float x, float x2, float exp_hi) {
  const float split = x * 4097.0f;
  const float hi = (x - split) + split, lo = x - hi;
  const float x2_lo = lo * lo + (((hi * hi - x2) + hi * lo) + hi * lo);
  const float z = exp_hi - x2_lo * exp_hi;
  const float q2 = 1.0f / x2;
  float num = 1.0208116471767425537109375e-1f, den = 1.7251677811145782470703125e-2f;
  num = num * q2 + 4.2920666933059692382812500e-1f;
  num = num * q2 + 3.2379078865051269531250000e-1f;
  num = num * q2 + 5.3971976041793823242187500e-2f;
  den = den * q2 + 3.9137163758277893066406250e-1f;
  den = den * q2 + 1.0f;
  den = den * q2 + 6.2173241376876831054687500e-1f;
  den = den * q2 + 9.5662862062454223632812500e-2f;
  return (x < 0.0f ? 2.0f : 0.0f) + num / (den * x) * z;
}

/* 0.5 * v * erfc(-v / sqrt(2)); vectorised: Eigen's exp, else the C library's expf. */
static float tflm_gelu_exact(float v, int32_t vectorised) {
  const float scaled = v * TFLM_GELU_MINUS_SQRT1_2;
  const float low = -11.0f > scaled ? -11.0f : scaled;
  const float x = 11.0f < low ? 11.0f : low;
  const float x2 = x * x;
  float erfc;
  if (!(1.0f < x2)) {
    erfc = tflm_gelu_erfc_small(x, x2);
  } else {
    erfc = tflm_gelu_erfc_large(x, x2, vectorised ? tflm_gelu_exp(-x2) : expf(-x2));
  }
  return (0.5f * v) * erfc;
}

void tflm_gelu_float(int32_t approximate, const float *input, float *output, int32_t count) {
  const int32_t vectorised = count - count % 4; /* Eigen's packets of 4 */
  int32_t i;
  for (i = 0; i < count; ++i) {
    const float v = input[i];
    if (approximate) {
      const float inner = TFLM_GELU_SQRT_2_OVER_PI * (v * v * v * 0.044715f + v);
      output[i] = (0.5f * v) * (tflm_gelu_tanh(inner) + 1.0f);
    } else {
      output[i] = tflm_gelu_exact(v, i < vectorised);
    }
  }
}
