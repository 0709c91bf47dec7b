/* Building blocks of the cmsis tag's int8 kernels: fast requantisation, int8 -> int16
 * widening and the dot products, each in one version per instruction set.
 *
 * The compiler's own feature macros pick the version (never a build option of ours):
 *   CMSIS_MVE  Helium (__ARM_FEATURE_MVE, Cortex-M55/M85): 16 int8 lanes per instruction;
 *   CMSIS_DSP  the DSP extension (__ARM_FEATURE_DSP, Cortex-M4/M7/M33): dual 16-bit MACs;
 *   neither    plain C (Cortex-M0/M3, RISC-V and the host build).
 * An unoptimised build (an IDE's debug configuration, -O0) takes plain C on DSP cores too:
 * there gcc keeps the frame pointer and cannot give the DSP assembly its 12 registers.
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
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)
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
  int32_t value = tflm_add_wrap(tflm_rounding_divide_by_pot(high, right), offset);
  value = value > lo ? value : lo;
  return value < hi ? value : hi;
}

/* The requantisation of a CONV_INT16_PAIRS_REQUANT layout (tflm_gen/layout.py) for a sum
 * doubled = 2 * acc, exact where the generator wrote it: |acc| < 2^30, and with h = TFLM's
 * rounded doubling high product (SMMLAR of 2 * acc gives constant + h), h + constant -
 * [acc < 0] fits int32, so (that >> right) is h rounded half away from zero by 2^right plus
 * the output offset; then the int8 range, the node's whole clamp range.  One SMMLAR, ADD,
 * ASR and SSAT on a DSP core (cmsis_dot_pairs_requant). */
static inline int8_t cmsis_requantize_folded(int32_t doubled, int32_t multiplier,
                                             int32_t constant, int32_t right) {
  const int64_t product = (int64_t)doubled * multiplier;
  const int32_t sum = (int32_t)((product + (int64_t)constant * INT64_C(4294967296) +
                                 INT64_C(2147483648)) >> 32);
  const int32_t value = (sum - (doubled < 0)) >> right;
  return (int8_t)(value < -128 ? -128 : value > 127 ? 127 : value);
}

/* 4 bytes at p as a word (any alignment; one LDR on ARMv7-M and later). */
static inline int32_t cmsis_read4(const void *p) {
  int32_t word;
  memcpy(&word, p, 4);
  return word;
}

static inline void cmsis_write4(void *p, int32_t word) { memcpy(p, &word, 4); }

/* The fast requantisation below applies when every channel's shift is in [-23, -1]: a right
 * shift only, by at most 23 (what real models use; other nodes take cmsis_requantize). */
#define CMSIS_FAST_SHIFT_MIN (-23)

/* 1 when cmsis_requantize_fast is exact for all `channels` shifts. */
static inline int32_t cmsis_requant_is_fast(const int32_t *shifts, int32_t channels) {
  int32_t c;
  for (c = 0; c < channels; ++c) {
    if (shifts[c] > -1 || shifts[c] < CMSIS_FAST_SHIFT_MIN) return 0;
  }
  return 1;
}

/* cmsis_requantize for right = -shift in [1, 23].  The rounding division by 2^right is one
 * add and one arithmetic shift: (h + 2^(right-1) - (h < 0)) >> right rounds half away from
 * zero like tflm_rounding_divide_by_pot.  The add saturates instead of wrapping; it can only
 * saturate for h > 2^31 - 2^(right-1), whose result (>= 2^(31-right) - 1 >= 255) is clamped
 * to hi either way, so the byte is the same. */
static inline int32_t cmsis_requantize_fast(int32_t acc, int32_t multiplier, int32_t right,
                                            int32_t offset, int32_t lo, int32_t hi) {
  const int32_t high = (int32_t)(((int64_t)acc * multiplier + (INT64_C(1) << 30)) >> 31);
  const int32_t nudge = (int32_t)(1u << (right - 1));
#ifdef CMSIS_DSP
  int32_t value = __qadd(high, nudge);
#else
  int32_t value = high > INT32_MAX - nudge ? INT32_MAX : high + nudge;
#endif
  value = tflm_add_wrap((value + (high >> 31)) >> right, offset);
  value = value > lo ? value : lo;
  return value < hi ? value : hi;
}

/* The wide requantisation below applies when every channel's shift is in [-31, -2] or its
 * multiplier is 0 (TFLM's flush to zero of scales below 2^-32, with shift 0). */
static inline int32_t cmsis_requant_is_wide(const int32_t *multipliers, const int32_t *shifts,
                                            int32_t channels) {
  int32_t c;
  for (c = 0; c < channels; ++c) {
    if (multipliers[c] != 0 && (shifts[c] > -2 || shifts[c] < -31)) return 0;
  }
  return 1;
}

/* cmsis_requantize for a right shift r in [2, 31] (or multiplier 0), as one 64-bit
 * multiply-accumulate (SMLAL) and one shift.  With X = acc * multiplier + 2^30, TFLM computes
 * h = floor(X / 2^31) (the doubling high multiply; it cannot saturate, the multiplier being
 * >= 0), then rounds h / 2^r half away from zero: floor((h + 2^(r-1) - [h < 0]) / 2^r).
 * Floors compose, so that is floor(Y / 2^(31+r)) with
 *   Y = acc * multiplier + 2^30 + 2^(30+r) - [h < 0] * 2^31,
 * the high word of Y shifted right by r - 1.  [h < 0] is [acc < 0]: they differ only for
 * acc == -1 with multiplier 2^30 or 0, where both forms give 0.  The constant's low word is
 * 2^30 | (sign bit of acc), its high word 2^(r-2) - [acc < 0].  A zero multiplier takes
 * r = 2 (any r gives 0).  Exact for every acc; no saturation to argue about. */
static inline int32_t cmsis_requantize_wide(int32_t acc, int32_t multiplier, int32_t shift,
                                            int32_t offset, int32_t lo, int32_t hi) {
  const int32_t right = shift < -1 ? -shift : 2;
  const uint32_t sign = (uint32_t)acc & 0x80000000u;
  const uint32_t high_start = ((uint32_t)1 << (right - 2)) - (sign >> 31);
  const int64_t start = (int64_t)(((uint64_t)high_start << 32) | (0x40000000u | sign));
  const int64_t y = start + (int64_t)acc * multiplier;
  int32_t value = ((int32_t)(y >> 32) >> (right - 1)) + offset;
  value = value > lo ? value : lo;
  return value < hi ? value : hi;
}

#ifdef CMSIS_DSP
/* out[0..3] = v0..v3 (int32 values) saturated to int8 and clamped to [lo, hi], given as
 * lo4, hi4 (each repeated in the 4 bytes, lo >= -128, hi <= 127): packed into one word and
 * clamped with SSUB8 + SEL per bound. */
static inline void cmsis_store4_clamped4(int32_t v0, int32_t v1, int32_t v2, int32_t v3,
                                         int32_t lo4, int32_t hi4, int8_t *out) {
  /* (a & 0xffff) | b << 16 is one PKHBT. */
  const uint32_t low = __uxtb16(((uint32_t)__ssat(v0, 8) & 0xffffu) |
                                ((uint32_t)__ssat(v2, 8) << 16));
  const uint32_t high = __uxtb16(((uint32_t)__ssat(v1, 8) & 0xffffu) |
                                 ((uint32_t)__ssat(v3, 8) << 16));
  int32_t bytes = (int32_t)(low | (high << 8)), diff;
  /* SEL reads the GE flags the SSUB8 just before it set: one statement keeps them together. */
  __asm__("ssub8 %[d], %[b], %[lo]\n\t"
          "sel %[b], %[b], %[lo]\n\t"
          "ssub8 %[d], %[hi], %[b]\n\t"
          "sel %[b], %[b], %[hi]"
          : [b] "+r"(bytes), [d] "=&r"(diff)
          : [lo] "r"(lo4), [hi] "r"(hi4)
          : "cc");
  cmsis_write4(out, bytes);
}

/* cmsis_store4_clamped4 with the bounds lo, hi given once (repeated in the 4 bytes here). */
static inline void cmsis_store4_clamped(int32_t v0, int32_t v1, int32_t v2, int32_t v3,
                                        int32_t lo, int32_t hi, int8_t *out) {
  cmsis_store4_clamped4(v0, v1, v2, v3, (int32_t)(((uint32_t)lo & 0xffu) * 0x01010101u),
                        (int32_t)(((uint32_t)hi & 0xffu) * 0x01010101u), out);
}
#endif

/* out[j] = cmsis_requantize_fast(acc[j], multipliers[j], -shifts[j], ...) for j < 4. */
static inline void cmsis_requantize4_fast(const int32_t acc[4], const int32_t *multipliers,
                                          const int32_t *shifts, int32_t offset, int32_t lo,
                                          int32_t hi, int8_t *out) {
#ifdef CMSIS_DSP
  cmsis_store4_clamped(
      cmsis_requantize_fast(acc[0], multipliers[0], -shifts[0], offset, INT32_MIN, INT32_MAX),
      cmsis_requantize_fast(acc[1], multipliers[1], -shifts[1], offset, INT32_MIN, INT32_MAX),
      cmsis_requantize_fast(acc[2], multipliers[2], -shifts[2], offset, INT32_MIN, INT32_MAX),
      cmsis_requantize_fast(acc[3], multipliers[3], -shifts[3], offset, INT32_MIN, INT32_MAX),
      lo, hi, out);
#else
  int32_t j;
  for (j = 0; j < 4; ++j) {
    out[j] = (int8_t)cmsis_requantize_fast(acc[j], multipliers[j], -shifts[j], offset, lo, hi);
  }
#endif
}

/* 1 when every shift is in [-31, -2] (cmsis_requantize_strict's range). */
static inline int32_t cmsis_requant_is_strict(const int32_t *shifts, int32_t channels) {
  int32_t c;
  for (c = 0; c < channels; ++c) {
    if (shifts[c] > -2 || shifts[c] < -31) return 0;
  }
  return 1;
}

/* cmsis_requantize_wide for a shift in [-31, -2], without its guard for other shifts and
 * without the clamp: 2^(r-2) is 2^30 >> (shift + 32) and r - 1 is ~shift, so the constant
 * and the final shift cost three instructions. */
static inline int32_t cmsis_requantize_strict(int32_t acc, int32_t multiplier, int32_t shift,
                                              int32_t offset) {
  const uint32_t sign = (uint32_t)acc & 0x80000000u;
  const uint32_t high_start = (0x40000000u >> (uint32_t)(shift + 32)) - (sign >> 31);
  const int64_t start = (int64_t)(((uint64_t)high_start << 32) | (0x40000000u | sign));
  const int64_t y = start + (int64_t)acc * multiplier;
  return ((int32_t)(y >> 32) >> ~shift) + offset;
}

/* out[j] = cmsis_requantize_wide(acc[j], multipliers[j], shifts[j], ...) for j < 4. */
static inline void cmsis_requantize4_wide(const int32_t acc[4], const int32_t *multipliers,
                                          const int32_t *shifts, int32_t offset, int32_t lo,
                                          int32_t hi, int8_t *out) {
#ifdef CMSIS_DSP
  cmsis_store4_clamped(
      cmsis_requantize_wide(acc[0], multipliers[0], shifts[0], offset, INT32_MIN, INT32_MAX),
      cmsis_requantize_wide(acc[1], multipliers[1], shifts[1], offset, INT32_MIN, INT32_MAX),
      cmsis_requantize_wide(acc[2], multipliers[2], shifts[2], offset, INT32_MIN, INT32_MAX),
      cmsis_requantize_wide(acc[3], multipliers[3], shifts[3], offset, INT32_MIN, INT32_MAX),
      lo, hi, out);
#else
  int32_t j;
  for (j = 0; j < 4; ++j) {
    out[j] = (int8_t)cmsis_requantize_wide(acc[j], multipliers[j], shifts[j], offset, lo, hi);
  }
#endif
}

/* out[j] = the clamped cmsis_requantize_strict(acc[j], multipliers[j], shifts[j], ...). */
static inline void cmsis_requantize4_strict(const int32_t acc[4], const int32_t *multipliers,
                                            const int32_t *shifts, int32_t offset, int32_t lo,
                                            int32_t hi, int8_t *out) {
#ifdef CMSIS_DSP
  cmsis_store4_clamped(cmsis_requantize_strict(acc[0], multipliers[0], shifts[0], offset),
                       cmsis_requantize_strict(acc[1], multipliers[1], shifts[1], offset),
                       cmsis_requantize_strict(acc[2], multipliers[2], shifts[2], offset),
                       cmsis_requantize_strict(acc[3], multipliers[3], shifts[3], offset), lo,
                       hi, out);
#else
  int32_t j, value;
  for (j = 0; j < 4; ++j) {
    value = cmsis_requantize_strict(acc[j], multipliers[j], shifts[j], offset);
    value = value > lo ? value : lo;
    out[j] = (int8_t)(value < hi ? value : hi);
  }
#endif
}

/* cmsis_requantize_strict of one multiplier and shift (in [-31, -2]) applied to many sums
 * (a per-tensor node): the shift-derived constants computed once (cmsis_strict_init). */
typedef struct {
  int32_t multiplier;
  int32_t high_start; /* 2^30 >> (shift + 32) */
  int32_t right;      /* ~shift */
  int32_t offset, lo, hi;
} cmsis_strict_t;

static inline void cmsis_strict_init(int32_t multiplier, int32_t shift, int32_t offset,
                                     int32_t lo, int32_t hi, cmsis_strict_t *q) {
  q->multiplier = multiplier;
  q->high_start = (int32_t)(0x40000000u >> (uint32_t)(shift + 32));
  q->right = ~shift;
  q->offset = offset;
  q->lo = lo;
  q->hi = hi;
}

/* cmsis_requantize_strict(acc, ...) plus the offset, not clamped. */
static inline int32_t cmsis_strict_one(const cmsis_strict_t *q, int32_t acc) {
  const uint32_t sign = (uint32_t)acc & 0x80000000u;
  const uint32_t high = (uint32_t)q->high_start - (sign >> 31);
  const int64_t start = (int64_t)(((uint64_t)high << 32) | (0x40000000u | sign));
  const int64_t y = start + (int64_t)acc * q->multiplier;
  return ((int32_t)(y >> 32) >> q->right) + q->offset;
}

/* cmsis_strict_one clamped to [lo, hi]. */
static inline int8_t cmsis_strict_clamped(const cmsis_strict_t *q, int32_t acc) {
  const int32_t value = cmsis_strict_one(q, acc);
  return (int8_t)(value > q->lo ? (value < q->hi ? value : q->hi) : q->lo);
}

/* out[0..3] = the clamped cmsis_strict_one of acc[0..3]. */
#ifdef CMSIS_DSP
static inline void cmsis_strict4(const cmsis_strict_t *q, int32_t a0, int32_t a1, int32_t a2,
                                 int32_t a3, int8_t *out) {
  cmsis_store4_clamped(cmsis_strict_one(q, a0), cmsis_strict_one(q, a1),
                       cmsis_strict_one(q, a2), cmsis_strict_one(q, a3), q->lo, q->hi, out);
}
#else
static inline void cmsis_strict4(const cmsis_strict_t *q, int32_t a0, int32_t a1, int32_t a2,
                                 int32_t a3, int8_t *out) {
  out[0] = cmsis_strict_clamped(q, a0);
  out[1] = cmsis_strict_clamped(q, a1);
  out[2] = cmsis_strict_clamped(q, a2);
  out[3] = cmsis_strict_clamped(q, a3);
}
#endif

/* Which requantisation is exact for every channel of a node: the strict one (the fewest
 * instructions), else the fast one, else the wide one, else 0 (cmsis_requantize). */
#define CMSIS_REQUANT_FAST 1
#define CMSIS_REQUANT_WIDE 2
#define CMSIS_REQUANT_STRICT 3
static inline int32_t cmsis_requant_mode(const int32_t *multipliers, const int32_t *shifts,
                                         int32_t channels) {
  if (cmsis_requant_is_strict(shifts, channels)) return CMSIS_REQUANT_STRICT;
  if (cmsis_requant_is_fast(shifts, channels)) return CMSIS_REQUANT_FAST;
  return cmsis_requant_is_wide(multipliers, shifts, channels) ? CMSIS_REQUANT_WIDE : 0;
}

/* cmsis_requantize4_strict, _fast or _wide as mode says (never 0). */
static inline void cmsis_requantize4(int32_t mode, const int32_t acc[4],
                                     const int32_t *multipliers, const int32_t *shifts,
                                     int32_t offset, int32_t lo, int32_t hi, int8_t *out) {
  if (mode == CMSIS_REQUANT_STRICT) {
    cmsis_requantize4_strict(acc, multipliers, shifts, offset, lo, hi, out);
  } else if (mode == CMSIS_REQUANT_FAST) {
    cmsis_requantize4_fast(acc, multipliers, shifts, offset, lo, hi, out);
  } else {
    cmsis_requantize4_wide(acc, multipliers, shifts, offset, lo, hi, out);
  }
}

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

#ifdef CMSIS_DSP
/* Widens two rows a, b of n int8 values to int16 (value + offset), interleaved for
 * cmsis_dot_2x2_held: per group of 4 inputs a0 a2 a1 a3 b0 b2 b1 b3 (what SXTB16 and SXTB16 ROR #8
 * give for the weights), then the n % 4 tail of a, then that of b, in order.
 * dst holds 2 * round4(n) values. */
static inline void cmsis_widen_pair(const int8_t *a, const int8_t *b, int16_t *dst, int32_t n,
                                    int32_t offset) {
  const int32_t offsets = (int32_t)(((uint32_t)offset & 0xffffu) * 0x10001u);
  const int32_t groups = n >> 2, tail = n & 3;
  int32_t i;
  for (i = 0; i < groups; ++i, dst += 8) {
    const int32_t wa = cmsis_read4(a + 4 * i), wb = cmsis_read4(b + 4 * i);
    cmsis_write4(dst, __sxtab16(offsets, wa));
    cmsis_write4(dst + 2, cmsis_sxtab16_ror8(offsets, wa));
    cmsis_write4(dst + 4, __sxtab16(offsets, wb));
    cmsis_write4(dst + 6, cmsis_sxtab16_ror8(offsets, wb));
  }
  for (i = 0; i < tail; ++i) {
    dst[i] = (int16_t)(a[4 * groups + i] + offset);
    dst[tail + i] = (int16_t)(b[4 * groups + i] + offset);
  }
}

/* Marks the parameters of a naked function: read by its assembly, which gcc cannot see. */
#define CMSIS_IN_ASM __attribute__((unused))

/* One group of 4 inputs of cmsis_dot_2x2_held: both pixels' widened words held in r8-r11,
 * each weight word expanded once (SXTB16) and multiplied into both pixels. */
#define CMSIS_DOT_2X2_GROUP                                                                \
  "ldrd r10, r11, [r0, #8]\n\t"                                                          \
  "ldrd r8, r9, [r0], #16\n\t"                                                           \
  "ldr lr, [r1], #4\n\t"                                                                 \
  "sxtb16 r12, lr\n\t"                                                                   \
  "sxtb16 lr, lr, ror #8\n\t"                                                            \
  "smlad r4, r12, r8, r4\n\t"                                                            \
  "smlad r4, lr, r9, r4\n\t"                                                             \
  "smlad r6, r12, r10, r6\n\t"                                                           \
  "smlad r6, lr, r11, r6\n\t"                                                            \
  "ldr lr, [r2], #4\n\t"                                                                 \
  "sxtb16 r12, lr\n\t"                                                                   \
  "sxtb16 lr, lr, ror #8\n\t"                                                            \
  "smlad r5, r12, r8, r5\n\t"                                                            \
  "smlad r5, lr, r9, r5\n\t"                                                             \
  "smlad r7, r12, r10, r7\n\t"                                                           \
  "smlad r7, lr, r11, r7\n\t"

/* sums_j[c] += dot(pixel j, w_c) over groups * 4 inputs (groups >= 1) for the pair widened
 * by cmsis_widen_pair (arguments: r0 pair, r1 w0, r2 w1, r3 groups, [sp] sums0, then sums1).
 * 16 MACs in 17 instructions, unrolled twice: both pixels stay in registers for the two
 * weight words, which needs 14 registers, more than gcc gives an inline asm statement, so
 * the whole function is assembly (naked: no prologue of gcc's; it saves r4-r11 itself). */
__attribute__((naked, noinline, unused)) static void cmsis_dot_2x2_held(
    const int16_t *pair CMSIS_IN_ASM, const int8_t *w0 CMSIS_IN_ASM,
    const int8_t *w1 CMSIS_IN_ASM, int32_t groups CMSIS_IN_ASM, int32_t *sums0 CMSIS_IN_ASM,
    int32_t *sums1 CMSIS_IN_ASM) {
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "ldr lr, [sp, #36]\n\t"
      "ldrd r4, r5, [lr]\n\t"
      "ldr lr, [sp, #40]\n\t"
      "ldrd r6, r7, [lr]\n\t"
      "tst r3, #1\n\t"
      "beq 2f\n\t"
      CMSIS_DOT_2X2_GROUP
      "2:\n\t"
      "lsrs r3, r3, #1\n\t"
      "beq 3f\n\t"
      "1:\n\t"
      CMSIS_DOT_2X2_GROUP
      CMSIS_DOT_2X2_GROUP
      "subs r3, r3, #1\n\t"
      "bne 1b\n\t"
      "3:\n\t"
      "ldr lr, [sp, #36]\n\t"
      "strd r4, r5, [lr]\n\t"
      "ldr lr, [sp, #40]\n\t"
      "strd r6, r7, [lr]\n\t"
      "pop {r4-r11, pc}\n\t");
}

/* One group of 4 inputs of cmsis_dot_pairs: both pixels' widened words in r8-r11, each
 * channel's two int16 weight words (laid out offline) multiplied into both pixels. */
#define CMSIS_DOT_2X2_WIDE_GROUP                                                           \
  "ldrd r8, r9, [r0], #8\n\t"                                                            \
  "ldrd r10, r11, [r0], #8\n\t"                                                          \
  "ldrd r12, lr, [r1], #8\n\t"                                                           \
  "smlad r4, r12, r8, r4\n\t"                                                            \
  "smlad r4, lr, r9, r4\n\t"                                                             \
  "smlad r6, r12, r10, r6\n\t"                                                           \
  "smlad r6, lr, r11, r6\n\t"                                                            \
  "ldrd r12, lr, [r1], #8\n\t"                                                           \
  "smlad r5, r12, r8, r5\n\t"                                                            \
  "smlad r5, lr, r9, r5\n\t"                                                             \
  "smlad r7, r12, r10, r7\n\t"                                                           \
  "smlad r7, lr, r11, r7\n\t"

/* Channels of 8 pairs at most, CMSIS_PAIRS_CHUNK * 2, in one call of cmsis_dot_pairs. */
#define CMSIS_PAIRS_CHUNK 8

/* The sums of `count` (1 .. CMSIS_PAIRS_CHUNK) consecutive channel pairs of an offline int16
 * stream w (tflm_gen/layout.py, CONV_INT16_PAIRS: per group of 4 inputs channel a's
 * (w0, w2, w1, w3) then channel b's, 4-byte aligned) for the two pixels widened by
 * cmsis_widen_pair in `pair` (groups >= 1 groups of 4), each started at folded[c] (an even
 * number of entries).  Writes pixel 0's sums to sums[0 .. 2 * count) and pixel 1's to
 * sums[16 ..).  Arguments: r0 pair, r1 w, r2 groups, r3 count, [sp] folded, [sp, #4] sums.
 * 16 MACs in 12 instructions (no SXTB16: the weights are int16 already) and about 14 per
 * pair around them; all pairs in one call, so no call or spill per pair. */
__attribute__((naked, noinline, unused)) static void cmsis_dot_pairs(
    const int16_t *pair CMSIS_IN_ASM, const int16_t *w CMSIS_IN_ASM,
    int32_t groups CMSIS_IN_ASM, int32_t count CMSIS_IN_ASM,
    const int32_t *folded CMSIS_IN_ASM, int32_t *sums CMSIS_IN_ASM) {
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "push {r0, r2}\n\t" /* [sp] pair, [sp, #4] groups, [sp, #44] folded, [sp, #48] sums */
      "4:\n\t"
      "ldr lr, [sp, #44]\n\t"
      "ldrd r4, r5, [lr], #8\n\t"
      "str lr, [sp, #44]\n\t"
      "mov r6, r4\n\t"
      "mov r7, r5\n\t"
      "ldrd r0, r2, [sp]\n\t"
      "tst r2, #1\n\t"
      "beq 2f\n\t"
      CMSIS_DOT_2X2_WIDE_GROUP
      "2:\n\t"
      "lsrs r2, r2, #1\n\t"
      "beq 3f\n\t"
      "1:\n\t"
      CMSIS_DOT_2X2_WIDE_GROUP
      CMSIS_DOT_2X2_WIDE_GROUP
      "subs r2, r2, #1\n\t"
      "bne 1b\n\t"
      "3:\n\t"
      "ldr lr, [sp, #48]\n\t"
      "strd r6, r7, [lr, #64]\n\t"
      "strd r4, r5, [lr], #8\n\t"
      "str lr, [sp, #48]\n\t"
      "subs r3, r3, #1\n\t"
      "bne 4b\n\t"
      "add sp, sp, #8\n\t"
      "pop {r4-r11, pc}\n\t");
}

/* CMSIS_DOT_2X2_WIDE_GROUP with the weight words in r12, r3 (cmsis_dot_pairs_requant keeps
 * its tail pointer in lr); the same 12 32-bit instructions, 48 bytes. */
#define CMSIS_DOT_2X2_WIDE_GROUP_R3                                                        \
  "ldrd r8, r9, [r0], #8\n\t"                                                            \
  "ldrd r10, r11, [r0], #8\n\t"                                                          \
  "ldrd r12, r3, [r1], #8\n\t"                                                           \
  "smlad r4, r12, r8, r4\n\t"                                                            \
  "smlad r4, r3, r9, r4\n\t"                                                             \
  "smlad r6, r12, r10, r6\n\t"                                                           \
  "smlad r6, r3, r11, r6\n\t"                                                            \
  "ldrd r12, r3, [r1], #8\n\t"                                                           \
  "smlad r5, r12, r8, r5\n\t"                                                            \
  "smlad r5, r3, r9, r5\n\t"                                                             \
  "smlad r7, r12, r10, r7\n\t"                                                           \
  "smlad r7, r3, r11, r7\n\t"

/* The requantisation of channels a, b of one pixel in cmsis_dot_pairs_requant: sums sa, sb
 * (doubled), each channel's multiplier, constant and right shift in r8 r9, r10 r11, r12 r0;
 * both bytes into the low halfword of `into`, r3 scratch. */
#define CMSIS_PAIR_REQUANT(sa, sb, into)                                                   \
  "smmlar " into ", " sa ", r8, r10\n\t"                                                   \
  "add " into ", " into ", " sa ", asr #31\n\t"                                           \
  "asr " into ", " into ", r12\n\t"                                                        \
  "ssat " into ", #8, " into "\n\t"                                                        \
  "smmlar r3, " sb ", r9, r11\n\t"                                                         \
  "add r3, r3, " sb ", asr #31\n\t"                                                        \
  "asr r3, r3, r0\n\t"                                                                     \
  "ssat r3, #8, r3\n\t"                                                                    \
  "bfi " into ", r3, #8, #8\n\t"

/* cmsis_dot_pairs over `count` (>= 1) channel pairs of a CONV_INT16_PAIRS_REQUANT layout
 * (doubled weights), requantised in registers (cmsis_requantize_folded) and stored: per
 * pair the tail's 8 words (2 * folded a, b, right shift b, multiplier a, b, constant a, b,
 * right shift a), channel 2j's and 2j+1's bytes to out0[2j..] (pixel 0) and out1[2j..] (pixel 1;
 * out1 == out0 when there is no second pixel: the same bytes twice).  Arguments: r0 pair,
 * r1 w, r2 groups (>= 1), r3 count, [sp] tail, [sp, #4] out0, [sp, #8] out1 (halfword
 * aligned).  The groups loop is unrolled 4 times and entered part-way for groups % 4
 * (each group is 12 32-bit instructions, 48 bytes: the entry is computed once).  No sums
 * go through memory; about 27 instructions per pair besides its MACs. */
__attribute__((naked, noinline, unused)) static void cmsis_dot_pairs_requant(
    const int16_t *pair CMSIS_IN_ASM, const int16_t *w CMSIS_IN_ASM,
    int32_t groups CMSIS_IN_ASM, int32_t count CMSIS_IN_ASM, const int32_t *tail CMSIS_IN_ASM,
    int8_t *out0 CMSIS_IN_ASM, int8_t *out1 CMSIS_IN_ASM) {
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "ldr lr, [sp, #36]\n\t"
      "add r12, lr, r3, lsl #5\n\t" /* the tail's end */
      "rsb r3, r2, #0\n\t"
      "and r3, r3, #3\n\t"          /* groups skipped in the first pass */
      "add r2, r2, #3\n\t"
      "lsr r2, r2, #2\n\t"          /* passes */
      "adr.w r4, 1f\n\t"           /* the exact address (1: is word aligned too) */
      "add r3, r3, r3, lsl #1\n\t"
      "add r3, r4, r3, lsl #4\n\t"  /* + 48 bytes per skipped group */
      "orr r3, r3, #1\n\t"          /* Thumb */
      "push {r0, r2, r3, r12}\n\t"  /* [sp] pair, #4 passes, #8 entry, #12 tail end;
                                       #52 tail, #56 out0, #60 out1 */
      "4:\n\t"                      /* lr: this pair's tail */
      "ldrd r6, r7, [lr]\n\t"      /* both pixels' sums start at the folded a, b */
      "ldrd r4, r5, [lr], #8\n\t"
      "ldm sp, {r0, r2, r12}\n\t"  /* pair, passes, entry */
      "bx r12\n\t"
      ".p2align 2\n\t"             /* a 16-bit ADR would round an unaligned label */
      "1:\n\t"
      CMSIS_DOT_2X2_WIDE_GROUP_R3
      CMSIS_DOT_2X2_WIDE_GROUP_R3
      CMSIS_DOT_2X2_WIDE_GROUP_R3
      CMSIS_DOT_2X2_WIDE_GROUP_R3
      "subs r2, r2, #1\n\t"
      "bne 1b\n\t"
      "ldmia lr!, {r0, r8-r12}\n\t" /* the next pair's tail */
      CMSIS_PAIR_REQUANT("r4", "r5", "r2")
      CMSIS_PAIR_REQUANT("r6", "r7", "r4")
      "ldrd r6, r7, [sp, #56]\n\t"
      "strh r2, [r6], #2\n\t"
      "strh r4, [r7], #2\n\t"
      "strd r6, r7, [sp, #56]\n\t"
      "ldr r3, [sp, #12]\n\t"
      "cmp lr, r3\n\t"
      "bne 4b\n\t"
      "add sp, sp, #16\n\t"
      "pop {r4-r11, pc}\n\t");
}

/* One group of 4 inputs of cmsis_dot_pairs_requant1: the first pixel's widened words of the
 * pair (the second's skipped) and channel a's and b's four weight words in one run of six
 * pipelined loads (7 cycles), 4 SMLAD into r4, r5: 8 MACs in 11 cycles, 40 bytes. */
#define CMSIS_DOT_1X2_GROUP                                                                \
  "ldr.w r9, [r0, #4]\n\t"                                                                 \
  "ldr.w r8, [r0], #16\n\t"                                                                \
  "ldr.w r11, [r1, #4]\n\t"                                                                \
  "ldr.w r12, [r1, #8]\n\t"                                                                \
  "ldr.w lr, [r1, #12]\n\t"                                                                \
  "ldr.w r10, [r1], #16\n\t"                                                               \
  "smlad r4, r8, r10, r4\n\t"                                                              \
  "smlad r4, r9, r11, r4\n\t"                                                              \
  "smlad r5, r8, r12, r5\n\t"                                                              \
  "smlad r5, r9, lr, r5\n\t"
#define CMSIS_DOT_1X2_GROUPS4                                                              \
  CMSIS_DOT_1X2_GROUP CMSIS_DOT_1X2_GROUP CMSIS_DOT_1X2_GROUP CMSIS_DOT_1X2_GROUP
/* r2 (groups) to the entry of a loop of 8 CMSIS_DOT_1X2_GROUPs at 1: for groups % 8. */
#define CMSIS_DOT_1X2_ENTRY                                                                \
  "rsb r2, r2, #0\n\t"                                                                     \
  "and r2, r2, #7\n\t" /* groups skipped in the first pass */                              \
  "mov.w r4, #40\n\t"                                                                      \
  "mul r2, r2, r4\n\t" /* 40 bytes a group */                                              \
  "adr.w r4, 1f\n\t"   /* the exact address (1: is word aligned too) */                    \
  "add r2, r2, r4\n\t"                                                                     \
  "add r2, r2, #1\n\t" /* Thumb */

/* cmsis_dot_pairs_requant for one pixel (an odd last one): the first pixel of the pair
 * widened by cmsis_widen_pair (its second pixel's words are not read), `count` (>= 1)
 * channel pairs of the same layout and tail, channel 2j's and 2j+1's bytes to out[2j..].
 * Arguments: r0 pair, r1 w, r2 groups (>= 1), r3 count, [sp] tail, [sp, #4] out (halfword
 * aligned).  A loop of 8 groups entered part-way (by a load of PC) for groups % 8: half
 * the work of the two-pixel call rather than all of it, about 1.4 cycles a MAC. */
__attribute__((naked, noinline, unused)) static void cmsis_dot_pairs_requant1(
    const int16_t *pair CMSIS_IN_ASM, const int16_t *w CMSIS_IN_ASM,
    int32_t groups CMSIS_IN_ASM, int32_t count CMSIS_IN_ASM, const int32_t *tail CMSIS_IN_ASM,
    int8_t *out CMSIS_IN_ASM) {
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "ldr lr, [sp, #36]\n\t"       /* tail */
      "ldr r6, [sp, #40]\n\t"       /* out */
      "add r3, lr, r3, lsl #5\n\t"  /* the tail's end */
      "add r7, r0, r2, lsl #4\n\t"  /* the pixel's end: 16 bytes a group */
      CMSIS_DOT_1X2_ENTRY
      "push {r0, r2, r3, lr}\n\t"   /* [sp] pair, #4 entry, #8 tail end, #12 tail */
      "4:\n\t"                      /* lr: this pair's tail */
      "ldr r0, [sp]\n\t"
      "ldr r5, [lr, #4]\n\t"        /* the folded a, b */
      "ldr r4, [lr], #8\n\t"
      "str lr, [sp, #12]\n\t"
      "ldr pc, [sp, #4]\n\t"        /* into the loop */
      ".p2align 2\n\t"             /* a 16-bit ADR would round an unaligned label */
      "1:\n\t"
      CMSIS_DOT_1X2_GROUPS4
      CMSIS_DOT_1X2_GROUPS4
      "cmp r0, r7\n\t"
      "bne 1b\n\t"
      "ldr lr, [sp, #12]\n\t"
      "ldmia lr!, {r0, r8-r12}\n\t" /* the pair's requantisation */
      CMSIS_PAIR_REQUANT("r4", "r5", "r2")
      "strh r2, [r6], #2\n\t"
      "ldr r3, [sp, #8]\n\t"
      "cmp lr, r3\n\t"
      "bne 4b\n\t"
      "add sp, sp, #16\n\t"
      "pop {r4-r11, pc}\n\t");
}

/* One step (2 inputs) of cmsis_dot_pairs_requant3: the three pixels' widened words of the
 * step in r8-r10 (one LDM), channel a's and b's weight words of the step into r11, r12 (in
 * the stream a's word is at 0, b's at 8 bytes: the step after advances w by `next`), 6
 * SMLAD into the accumulators r2-r7 (pixel j's a, b in r(2+2j), r(3+2j)).  9 32-bit
 * instructions, 36 bytes: 12 MACs in 13 cycles (LDM 4, LDR 2 + 1, 6 SMLAD) where
 * CMSIS_DOT_2X2_WIDE_GROUP_R3 takes 20 for 16. */
#define CMSIS_DOT_3X2_LOADS(next)                                                          \
  "ldmia.w r0!, {r8-r10}\n\t"                                                              \
  "ldr.w r12, [r1, #8]\n\t"                                                                \
  "ldr.w r11, [r1], #" next "\n\t"
/* The same five words by single LDRs, one after the other (2 + 1 + 1 + 1 + 1 cycles: each
 * LDR after a load pipelines, an LDR after an LDM does not): 12 MACs in 12 cycles, but 11
 * instructions (44 bytes) for 9, so only some steps take it (instructions per invoke have
 * a budget too). */
#define CMSIS_DOT_3X2_LOADS_FAST(next)                                                     \
  "ldr.w r9, [r0, #4]\n\t"                                                                 \
  "ldr.w r10, [r0, #8]\n\t"                                                                \
  "ldr.w r8, [r0], #12\n\t"                                                                \
  "ldr.w r12, [r1, #8]\n\t"                                                                \
  "ldr.w r11, [r1], #" next "\n\t"
#define CMSIS_DOT_3X2_MACS                                                                 \
  "smlad r2, r8, r11, r2\n\t"                                                              \
  "smlad r3, r8, r12, r3\n\t"                                                              \
  "smlad r4, r9, r11, r4\n\t"                                                              \
  "smlad r5, r9, r12, r5\n\t"                                                              \
  "smlad r6, r10, r11, r6\n\t"                                                             \
  "smlad r7, r10, r12, r7\n\t"
#define CMSIS_DOT_3X2_STEP(next) CMSIS_DOT_3X2_LOADS(next) CMSIS_DOT_3X2_MACS
#define CMSIS_DOT_3X2_STEP_FAST(next) CMSIS_DOT_3X2_LOADS_FAST(next) CMSIS_DOT_3X2_MACS

/* Two groups of 4 inputs, each the (w0, w2) step, then the (w1, w3) one, the first step
 * fast: 152 bytes, the (w1, w3) steps (the loop's entries) at 44 and 116. */
#define CMSIS_DOT_3X2_UNIT                                                                 \
  CMSIS_DOT_3X2_STEP_FAST("4") CMSIS_DOT_3X2_STEP("12")                                    \
  CMSIS_DOT_3X2_STEP("4") CMSIS_DOT_3X2_STEP("12")

/* cmsis_requantize_folded of one (doubled) sum s by multiplier m, constant c and right
 * shift r into `into` (not s). */
#define CMSIS_REQUANT_WITH(s, into, m, c, r)                                               \
  "smmlar " into ", " s ", " m ", " c "\n\t"                                               \
  "add " into ", " into ", " s ", asr #31\n\t"                                            \
  "asr " into ", " into ", " r "\n\t"                                                      \
  "ssat " into ", #8, " into "\n\t"

/* CMSIS_PAIR_REQUANT with the scratch register named (it may be sa: read before). */
#define CMSIS_PAIR_REQUANT_INTO(sa, sb, into, scratch)                                     \
  CMSIS_REQUANT_WITH(sa, into, "r8", "r10", "r12")                                         \
  CMSIS_REQUANT_WITH(sb, scratch, "r9", "r11", "r0")                                       \
  "bfi " into ", " scratch ", #8, #8\n\t"

/* The start of cmsis_dot_pairs_requant3 and _requant4: r4 tail, r5 out, r6 stride, r7
 * out's end, r2 the steps after each pair's first, r12 those skipped in the first pass of
 * a loop of 32 (odd). */
#define CMSIS_DOT_REQUANT_PROLOGUE                                                         \
  "push {r4-r11, lr}\n\t"                                                                  \
  "ldr r4, [sp, #36]\n\t"                                                                  \
  "ldr r5, [sp, #40]\n\t"                                                                  \
  "ldr r6, [sp, #44]\n\t"                                                                  \
  "add r7, r5, r3, lsl #1\n\t"                                                             \
  "lsl r2, r2, #1\n\t"                                                                     \
  "sub r2, r2, #1\n\t"                                                                     \
  "rsb r12, r2, #0\n\t"                                                                    \
  "and r12, r12, #31\n\t"

/* cmsis_dot_pairs_requant for three pixels: `count` (>= 1) channel pairs of the same stream
 * and tail over the pixels widened by cmsis_widen_triple into `triple` (per group of 4
 * inputs the words (x0, x2) of pixels 0, 1, 2, then their (x1, x3)), channel 2j's and
 * 2j+1's bytes to out[2j..], out[stride + 2j..] and out[2 * stride + 2j..] (halfword
 * aligned).  Arguments: r0 triple, r1 w, r2 groups (>= 1), r3 count, [sp] tail, [sp, #4]
 * out, [sp, #8] stride.  Six accumulators and 2-input steps: the 5 words of a step fill the
 * 14 registers with r0, r1 and the pass count, and each of them feeds 2 or 3 SMLADs.  Per
 * pair the first step starts the sums at the folded constants (no copies); the 2 * groups
 * - 1 others run in a loop of 32 steps (one pass for up to 64 inputs; a fast step in four,
 * CMSIS_DOT_3X2_UNIT) entered part-way (the skipped count is odd, so the entry is a (w1,
 * w3) step, as the second step is).  The first step and the loads before it are single
 * LDRs, pipelined. */
__attribute__((naked, noinline, unused)) static void cmsis_dot_pairs_requant3(
    const int16_t *triple CMSIS_IN_ASM, const int16_t *w CMSIS_IN_ASM,
    int32_t groups CMSIS_IN_ASM, int32_t count CMSIS_IN_ASM, const int32_t *tail CMSIS_IN_ASM,
    int8_t *out CMSIS_IN_ASM, int32_t stride CMSIS_IN_ASM) {
  __asm__ volatile(
      CMSIS_DOT_REQUANT_PROLOGUE
      "add r2, r2, #31\n\t"
      "lsr r2, r2, #5\n\t"          /* passes */
      "lsr r8, r12, #2\n\t"         /* units skipped */
      "add r9, r8, r8, lsl #1\n\t"
      "add r9, r9, r8, lsl #4\n\t"  /* 19 per unit */
      "and r8, r12, #2\n\t"
      "add r8, r8, r8, lsl #3\n\t"  /* 18 for the unit's second entry */
      "adr.w r3, 1f\n\t"           /* the exact address (1: is word aligned too) */
      "add r3, r3, r9, lsl #3\n\t"  /* + 152 bytes per skipped unit */
      "add r3, r3, r8, lsl #2\n\t"  /* + 72 for the second entry */
      "add r3, r3, #45\n\t"         /* + 44 to the first entry, Thumb */
      "push {r0, r2, r3, r4, r5, r6, r7}\n\t" /* [sp] triple, #4 passes, #8 entry, #12 this
                                                 pair's tail, #16 out, #20 stride, #24 end */
      "4:\n\t"
      "ldr r12, [sp, #12]\n\t"
      "ldr r3, [r12, #4]\n\t"       /* the folded a, b */
      "ldr r2, [r12], #32\n\t"
      "str r12, [sp, #12]\n\t"      /* the next pair's tail */
      "ldr r0, [sp]\n\t"            /* triple, passes: single loads, pipelined with the */
      "ldr lr, [sp, #4]\n\t"        /* step's (an LDM would not be) */
      CMSIS_DOT_3X2_LOADS_FAST("4")
      "smlad r4, r9, r11, r2\n\t"
      "smlad r5, r9, r12, r3\n\t"
      "smlad r6, r10, r11, r2\n\t"
      "smlad r7, r10, r12, r3\n\t"
      "smlad r2, r8, r11, r2\n\t"
      "smlad r3, r8, r12, r3\n\t"
      "ldr pc, [sp, #8]\n\t"        /* into the loop */
      ".p2align 2\n\t"             /* a 16-bit ADR would round an unaligned label */
      "1:\n\t"
      CMSIS_DOT_3X2_UNIT
      CMSIS_DOT_3X2_UNIT
      CMSIS_DOT_3X2_UNIT
      CMSIS_DOT_3X2_UNIT
      CMSIS_DOT_3X2_UNIT
      CMSIS_DOT_3X2_UNIT
      CMSIS_DOT_3X2_UNIT
      CMSIS_DOT_3X2_UNIT
      "subs lr, lr, #1\n\t"
      "bne 1b\n\t"
      "ldr lr, [sp, #12]\n\t"
      "ldmdb lr, {r0, r8-r12}\n\t"  /* this pair's requantisation (tail words 2-7) */
      CMSIS_PAIR_REQUANT_INTO("r2", "r3", "lr", "r2")
      CMSIS_PAIR_REQUANT_INTO("r4", "r5", "r3", "r4")
      CMSIS_PAIR_REQUANT_INTO("r6", "r7", "r5", "r6")
      "ldr r6, [sp, #16]\n\t"
      "ldr r7, [sp, #20]\n\t"
      "ldr r8, [sp, #24]\n\t"
      "strh r3, [r6, r7]\n\t"
      "strh r5, [r6, r7, lsl #1]\n\t"
      "strh lr, [r6], #2\n\t"
      "str r6, [sp, #16]\n\t"
      "cmp r6, r8\n\t"
      "bne 4b\n\t"
      "add sp, sp, #28\n\t"
      "pop {r4-r11, pc}\n\t");
}

/* One step (2 inputs) of cmsis_dot_pairs_requant4: channel a's and b's weight words of the
 * step into r10, r11 (a's at 0, b's at 8 bytes in the stream, as CMSIS_DOT_3X2_LOADS),
 * pixels 0 and 1's widened words into r12, lr, 4 SMLAD, pixels 2 and 3's by one LDRD, 4
 * SMLAD into the accumulators r2-r9 (pixel j's a, b in r(2+2j), r(3+2j)).  The fast form
 * loads pixels 0 and 1 by two single LDRs after the weights' (one pipelined run of four
 * loads): 16 MACs in 16 cycles, 13 instructions (52 bytes; loading them by LDRD too takes
 * 17 cycles, 12 instructions). */
#define CMSIS_DOT_4X2_WEIGHTS(next)                                                        \
  "ldr.w r11, [r1, #8]\n\t"                                                                \
  "ldr.w r10, [r1], #" next "\n\t"
#define CMSIS_DOT_4X2_REST                                                                 \
  "smlad r2, r12, r10, r2\n\t"                                                             \
  "smlad r3, r12, r11, r3\n\t"                                                             \
  "smlad r4, lr, r10, r4\n\t"                                                              \
  "smlad r5, lr, r11, r5\n\t"                                                              \
  "ldrd r12, lr, [r0], #8\n\t"                                                             \
  "smlad r6, r12, r10, r6\n\t"                                                             \
  "smlad r7, r12, r11, r7\n\t"                                                             \
  "smlad r8, lr, r10, r8\n\t"                                                              \
  "smlad r9, lr, r11, r9\n\t"
#define CMSIS_DOT_4X2_STEP_FAST(next)                                                      \
  CMSIS_DOT_4X2_WEIGHTS(next)                                                              \
  "ldr.w lr, [r0, #4]\n\t"                                                                 \
  "ldr.w r12, [r0], #8\n\t"                                                                \
  CMSIS_DOT_4X2_REST

/* Eight groups of 4 inputs ((w0, w2) step, then (w1, w3)), every step fast (832 bytes); a
 * loop of several is entered at a (w1, w3) step's SMLADs, 52 * j + 16 bytes in for odd j:
 * cmsis_dot_records4's of four (64 steps, one pass for up to 128 inputs). */
#define CMSIS_DOT_4X2_GROUP_FAST CMSIS_DOT_4X2_STEP_FAST("4") CMSIS_DOT_4X2_STEP_FAST("12")
#define CMSIS_DOT_4X2_GROUPS4                                                              \
  CMSIS_DOT_4X2_GROUP_FAST CMSIS_DOT_4X2_GROUP_FAST CMSIS_DOT_4X2_GROUP_FAST                \
  CMSIS_DOT_4X2_GROUP_FAST
#define CMSIS_DOT_4X2_UNIT CMSIS_DOT_4X2_GROUPS4 CMSIS_DOT_4X2_GROUPS4

/* The requantisation of one output in cmsis_dot_pairs_requant4: the multiplier, constant
 * and right shift in r10, r11, r12. */
#define CMSIS_REQUANT_ONE(s, into) CMSIS_REQUANT_WITH(s, into, "r10", "r11", "r12")

/* The first step of cmsis_dot_pairs_requant4 and cmsis_dot_records4 (after the folded a,
 * b into r2, r3 and the weights into r10, r11): pixels 1-3 into their free b accumulators
 * and pixel 0 into r12 (FIRST_LOADS, pipelined with the loads before), then the sums
 * started at the folded constants and the second step's loads (FIRST_MACS). */
#define CMSIS_DOT_4X2_FIRST_LOADS                                                          \
  "ldr r5, [r0, #4]\n\t"                                                                   \
  "ldr r7, [r0, #8]\n\t"                                                                   \
  "ldr r9, [r0, #12]\n\t"                                                                  \
  "ldr r12, [r0], #16\n\t"
#define CMSIS_DOT_4X2_FIRST_MACS                                                           \
  "smlad r4, r5, r10, r2\n\t"                                                              \
  "smlad r5, r5, r11, r3\n\t"                                                              \
  "smlad r6, r7, r10, r2\n\t"                                                              \
  "smlad r7, r7, r11, r3\n\t"                                                              \
  "smlad r8, r9, r10, r2\n\t"                                                              \
  "smlad r9, r9, r11, r3\n\t"                                                              \
  "smlad r2, r12, r10, r2\n\t"                                                             \
  "smlad r3, r12, r11, r3\n\t"                                                             \
  CMSIS_DOT_4X2_WEIGHTS("12")                                                              \
  "ldr.w lr, [r0, #4]\n\t"                                                                 \
  "ldr.w r12, [r0], #8\n\t"
/* Channel a's four outputs into r0, r2, r4, r6 (its multiplier, constant and right shift
 * in r10-r12), then b's into their second bytes. */
#define CMSIS_QUAD_REQUANT_A                                                               \
  CMSIS_REQUANT_ONE("r2", "r0")                                                            \
  CMSIS_REQUANT_ONE("r4", "r2")                                                            \
  CMSIS_REQUANT_ONE("r6", "r4")                                                            \
  CMSIS_REQUANT_ONE("r8", "r6")
#define CMSIS_QUAD_REQUANT_B                                                               \
  CMSIS_REQUANT_ONE("r3", "r8")                                                            \
  "bfi r0, r8, #8, #8\n\t"                                                                 \
  CMSIS_REQUANT_ONE("r5", "r3")                                                            \
  "bfi r2, r3, #8, #8\n\t"                                                                 \
  CMSIS_REQUANT_ONE("r7", "r3")                                                            \
  "bfi r4, r3, #8, #8\n\t"                                                                 \
  CMSIS_REQUANT_ONE("r9", "r3")                                                            \
  "bfi r6, r3, #8, #8\n\t"

/* cmsis_dot_pairs_requant3 for four pixels widened by cmsis_widen_four into `quad` (per
 * group of 4 inputs the words (x0, x2) of pixels 0-3, then their (x1, x3)): `count` (>= 1)
 * channel pairs of the same stream and tail, channel 2j's and 2j+1's bytes to out[2j..] +
 * j * stride for pixels j = 0..3 (halfword aligned).  Arguments: r0 quad, r1 w, r2 groups
 * (>= 1), r3 count, [sp] tail, [sp, #4] out, [sp, #8] stride.  Eight accumulators fill the
 * 14 registers with the step's 4 words and r0, r1: a pass ends when r0 reaches the
 * buffer's end.  Per pair, one run of pipelined loads (the tail pointer, the quad, the
 * folded a, b, the first step's 6 words into the free accumulators, then the second step's
 * 4) around the first step's 8 SMLADs, which start the sums at the folded constants; a load
 * of PC right after them (1 cycle + refill) enters the loop of 64 steps part-way, at the
 * second step's SMLADs (the skipped count is odd: a (w1, w3) step).  Every step takes the
 * pipelined loads (16 cycles); the loop is of 32 steps (kernel text: the 1x1 layers of
 * real models run cmsis_dot_records4, this one the decoded blocks of coded filters).  After the loop: the tail words by negative offsets from the
 * next pair's tail (stored at the head), channel a's outputs requantised first, then b's,
 * each into its pixel's halfword. */
__attribute__((naked, noinline, unused)) static void cmsis_dot_pairs_requant4(
    const int16_t *quad CMSIS_IN_ASM, const int16_t *w CMSIS_IN_ASM,
    int32_t groups CMSIS_IN_ASM, int32_t count CMSIS_IN_ASM, const int32_t *tail CMSIS_IN_ASM,
    int8_t *out CMSIS_IN_ASM, int32_t stride CMSIS_IN_ASM) {
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "ldr r4, [sp, #36]\n\t"
      "ldr r5, [sp, #40]\n\t"
      "ldr r6, [sp, #44]\n\t"
      "add r7, r5, r3, lsl #1\n\t"  /* out's end */
      "add r8, r0, r2, lsl #5\n\t"  /* the buffer's end: 32 bytes a group */
      "lsl r2, r2, #1\n\t"
      "rsb r12, r2, #1\n\t"
      "and r12, r12, #31\n\t"       /* steps skipped in the first pass (odd) */
      "mov.w r9, #52\n\t"
      "mul r12, r12, r9\n\t"        /* 52 bytes a step */
      "adr.w r3, 1f\n\t"           /* the exact address (1: is word aligned too) */
      "add r3, r3, r12\n\t"
      "add r3, r3, #17\n\t"         /* + 16: past the entry step's loads; Thumb */
      "push {r0, r3, r4, r5, r6, r7, r8}\n\t" /* [sp] quad, #4 entry, #8 this pair's tail,
                                                 #12 out, #16 stride, #20 end, #24 quad end */
      "4:\n\t"
      "ldr lr, [sp, #8]\n\t"
      "ldr r0, [sp]\n\t"
      "ldr r3, [lr, #4]\n\t"        /* the folded a, b */
      "ldr r2, [lr], #32\n\t"
      CMSIS_DOT_4X2_WEIGHTS("4")
      CMSIS_DOT_4X2_FIRST_LOADS
      "str lr, [sp, #8]\n\t"        /* the next pair's tail */
      CMSIS_DOT_4X2_FIRST_MACS
      "ldr pc, [sp, #4]\n\t"        /* into the loop */
      ".p2align 2\n\t"             /* a 16-bit ADR would round an unaligned label */
      "1:\n\t"
      CMSIS_DOT_4X2_UNIT
      CMSIS_DOT_4X2_UNIT
      "ldr r10, [sp, #24]\n\t"
      "ldr lr, [sp, #8]\n\t"        /* the next pair's tail: this pair's words at -32.. */
      "ldr r11, [lr, #-12]\n\t"     /* constant a */
      "ldr r12, [lr, #-4]\n\t"      /* right shift a */
      "cmp r0, r10\n\t"
      "bne 1b\n\t"
      "ldr r10, [lr, #-20]\n\t"     /* multiplier a */
      CMSIS_QUAD_REQUANT_A
      "ldr r10, [lr, #-16]\n\t"     /* multiplier, constant, right shift b */
      "ldr r11, [lr, #-8]\n\t"
      "ldr r12, [lr, #-24]\n\t"
      "ldr lr, [sp, #12]\n\t"       /* out */
      CMSIS_QUAD_REQUANT_B
      "ldr r5, [sp, #16]\n\t"
      "ldr r9, [sp, #20]\n\t"
      "strh r2, [lr, r5]\n\t"       /* a register offset right after a load (1 cycle) */
      "add r8, lr, r5, lsl #1\n\t"
      "strh r6, [r8, r5]\n\t"
      "strh r4, [r8]\n\t"
      "strh r0, [lr], #2\n\t"
      "str lr, [sp, #12]\n\t"
      "cmp lr, r9\n\t"
      "bne 4b\n\t"
      "add sp, sp, #28\n\t"
      "pop {r4-r11, pc}\n\t");
}

/* The parts the CONV_PAIR_RECORDS kernels share.  Prologue: the loop's entry for `mask`
 * (steps a pass - 1) and `step` bytes a step, `past` bytes past its loads (+ 1, Thumb);
 * [sp] the widened pixels, #4 out, #8 entry; then each pair's folded a, b into r2, r3. */
#define CMSIS_RECORD_PROLOGUE(mask, step, past)                                            \
  "push {r4-r11, lr}\n\t"                                                                  \
  "lsl r2, r2, #1\n\t"                                                                     \
  "rsb r12, r2, #1\n\t"                                                                    \
  "and r12, r12, #" mask "\n\t" /* steps skipped in the first pass (odd) */                \
  "mov.w r9, #" step "\n\t"                                                                \
  "mul r12, r12, r9\n\t"                                                                   \
  "adr.w r4, 1f\n\t" /* the exact address (1: is word aligned too) */                      \
  "add r4, r4, r12\n\t"                                                                    \
  "add r4, r4, #" past "\n\t"                                                              \
  "push {r0, r3, r4}\n\t"                                                                  \
  "4:\n\t"                                                                                 \
  "ldr r0, [sp]\n\t"                                                                       \
  "ldr r3, [r1, #4]\n\t"                                                                   \
  "ldr r2, [r1], #8\n\t"
/* After a pass: right shift a | mark (or a weight word: another pass), multiplier and
 * constant a into r12, r10, r11. */
#define CMSIS_RECORD_A_WORDS                                                               \
  "ldr r12, [r1, #4]\n\t"                                                                  \
  "ldr r10, [r1, #8]\n\t"                                                                  \
  "ldr r11, [r1, #12]\n\t"                                                                 \
  "cmp r12, #0x1000000\n\t"                                                                \
  "blt 1b\n\t"
/* Constant b, right shift b | stride << 8 | last << 31, multiplier b into r11, r12, r10;
 * w to the next pair. */
#define CMSIS_RECORD_B_WORDS                                                               \
  "ldr r11, [r1], #24\n\t"                                                                 \
  "ldr r12, [r1, #-8]\n\t"                                                                 \
  "ldr r10, [r1, #-4]\n\t"
/* The next pair unless this one is the last; `frame` bytes of locals. */
#define CMSIS_RECORD_NEXT(frame)                                                           \
  "cmp r12, #0\n\t"                                                                        \
  "bge 4b\n\t"                                                                             \
  "add sp, sp, #" frame "\n\t"                                                             \
  "pop {r4-r11, pc}\n\t"

/* cmsis_dot_pairs_requant4 over the CONV_PAIR_RECORDS records at w (tflm_gen/layout.py:
 * per channel pair its doubled folded a, b, its weights, then constant b, right shift a |
 * mark, multiplier a, constant a, right shift b | stride << 8 | last << 31, multiplier b),
 * every pair of the layer, channel 2j's and 2j+1's bytes to out[2j..] + j * stride for
 * pixels j = 0..3 (the stride read from the records).  Arguments: r0 quad, r1 w, r2
 * groups (>= 1), r3 out.  One pointer reads weights and constants: the loop ends on the
 * marked word after the weights (a weight word is within +-2^24, that word above 2^30; it
 * and the two after it are a's requantisation), the pairs on the last pair's bit. */
__attribute__((naked, noinline, unused)) static void cmsis_dot_records4(
    const int16_t *quad CMSIS_IN_ASM, const int16_t *w CMSIS_IN_ASM,
    int32_t groups CMSIS_IN_ASM, int8_t *out CMSIS_IN_ASM) {
  __asm__ volatile(
      CMSIS_RECORD_PROLOGUE("63", "52", "17")
      CMSIS_DOT_4X2_WEIGHTS("4")
      CMSIS_DOT_4X2_FIRST_LOADS
      CMSIS_DOT_4X2_FIRST_MACS
      "ldr pc, [sp, #8]\n\t"        /* into the loop */
      ".p2align 2\n\t"             /* a 16-bit ADR would round an unaligned label */
      "1:\n\t"
      CMSIS_DOT_4X2_UNIT
      CMSIS_DOT_4X2_UNIT
      CMSIS_DOT_4X2_UNIT
      CMSIS_DOT_4X2_UNIT
      CMSIS_RECORD_A_WORDS
      CMSIS_QUAD_REQUANT_A
      CMSIS_RECORD_B_WORDS
      "ldr lr, [sp, #4]\n\t"        /* out */
      CMSIS_QUAD_REQUANT_B
      "ubfx r5, r12, #8, #22\n\t"  /* stride */
      "strh r2, [lr, r5]\n\t"
      "add r8, lr, r5, lsl #1\n\t"
      "strh r6, [r8, r5]\n\t"
      "strh r4, [r8]\n\t"
      "strh r0, [lr], #2\n\t"
      "str lr, [sp, #4]\n\t"
      CMSIS_RECORD_NEXT("12"));
}

/* Sixteen steps of cmsis_dot_records3, every one fast (704 bytes). */
#define CMSIS_DOT_3X2_FAST_UNIT                                                            \
  CMSIS_DOT_3X2_STEP_FAST("4") CMSIS_DOT_3X2_STEP_FAST("12") CMSIS_DOT_3X2_STEP_FAST("4")  \
  CMSIS_DOT_3X2_STEP_FAST("12") CMSIS_DOT_3X2_STEP_FAST("4") CMSIS_DOT_3X2_STEP_FAST("12") \
  CMSIS_DOT_3X2_STEP_FAST("4") CMSIS_DOT_3X2_STEP_FAST("12") CMSIS_DOT_3X2_STEP_FAST("4")  \
  CMSIS_DOT_3X2_STEP_FAST("12") CMSIS_DOT_3X2_STEP_FAST("4") CMSIS_DOT_3X2_STEP_FAST("12") \
  CMSIS_DOT_3X2_STEP_FAST("4") CMSIS_DOT_3X2_STEP_FAST("12") CMSIS_DOT_3X2_STEP_FAST("4")  \
  CMSIS_DOT_3X2_STEP_FAST("12")

/* cmsis_dot_records4 for three pixels widened by cmsis_widen_three (per group the words
 * (x0, x2) of pixels 0-2, then their (x1, x3)): every step by five pipelined loads (12
 * MACs in 12 cycles) in a loop of 32 entered part-way, the first step starting the sums at
 * the folded constants; channel 2j's and 2j+1's bytes to out[2j..] + j * stride for
 * pixels j = 0..2.  Arguments: r0 triple, r1 w, r2 groups (>= 1), r3 out. */
__attribute__((naked, noinline, unused)) static void cmsis_dot_records3(
    const int16_t *triple CMSIS_IN_ASM, const int16_t *w CMSIS_IN_ASM,
    int32_t groups CMSIS_IN_ASM, int8_t *out CMSIS_IN_ASM) {
  __asm__ volatile(
      CMSIS_RECORD_PROLOGUE("31", "44", "21")
      "ldr.w r12, [r1, #8]\n\t"
      "ldr.w r11, [r1], #4\n\t"
      "ldr r5, [r0, #4]\n\t"        /* pixels 1, 2 into their free b accumulators */
      "ldr r7, [r0, #8]\n\t"
      "ldr r8, [r0], #12\n\t"
      "smlad r4, r5, r11, r2\n\t"
      "smlad r5, r5, r12, r3\n\t"
      "smlad r6, r7, r11, r2\n\t"
      "smlad r7, r7, r12, r3\n\t"
      "smlad r2, r8, r11, r2\n\t"
      "smlad r3, r8, r12, r3\n\t"
      CMSIS_DOT_3X2_LOADS_FAST("12") /* the second step's loads */
      "ldr pc, [sp, #8]\n\t"        /* into the loop */
      ".p2align 2\n\t"
      "1:\n\t"
      CMSIS_DOT_3X2_FAST_UNIT
      CMSIS_DOT_3X2_FAST_UNIT
      CMSIS_RECORD_A_WORDS
      CMSIS_REQUANT_ONE("r2", "r8")
      CMSIS_REQUANT_ONE("r4", "r2")
      CMSIS_REQUANT_ONE("r6", "r4")
      CMSIS_RECORD_B_WORDS
      "ldr lr, [sp, #4]\n\t"        /* out */
      CMSIS_REQUANT_ONE("r3", "r6")
      "bfi r8, r6, #8, #8\n\t"
      CMSIS_REQUANT_ONE("r5", "r6")
      "bfi r2, r6, #8, #8\n\t"
      CMSIS_REQUANT_ONE("r7", "r6")
      "bfi r4, r6, #8, #8\n\t"
      "ubfx r5, r12, #8, #22\n\t"  /* stride */
      "strh r2, [lr, r5]\n\t"
      "strh r4, [lr, r5, lsl #1]\n\t"
      "strh r8, [lr], #2\n\t"
      "str lr, [sp, #4]\n\t"
      CMSIS_RECORD_NEXT("12"));
}

/* cmsis_dot_records4 for one pixel, widened as cmsis_widen_pair's first pixel (its second
 * pixel's words are not read): CMSIS_DOT_1X2_GROUP in a loop of 8 groups entered
 * part-way, both bytes of each pair to out[2j..].  Arguments: r0 pair, r1 w, r2 groups
 * (>= 1), r3 out. */
__attribute__((naked, noinline, unused)) static void cmsis_dot_records1(
    const int16_t *pair CMSIS_IN_ASM, const int16_t *w CMSIS_IN_ASM,
    int32_t groups CMSIS_IN_ASM, int8_t *out CMSIS_IN_ASM) {
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "mov r6, r3\n\t"
      CMSIS_DOT_1X2_ENTRY
      "push {r0, r2}\n\t"           /* [sp] pair, #4 entry */
      "4:\n\t"
      "ldr r0, [sp]\n\t"
      "ldr r5, [r1, #4]\n\t"        /* the folded a, b */
      "ldr r4, [r1], #8\n\t"
      "ldr pc, [sp, #4]\n\t"        /* into the loop */
      ".p2align 2\n\t"
      "1:\n\t"
      CMSIS_DOT_1X2_GROUPS4
      CMSIS_DOT_1X2_GROUPS4
      CMSIS_RECORD_A_WORDS
      CMSIS_REQUANT_ONE("r4", "r2")
      CMSIS_RECORD_B_WORDS
      CMSIS_REQUANT_ONE("r5", "r3")
      "bfi r2, r3, #8, #8\n\t"
      "strh r2, [r6], #2\n\t"
      CMSIS_RECORD_NEXT("8"));
}

/* One group of cmsis_widen_four: 4 pipelined LDRs, 8 SXTB16 and one STM of the 8 words
 * (x0, x2) of pixels 0-3, then their (x1, x3). */
#define CMSIS_WIDEN4_GROUP                                                                 \
  "ldr r7, [r0, r3]\n\t"                                                                   \
  "ldr r8, [r0, r4]\n\t"                                                                   \
  "ldr r9, [r0, r5]\n\t"                                                                   \
  "ldr r6, [r0], #4\n\t"                                                                   \
  "sxtb16 r10, r6, ror #8\n\t"                                                             \
  "sxtb16 r6, r6\n\t"                                                                      \
  "sxtb16 r11, r7, ror #8\n\t"                                                             \
  "sxtb16 r7, r7\n\t"                                                                      \
  "sxtb16 r12, r8, ror #8\n\t"                                                             \
  "sxtb16 r8, r8\n\t"                                                                      \
  "sxtb16 lr, r9, ror #8\n\t"                                                              \
  "sxtb16 r9, r9\n\t"                                                                      \
  "stmia r1!, {r6-r12, lr}\n\t"

/* Widens `quads` (>= 1) groups of 4 int8 values of the four pixels at src[0..3] into a
 * cmsis_dot_pairs_requant4 buffer (32 bytes a group): 15 instructions a group (where the C
 * loop takes about 24), two groups a pass after an odd count's first. */
__attribute__((naked, noinline, unused)) static void cmsis_widen_four(
    const int8_t *const src[4] CMSIS_IN_ASM, int16_t *dst CMSIS_IN_ASM,
    int32_t quads CMSIS_IN_ASM) {
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "ldm r0, {r0, r3, r4, r5}\n\t"
      "sub r3, r3, r0\n\t"          /* pixels 1-3 from pixel 0 */
      "sub r4, r4, r0\n\t"
      "sub r5, r5, r0\n\t"
      "tst r2, #1\n\t"
      "add r2, r0, r2, lsl #2\n\t"  /* pixel 0's end */
      "beq 1f\n\t"
      CMSIS_WIDEN4_GROUP
      "cmp r0, r2\n\t"
      "beq 2f\n\t"
      "1:\n\t"
      CMSIS_WIDEN4_GROUP
      CMSIS_WIDEN4_GROUP
      "cmp r0, r2\n\t"
      "bne 1b\n\t"
      "2:\n\t"
      "pop {r4-r11, pc}\n\t");
}

/* Widens `quads` groups of 4 int8 values at src into one pixel's words of a
 * cmsis_dot_pairs_requant3 buffer (dst: the pixel's first word; 24 bytes a group). */
static inline void cmsis_widen_triple(const int8_t *src, int16_t *dst, int32_t quads) {
  for (; quads > 0; --quads, src += 4, dst += 12) {
    const int32_t word = cmsis_read4(src);
    cmsis_write4(dst, __sxtb16(word));
    cmsis_write4(dst + 6, cmsis_sxtb16_ror8(word));
  }
}

/* cmsis_widen_triple of three pixels' rows a, b, c at once (one loop, its pointers shared). */
static inline void cmsis_widen_three(const int8_t *a, const int8_t *b, const int8_t *c,
                                     int16_t *dst, int32_t quads) {
  const int32_t to_b = (int32_t)(b - a), to_c = (int32_t)(c - a);
  const int8_t *end = a + 4 * quads;
  for (; a != end; a += 4, dst += 12) {
    const int32_t wa = cmsis_read4(a), wb = cmsis_read4(a + to_b), wc = cmsis_read4(a + to_c);
    cmsis_write4(dst, __sxtb16(wa));
    cmsis_write4(dst + 2, __sxtb16(wb));
    cmsis_write4(dst + 4, __sxtb16(wc));
    cmsis_write4(dst + 6, cmsis_sxtb16_ror8(wa));
    cmsis_write4(dst + 8, cmsis_sxtb16_ror8(wb));
    cmsis_write4(dst + 10, cmsis_sxtb16_ror8(wc));
  }
}

#endif /* CMSIS_DSP */

#ifdef CMSIS_MVE
/* tflm_multiply_by_quantized_multiplier on 4 lanes, each with its own multiplier and shift,
 * bit-exact for every input and shift in [-31, 31]:
 *   the left shift is VSHL (wraps, like the scalar's unsigned shift);
 *   VQRDMULH is (2ab + 2^31) >> 32 saturated, which is gemmlowp's nudge-then-truncate
 *     doubling high multiply for every a, b (INT32_MIN^2 saturates in both);
 *   VRSHL by -e rounds ties up, (h + 2^(e-1)) >> e in full precision; subtracting 1 first
 *     from negative h (only when e > 0) turns that into ties away from zero, as
 *     tflm_rounding_divide_by_pot does.  The subtraction saturates: h == INT32_MIN stays,
 *     whose quotient -2^(31-e) is exact either way. */
static inline int32x4_t cmsis_mve_mul_by_qm(int32x4_t acc, int32x4_t multiplier,
                                            int32x4_t shift) {
  const int32x4_t zero = vdupq_n_s32(0);
  const int32x4_t right = vminq_s32(shift, zero); /* minus the right shift */
  int32x4_t high = vqrdmulhq_s32(vshlq_s32(acc, vmaxq_s32(shift, zero)), multiplier);
  /* -1 in the lanes where high < 0 and right < 0: the sign bit of high & right. */
  high = vqaddq_s32(high, vshrq_n_s32(vandq_s32(high, right), 31));
  return vrshlq_s32(high, right);
}

/* cmsis_mve_mul_by_qm, plus offset, clamped to [lo, hi]. */
static inline int32x4_t cmsis_mve_requantize(int32x4_t acc, int32x4_t multiplier,
                                             int32x4_t shift, int32_t offset, int32_t lo,
                                             int32_t hi) {
  const int32x4_t value = vaddq_n_s32(cmsis_mve_mul_by_qm(acc, multiplier, shift), offset);
  return vminq_s32(vmaxq_s32(value, vdupq_n_s32(lo)), vdupq_n_s32(hi));
}

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
  for (i = 0; i < n; ++i) acc = tflm_mac_wrap(acc, w[i], (int32_t)x[i] + offset);
  return acc;
}

#endif /* TFLM_CMSIS_SIMD_H */
