/* Building blocks of the cmsis tag's int8 kernels: fast requantisation, int8 -> int16
 * widening and the dot products, each in one version per instruction set.
 *
 * The compiler's own feature macros pick the version (never a build option of ours):
 *   CMSIS_MVE  Helium (__ARM_FEATURE_MVE, Cortex-M55/M85): 16 int8 lanes per instruction;
 *   CMSIS_DSP  the DSP extension (__ARM_FEATURE_DSP, Cortex-M4/M7/M33): dual 16-bit MACs;
 *   neither    plain C (Cortex-M0/M3, RISC-V and the host build).
 * Every version computes the same integers; only speed differs.  Scratch sizes never depend
 * on these macros, so the arena the host build measures is the arena of every target.
 * Written for tflm-gen from the ACLE and MVE intrinsic references; no code of Arm's
 * CMSIS-NN is used. */
#ifndef TFLM_CMSIS_SIMD_H
#define TFLM_CMSIS_SIMD_H

#include <stdint.h>
#include <string.h>

#include "tflm_quant.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define CMSIS_MVE 1
#include <arm_mve.h>
#endif
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define CMSIS_DSP 1
#include <arm_acle.h>
#endif

/* Patches and rows are padded to a multiple of 4 bytes in the scratch buffers. */
#define CMSIS_ROUND4(n) (((n) + 3) & ~3)

/* tflm_requantize, with the doubling high multiply written as one rounding shift:
 * (a * b + 2^30) >> 31 equals gemmlowp's nudge-then-truncate for every a, b except the
 * saturating pair a == b == INT32_MIN, which cannot occur: multipliers are Q31 significands
 * in [2^30, 2^31) (or 0).  Bit-exact with tflm_quant.h otherwise. */
static inline int32_t cmsis_requantize(int32_t acc, int32_t multiplier, int32_t shift,
                                       int32_t offset, int32_t lo, int32_t hi) {
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = shift > 0 ? 0 : -shift;
  const int32_t x = (int32_t)((uint32_t)acc << left);
  const int32_t high = (int32_t)(((int64_t)x * multiplier + (INT64_C(1) << 30)) >> 31);
  int32_t value = tflm_rounding_divide_by_pot(high, right) + offset;
  value = value > lo ? value : lo;
  return value < hi ? value : hi;
}

/* 4 bytes at p as a word (any alignment; one LDR on ARMv7-M and later). */
static inline int32_t cmsis_read4(const void *p) {
  int32_t word;
  memcpy(&word, p, 4);
  return word;
}

static inline void cmsis_write4(void *p, int32_t word) { memcpy(p, &word, 4); }

#ifdef CMSIS_DSP
/* Bytes 1 and 3 of x sign-extended into the two halfwords (SXTB16 with ROR #8, which gcc's
 * arm_acle.h cannot express: it saves the shift of __sxtb16(x >> 8)). */
static inline int32_t cmsis_sxtb16_ror8(int32_t x) {
  int32_t result;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(result) : "r"(x));
  return result;
}

/* a + the sign-extended bytes 1 and 3 of x, halfword by halfword. */
static inline int32_t cmsis_sxtab16_ror8(int32_t a, int32_t x) {
  int32_t result;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(result) : "r"(a), "r"(x));
  return result;
}
#endif

/* Widens n int8 values to int16 (value + offset) in the order the DSP dot products read:
 * each group of 4 inputs x0 x1 x2 x3 becomes x0 x2 x1 x3 (what SXTB16 / SXTB16 ROR #8 give
 * for the weights); the n % 4 tail stays in order.  Used by the DSP version only. */
#ifdef CMSIS_DSP
static inline void cmsis_widen(const int8_t *src, int16_t *dst, int32_t n, int32_t offset) {
  const int32_t offsets = (int32_t)(((uint32_t)offset & 0xffffu) * 0x10001u);
  int32_t i;
  for (i = 0; i + 4 <= n; i += 4) {
    const int32_t word = cmsis_read4(src + i);
    cmsis_write4(dst + i, __sxtab16(offsets, word));
    cmsis_write4(dst + i + 2, cmsis_sxtab16_ror8(offsets, word));
  }
  for (; i < n; ++i) dst[i] = (int16_t)(src[i] + offset);
}

/* Word loads for the DSP loops: any alignment (ARMv7E-M loads unaligned words in one LDR)
 * and allowed to alias the int8 / int16 data they read. */
typedef int32_t cmsis_word_t __attribute__((may_alias, aligned(1)));

/* acc[2 * j + c] += dot(x_j, w_c) for two widened inputs x and two int8 weight rows w.
 * Kept out of line: inlined into the callers' loops gcc spills the accumulators. */
static __attribute__((noinline, unused)) void cmsis_dot_2x2(const int16_t *x0, const int16_t *x1, const int8_t *w0,
                                 const int8_t *w1, int32_t n, int32_t acc[4]) {
  int32_t a00 = acc[0], a01 = acc[1], a10 = acc[2], a11 = acc[3];
  const cmsis_word_t *pa = (const cmsis_word_t *)(const void *)w0;
  const cmsis_word_t *pb = (const cmsis_word_t *)(const void *)w1;
  const cmsis_word_t *px = (const cmsis_word_t *)(const void *)x0;
  const cmsis_word_t *py = (const cmsis_word_t *)(const void *)x1;
  int32_t i;
  for (i = n >> 2; i > 0; --i) {
    const int32_t wa = *pa++, wb = *pb++;
    const int32_t xa02 = *px++, xa13 = *px++;
    const int32_t xb02 = *py++, xb13 = *py++;
    int32_t w02 = __sxtb16(wa), w13 = cmsis_sxtb16_ror8(wa);
    a00 = __smlad(w02, xa02, a00);
    a10 = __smlad(w02, xb02, a10);
    a00 = __smlad(w13, xa13, a00);
    a10 = __smlad(w13, xb13, a10);
    w02 = __sxtb16(wb);
    w13 = cmsis_sxtb16_ror8(wb);
    a01 = __smlad(w02, xa02, a01);
    a11 = __smlad(w02, xb02, a11);
    a01 = __smlad(w13, xa13, a01);
    a11 = __smlad(w13, xb13, a11);
  }
  for (i = n & ~3; i < n; ++i) {
    a00 += w0[i] * x0[i];
    a01 += w1[i] * x0[i];
    a10 += w0[i] * x1[i];
    a11 += w1[i] * x1[i];
  }
  acc[0] = a00;
  acc[1] = a01;
  acc[2] = a10;
  acc[3] = a11;
}
#endif /* CMSIS_DSP */

#ifdef CMSIS_MVE
/* dot[j] = sum over i < n of a_j[i] * b[i] for four int8 rows a_j and one row b, and
 * *sum_b = the sum of b (the input offset is applied afterwards: sum a*(b+o) =
 * dot + o * sum b, exact in wrapping int32).  Tails are predicated, never over-read. */
static inline void cmsis_mve_dot4(const int8_t *const a[4], const int8_t *b, int32_t n,
                                  int32_t dot[4], int32_t *sum_b) {
  int32_t d0 = 0, d1 = 0, d2 = 0, d3 = 0, s = 0, i;
  for (i = 0; i < n; i += 16) {
    const mve_pred16_t lanes = vctp8q((uint32_t)(n - i));
    const int8x16_t vb = vldrbq_z_s8(b + i, lanes);
    s = vaddvaq_s8(s, vb);
    d0 = vmladavaq_s8(d0, vldrbq_z_s8(a[0] + i, lanes), vb);
    d1 = vmladavaq_s8(d1, vldrbq_z_s8(a[1] + i, lanes), vb);
    d2 = vmladavaq_s8(d2, vldrbq_z_s8(a[2] + i, lanes), vb);
    d3 = vmladavaq_s8(d3, vldrbq_z_s8(a[3] + i, lanes), vb);
  }
  dot[0] = d0;
  dot[1] = d1;
  dot[2] = d2;
  dot[3] = d3;
  *sum_b = s;
}

/* The same with the sums of the four rows a_j instead of b's (FULLY_CONNECTED: a are weight
 * rows, b the input, whose offset multiplies each row's sum). */
static inline void cmsis_mve_dot4_sum_a(const int8_t *const a[4], const int8_t *b, int32_t n,
                                        int32_t dot[4], int32_t sum_a[4]) {
  int32_t d[4] = {0, 0, 0, 0}, s[4] = {0, 0, 0, 0}, i, j;
  for (i = 0; i < n; i += 16) {
    const mve_pred16_t lanes = vctp8q((uint32_t)(n - i));
    const int8x16_t vb = vldrbq_z_s8(b + i, lanes);
    for (j = 0; j < 4; ++j) {
      const int8x16_t va = vldrbq_z_s8(a[j] + i, lanes);
      s[j] = vaddvaq_s8(s[j], va);
      d[j] = vmladavaq_s8(d[j], va, vb);
    }
  }
  for (j = 0; j < 4; ++j) {
    dot[j] = d[j];
    sum_a[j] = s[j];
  }
}
#endif /* CMSIS_MVE */

/* sum over i < n of w[i] * (x[i] + offset): the plain C dot product. */
static inline int32_t cmsis_dot_offset(const int8_t *x, const int8_t *w, int32_t n,
                                       int32_t offset) {
  int32_t acc = 0, i;
  for (i = 0; i < n; ++i) acc += (int32_t)w[i] * ((int32_t)x[i] + offset);
  return acc;
}

#endif /* TFLM_CMSIS_SIMD_H */
