/* The cmsis tag's hot steps of the sparse 1x1 CONV_2D (kernels_c/conv_sparse.h): on a DSP
 * core the quads of pixels in assembly (one LDRD of 4 inputs and 4 SMLAxB per weight), and
 * everywhere the requantisation by cmsis_strict_clamped when a channel's shift suits it.
 * Included by cmsis/conv.c only. */
#ifndef CMSIS_CONV_SPARSE_H
#define CMSIS_CONV_SPARSE_H

#include <stdint.h>

#include "cmsis_simd.h"
#include "conv_sparse.h"

#if defined(CMSIS_DSP) && !defined(CMSIS_MVE)
/* One list entry (r10: byte offset high, weight low) into the 4 sums r6-r9: its inputs'
 * address (r11), both words (r11, lr), four multiply-accumulates. */
#define CMSIS_SPARSE_MAC4                 \
  "ldr r10, [r12], #4\n\t"                \
  "add r11, r2, r10, lsr #16\n\t"         \
  "ldrd r11, lr, [r11]\n\t"               \
  "smlabb r6, r11, r10, r6\n\t"           \
  "smlatb r7, r11, r10, r7\n\t"           \
  "smlabb r8, lr, r10, r8\n\t"            \
  "smlatb r9, lr, r10, r9\n\t"

/* tflm_conv_sparse_quads_fn.  Arguments: r0 list, r1 count, r2 x, r3 quads (>= 1), then
 * start and sums on the stack.  Two entries per loop step: 8 instructions per weight and
 * group of 4 pixels (x is 4-byte aligned and every offset a multiple of 4: LDRD). */
__attribute__((naked, noinline)) static void cmsis_sparse_quads(
    const uint32_t *list CMSIS_IN_ASM, int32_t count CMSIS_IN_ASM,
    const int16_t *x CMSIS_IN_ASM, int32_t quads CMSIS_IN_ASM, uint32_t start CMSIS_IN_ASM,
    uint32_t *sums CMSIS_IN_ASM) {
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "ldr r4, [sp, #36]\n\t"        /* start */
      "ldr r5, [sp, #40]\n\t"        /* sums */
      "add r1, r0, r1, lsl #2\n\t"   /* r1: the list's end */
      "1:\n\t"
      "mov r6, r4\n\t"
      "mov r7, r4\n\t"
      "mov r8, r4\n\t"
      "mov r9, r4\n\t"
      "mov r12, r0\n\t"
      "sub r10, r1, r0\n\t"
      "tst r10, #4\n\t"              /* an odd count: one entry first */
      "beq 2f\n\t"
      CMSIS_SPARSE_MAC4
      "2:\n\t"
      "cmp r12, r1\n\t"
      "beq 4f\n\t"
      "3:\n\t"
      CMSIS_SPARSE_MAC4
      CMSIS_SPARSE_MAC4
      "cmp r12, r1\n\t"
      "bne 3b\n\t"
      "4:\n\t"
      "stmia r5!, {r6-r9}\n\t"
      "add r2, r2, #8\n\t"
      "subs r3, r3, #1\n\t"
      "bne 1b\n\t"
      "pop {r4-r11, pc}\n\t");
}
#define CMSIS_SPARSE_QUADS cmsis_sparse_quads
#else
#define CMSIS_SPARSE_QUADS tflm_conv_sparse_quads
#endif

/* tflm_conv_sparse_store_fn: cmsis_strict_clamped when the channel's shift is in its range,
 * else the portable store. */
static void cmsis_sparse_store(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                               int32_t oc, const uint32_t *sums, int32_t pixels, int8_t *out) {
  cmsis_strict_t q;
  int32_t pixel;
  if (!cmsis_requant_is_strict(requant->shifts + oc, 1)) {
    tflm_conv_sparse_store(p, requant, oc, sums, pixels, out);
    return;
  }
  cmsis_strict_init(requant->multipliers[oc], requant->shifts[oc], p->output_offset,
                    p->act_min, p->act_max, &q);
  for (pixel = 0; pixel < pixels; ++pixel) {
    out[pixel * p->output_c] = cmsis_strict_clamped(&q, (int32_t)sums[pixel]);
  }
}

static const tflm_conv_sparse_kernels_t cmsis_sparse_kernels = {CMSIS_SPARSE_QUADS,
                                                                cmsis_sparse_store};

#endif /* CMSIS_CONV_SPARSE_H */
