/* Narrow early CONV_2D layers on a DSP core (Cortex-M4/M7/M33): 1x1 stride 1 without
 * padding of 8 -> 16, 16 -> 32 and 32 -> 32 channels (vww_96_int8's and person_detect's
 * ops 2, 4, 6), and the 3x3x3 -> 8 first layer over RGB images (vww's op 0).  Included by
 * conv.c inside its CMSIS_DSP branch; reads the node's CONV_INT16_PAIRS_REQUANT record as
 * conv.c checked it (find_layout, tail_agrees); other shapes take conv.c's loops.
 *
 * With few MACs per output the requantisation (SMMLAR, ADD, ASR, SSAT, STRB: 5 cycles an
 * output) and the loads of each channel's words weigh as much as the MACs.  K = 8: two
 * pixels widened are 8 words; they stay in r4-r11 for all 16 channels, which are unrolled,
 * the tail and the pair stream copied onto the kernel's stack (every offset an immediate,
 * r1 the outputs): per channel and pixel pair 8 SMLAD, 8 loads in 3 chains and the two
 * outputs' requantisation, 29 cycles (conv_narrow_8x16).  K = 16 and 32: 4 pixels widened
 * once into scratch, 4 pixels x 2 channels per pass with the 8 sums in registers, 16 MACs
 * in 16 cycles, then the 8 outputs with each channel's constants loaded once
 * (conv_quad_16x32, conv_quad_32x32).  The requantisation is cmsis_requantize_folded's
 * (the sign correction - [acc < 0] added to the constant before the SMMLAR or to its
 * result, the same sum modulo 2^32).  The RGB first layer runs 3 pixels x 2 channels per
 * pass (1 cycle per MAC, every sum in a register): at stride 2 from bands of 12 pixels of
 * an output row whose 3 input rows are widened once, the padding as the zero point, with
 * the weights re-laid to match offline (CONV_RGB_BAND, conv_narrow_rgb_band); at other
 * strides, or on a project for any core (its record CONV_INT16_PAIRS_REQUANT), from
 * the 3 patches widened in scratch (conv_narrow_rgb3; windows over the padding gathered by
 * rgb_gather), the 1 or 2 pixels left by conv_narrow_28x8 / conv_narrow_last. */
#ifndef TFLM_CMSIS_CONV_NARROW_H
#define TFLM_CMSIS_CONV_NARROW_H

#if defined(CMSIS_DSP)

#include "narrow_triples.h"

/* Offsets (assembler expressions) of channel c = 2j + s in the node's streams, for K = 4n
 * inputs: the pair stream holds per channel pair 16n bytes, per group g of 4 inputs channel
 * 2j's two words at 16g then 2j+1's (tflm_gen/layout.py, CONV_INT16_PAIRS); the tail per
 * pair 8 words: 2 folded a, b, right b, multiplier a, b, constant a, b, right a. */
#define CONV_NARROW_W(j, s, n, g) "#((" #j ")*16*" #n "+(" #g ")*16+" #s "*8)"
#define CONV_NARROW_T(j, word) "#((" #j ")*32+(" #word ")*4)"
/* The two sums of channel c (pixel a, pixel b) between passes, on the stack. */
#define CONV_NARROW_PS(j, s) "#(16+(" #j ")*16+" #s "*8)"

/* Pass h of channel c: inputs 8h .. 8h + 7 (groups 2h, 2h + 1) of the pixel pair held in
 * r4-r11 (pixel a: r4 r5 inputs 0-3 as (x0, x2), (x1, x3), r6 r7 inputs 4-7; pixel b:
 * r8-r11) into r2 (pixel a, started at register a0) and r3 (pixel b); r1 the pair stream.
 * Uses r0, r12. */
#define CONV_NARROW_MACS(j, s, n, h, a0)                                                   \
  "ldrd r0, r12, [r1, " CONV_NARROW_W(j, s, n, 2 * h) "]\n\t"                            \
  "smlad r2, r0, r4, " a0 "\n\t"                                                         \
  "smlad r2, r12, r5, r2\n\t"                                                            \
  "smlad r3, r0, r8, r3\n\t"                                                             \
  "smlad r3, r12, r9, r3\n\t"                                                            \
  "ldrd r0, r12, [r1, " CONV_NARROW_W(j, s, n, 2 * h + 1) "]\n\t"                        \
  "smlad r2, r0, r6, r2\n\t"                                                             \
  "smlad r2, r12, r7, r2\n\t"                                                            \
  "smlad r3, r0, r10, r3\n\t"                                                            \
  "smlad r3, r12, r11, r3\n\t"

/* The two SMMLAR results r2, r3 of channel c shifted right by r0, saturated and stored to
 * out (register `out`) + c (pixel a) and + cout + c (pixel b). */
#define CONV_NARROW_STORE2(j, s, cout, out)                                                \
  "asr r2, r2, r0\n\t"                                                                   \
  "asr r3, r3, r0\n\t"                                                                   \
  "ssat r2, #8, r2\n\t"                                                                  \
  "ssat r3, #8, r3\n\t"                                                                  \
  "strb r2, [" out ", #((" #j ")*2+" #s ")]\n\t"                                         \
  "strb r3, [" out ", #(" #cout "+(" #j ")*2+" #s ")]\n\t"

/* The doubled sums r2, r3 of channel c requantised (cmsis_requantize_folded: the sign
 * correction - [acc < 0] added to the constant before the SMMLAR, the same sum modulo
 * 2^32) and stored to [sp, #8] + c (pixel a) and + cout + c (pixel b), in a pass of one
 * group, where r6, r7 and r10 are free; lr the tail. */
#define CONV_NARROW_REQUANT_FREE(j, s, cout)                                               \
  "ldr r0, [lr, " CONV_NARROW_T(j, 3 + s) "]\n\t"                                        \
  "ldr r12, [lr, " CONV_NARROW_T(j, 5 + s) "]\n\t"                                       \
  "ldr r6, [lr, " CONV_NARROW_T(j, 7 - 5 * s) "]\n\t"                                    \
  "ldr r7, [sp, #8]\n\t"                                                                 \
  "add r10, r12, r2, asr #31\n\t"                                                        \
  "smmlar r2, r2, r0, r10\n\t"                                                           \
  "add r12, r12, r3, asr #31\n\t"                                                        \
  "smmlar r3, r3, r0, r12\n\t"                                                           \
  "asr r2, r2, r6\n\t"                                                                   \
  "asr r3, r3, r6\n\t"                                                                   \
  "ssat r2, #8, r2\n\t"                                                                  \
  "ssat r3, #8, r3\n\t"                                                                  \
  "strb r2, [r7, #((" #j ")*2+" #s ")]\n\t"                                              \
  "strb r3, [r7, #(" #cout "+(" #j ")*2+" #s ")]\n\t"

/* The steps of channel c in pass h of n / 2: the first, a middle one and the last; the
 * sums wait between passes on the stack (the only pass of K = 8: CONV_NARROW_ONLY_S). */
#define CONV_NARROW_FIRST(j, s, n, h, cout)                                                \
  "ldr r3, [lr, " CONV_NARROW_T(j, s) "]\n\t"                                            \
  CONV_NARROW_MACS(j, s, n, h, "r3") "strd r2, r3, [sp, " CONV_NARROW_PS(j, s) "]\n\t"
#define CONV_NARROW_MIDDLE(j, s, n, h, cout)                                               \
  "ldrd r2, r3, [sp, " CONV_NARROW_PS(j, s) "]\n\t"                                      \
  CONV_NARROW_MACS(j, s, n, h, "r2") "strd r2, r3, [sp, " CONV_NARROW_PS(j, s) "]\n\t"
/* The last pass of one group (g = 2h: K = 28, a first layer's 3x3x3 window plus a zero
 * weight), its inputs in r4 r5 (pixel a) and r8 r9 (pixel b); r6, r7, r10 free. */
#define CONV_NARROW_LAST1(j, s, n, h, cout)                                                \
  "ldrd r2, r3, [sp, " CONV_NARROW_PS(j, s) "]\n\t"                                      \
  "ldrd r0, r12, [r1, " CONV_NARROW_W(j, s, n, 2 * h) "]\n\t"                            \
  "smlad r2, r0, r4, r2\n\t"                                                             \
  "smlad r2, r12, r5, r2\n\t"                                                            \
  "smlad r3, r0, r8, r3\n\t"                                                             \
  "smlad r3, r12, r9, r3\n\t"                                                            \
  CONV_NARROW_REQUANT_FREE(j, s, cout)
/* STEP for the 8 channels of pairs 0 .. 3. */
#define CONV_NARROW_8(STEP, n, h, cout)                                                    \
  STEP(0, 0, n, h, cout) STEP(0, 1, n, h, cout) STEP(1, 0, n, h, cout)                   \
  STEP(1, 1, n, h, cout) STEP(2, 0, n, h, cout) STEP(2, 1, n, h, cout)                   \
  STEP(3, 0, n, h, cout) STEP(3, 1, n, h, cout)

/* STEP for the 16 channels of pairs o .. o + 7. */
#define CONV_NARROW_16(STEP, o, n, h, cout)                                                \
  STEP(o + 0, 0, n, h, cout) STEP(o + 0, 1, n, h, cout) STEP(o + 1, 0, n, h, cout)       \
  STEP(o + 1, 1, n, h, cout) STEP(o + 2, 0, n, h, cout) STEP(o + 2, 1, n, h, cout)       \
  STEP(o + 3, 0, n, h, cout) STEP(o + 3, 1, n, h, cout) STEP(o + 4, 0, n, h, cout)       \
  STEP(o + 4, 1, n, h, cout) STEP(o + 5, 0, n, h, cout) STEP(o + 5, 1, n, h, cout)       \
  STEP(o + 6, 0, n, h, cout) STEP(o + 6, 1, n, h, cout) STEP(o + 7, 0, n, h, cout)       \
  STEP(o + 7, 1, n, h, cout)
/* Loads pass h's inputs of the pixel pair at [sp] (K bytes each) and widens them into
 * r4-r11. */
#define CONV_NARROW_INPUTS(k, h)                                                           \
  "ldr r12, [sp]\n\t"                                                                    \
  "ldrd r8, r9, [r12, #(8*" #h ")]\n\t"                                                  \
  "ldrd r10, r11, [r12, #(" #k "+8*" #h ")]\n\t"                                         \
  "sxtb16 r4, r8\n\t"                                                                    \
  "sxtb16 r5, r8, ror #8\n\t"                                                            \
  "sxtb16 r6, r9\n\t"                                                                    \
  "sxtb16 r7, r9, ror #8\n\t"                                                            \
  "sxtb16 r8, r10\n\t"                                                                   \
  "sxtb16 r9, r10, ror #8\n\t"                                                           \
  "sxtb16 r10, r11\n\t"                                                                  \
  "sxtb16 r11, r11, ror #8\n\t"

/* CONV_NARROW_INPUTS for a pass of one group (g = 2h): r4 r5 and r8 r9. */
#define CONV_NARROW_INPUTS1(k, h)                                                          \
  "ldr r12, [sp]\n\t"                                                                    \
  "ldr r8, [r12, #(8*" #h ")]\n\t"                                                       \
  "ldr r10, [r12, #(" #k "+8*" #h ")]\n\t"                                               \
  "sxtb16 r4, r8\n\t"                                                                    \
  "sxtb16 r5, r8, ror #8\n\t"                                                            \
  "sxtb16 r8, r10\n\t"                                                                   \
  "sxtb16 r9, r10, ror #8\n\t"

/* The frame of a narrow kernel of `cout` channels: [sp] in, #4 pixel pairs left, #8 out,
 * from #16 the sums between passes (8 bytes per channel); lr the tail.  The prologue and
 * the next pixel pair (or the end) for a frame of `frame` bytes. */
#define CONV_NARROW_PROLOGUE(frame)                                                        \
  "push {r4-r11, lr}\n\t"                                                                \
  "ldr r12, [sp, #36]\n\t"                                                               \
  "sub sp, sp, #(" frame ")\n\t"                                                         \
  "str r0, [sp]\n\t"                                                                     \
  "strd r3, r12, [sp, #4]\n\t"
#define CONV_NARROW_STEP(k, cout, frame)                                                   \
  "ldr r12, [sp]\n\t"                                                                    \
  "add r12, r12, #(2*" #k ")\n\t"                                                        \
  "str r12, [sp]\n\t"                                                                    \
  "ldrd r0, r12, [sp, #4]\n\t"                                                           \
  "add r12, r12, #(2*" #cout ")\n\t"                                                     \
  "subs r0, r0, #1\n\t"                                                                  \
  "strd r0, r12, [sp, #4]\n\t"                                                           \
  "bne 1b\n\t"                                                                           \
  "add sp, sp, #(" frame ")\n\t"                                                         \
  "pop {r4-r11, pc}\n\t"
#define CONV_NARROW_ENTER(cout)                                                            \
  CONV_NARROW_PROLOGUE("16+8*" #cout) "mov lr, r2\n\t" "1:\n\t"
#define CONV_NARROW_NEXT(k, cout) CONV_NARROW_STEP(k, cout, "16+8*" #cout)

/* `count` (>= 1) pixel pairs of a 1x1 layer of K input and COUT output channels (the
 * function's name): pixels 2i, 2i + 1 at in + 2K i (word aligned), their outputs at
 * out + 2 COUT i.  Arguments: r0 in, r1 the pair stream (word aligned), r2 the tail (word
 * aligned), r3 count, [sp] out.  Both pixels are read before either is written (the
 * overlap rule of tflm_gen/overlap.py).  Per channel and pass of 8 inputs, both pixels:
 * 2 LDRD of weights and 8 SMLAD; the sums wait on the stack between passes. */
#define CONV_NARROW_KERNEL(name, body)                                                     \
  __attribute__((naked, noinline, unused)) static void name(                             \
      const int8_t *in CMSIS_IN_ASM, const int16_t *w CMSIS_IN_ASM,                      \
      const int32_t *tail CMSIS_IN_ASM, int32_t count CMSIS_IN_ASM,                      \
      int8_t *out CMSIS_IN_ASM) {                                                        \
    __asm__ volatile(body);                                                              \
  }

/* K = 8 -> 16 (conv_narrow_8x16): the tail (64 words) and the pair stream (64 words)
 * copied onto the stack at the call's start and read SP-relative, r1 the pixel pair's
 * outputs: lr is then free, each channel's 8 words loaded in 3 chains (bias and 3 weight
 * words, the last weight word with the multiplier and the constant, the shift) and no
 * output pointer loaded: 29 cycles per channel and pixel pair, 26 instructions.  Frame:
 * [sp] in, #4 pixel pairs left, from #16 the tail, from #272 the pairs. */
#define CONV_NARROW_TS(j, word) "#(16+(" #j ")*32+(" #word ")*4)"
#define CONV_NARROW_WS(j, s, g, e) "#(272+(" #j ")*32+(" #g ")*16+" #s "*8+" #e "*4)"
#define CONV_NARROW_ONLY_S(j, s, n, h, cout)                                               \
  "ldr r3, [sp, " CONV_NARROW_TS(j, s) "]\n\t"                                           \
  "ldr r0, [sp, " CONV_NARROW_WS(j, s, 0, 0) "]\n\t"                                     \
  "ldr r12, [sp, " CONV_NARROW_WS(j, s, 0, 1) "]\n\t"                                    \
  "ldr lr, [sp, " CONV_NARROW_WS(j, s, 1, 0) "]\n\t"                                     \
  "smlad r2, r0, r4, r3\n\t"                                                             \
  "smlad r3, r0, r8, r3\n\t"                                                             \
  "smlad r2, r12, r5, r2\n\t"                                                            \
  "smlad r3, r12, r9, r3\n\t"                                                            \
  "smlad r2, lr, r6, r2\n\t"                                                             \
  "smlad r3, lr, r10, r3\n\t"                                                            \
  "ldr r0, [sp, " CONV_NARROW_WS(j, s, 1, 1) "]\n\t"                                     \
  "ldr r12, [sp, " CONV_NARROW_TS(j, 3 + s) "]\n\t"                                      \
  "ldr lr, [sp, " CONV_NARROW_TS(j, 5 + s) "]\n\t"                                       \
  "smlad r2, r0, r7, r2\n\t"                                                             \
  "smlad r3, r0, r11, r3\n\t"                                                            \
  "add r0, lr, r2, asr #31\n\t"                                                          \
  "smmlar r2, r2, r12, r0\n\t"                                                           \
  "add r0, lr, r3, asr #31\n\t"                                                          \
  "smmlar r3, r3, r12, r0\n\t"                                                           \
  "ldr r0, [sp, " CONV_NARROW_TS(j, 7 - 5 * s) "]\n\t"                                   \
  CONV_NARROW_STORE2(j, s, cout, "r1")
/* 8 words from r2 (post-incremented) to r12 (post-incremented). */
#define CONV_NARROW_COPY8 "ldmia r2!, {r4-r11}\n\tstmia r12!, {r4-r11}\n\t"
#define CONV_NARROW_COPY64                                                                 \
  CONV_NARROW_COPY8 CONV_NARROW_COPY8 CONV_NARROW_COPY8 CONV_NARROW_COPY8                \
  CONV_NARROW_COPY8 CONV_NARROW_COPY8 CONV_NARROW_COPY8 CONV_NARROW_COPY8
CONV_NARROW_KERNEL(conv_narrow_8x16,
                   "push {r4-r11, lr}\n\t"
                   "sub sp, sp, #528\n\t"
                   "strd r0, r3, [sp]\n\t"
                   "add r12, sp, #16\n\t"
                   CONV_NARROW_COPY64
                   "mov r2, r1\n\t"
                   CONV_NARROW_COPY64
                   "ldr r1, [sp, #564]\n\t" /* out */
                   "1:\n\t"
                   "ldr r12, [sp]\n\t"
                   "ldrd r10, r11, [r12, #8]\n\t"
                   "ldrd r8, r9, [r12], #16\n\t"
                   "str r12, [sp]\n\t"
                   "sxtb16 r4, r8\n\t"
                   "sxtb16 r5, r8, ror #8\n\t"
                   "sxtb16 r6, r9\n\t"
                   "sxtb16 r7, r9, ror #8\n\t"
                   "sxtb16 r8, r10\n\t"
                   "sxtb16 r9, r10, ror #8\n\t"
                   "sxtb16 r10, r11\n\t"
                   "sxtb16 r11, r11, ror #8\n\t"
                   CONV_NARROW_16(CONV_NARROW_ONLY_S, 0, 2, 0, 16)
                   "ldr r0, [sp, #4]\n\t"
                   "add r1, r1, #32\n\t"
                   "subs r0, r0, #1\n\t"
                   "str r0, [sp, #4]\n\t"
                   "bne 1b\n\t"
                   "add sp, sp, #528\n\t"
                   "pop {r4-r11, pc}\n\t")

/* 1x1 layers of K = 16 and 32 inputs, 4 pixels x 2 channels per pass (8 sums in r2-r9:
 * pixel p's channel a in r(2+2p), b in r(3+2p)) over the 4 pixels widened once by
 * cmsis_widen_four (per step of 2 inputs the 4 pixels' words at 16 s), every offset an
 * immediate: per step one chain of 4 loads (both channels' weight words, pixels 0 and 1),
 * 4 SMLAD, an LDRD (pixels 2 and 3: as fast as 2 LDRs after an SMLAD, one instruction
 * less), 4 SMLAD: 16 MACs in 16 cycles, 11 instructions, where the pixel
 * pair kernels spill their sums between passes of 8 inputs (K = 32: 1.52 cycles per MAC).
 * The weight words of step s = 2g + e at 16 g + 4 e (channel a) and + 8 (b). */
#define QUAD_W(s, b) "#(16*((" #s ")>>1)+4*((" #s ")&1)-" #b ")"
#define QUAD_WB(s, b) "#(16*((" #s ")>>1)+4*((" #s ")&1)+8-" #b ")"
#define QUAD_STEP(s, b)                                                                       \
  "ldr r10, [r1, " QUAD_W(s, b) "]\n\t"                                                  \
  "ldr r11, [r1, " QUAD_WB(s, b) "]\n\t"                                                 \
  "ldr r12, [r0, #(16*(" #s "))]\n\t"                                                      \
  "ldr lr, [r0, #(16*(" #s ")+4)]\n\t"                                                     \
  "smlad r2, r12, r10, r2\n\t"                                                           \
  "smlad r3, r12, r11, r3\n\t"                                                           \
  "smlad r4, lr, r10, r4\n\t"                                                            \
  "smlad r5, lr, r11, r5\n\t"                                                            \
  "ldrd r12, lr, [r0, #(16*(" #s ")+8)]\n\t"                                             \
  "smlad r6, r12, r10, r6\n\t"                                                           \
  "smlad r7, r12, r11, r7\n\t"                                                           \
  "smlad r8, lr, r10, r8\n\t"                                                            \
  "smlad r9, lr, r11, r9\n\t"
#define QUAD_STEPS4(s, b)                                                                  \
  QUAD_STEP(s, b) QUAD_STEP(s + 1, b) QUAD_STEP(s + 2, b) QUAD_STEP(s + 3, b)
/* The first step: the quad and this pair's tail from the frame, the sums started at the
 * folded constants (tail words 0, 1), one chain of 7 loads; r1 moved to the next pair's
 * stream (16 n bytes on: the steps after read at offsets less 16 n). */
#define QUAD_FIRST(n)                                                                      \
  "ldr r0, [sp]\n\t"                                                                     \
  "ldr lr, [sp, #4]\n\t"                                                                 \
  "ldr r2, [lr]\n\t"                                                                     \
  "ldr r3, [lr, #4]\n\t"                                                                 \
  "ldr r11, [r1, #8]\n\t"                                                                \
  "ldr r10, [r1], #(16*" #n ")\n\t"                                                      \
  "ldr r12, [r0]\n\t"                                                                    \
  "ldr lr, [r0, #4]\n\t"                                                                 \
  "smlad r4, lr, r10, r2\n\t"                                                            \
  "smlad r5, lr, r11, r3\n\t"                                                            \
  "ldr r6, [r0, #8]\n\t"                                                                 \
  "ldr r8, [r0, #12]\n\t"                                                                \
  "smlad r7, r6, r11, r3\n\t"                                                            \
  "smlad r6, r6, r10, r2\n\t"                                                            \
  "smlad r9, r8, r11, r3\n\t"                                                            \
  "smlad r8, r8, r10, r2\n\t"                                                            \
  "smlad r3, r12, r11, r3\n\t"                                                           \
  "smlad r2, r12, r10, r2\n\t"
/* One doubled sum s requantised into `into` (not s) by r10 (multiplier), r11 (constant),
 * r12 (right shift), as cmsis_requantize_folded. */
#define QUAD_REQUANT(s, into)                                                              \
  "smmlar " into ", " s ", r10, r11\n\t"                                                 \
  "add " into ", " into ", " s ", asr #31\n\t"                                           \
  "asr " into ", " into ", r12\n\t"                                                      \
  "ssat " into ", #8, " into "\n\t"
/* The pair's 8 outputs requantised (channel a's with tail words 3, 5, 7, then b's with 4,
 * 6, 2) and stored at out (r8) + p * cout + s; the tail and out moved to the next pair
 * (b's constants, out and `end`, the load of out's end into lr or nothing, in one chain).
 * Frame: [sp] quad, #4 tail, #8 out, #12 out's end. */
#define QUAD_REQUANT_NEXT(cout, end)                                                       \
  "ldr lr, [sp, #4]\n\t"                                                                 \
  "ldr r10, [lr, #12]\n\t"                                                               \
  "ldr r11, [lr, #20]\n\t"                                                               \
  "ldr r12, [lr, #28]\n\t"                                                               \
  QUAD_REQUANT("r2", "r0") QUAD_REQUANT("r4", "r2") QUAD_REQUANT("r6", "r4")             \
  QUAD_REQUANT("r8", "r6")                                                               \
  "add lr, lr, #32\n\t"                                                                  \
  "str lr, [sp, #4]\n\t"                                                                 \
  "ldr r10, [lr, #-16]\n\t"                                                              \
  "ldr r11, [lr, #-8]\n\t"                                                               \
  "ldr r12, [lr, #-24]\n\t"                                                              \
  "ldr r8, [sp, #8]\n\t" end                                                             \
  "strb r0, [r8]\n\t"                                                                    \
  "strb r2, [r8, #" #cout "]\n\t"                                                        \
  "strb r4, [r8, #(2*" #cout ")]\n\t"                                                    \
  "strb r6, [r8, #(3*" #cout ")]\n\t"                                                    \
  QUAD_REQUANT("r3", "r0") QUAD_REQUANT("r5", "r2") QUAD_REQUANT("r7", "r4")             \
  QUAD_REQUANT("r9", "r6")                                                               \
  "strb r0, [r8, #1]\n\t"                                                                \
  "strb r2, [r8, #(" #cout "+1)]\n\t"                                                    \
  "strb r4, [r8, #(2*" #cout "+1)]\n\t"                                                  \
  "strb r6, [r8, #(3*" #cout "+1)]\n\t"                                                  \
  "add r8, r8, #2\n\t"                                                                   \
  "str r8, [sp, #8]\n\t"
/* Four channel pairs (n groups of inputs, cout outputs), the last one's requantisation
 * loading out's end: the pair loop is run cout / 8 times, one test per four pairs. */
#define QUAD_PAIR(n, cout, steps) QUAD_FIRST(n) steps QUAD_REQUANT_NEXT(cout, "")
#define QUAD_FOUR_PAIRS(n, cout, steps)                                                    \
  QUAD_PAIR(n, cout, steps) QUAD_PAIR(n, cout, steps) QUAD_PAIR(n, cout, steps)            \
  QUAD_FIRST(n) steps QUAD_REQUANT_NEXT(cout, "ldr lr, [sp, #12]\n\t")
/* Group g (inputs 4g .. 4g + 3) of the 4 pixels at r0 (k bytes apart) widened into the
 * quad at r3 (post-incremented): (x0, x2) of pixels 0-3, then their (x1, x3), one STM. */
#define QUAD_WIDEN(k, g)                                                                   \
  "ldr r8, [r0, #(4*(" #g "))]\n\t"                                                      \
  "ldr r9, [r0, #(" #k "+4*(" #g "))]\n\t"                                               \
  "ldr r10, [r0, #(2*" #k "+4*(" #g "))]\n\t"                                            \
  "ldr r11, [r0, #(3*" #k "+4*(" #g "))]\n\t"                                            \
  "sxtb16 r4, r8\n\t"                                                                    \
  "sxtb16 r5, r9\n\t"                                                                    \
  "sxtb16 r6, r10\n\t"                                                                   \
  "sxtb16 r7, r11\n\t"                                                                   \
  "sxtb16 r8, r8, ror #8\n\t"                                                            \
  "sxtb16 r9, r9, ror #8\n\t"                                                            \
  "sxtb16 r10, r10, ror #8\n\t"                                                          \
  "sxtb16 r11, r11, ror #8\n\t"                                                          \
  "stmia r3!, {r4-r11}\n\t"
#define QUAD_WIDEN4(k, g)                                                                  \
  QUAD_WIDEN(k, g) QUAD_WIDEN(k, g + 1) QUAD_WIDEN(k, g + 2) QUAD_WIDEN(k, g + 3)
/* `quads` (>= 1) runs of 4 pixels of a 1x1 layer of K = 4n (k) inputs and `cout` outputs
 * (the name's): each quad widened into the scratch (8 k bytes) by `widen`, then all
 * channel pairs (label 1).  Arguments: r0 in (word aligned, pixels k bytes apart), r1 the
 * pair stream, r2 the tail (word aligned), r3 quads, [sp] out, [sp, #4] the scratch (word
 * aligned).  Frame: [sp] quad, #4 tail, #8 out, #12 out's end (of this quad's pairs), #16
 * the next quad's pixels, #20 quads left, #24 the tail's start, #28 the stream's. */
#define CONV_QUAD_KERNEL(name, k, n, cout, widen, steps)                                   \
  __attribute__((naked, noinline, unused)) static void name(                             \
      const int8_t *in CMSIS_IN_ASM, const int16_t *w CMSIS_IN_ASM,                      \
      const int32_t *tail CMSIS_IN_ASM, int32_t quads CMSIS_IN_ASM,                      \
      int8_t *out CMSIS_IN_ASM, int16_t *scratch CMSIS_IN_ASM) {                         \
    __asm__ volatile("push {r4-r11, lr}\n\t"                                             \
                     "ldr r12, [sp, #36]\n\t"                                            \
                     "ldr lr, [sp, #40]\n\t"                                             \
                     "sub sp, sp, #32\n\t"                                               \
                     "str lr, [sp]\n\t"                                                  \
                     "str r12, [sp, #8]\n\t"                                             \
                     "strd r0, r3, [sp, #16]\n\t"                                        \
                     "strd r2, r1, [sp, #24]\n\t"                                        \
                     "3:\n\t"                                                            \
                     "ldr r0, [sp, #16]\n\t"                                             \
                     "ldr r3, [sp]\n\t" widen                                            \
                     "add r0, r0, #(4*" #k ")\n\t"                                       \
                     "str r0, [sp, #16]\n\t"                                             \
                     "ldrd r2, r1, [sp, #24]\n\t"                                        \
                     "ldr r12, [sp, #8]\n\t"                                             \
                     "str r2, [sp, #4]\n\t"                                              \
                     "add r12, r12, #" #cout "\n\t"                                      \
                     "str r12, [sp, #12]\n\t"                                            \
                     "1:\n\t" QUAD_FOUR_PAIRS(n, cout, steps)                           \
                     "cmp r8, lr\n\t"                                                    \
                     "bne 1b\n\t"                                                        \
                     "add r8, r8, #(3*" #cout ")\n\t" /* the next quad's outputs */     \
                     "ldr r0, [sp, #20]\n\t"                                             \
                     "str r8, [sp, #8]\n\t"                                              \
                     "subs r0, r0, #1\n\t"                                               \
                     "str r0, [sp, #20]\n\t"                                             \
                     "bne 3b\n\t"                                                        \
                     "add sp, sp, #32\n\t"                                               \
                     "pop {r4-r11, pc}\n\t");                                            \
  }
CONV_QUAD_KERNEL(conv_quad_16x32, 16, 4, 32, QUAD_WIDEN4(16, 0),
                 QUAD_STEP(1, 64) QUAD_STEP(2, 64) QUAD_STEP(3, 64) QUAD_STEPS4(4, 64))
CONV_QUAD_KERNEL(conv_quad_32x32, 32, 8, 32, QUAD_WIDEN4(32, 0) QUAD_WIDEN4(32, 4),
                 QUAD_STEP(1, 128) QUAD_STEP(2, 128) QUAD_STEP(3, 128) QUAD_STEPS4(4, 128)
                 QUAD_STEPS4(8, 128) QUAD_STEPS4(12, 128))

/* First layers over RGB images (3x3 windows of 3 channels, 8 output channels): each call
 * one pixel pair whose 28-byte patches (the last byte's weight 0) lie at in, in + 28. */
CONV_NARROW_KERNEL(conv_narrow_28x8,
                   CONV_NARROW_ENTER(8) CONV_NARROW_INPUTS(28, 0)
                   CONV_NARROW_8(CONV_NARROW_FIRST, 7, 0, 8) CONV_NARROW_INPUTS(28, 1)
                   CONV_NARROW_8(CONV_NARROW_MIDDLE, 7, 1, 8) CONV_NARROW_INPUTS(28, 2)
                   CONV_NARROW_8(CONV_NARROW_MIDDLE, 7, 2, 8) CONV_NARROW_INPUTS1(28, 3)
                   CONV_NARROW_8(CONV_NARROW_LAST1, 7, 3, 8) CONV_NARROW_NEXT(28, 8))

/* First layers over RGB images, 3 pixels x 2 channels per pass: the three 28-byte patches
 * widened once into scratch (56 bytes each, per group of 4 inputs the SXTB16 words (x0, x2),
 * (x1, x3)), then per channel pair and half-group one chain of 5 loads (both channels'
 * weight word, the 3 pixels' input word: 6 cycles) and 6 SMLAD, the 6 sums in registers over
 * all 28 inputs (no sums on the stack), started at the doubled folded constants.  Per
 * 3 pixels x 2 channels: 84 SMLAD, 70 loads, then the 6 outputs requantised as
 * CONV_NARROW_REQUANT does with each channel's multiplier, constant and shift loaded once.
 * Registers: r0 the patches, r1 the pair stream, lr the tail, r2-r4 channel a's sums of
 * pixels 0-2, r5-r7 channel b's, r8 r9 the weights, r10-r12 the inputs. */
#define RGB3_W(j, s, g, e) "#((" #j ")*112+(" #g ")*16+" #s "*8+" #e "*4)"
#define RGB3_X(p, g, e) "#((" #p ")*56+(" #g ")*8+" #e "*4)"
#define RGB3_LOADS(j, g, e)                                                                \
  NARROW3_LOADS("[r1, " RGB3_W(j, 0, g, e) "]", "[r1, " RGB3_W(j, 1, g, e) "]",           \
                "[r0, " RGB3_X(0, g, e) "]", "[r0, " RGB3_X(1, g, e) "]",                 \
                "[r0, " RGB3_X(2, g, e) "]")
#define RGB3_HALF(j, g, e) RGB3_LOADS(j, g, e) NARROW3_MACS
/* The first half-group: the sums start at the pair's folded constants (tail words 0, 1). */
#define RGB3_FIRST(j)                                                                      \
  NARROW3_FIRST("[lr, " CONV_NARROW_T(j, 0) "]", "[lr, " CONV_NARROW_T(j, 1) "]",         \
                RGB3_LOADS(j, 0, 0))
/* Channel 2j + s's three sums (registers x, y, z) requantised, the pair's tail words at
 * [tail, #(at + 32j + 4 word)], and stored at out + 2j + s (pixel 0), + 8 and + 16. */
#define RGB_REQUANT(tail, at, out, j, s, x, y, z)                                          \
  "ldr r8, [" tail ", #(" #at "+(" #j ")*32+(3+" #s ")*4)]\n\t"                           \
  "ldr r9, [" tail ", #(" #at "+(" #j ")*32+(5+" #s ")*4)]\n\t"                           \
  "ldr r10, [" tail ", #(" #at "+(" #j ")*32+(7-5*" #s ")*4)]\n\t"                        \
  "add r11, r9, " x ", asr #31\n\t"                                                      \
  "smmlar " x ", " x ", r8, r11\n\t"                                                     \
  "add r11, r9, " y ", asr #31\n\t"                                                      \
  "smmlar " y ", " y ", r8, r11\n\t"                                                     \
  "add r11, r9, " z ", asr #31\n\t"                                                      \
  "smmlar " z ", " z ", r8, r11\n\t"                                                     \
  "asr " x ", " x ", r10\n\t"                                                            \
  "asr " y ", " y ", r10\n\t"                                                            \
  "asr " z ", " z ", r10\n\t"                                                            \
  "ssat " x ", #8, " x "\n\t"                                                            \
  "ssat " y ", #8, " y "\n\t"                                                            \
  "ssat " z ", #8, " z "\n\t"                                                            \
  "strb " x ", [" out ", #((" #j ")*2+" #s ")]\n\t"                                      \
  "strb " y ", [" out ", #(8+(" #j ")*2+" #s ")]\n\t"                                    \
  "strb " z ", [" out ", #(16+(" #j ")*2+" #s ")]\n\t"
/* The tail at lr, out at r12. */
#define RGB3_REQUANT(j, s, x, y, z) RGB_REQUANT("lr", 0, "r12", j, s, x, y, z)
#define RGB3_PAIR(j)                                                                       \
  RGB3_FIRST(j) RGB3_HALF(j, 0, 1) RGB3_HALF(j, 1, 0) RGB3_HALF(j, 1, 1)                 \
  RGB3_HALF(j, 2, 0) RGB3_HALF(j, 2, 1) RGB3_HALF(j, 3, 0) RGB3_HALF(j, 3, 1)            \
  RGB3_HALF(j, 4, 0) RGB3_HALF(j, 4, 1) RGB3_HALF(j, 5, 0) RGB3_HALF(j, 5, 1)            \
  RGB3_HALF(j, 6, 0) RGB3_HALF(j, 6, 1)                                                  \
  "ldr r12, [sp, #4]\n\t"                                                                \
  RGB3_REQUANT(j, 0, "r2", "r3", "r4") RGB3_REQUANT(j, 1, "r5", "r6", "r7")

/* What conv_narrow_rgb3 reads: per pixel of the first triple the first byte of its 3 rows
 * of 9 bytes and the bytes between rows (the window in the image, or a gathered copy with
 * rows 9 apart); each next triple's windows `advance` bytes after the previous ones (the
 * kernel moves rows, and count down; out it moves on its stack). */
typedef struct {
  const int8_t *rows[3];
  int32_t line[3];
  int8_t *out;          /* the 3 pixels' 24 output bytes */
  const int16_t *pairs; /* the pair stream (word aligned) */
  const int32_t *tail;  /* the requantisation tail (word aligned) */
  int32_t *widened;     /* 42 words of scratch (word aligned) */
  int32_t count;        /* triples, >= 1 */
  int32_t advance;
} conv_rgb3_t;

/* Widens pixel p's patch into r3 + 56p (14 words): its 7 words as rgb_patch_words joins
 * them (unaligned LDR, LDRH; BFI), each by SXTB16 into (x0, x2), (x1, x3), stored by STRs
 * at immediate offsets (1 cycle a word where an STM of n words takes n + 1); its row
 * pointer moved by advance to the next triple's.  r0 the conv_rgb3_t; uses r1, r2, r4-r12,
 * lr. */
#define RGB3_STORE(p, word, reg) "str " reg ", [r3, #(56*" #p "+4*" #word ")]\n\t"
#define RGB3_WIDEN(p)                                                                      \
  "ldr r12, [r0, #(4*" #p ")]\n\t"                                                       \
  "ldr lr, [r0, #(12+4*" #p ")]\n\t"                                                     \
  "ldr r1, [r0, #44]\n\t"  /* advance */                                                \
  "ldr r4, [r12]\n\t"       /* g0 */                                                     \
  "ldr r6, [r12, #4]\n\t"   /* g1 */                                                     \
  "ldrb r5, [r12, #8]\n\t"  /* row 0 [8] */                                              \
  "add r1, r12, r1\n\t"     /* the next triple's row 0 */                                \
  "add r2, r12, lr\n\t"     /* row 1 */                                                  \
  "add r12, r2, lr\n\t"     /* row 2: the 6 loads below one chain */                     \
  "ldr r8, [r2, #-1]\n\t"                                                                \
  "ldr r10, [r2, #3]\n\t"   /* g3 */                                                     \
  "ldrh r7, [r2, #7]\n\t"   /* row 1 [7..8] */                                           \
  "ldr r2, [r12, #2]\n\t"   /* g5 */                                                     \
  "ldr lr, [r12, #5]\n\t"                                                                \
  "ldr r12, [r12, #-2]\n\t"                                                              \
  "bfi r8, r5, #0, #8\n\t"  /* g2: row 0 [8], row 1 [0..2] */                            \
  "bfi r12, r7, #0, #16\n\t" /* g4: row 1 [7..8], row 2 [0..1] */                        \
  "lsr lr, lr, #8\n\t"      /* g6: row 2 [6..8], 0 */                                    \
  "str r1, [r0, #(4*" #p ")]\n\t"                                                        \
  "sxtb16 r5, r4, ror #8\n\t"                                                            \
  "sxtb16 r4, r4\n\t"                                                                    \
  "sxtb16 r7, r6, ror #8\n\t"                                                            \
  "sxtb16 r6, r6\n\t"                                                                    \
  "sxtb16 r9, r8, ror #8\n\t"                                                            \
  "sxtb16 r8, r8\n\t"                                                                    \
  "sxtb16 r11, r10, ror #8\n\t"                                                          \
  "sxtb16 r10, r10\n\t"                                                                  \
  RGB3_STORE(p, 0, "r4") RGB3_STORE(p, 1, "r5") RGB3_STORE(p, 2, "r6")                     \
  RGB3_STORE(p, 3, "r7") RGB3_STORE(p, 4, "r8") RGB3_STORE(p, 5, "r9")                     \
  RGB3_STORE(p, 6, "r10") RGB3_STORE(p, 7, "r11")                                          \
  "sxtb16 r5, r12, ror #8\n\t"                                                           \
  "sxtb16 r4, r12\n\t"                                                                   \
  "sxtb16 r7, r2, ror #8\n\t"                                                            \
  "sxtb16 r6, r2\n\t"                                                                    \
  "sxtb16 r9, lr, ror #8\n\t"                                                            \
  "sxtb16 r8, lr\n\t"                                                                    \
  RGB3_STORE(p, 8, "r4") RGB3_STORE(p, 9, "r5") RGB3_STORE(p, 10, "r6")                    \
  RGB3_STORE(p, 11, "r7") RGB3_STORE(p, 12, "r8") RGB3_STORE(p, 13, "r9")

/* Argument: r0 the conv_rgb3_t, kept at [sp]; the triple's out at [sp, #4] (r12 after
 * the last requantisation).  After a triple: its count less 1, and when triples are left
 * out moved by 24 (the rows moved as widened), back to label 1. */
__attribute__((naked, noinline, unused)) static void conv_narrow_rgb3(
    conv_rgb3_t *job CMSIS_IN_ASM) {
  __asm__ volatile("push {r0, r1, r3-r11, lr}\n\t"
                   "ldr r12, [r0, #24]\n\t"
                   "str r12, [sp, #4]\n\t"
                   "1:\n\t"
                   "ldr r3, [r0, #36]\n\t"
                   RGB3_WIDEN(0) RGB3_WIDEN(1) RGB3_WIDEN(2)
                   "ldr r1, [r0, #28]\n\t"
                   "ldr lr, [r0, #32]\n\t"
                   "ldr r0, [r0, #36]\n\t"
                   RGB3_PAIR(0) RGB3_PAIR(1) RGB3_PAIR(2) RGB3_PAIR(3)
                   "ldr r0, [sp]\n\t"
                   "ldr r1, [r0, #40]\n\t"
                   "subs r1, r1, #1\n\t"
                   "beq 2f\n\t"
                   "str r1, [r0, #40]\n\t"
                   "add r12, r12, #24\n\t"
                   "str r12, [sp, #4]\n\t"
                   "b 1b\n\t"
                   "2:\n\t"
                   "pop {r0, r1, r3-r11, pc}\n\t");
}

/* One tap of rgb_gather: its 3 bytes, or the zero point's, all read before any is written
 * (int8 stores would make the compiler reload what may alias them). */
static inline __attribute__((always_inline)) void rgb_tap(int8_t *dst, const int8_t *src,
                                                          int32_t inside, int8_t zero_point) {
  int8_t r = zero_point, g = zero_point, b = zero_point;
  if (inside) {
    r = src[0];
    g = src[1];
    b = src[2];
  }
  dst[0] = r;
  dst[1] = g;
  dst[2] = b;
}

/* The 3x3x3 window whose top-left tap is at (y0, x0) into dst (27 bytes, rows 9 apart),
 * the zero point in the padding: gather_patch's result for this one shape, every field
 * read once, without its division or its calls (about 570 cycles a window there). */
static void rgb_gather(const cmsis_conv_job_t *job, int32_t y0, int32_t x0, int8_t *dst) {
  const tflm_conv_params_t *p = job->p;
  const int8_t *const image = job->image;
  const int32_t input_w = p->input_w, input_h = p->input_h, dy = p->dilation_h;
  const int32_t dx = p->dilation_w, x1 = x0 + dx, x2 = x1 + dx;
  const int8_t zero_point = (int8_t)-p->input_offset;
  const int32_t in0 = x0 >= 0 && x0 < input_w, in1 = x1 >= 0 && x1 < input_w;
  const int32_t in2 = x2 >= 0 && x2 < input_w;
  int32_t fy;
  for (fy = 0; fy < 3; ++fy, dst += 9) {
    const int32_t y = y0 + fy * dy, row = y >= 0 && y < input_h;
    const int8_t *src = image + (y * input_w + x0) * 3;
    rgb_tap(dst, src, row && in0, zero_point);
    rgb_tap(dst + 3, src + 3 * dx, row && in1, zero_point);
    rgb_tap(dst + 6, src + 6 * dx, row && in2, zero_point);
  }
}

/* The windows of the triple whose first output pixel is at (y0, x0) (its window's top-left
 * tap; ox its column) into rgb: in place when inside the image (window_at's test on
 * locals: the kernel's call would make the compiler reload the job's fields), else
 * gathered by rgb_gather into a copy of 27 bytes read as rows 9 apart;
 * y0, x0 and ox move to the next triple. */
typedef struct {
  const int8_t *image;
  int32_t line, last_row, input_h, input_w, width, sy, sx, left;
} conv_rgb_geometry_t;
static void rgb_windows(const cmsis_conv_job_t *job, const conv_rgb_geometry_t *g,
                        int32_t *y0, int32_t *x0, int32_t *ox,
                        uint32_t copies[3][7], conv_rgb3_t *rgb) {
  int32_t i;
  for (i = 0; i < 3; ++i) {
    if (*x0 >= 0 && *x0 + 3 <= g->input_w && *y0 >= 0 && *y0 + g->last_row < g->input_h) {
      rgb->rows[i] = g->image + (*y0 * job->p->input_w + *x0) * 3;
      rgb->line[i] = g->line;
    } else {
      rgb_gather(job, *y0, *x0, (int8_t *)(void *)copies[i]);
      rgb->rows[i] = (const int8_t *)(void *)copies[i];
      rgb->line[i] = 9;
    }
    *x0 += g->sx;
    if (++*ox == g->width) {
      *ox = 0;
      *x0 = g->left;
      *y0 += g->sy;
    }
  }
}

/* conv_narrow_rgb3 over the job's pixels 3 at a time; returns the pixels done (a multiple
 * of 3).  The triples of one output row whose windows all lie inside the image run as
 * one call (count); the others one by one through rgb_windows. */
static int32_t conv_narrow_rgb_triples(const cmsis_conv_job_t *job, int32_t pixels) {
  const tflm_conv_params_t *p = job->p;
  conv_rgb_geometry_t g;
  uint32_t copies[3][7];
  conv_rgb3_t rgb;
  int32_t pixel = 0, y0 = -p->pad_h, x0 = -p->pad_w, ox = 0, i;
  g.image = job->image;
  g.line = p->dilation_h * p->input_w * 3;
  g.last_row = 2 * p->dilation_h;
  g.input_h = p->input_h;
  g.input_w = p->dilation_w == 1 ? p->input_w : 0; /* no window inside: all gathered */
  g.width = p->output_w;
  g.sy = p->stride_h;
  g.sx = p->stride_w;
  g.left = -p->pad_w;
  rgb.pairs = job->pairs;
  rgb.tail = job->tail;
  rgb.widened = (int32_t *)(void *)job->scratch;
  rgb.advance = 9 * g.sx;
  while (pixel + 3 <= pixels) {
    /* inside: pixels from ox on whose windows lie inside, on this output row */
    int32_t inside = 0;
    if (x0 >= 0 && y0 >= 0 && y0 + g.last_row < g.input_h && x0 + 3 <= g.input_w) {
      inside = (g.input_w - 3 - x0) / g.sx + 1;
      if (inside > g.width - ox) inside = g.width - ox;
      if (inside > pixels - pixel) inside = pixels - pixel;
    }
    rgb.out = job->output + pixel * 8;
    if (inside >= 3) {
      rgb.count = inside / 3;
      for (i = 0; i < 3; ++i) {
        rgb.rows[i] = g.image + (y0 * p->input_w + x0 + i * g.sx) * 3;
        rgb.line[i] = g.line;
      }
      pixel += 3 * rgb.count;
      ox += 3 * rgb.count;
      x0 += 3 * rgb.count * g.sx;
      if (ox == g.width) {
        ox = 0;
        x0 = g.left;
        y0 += g.sy;
      }
    } else {
      rgb.count = 1;
      rgb_windows(job, &g, &y0, &x0, &ox, copies, &rgb);
      pixel += 3;
    }
    conv_narrow_rgb3(&rgb);
  }
  return pixel;
}

/* The last pixel of an odd count alone: its patch widened (offset 0) after the two patch
 * slots of scratch, cmsis_dot_pairs_requant1 over every channel pair. */
static void conv_narrow_last(const cmsis_conv_job_t *job, const int8_t *patch, int8_t *out) {
  const int32_t k = CMSIS_ROUND4(job->patch);
  int16_t *pair = (int16_t *)(void *)(job->scratch + 2 * k);
  cmsis_widen_pair(patch, patch, pair, k, 0);
  cmsis_dot_pairs_requant1(pair, job->pairs, k >> 2, job->channels >> 1, job->tail, out);
}

/* RGB first layers of stride 2 (dilation 1) by bands of up to RGB_BAND triples of one
 * output row: the band's 3 input rows widened once (adjacent windows share a column), then
 * conv_narrow_rgb_band over the band's triples.  Per input element e of the band (e = 0 the
 * first window's top-left byte) a word (row 0's e, row 1's e), at 12 (e / 2) + 4 (e % 2),
 * and per even e a word (row 2's e, e + 1) at 12 (e / 2) + 8: a window (pixel p of a triple,
 * from e = 6p) is 9 words of rows 0 and 1 and 5 of row 2 (the last one's high half row 2's
 * e + 9, weighted 0), 14 words as the patch's 28 inputs, so pixel p's start at 36p and the
 * next triple's 108 bytes on.  The weights come re-laid to match, the tail after them, in
 * the node's CONV_RGB_BAND record (tflm_gen/layout.py rgb_band_stream; written for a DSP
 * core's project only), read in place.  The padding is widened from copies of the
 * rows with the zero point (rgb_band_row), so no window is gathered one by one. */
#define RGB_BAND 4
#define RGB_BAND_GROUPS ((18 * RGB_BAND + 11) / 8 * 2) /* 4 elements a group, 18T + 4 a
                                                            band, an even count */
/* Two rows' copies (rgb_band_row) fit in the node's scratch: 6 rows of round4(27). */
typedef char rgb_band_copies_fit[8 * RGB_BAND_GROUPS <= 6 * 28 ? 1 : -1];
/* Pixel p's word k < 9 (rows 0 and 1), and its word 9 + m (row 2). */
#define RGB_BAND_X(p, k) "#(36*" #p "+12*((" #k ")>>1)+4*((" #k ")&1))"
#define RGB_BAND_X2(p, m) "#(36*" #p "+12*(" #m ")+8)"
#define RGB_BAND_W(j, s, k) "#((" #j ")*112+(" #k ")*8+" #s "*4)"
#define RGB_BAND_LOADS(j, k, x0, x1, x2)                                                   \
  NARROW3_LOADS("[r1, " RGB_BAND_W(j, 0, k) "]", "[r1, " RGB_BAND_W(j, 1, k) "]",         \
                "[r0, " x0 "]", "[r0, " x1 "]", "[r0, " x2 "]")
#define RGB_BAND_HALF(j, k)                                                                \
  RGB_BAND_LOADS(j, k, RGB_BAND_X(0, k), RGB_BAND_X(1, k), RGB_BAND_X(2, k)) NARROW3_MACS
#define RGB_BAND_HALF2(j, m)                                                               \
  RGB_BAND_LOADS(j, 9 + m, RGB_BAND_X2(0, m), RGB_BAND_X2(1, m), RGB_BAND_X2(2, m))       \
  NARROW3_MACS
#define RGB_BAND_PAIR(j)                                                                   \
  NARROW3_FIRST("[r1, #(448+(" #j ")*32)]", "[r1, #(448+(" #j ")*32+4)]",                 \
                RGB_BAND_LOADS(j, 0, RGB_BAND_X(0, 0), RGB_BAND_X(1, 0), RGB_BAND_X(2, 0))) \
  RGB_BAND_HALF(j, 1) RGB_BAND_HALF(j, 2) RGB_BAND_HALF(j, 3) RGB_BAND_HALF(j, 4)         \
  RGB_BAND_HALF(j, 5) RGB_BAND_HALF(j, 6) RGB_BAND_HALF(j, 7) RGB_BAND_HALF(j, 8)         \
  RGB_BAND_HALF2(j, 0) RGB_BAND_HALF2(j, 1) RGB_BAND_HALF2(j, 2) RGB_BAND_HALF2(j, 3)     \
  RGB_BAND_HALF2(j, 4)                                                                     \
  RGB_REQUANT("r1", 448, "lr", j, 0, "r2", "r3", "r4")                                     \
  RGB_REQUANT("r1", 448, "lr", j, 1, "r5", "r6", "r7")

/* What conv_narrow_rgb_band reads. */
typedef struct {
  int32_t *in;            /* the first triple's widened words (word aligned) */
  const int32_t *weights; /* the re-laid pair stream: per pair j, word k, channel s at
                             112j + 8k + 4s bytes (CONV_RGB_BAND), then the
                             requantisation tail (its 8 words per pair at 448 + 32j) */
  int8_t *out;            /* the first triple's 24 output bytes */
  int32_t count;          /* triples (0: the rows widened only) */
  const int8_t *rows[3];  /* the band's 3 input rows, 4 groups bytes each */
  int32_t groups;         /* groups to widen into in first (even; 0: in is ready) */
  int32_t bands;          /* bands, >= 1: each next one's rows back bytes before where
                             the widening left them, out where the triples left it */
  int32_t back;
} conv_rgb_band_t;

/* One group of 4 elements of the band's rows (r1, r2, r3, each moved by 4) widened into 6
 * words at r12 + 24 half (see above): rows 0 and 1 joined by PKHBT / PKHTB (bytes x0 x1
 * y0 y1, x2 x3 y2 y3), row 2 with itself (z0 z1 z1 z2, z1 z2 z2 z3), each then SXTB16. */
#define RGB_BAND_GROUP(half)                                                               \
  "ldr r10, [r1], #4\n\t"                                                                \
  "ldr r11, [r2], #4\n\t"                                                                \
  "ldr r9, [r3], #4\n\t"                                                                 \
  "pkhbt r5, r10, r11, lsl #16\n\t"                                                      \
  "pkhtb r8, r11, r10, asr #16\n\t"                                                      \
  "pkhbt r6, r9, r9, lsl #8\n\t"                                                         \
  "pkhtb r9, r9, r9, asr #8\n\t"                                                         \
  "sxtb16 r4, r5\n\t"                                                                    \
  "sxtb16 r5, r5, ror #8\n\t"                                                            \
  "sxtb16 r6, r6\n\t"                                                                    \
  "sxtb16 r7, r8\n\t"                                                                    \
  "sxtb16 r8, r8, ror #8\n\t"                                                            \
  "sxtb16 r9, r9, ror #8\n\t"                                                            \
  "str r4, [r12, #(24*" #half ")]\n\t"                                                   \
  "str r5, [r12, #(24*" #half "+4)]\n\t"                                                 \
  "str r6, [r12, #(24*" #half "+8)]\n\t"                                                 \
  "str r7, [r12, #(24*" #half "+12)]\n\t"                                                \
  "str r8, [r12, #(24*" #half "+16)]\n\t"                                                \
  "str r9, [r12, #(24*" #half "+20)]\n\t"

/* Argument: r0 the conv_rgb_band_t, kept at [sp], the triples left at [sp, #4].  Per band
 * its rows widened (two groups a pass, lr counting) and the next band's rows stored, then
 * its triples: r0 the triple's words (108 bytes on per triple), r1 the weights and tail,
 * lr out (24 bytes on per triple, stored for the next band). */
__attribute__((naked, noinline, unused)) static void conv_narrow_rgb_band(
    conv_rgb_band_t *job CMSIS_IN_ASM) {
  __asm__ volatile("push {r4-r11, lr}\n\t"
                   "sub sp, sp, #8\n\t"
                   "str r0, [sp]\n\t"
                   "5:\n\t"
                   "ldr lr, [r0, #28]\n\t"
                   "ldr r12, [r0]\n\t"
                   "ldr r1, [r0, #16]\n\t"
                   "ldr r2, [r0, #20]\n\t"
                   "ldr r3, [r0, #24]\n\t"
                   "cmp lr, #0\n\t"
                   "beq 3f\n\t"
                   "2:\n\t"
                   RGB_BAND_GROUP(0) RGB_BAND_GROUP(1)
                   "add r12, r12, #48\n\t"
                   "subs lr, lr, #2\n\t"
                   "bne 2b\n\t"
                   "ldr r0, [sp]\n\t"
                   "ldr r4, [r0, #36]\n\t"
                   "sub r1, r1, r4\n\t"
                   "sub r2, r2, r4\n\t"
                   "sub r3, r3, r4\n\t"
                   "str r1, [r0, #16]\n\t"
                   "str r2, [r0, #20]\n\t"
                   "str r3, [r0, #24]\n\t"
                   "3:\n\t"
                   "ldr r0, [sp]\n\t"
                   "ldr r2, [r0, #12]\n\t"
                   "ldr lr, [r0, #8]\n\t"
                   "ldr r1, [r0, #4]\n\t"
                   "ldr r0, [r0]\n\t"
                   "str r2, [sp, #4]\n\t"
                   "cmp r2, #0\n\t"
                   "beq 4f\n\t"
                   "1:\n\t"
                   RGB_BAND_PAIR(0) RGB_BAND_PAIR(1) RGB_BAND_PAIR(2) RGB_BAND_PAIR(3)
                   "ldr r2, [sp, #4]\n\t"
                   "add lr, lr, #24\n\t"
                   "add r0, r0, #108\n\t"
                   "subs r2, r2, #1\n\t"
                   "str r2, [sp, #4]\n\t"
                   "bne 1b\n\t"
                   "4:\n\t"
                   "ldr r0, [sp]\n\t"
                   "str lr, [r0, #8]\n\t"
                   "ldr r2, [r0, #32]\n\t"
                   "subs r2, r2, #1\n\t"
                   "str r2, [r0, #32]\n\t"
                   "bne 5b\n\t"
                   "add sp, sp, #8\n\t"
                   "pop {r4-r11, pc}\n\t");
}

/* Row y of the image from column x, `bytes` of it (a band's groups): in place when those
 * bytes lie inside the image (columns in the padding read from the next or previous row,
 * then replaced by rgb_band_pad), else a copy into line with the zero point in the
 * padding (all of it when y is). */
static const int8_t *rgb_band_row(const cmsis_conv_job_t *job, int32_t y, int32_t x,
                                  int32_t bytes, int8_t *line) {
  const int32_t w = job->p->input_w, h = job->p->input_h, start = (y * w + x) * 3;
  const int32_t from = x < 0 ? 0 : x, to = x + bytes / 3 < w ? x + bytes / 3 : w;
  const int32_t inside = y >= 0 && y < h;
  if (inside && start >= 0 && start + bytes <= h * w * 3) return job->image + start;
  memset(line, (int8_t)-job->p->input_offset, (size_t)bytes);
  if (inside && from < to) {
    copy_row(line + (from - x) * 3, job->image + (y * w + from) * 3, (to - from) * 3);
  }
  return line;
}

/* The band's columns from x (`columns` of them) that lie in the padding (x + c < 0 or
 * >= w) set to the zero point zp in the widened words of all 3 rows (int16 halves). */
static void rgb_band_pad(int16_t *words, int32_t x, int32_t columns, int32_t w, int16_t zp) {
  int32_t c, e;
  for (c = 0; c < columns; ++c) {
    if (x + c >= 0 && x + c < w) {
      c = w - x - 1; /* on to the right padding */
      continue;
    }
    for (e = 3 * c; e < 3 * c + 3; ++e) {
      int16_t *pair = words + 6 * (e >> 1) + 2 * (e & 1);
      pair[0] = zp;
      pair[1] = zp;
      words[6 * (e >> 1) + 4 + (e & 1)] = zp;
    }
  }
}

/* band's rows 0-2 read in place: the image's rows y to y + 2 from column x. */
static void rgb_band_rows_at(const cmsis_conv_job_t *job, int32_t y, int32_t x,
                             conv_rgb_band_t *band) {
  band->rows[0] = job->image + (y * job->p->input_w + x) * 3;
  band->rows[1] = band->rows[0] + 3 * job->p->input_w;
  band->rows[2] = band->rows[1] + 3 * job->p->input_w;
}

/* Output row oy's pixels from ox on (n, at most 3 RGB_BAND) as one band: its rows widened
 * into band->in's words by conv_narrow_rgb_band with its whole triples (a band reaching
 * into the padding widened alone first, then rgb_band_pad), and a last 1 or 2 pixels
 * (computed as a triple into a copy, their bytes moved to out). */
static void rgb_band_run(const cmsis_conv_job_t *job, int32_t oy, int32_t ox, int32_t n,
                         conv_rgb_band_t *band) {
  uint32_t line[RGB_BAND_GROUPS]; /* row 2's copy; rows 0 and 1 in the node's scratch */
  int32_t spare[6];
  const int32_t triples = (n + 2) / 3, groups = (18 * triples + 11) / 8 * 2;
  const int32_t x = 2 * ox - job->p->pad_w, y = 2 * oy - job->p->pad_h;
  const int32_t w = job->p->input_w, h = job->p->input_h, inside = x >= 0 && x + 6 * triples < w;
  int32_t i;
  if (x >= 0 && y >= 0 && y + 2 < h && ((y + 2) * w + x) * 3 + 4 * groups <= h * w * 3) {
    rgb_band_rows_at(job, y, x, band); /* in place, the right padding then set */
  } else {
    for (i = 0; i < 3; ++i) {
      int8_t *copy = i < 2 ? job->scratch + 4 * RGB_BAND_GROUPS * i : (int8_t *)line;
      band->rows[i] = rgb_band_row(job, y + i, x, 4 * groups, copy);
    }
  }
  band->groups = groups;
  band->count = inside ? n / 3 : 0;
  band->bands = 1;
  conv_narrow_rgb_band(band);
  band->groups = 0;
  if (!inside) {
    rgb_band_pad((int16_t *)(void *)band->in, x, 6 * triples + 1, w,
                 (int16_t)(int8_t)-job->p->input_offset);
    band->count = n / 3;
    band->bands = 1;
    if (band->count > 0) conv_narrow_rgb_band(band);
  }
  if (n % 3 != 0) { /* band->out is the last pixels' */
    int8_t *out = band->out;
    int32_t *in = band->in;
    band->in += 27 * (n / 3);
    band->out = (int8_t *)(void *)spare;
    band->count = 1;
    band->bands = 1;
    conv_narrow_rgb_band(band);
    copy_row(out, (const int8_t *)(void *)spare, 8 * (n % 3));
    band->in = in;
  }
}

/* The whole bands of output row oy from ox on (pixels left on the row: left) whose rows
 * lie inside the image and are read in place, their count; band's rows set to the
 * first's when any. */
static int32_t rgb_bands_in_place(const cmsis_conv_job_t *job, int32_t oy, int32_t ox,
                                  int32_t left, conv_rgb_band_t *band) {
  const int32_t w = job->p->input_w, h = job->p->input_h, y = 2 * oy - job->p->pad_h;
  const int32_t x0 = 2 * ox - job->p->pad_w;
  int32_t x = x0, bands = 0;
  if (y < 0 || y + 2 >= h) return 0;
  while (left >= 3 * RGB_BAND && x >= 0 && x + 6 * RGB_BAND < w &&
         ((y + 2) * w + x) * 3 + 4 * RGB_BAND_GROUPS <= h * w * 3) {
    ++bands;
    left -= 3 * RGB_BAND;
    x += 6 * RGB_BAND;
  }
  rgb_band_rows_at(job, y, x0, band);
  return bands;
}

/* conv_narrow_rgb for stride 2 (both) and dilation 1 on a CONV_RGB_BAND record: every
 * pixel by bands of at most RGB_BAND triples of one output row (rgb_band_run). */
static void conv_narrow_rgb_bands(const cmsis_conv_job_t *job, int32_t pixels) {
  int32_t widened[6 * RGB_BAND_GROUPS];
  conv_rgb_band_t band;
  const int32_t width = job->p->output_w;
  int32_t pixel = 0, oy, ox, n;
  band.in = widened;
  band.weights = (const int32_t *)(const void *)job->pairs; /* the tail after them */
  band.back = 4 * RGB_BAND_GROUPS - 18 * RGB_BAND;
  for (oy = 0; pixel < pixels; ++oy) {
    for (ox = 0; ox < width && pixel < pixels; ox += n, pixel += n) {
      const int32_t left = width - ox < pixels - pixel ? width - ox : pixels - pixel;
      band.out = job->output + pixel * 8;
      band.bands = rgb_bands_in_place(job, oy, ox, left, &band);
      if (band.bands > 0) { /* the most: one call */
        n = 3 * RGB_BAND * band.bands;
        band.groups = RGB_BAND_GROUPS;
        band.count = RGB_BAND;
        conv_narrow_rgb_band(&band);
      } else {
        n = left < 3 * RGB_BAND ? left : 3 * RGB_BAND;
        rgb_band_run(job, oy, ox, n, &band);
      }
    }
  }
}

/* The job's pixels 3 at a time (conv_narrow_rgb_triples), then the one or two left by
 * conv_narrow_28x8: both patches' words in scratch (from rgb_patch_words when both windows
 * lie inside the image, else patch_of's copies with the zero point in the padding), or an
 * odd last one by conv_narrow_last. */
static void conv_narrow_rgb(const cmsis_conv_job_t *job, int32_t pixels) {
  const int32_t line = job->p->dilation_h * job->p->input_w * 3;
  const int32_t sy = job->p->stride_h, sx = job->p->stride_w, width = job->p->output_w;
  const int32_t top = -job->p->pad_h, left = -job->p->pad_w;
  uint32_t *words = (uint32_t *)(void *)job->scratch;
  int32_t pixel = conv_narrow_rgb_triples(job, pixels);
  int32_t oy = pixel / width, ox = pixel % width; /* pixel's coordinates */
  for (; pixel + 1 < pixels; pixel += 2) {
    const int32_t oy1 = ox + 1 < width ? oy : oy + 1, ox1 = ox + 1 < width ? ox + 1 : 0;
    const int8_t *a = window_at(job, top + oy * sy, left + ox * sx);
    const int8_t *b = window_at(job, top + oy1 * sy, left + ox1 * sx);
    oy = ox1 + 1 < width ? oy1 : oy1 + 1;
    ox = ox1 + 1 < width ? ox1 + 1 : 0;
    if (a != NULL && b != NULL) {
      rgb_patch_words(a, line, words);
      rgb_patch_words(b, line, words + 7);
    } else {
      (void)patch_of(job, pixel, 0);
      (void)patch_of(job, pixel + 1, 1);
    }
    conv_narrow_28x8(job->scratch, job->pairs, job->tail, 1, job->output + pixel * 8);
  }
  if (pixel < pixels) { /* one left after the triples and pairs */
    conv_narrow_last(job, patch_of(job, pixel, 0), job->output + pixel * 8);
  }
}

/* The job's pixels 4 at a time by the quad kernel of its K (16 or 32; 32 channels), each
 * quad widened into the scratch (8 * K bytes).  Returns the pixels done. */
static int32_t conv_narrow_quads(const cmsis_conv_job_t *job, int32_t pixels) {
  int16_t *quad = (int16_t *)(void *)job->scratch;
  const int32_t quads = pixels >> 2;
  if (quads == 0) return 0;
  if (job->patch == 16) {
    conv_quad_16x32(job->image, job->pairs, job->tail, quads, job->output, quad);
  } else {
    conv_quad_32x32(job->image, job->pairs, job->tail, quads, job->output, quad);
  }
  return quads << 2;
}

/* The job's pixels by a narrow kernel when one fits: the requantising layout (job->tail,
 * doubled weights, checked against the node by conv.c), a 1x1 layer of stride 1 without
 * padding read in place, all output channels (no decoded block), a word-aligned image and
 * streams: K = 8 -> 16 by pixel pairs, K = 16, 32 -> 32 by quads; the 1 to 3 pixels left
 * one by one through cmsis_dot_pairs_requant1 on a widened copy (conv_narrow_last).
 * Returns 0 when none fits, and the caller runs its generic loop. */
static int32_t conv_narrow(const cmsis_conv_job_t *job, int32_t pixels) {
  const tflm_conv_params_t *p = job->p;
  const int32_t k = job->patch, cout = job->channels;
  int32_t done;
  if (job->band) { /* find_layout checked its shape, the record its words' alignment */
    conv_narrow_rgb_bands(job, pixels);
    return 1;
  }
  if (k == 27 && cout == 8 && p->filter_h == 3 && p->filter_w == 3 && p->input_c == 3 &&
      !job->in_place && job->tail != NULL && job->pairs != NULL && job->stride == 8 &&
      (((uintptr_t)job->pairs | (uintptr_t)job->tail | (uintptr_t)job->scratch) & 3u) == 0) {
    conv_narrow_rgb(job, pixels);
    return 1;
  }
  if (!((k == 8 && cout == 16) || ((k == 16 || k == 32) && cout == 32)) ||
      job->tail == NULL || job->pairs == NULL || !job->in_place || p->stride_h != 1 ||
      p->stride_w != 1 || p->input_c != k || job->stride != cout ||
      (((uintptr_t)job->image | (uintptr_t)job->pairs | (uintptr_t)job->tail |
        (uintptr_t)job->scratch) & 3u) != 0) {
    return 0;
  }
  if (k != 8) {
    done = conv_narrow_quads(job, pixels);
  } else {
    if (pixels >= 2) {
      conv_narrow_8x16(job->image, job->pairs, job->tail, pixels >> 1, job->output);
    }
    done = pixels & ~1;
  }
  for (; done < pixels; ++done) {
    conv_narrow_last(job, job->image + done * k, job->output + done * cout);
  }
  return 1;
}

#endif /* CMSIS_DSP */
#endif /* TFLM_CMSIS_CONV_NARROW_H */
