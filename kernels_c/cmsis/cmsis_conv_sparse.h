/* The cmsis tag's hot steps of the sparse 1x1 CONV_2D (kernels_c/conv_sparse.h): on a DSP
 * core the pixels in assembly, 8 per pass over a channel's list while 8 remain (two LDRDs of
 * 4 inputs and 8 SMLAxB per weight: the list's entry read and its row's address computed
 * once for 8 pixels rather than 4), then 4, then one at a time; and everywhere the
 * requantisation by cmsis_strict_clamped when a channel's shift suits it.
 * Included by cmsis/conv.c only. */
#ifndef CMSIS_CONV_SPARSE_H
#define CMSIS_CONV_SPARSE_H

#include <stddef.h>
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

/* tflm_conv_sparse_quads on a DSP core.  Arguments: r0 list, r1 count, r2 x, r3 quads (>= 1), then
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
/* One list entry (r2: byte offset high, weight low) into the 8 sums r4-r11: its inputs'
 * address (r3), two LDRDs (r12, lr), eight multiply-accumulates.  No flag is set. */
#define CMSIS_SPARSE_MAC8                 \
  "ldr r2, [r0], #4\n\t"                  \
  "add r3, r1, r2, lsr #16\n\t"           \
  "ldrd r12, lr, [r3]\n\t"                \
  "smlabb r4, r12, r2, r4\n\t"            \
  "smlatb r5, r12, r2, r5\n\t"            \
  "smlabb r6, lr, r2, r6\n\t"             \
  "smlatb r7, lr, r2, r7\n\t"             \
  "ldrd r12, lr, [r3, #8]\n\t"            \
  "smlabb r8, r12, r2, r8\n\t"            \
  "smlatb r9, r12, r2, r9\n\t"            \
  "smlabb r10, lr, r2, r10\n\t"           \
  "smlatb r11, lr, r2, r11\n\t"

/* The sums of 8 * octets pixels (octets >= 1), 8 per pass.  Arguments: r0 list, r1 count,
 * r2 x, r3 octets, then start and sums on the stack.  Every register holds the pass (r0 the
 * entry, r1 x, r2 the entry, r3 its address, r12 and lr the inputs, r4-r11 the sums), so the
 * list's end, its start, the passes left and the sums' pointer live in a frame of 16 bytes;
 * four entries per loop step (the first count % 4 before it, chosen by the flags of one
 * LSLS, which nothing in CMSIS_SPARSE_MAC8 changes): 12.75 instructions per weight. */
__attribute__((naked, noinline)) static void cmsis_sparse_octets(
    const uint32_t *list CMSIS_IN_ASM, int32_t count CMSIS_IN_ASM,
    const int16_t *x CMSIS_IN_ASM, int32_t octets CMSIS_IN_ASM, uint32_t start CMSIS_IN_ASM,
    uint32_t *sums CMSIS_IN_ASM) {
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "sub sp, sp, #16\n\t"
      "add r1, r0, r1, lsl #2\n\t"
      "str r1, [sp, #0]\n\t"         /* the list's end */
      "str r0, [sp, #4]\n\t"         /* its start */
      "str r3, [sp, #8]\n\t"         /* passes left */
      "ldr r3, [sp, #56]\n\t"        /* sums (16 + 36 + 4) */
      "str r3, [sp, #12]\n\t"
      "mov r1, r2\n\t"               /* r1: x */
      "1:\n\t"
      "ldr r4, [sp, #52]\n\t"        /* start */
      "mov r5, r4\n\t"
      "mov r6, r4\n\t"
      "mov r7, r4\n\t"
      "mov r8, r4\n\t"
      "mov r9, r4\n\t"
      "mov r10, r4\n\t"
      "mov r11, r4\n\t"
      "ldr r0, [sp, #4]\n\t"
      "ldr r3, [sp, #0]\n\t"
      "sub r12, r3, r0\n\t"
      "lsls r12, r12, #29\n\t"       /* N: count bit 0, C: count bit 1 */
      "bpl 2f\n\t"
      CMSIS_SPARSE_MAC8
      "2:\n\t"
      "bcc 3f\n\t"
      CMSIS_SPARSE_MAC8
      CMSIS_SPARSE_MAC8
      "3:\n\t"
      "ldr r3, [sp, #0]\n\t"
      "cmp r0, r3\n\t"
      "beq 5f\n\t"
      "4:\n\t"
      CMSIS_SPARSE_MAC8
      CMSIS_SPARSE_MAC8
      CMSIS_SPARSE_MAC8
      CMSIS_SPARSE_MAC8
      "ldr r3, [sp, #0]\n\t"
      "cmp r0, r3\n\t"
      "bne 4b\n\t"
      "5:\n\t"
      "ldr r3, [sp, #12]\n\t"
      "stmia r3!, {r4-r11}\n\t"
      "str r3, [sp, #12]\n\t"
      "add r1, r1, #16\n\t"
      "ldr r3, [sp, #8]\n\t"
      "subs r3, r3, #1\n\t"
      "str r3, [sp, #8]\n\t"
      "bne 1b\n\t"
      "add sp, sp, #16\n\t"
      "pop {r4-r11, pc}\n\t");
}

/* The sum of one pixel: r0 list, r1 count, r2 x (the pixel's first input), r3 start;
 * returns start + the list's weights times the pixel's inputs.  Two entries per loop step:
 * 5 instructions per weight. */
__attribute__((naked, noinline)) static uint32_t cmsis_sparse_one(
    const uint32_t *list CMSIS_IN_ASM, int32_t count CMSIS_IN_ASM,
    const int16_t *x CMSIS_IN_ASM, uint32_t start CMSIS_IN_ASM) {
  __asm__ volatile(
      "push {r4, lr}\n\t"
      "add r1, r0, r1, lsl #2\n\t"
      "sub r12, r1, r0\n\t"
      "tst r12, #4\n\t"
      "beq 2f\n\t"
      "ldr r12, [r0], #4\n\t"
      "add r4, r2, r12, lsr #16\n\t"
      "ldrsh r4, [r4]\n\t"
      "smlabb r3, r4, r12, r3\n\t"
      "2:\n\t"
      "cmp r0, r1\n\t"
      "beq 4f\n\t"
      "3:\n\t"
      "ldr r12, [r0], #4\n\t"
      "add r4, r2, r12, lsr #16\n\t"
      "ldrsh r4, [r4]\n\t"
      "smlabb r3, r4, r12, r3\n\t"
      "ldr r12, [r0], #4\n\t"
      "add r4, r2, r12, lsr #16\n\t"
      "ldrsh r4, [r4]\n\t"
      "smlabb r3, r4, r12, r3\n\t"
      "cmp r0, r1\n\t"
      "bne 3b\n\t"
      "4:\n\t"
      "mov r0, r3\n\t"
      "pop {r4, pc}\n\t");
}

/* tflm_conv_sparse_list_fn (kernels_c/conv_sparse.c tflm_conv_sparse_list, the same steps):
 * r0 the reader, r1 end, r2 list.  Registers: r0 next, r1 end, r2 the list's next entry,
 * r3 buffer, r4 bits, r5 W, r6 the mask 2^W - 1, r7 V, r8 G * V, r9 step, r10 t, r11
 * position, r12 and lr a token's code, gap, position and weight; the reader, the list and
 * the skip step in a frame of 12 bytes.  A weight costs about 21 instructions (one UDIV,
 * MLS, MLA; PKHBT packs the entry), against 29 for the compiled C. */
typedef char cmsis_sparse_reader_layout[
    offsetof(tflm_conv_sparse_reader_t, weight) == 44 && sizeof(void *) == 4 ? 1 : -1];
__attribute__((naked, noinline)) static int32_t cmsis_sparse_list(
    tflm_conv_sparse_reader_t *r CMSIS_IN_ASM, int32_t end CMSIS_IN_ASM,
    uint32_t *list CMSIS_IN_ASM) {
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "sub sp, sp, #12\n\t"
      "str r0, [sp, #0]\n\t"
      "str r2, [sp, #4]\n\t"
      "ldr r12, [r0, #24]\n\t"       /* skip_step */
      "str r12, [sp, #8]\n\t"
      "ldr r3, [r0, #4]\n\t"
      "ldr r4, [r0, #8]\n\t"
      "ldr r5, [r0, #12]\n\t"
      "ldr r7, [r0, #16]\n\t"
      "ldr r8, [r0, #20]\n\t"
      "ldr r9, [r0, #28]\n\t"
      "ldr r10, [r0, #32]\n\t"
      "ldr r11, [r0, #36]\n\t"
      "ldr lr, [r0, #40]\n\t"        /* the token held: at */
      "ldr r12, [r0, #44]\n\t"       /* its weight */
      "ldr r0, [r0, #0]\n\t"
      "movs r6, #1\n\t"
      "lsl r6, r6, r5\n\t"
      "sub r6, r6, #1\n\t"
      "cmp lr, r1\n\t"
      "bge 5f\n\t"                   /* the next channel's already */
      "cmp r12, #0\n\t"
      "beq 1f\n\t"
      "pkhbt r12, r12, lr, lsl #16\n\t"
      "str r12, [r2], #4\n\t"
      "1:\n\t"
      "cmp r4, r5\n\t"
      "bge 2f\n\t"
      "ldrh r12, [r0], #2\n\t"
      "lsl r12, r12, r4\n\t"
      "orr r3, r3, r12\n\t"
      "add r4, r4, #16\n\t"
      "2:\n\t"
      "and r12, r3, r6\n\t"          /* code */
      "lsr r3, r3, r5\n\t"
      "sub r4, r4, r5\n\t"
      "cmp r12, r8\n\t"
      "bge 3f\n\t"
      "udiv lr, r12, r7\n\t"         /* gap */
      "mls r12, lr, r7, r12\n\t"     /* the weight's index */
      "mla lr, lr, r9, r11\n\t"      /* at */
      "add r11, lr, r9\n\t"          /* position */
      "add r12, r12, r10\n\t"
      "sxtb r12, r12\n\t"            /* the weight t + index, wrapped to int8 */
      "cmp lr, r1\n\t"
      "bge 5f\n\t"
      "pkhbt r12, r12, lr, lsl #16\n\t"
      "str r12, [r2], #4\n\t"
      "b 1b\n\t"
      "3:\n\t"                       /* a skip of (code - G * V + 1) * G zeros */
      "ldr lr, [sp, #8]\n\t"
      "sub r12, r12, r8\n\t"
      "mla r11, r12, lr, r11\n\t"
      "add r11, r11, lr\n\t"
      "cmp r11, r1\n\t"
      "blt 1b\n\t"
      "mov lr, r11\n\t"
      "movs r12, #0\n\t"
      "5:\n\t"                       /* lr, r12: the token at or past end, held */
      "ldr r5, [sp, #0]\n\t"
      "str r0, [r5, #0]\n\t"
      "str r3, [r5, #4]\n\t"
      "str r4, [r5, #8]\n\t"
      "sub r11, r11, r1\n\t"
      "str r11, [r5, #36]\n\t"
      "sub lr, lr, r1\n\t"
      "str lr, [r5, #40]\n\t"
      "str r12, [r5, #44]\n\t"
      "ldr r0, [sp, #4]\n\t"
      "sub r0, r2, r0\n\t"
      "asr r0, r0, #2\n\t"
      "add sp, sp, #12\n\t"
      "pop {r4-r11, pc}\n\t");
}

/* tflm_conv_sparse_sums_fn: 8 pixels per pass, then 4, then one at a time. */
static void cmsis_sparse_sums(const uint32_t *list, int32_t count, const int16_t *x,
                              int32_t pixels, uint32_t start, uint32_t *sums) {
  int32_t pixel = pixels & ~7;
  if (pixel > 0) cmsis_sparse_octets(list, count, x, pixel >> 3, start, sums);
  if (pixels - pixel >= 4) {
    cmsis_sparse_quads(list, count, x + pixel, 1, start, sums + pixel);
    pixel += 4;
  }
  for (; pixel < pixels; ++pixel) sums[pixel] = cmsis_sparse_one(list, count, x + pixel, start);
}
#define CMSIS_SPARSE_LIST cmsis_sparse_list
#define CMSIS_SPARSE_SUMS cmsis_sparse_sums
#else
#define CMSIS_SPARSE_LIST tflm_conv_sparse_list
#define CMSIS_SPARSE_SUMS tflm_conv_sparse_sums
#endif

/* tflm_conv_sparse_store_fn: cmsis_strict_clamped when the channel's shift is in its range,
 * else the portable store. */
static void cmsis_sparse_store(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                               int32_t oc, const uint32_t *sums, int32_t pixels, int8_t *out) {
  /* the stride a local: an int8 store may alias *p, which would reload it every pixel */
  const int32_t stride = p->output_c;
  const uint32_t *end = sums + pixels;
  cmsis_strict_t q;
  if (!cmsis_requant_is_strict(requant->shifts + oc, 1)) {
    tflm_conv_sparse_store(p, requant, oc, sums, pixels, out);
    return;
  }
  cmsis_strict_init(requant->multipliers[oc], requant->shifts[oc], p->output_offset,
                    p->act_min, p->act_max, &q);
  for (; sums != end; ++sums, out += stride) *out = cmsis_strict_clamped(&q, (int32_t)*sums);
}

static const tflm_conv_sparse_kernels_t cmsis_sparse_kernels = {CMSIS_SPARSE_LIST,
                                                                CMSIS_SPARSE_SUMS,
                                                                cmsis_sparse_store};

#endif /* CMSIS_CONV_SPARSE_H */
