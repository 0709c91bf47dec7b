/* Narrow 1x1 CONV_2D layers on a DSP core (Cortex-M4/M7/M33): 8 input channels, 16 output
 * channels, stride 1, no padding (vww_96_int8's and person_detect's second convolution,
 * 48x48x8 -> 16).  Included by conv.c inside its CMSIS_DSP branch; reads the node's
 * CONV_INT16_PAIRS_REQUANT record as conv.c checked it (find_layout, tail_agrees).
 *
 * The generic DSP loop widens each pixel pair into scratch and calls
 * cmsis_dot_pairs_requant per pair, which reloads the widened pixels for every channel
 * pair and spends ~90 cycles per 4 outputs around 32 MACs.  With K = 8 two pixels widened
 * are 8 words: they stay in r4-r11 for all 16 channels, which are unrolled (no loop per
 * channel, every weight, tail and output offset an immediate).  Per channel and pixel pair:
 * 2 LDRD of weights, 8 SMLAD, the requantisation of cmsis_requantize_folded (SMMLAR, ADD,
 * ASR, SSAT per output; the sign correction - [acc < 0] added to the constant before the
 * SMMLAR, the same sum modulo 2^32) and two STRB: about 26 instructions, 35 cycles. */
#ifndef TFLM_CMSIS_CONV_NARROW_H
#define TFLM_CMSIS_CONV_NARROW_H

#if defined(CMSIS_DSP)

#define CONV_NARROW_STR2(x) #x
#define CONV_NARROW_STR(x) CONV_NARROW_STR2(x)

/* Channel c = 2j + s of the pixel pair held in r4-r11 (pixel a: r4 r5 inputs 0-3 as
 * (x0, x2), (x1, x3), r6 r7 inputs 4-7; pixel b: r8-r11), r1 the pair stream (per channel
 * pair 32 bytes: per group of 4 inputs channel 2j's two words then 2j+1's), lr the tail
 * (per pair 8 words: 2 folded a, b, right b, multiplier a, b, constant a, b, right a),
 * [sp, #8] the output of pixel a (pixel b's COUT bytes after).  Uses r0, r2, r3, r12. */
#define CONV_NARROW_CHANNEL(j, s, cout)                                                    \
  "ldr r3, [lr, #(" #j "*32+" #s "*4)]\n\t"                                              \
  "ldrd r0, r12, [r1, #(" #j "*32+" #s "*8)]\n\t"                                        \
  "smlad r2, r0, r4, r3\n\t"                                                             \
  "smlad r2, r12, r5, r2\n\t"                                                            \
  "smlad r3, r0, r8, r3\n\t"                                                             \
  "smlad r3, r12, r9, r3\n\t"                                                            \
  "ldrd r0, r12, [r1, #(" #j "*32+16+" #s "*8)]\n\t"                                     \
  "smlad r2, r0, r6, r2\n\t"                                                             \
  "smlad r2, r12, r7, r2\n\t"                                                            \
  "smlad r3, r0, r10, r3\n\t"                                                            \
  "smlad r3, r12, r11, r3\n\t"                                                           \
  "ldr r0, [lr, #(" #j "*32+12+" #s "*4)]\n\t"                                           \
  "ldr r12, [lr, #(" #j "*32+20+" #s "*4)]\n\t"                                          \
  "add r12, r12, r2, asr #31\n\t"                                                        \
  "smmlar r2, r2, r0, r12\n\t"                                                           \
  "ldr r12, [lr, #(" #j "*32+20+" #s "*4)]\n\t"                                          \
  "add r12, r12, r3, asr #31\n\t"                                                        \
  "smmlar r3, r3, r0, r12\n\t"                                                           \
  "ldr r0, [lr, #(" #j "*32+28-" #s "*20)]\n\t"                                          \
  "ldr r12, [sp, #8]\n\t"                                                                \
  "asr r2, r2, r0\n\t"                                                                   \
  "asr r3, r3, r0\n\t"                                                                   \
  "ssat r2, #8, r2\n\t"                                                                  \
  "ssat r3, #8, r3\n\t"                                                                  \
  "strb r2, [r12, #(" #j "*2+" #s ")]\n\t"                                               \
  "strb r3, [r12, #(" cout "+" #j "*2+" #s ")]\n\t"

#define CONV_NARROW_PAIR(j, cout) CONV_NARROW_CHANNEL(j, 0, cout) CONV_NARROW_CHANNEL(j, 1, cout)

/* `count` (>= 1) pixel pairs of a 1x1 layer of 8 input and 16 output channels: pixels
 * 2i, 2i + 1 at in + 16 i (word aligned), their outputs at out + 32 i.  Arguments: r0 in,
 * r1 the pair stream (word aligned), r2 the tail (word aligned), r3 count, [sp] out.
 * Raster order in blocks of two pixels, both read before either is written (the overlap
 * rule of tflm_gen/overlap.py). */
__attribute__((naked, noinline, unused)) static void conv_narrow_8x16(
    const int8_t *in CMSIS_IN_ASM, const int16_t *w CMSIS_IN_ASM,
    const int32_t *tail CMSIS_IN_ASM, int32_t count CMSIS_IN_ASM, int8_t *out CMSIS_IN_ASM) {
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "ldr r12, [sp, #36]\n\t"
      "mov lr, r2\n\t"
      "push {r0, r3, r12}\n\t"      /* [sp] in, #4 pairs left, #8 out */
      "1:\n\t"
      "ldr r12, [sp]\n\t"
      "ldmia r12!, {r8-r11}\n\t"    /* pixel a's 8 bytes, then pixel b's */
      "str r12, [sp]\n\t"
      "sxtb16 r4, r8\n\t"
      "sxtb16 r5, r8, ror #8\n\t"
      "sxtb16 r6, r9\n\t"
      "sxtb16 r7, r9, ror #8\n\t"
      "sxtb16 r8, r10\n\t"
      "sxtb16 r9, r10, ror #8\n\t"
      "sxtb16 r10, r11\n\t"
      "sxtb16 r11, r11, ror #8\n\t"
      CONV_NARROW_PAIR(0, "16") CONV_NARROW_PAIR(1, "16")
      CONV_NARROW_PAIR(2, "16") CONV_NARROW_PAIR(3, "16")
      CONV_NARROW_PAIR(4, "16") CONV_NARROW_PAIR(5, "16")
      CONV_NARROW_PAIR(6, "16") CONV_NARROW_PAIR(7, "16")
      "ldrd r0, r12, [sp, #4]\n\t"
      "add r12, r12, #32\n\t"
      "subs r0, r0, #1\n\t"
      "strd r0, r12, [sp, #4]\n\t"
      "bne 1b\n\t"
      "add sp, sp, #12\n\t"
      "pop {r4-r11, pc}\n\t");
}

/* 1 when conv_narrow runs the job: the requantising layout (job->tail, doubled weights,
 * checked against the node by conv.c), 1x1 stride 1 without padding read in place, 8 input
 * and 16 output channels (all of them: no decoded block), word-aligned image and streams,
 * the tail right where the pair stream's layout puts it (no check needed beyond alignment:
 * the kernel takes both pointers). */
static int32_t conv_narrow_fits(const cmsis_conv_job_t *job) {
  const tflm_conv_params_t *p = job->p;
  return job->tail != NULL && job->pairs != NULL && job->in_place && p->stride_h == 1 &&
         p->stride_w == 1 && job->patch == 8 && p->input_c == 8 && job->channels == 16 &&
         job->stride == 16 &&
         (((uintptr_t)job->image | (uintptr_t)job->pairs | (uintptr_t)job->tail) & 3u) == 0;
}

/* The job's pixels by conv_narrow_8x16 when it fits (an odd last pixel through
 * cmsis_dot_pairs_requant1 on its widened copy); returns 0 when it does not, and the
 * caller runs its generic loop. */
static int32_t conv_narrow(const cmsis_conv_job_t *job, int32_t pixels) {
  const int32_t pairs = pixels >> 1;
  if (!conv_narrow_fits(job)) return 0;
  if (pairs > 0) conv_narrow_8x16(job->image, job->pairs, job->tail, pairs, job->output);
  if (pixels & 1) {
    const int8_t *last = job->image + (pixels - 1) * 8;
    int16_t *pair = (int16_t *)(void *)(job->scratch + 2 * CMSIS_ROUND4(job->patch));
    cmsis_widen_pair(last, last, pair, 8, 0);
    cmsis_dot_pairs_requant1(pair, job->pairs, 2, 8, job->tail, job->output + (pixels - 1) * 16);
  }
  return 1;
}

#endif /* CMSIS_DSP */
#endif /* TFLM_CMSIS_CONV_NARROW_H */
