/* CONV_2D int8 on Helium (MVE, Cortex-M55) for patches of at most 32 bytes (narrow 1x1
 * layers, a first 3x3 layer over 3 channels) with the folded constants of the offline
 * layout (bias + input_offset * sum(w), tflm_gen/layout.py): 2 pixels x 2 output channels
 * per pass in one assembly loop over the channel pairs.  The two patches stay in q0..q3
 * (16 bytes each, predicated past the patch: no over-read, zero lanes), each channel's
 * weight rows are read once per pixel pair, 4 VMLADAVA per 16 patch bytes; the 4 sums
 * [channel a: pixel 0, 1; channel b: pixel 0, 1] go into one vector (two VMOVs),
 * requantised with per-lane parameters (cmsis_mve_mul_by_qm's steps, the shift split into
 * left and right) prepared per invoke on the stack for CONV_MVE_CHUNK channels at a time,
 * and scattered to the two pixels.  From intrinsics gcc spills the patch registers.
 * Integer sums are exact, so the result is the reference's.
 * Written for tflm-gen from the MVE instruction reference; no code of Arm's CMSIS-NN. */
#ifndef TFLM_CMSIS_CONV_MVE_H
#define TFLM_CMSIS_CONV_MVE_H

#include <stdint.h>

#include "cmsis_simd.h"

/* Assembly with 12 register operands: an unoptimised build (frame pointer kept, -O0) cannot
 * give them, and runs conv.c's own MVE loops. */
#if defined(CMSIS_MVE) && defined(__OPTIMIZE__)
#define CONV_MVE_ASM 1

/* Channels whose parameters are prepared at a time (32 pairs, 1,792 bytes of stack): vww's
 * widest narrow-patch layer (1x1 32 -> 64) in one chunk, which its overlap needs. */
#define CONV_MVE_CHUNK 64

/* One channel pair's parameters, all in lanes a, a, b, b (the sums' order): folded first
 * for one LDM (with write-back) into the 4 sums, then right, read last by a post-increment
 * to the next pair. */
typedef struct {
  int32_t folded[4];                    /* the sums' starts */
  int32_t right[4], left[4], mult[4];
} conv_mve_pair_t;

/* The pairs of channels first .. first + count - 1 (count even); 1 when a channel shifts
 * left (most layers' effective scales are below 1: their loop leaves the left shift out). */
static int32_t conv_mve_prepare(const int32_t *folded, const tflm_requant_t *requant,
                                int32_t first, int32_t count, conv_mve_pair_t *pairs) {
  int32_t c, j, left_any = 0;
  for (c = 0; c < count; ++c) {
    conv_mve_pair_t *pair = pairs + (c >> 1);
    const int32_t shift = requant->shifts[first + c];
    left_any |= shift > 0;
    for (j = 2 * (c & 1); j < 2 * (c & 1) + 2; ++j) {
      pair->folded[j] = folded[first + c];
      pair->left[j] = shift > 0 ? shift : 0;
      pair->mult[j] = requant->multipliers[first + c];
      pair->right[j] = shift < 0 ? shift : 0;
    }
  }
  return left_any;
}

/* The pass loop for `blocks` (1 or 2) patch blocks of 16 bytes; the second block's loads
 * and, with one block, the first's, predicated by P0.  LEFT: the left shift, or nothing. */
#define CONV_MVE_LOOP(SECOND, CLAMP, LEFT)                                                  \
  "wls lr, %[d], 2f\n\t"                                                                \
  "1:\n\t"                                                                                  \
  "ldm %[prm]!, {%[a], %[b], %[c], %[d]}\n\t"                                              \
  "add %[w2], %[w], %[k]\n\t"                                                               \
  SECOND                                                                                    \
  "add %[w], %[w2], %[k]\n\t"                                                               \
  "vmov q4[2], q4[0], %[a], %[c]\n\t"                                                       \
  "vmov q4[3], q4[1], %[b], %[d]\n\t"                                                       \
  LEFT                                                                                      \
  "vldrw.32 q5, [%[prm], #32]\n\t"                                                          \
  "vqrdmulh.s32 q4, q4, q5\n\t"                                                             \
  "vldrw.32 q5, [%[prm]], #48\n\t"                                                          \
  "vand q6, q4, q5\n\t"                                                                     \
  "vshr.s32 q6, q6, #31\n\t"                                                                \
  "vqadd.s32 q4, q4, q6\n\t"                                                                \
  "vrshl.s32 q4, q4, q5\n\t"                                                                \
  "vadd.i32 q4, q4, %[offset]\n\t"                                                          \
  CLAMP                                                                                     \
  "vstrb.32 q4, [%[out], q7]\n\t"                                                           \
  "adds %[out], %[out], #2\n\t"                                                             \
  "le lr, 1b\n\t"                                                                           \
  "2:\n\t"
#define CONV_MVE_LEFT                                                                       \
  "vldrw.32 q5, [%[prm], #16]\n\t"                                                          \
  "vshl.s32 q4, q4, q5\n\t"
/* The clamp to [lo, hi]: with one block from q1 and q3 (loaded once), else from cst. */
#define CONV_MVE_CLAMP_HELD                                                                 \
  "vmax.s32 q4, q4, q1\n\t"                                                                 \
  "vmin.s32 q4, q4, q3\n\t"
#define CONV_MVE_CLAMP_LOADED                                                               \
  "vldrw.32 q6, [%[cst], #16]\n\t"                                                          \
  "vmax.s32 q4, q4, q6\n\t"                                                                 \
  "vldrw.32 q6, [%[cst], #32]\n\t"                                                          \
  "vmin.s32 q4, q4, q6\n\t"
#define CONV_MVE_ONE_BLOCK                                                                  \
  "vpst\n\t"                                                                                \
  "vldrbt.8 q4, [%[w]]\n\t"                                                                 \
  "vmladava.s8 %[a], q0, q4\n\t"                                                            \
  "vmladava.s8 %[b], q2, q4\n\t"                                                            \
  "vpst\n\t"                                                                                \
  "vldrbt.8 q5, [%[w2]]\n\t"                                                                \
  "vmladava.s8 %[c], q0, q5\n\t"                                                            \
  "vmladava.s8 %[d], q2, q5\n\t"
#define CONV_MVE_TWO_BLOCKS                                                                 \
  "vldrb.8 q4, [%[w]]\n\t"                                                                  \
  "vmladava.s8 %[a], q0, q4\n\t"                                                            \
  "vmladava.s8 %[b], q2, q4\n\t"                                                            \
  "vldrb.8 q5, [%[w2]]\n\t"                                                                 \
  "vmladava.s8 %[c], q0, q5\n\t"                                                            \
  "vmladava.s8 %[d], q2, q5\n\t"                                                            \
  "vpst\n\t"                                                                                \
  "vldrbt.8 q4, [%[w], #16]\n\t"                                                            \
  "vmladava.s8 %[a], q1, q4\n\t"                                                            \
  "vmladava.s8 %[b], q3, q4\n\t"                                                            \
  "vpst\n\t"                                                                                \
  "vldrbt.8 q5, [%[w2], #16]\n\t"                                                           \
  "vmladava.s8 %[c], q1, q5\n\t"                                                            \
  "vmladava.s8 %[d], q3, q5\n\t"

/* The operands of both pass loops (12 registers: all gcc can give beside lr). */
#define CONV_MVE_OPERANDS                                                                   \
  : [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [d] "+r"(d), [w2] "=&r"(w2), [w] "+r"(w),          \
      [prm] "+r"(prm), [out] "+r"(out)                                                      \
  : [k] "r"(k), [cst] "r"(cst), [offset] "r"(offset)                                        \
  : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "lr", "memory"

/* The pass over one patch block (k <= 16) and over two, with LEFT (see CONV_MVE_LOOP). */
#define CONV_MVE_ONE(LEFT)                                                                  \
  __asm__ volatile("vmsr p0, %[c]\n\t"                                                      \
                   "vpstt\n\t"                                                              \
                   "vldrbt.8 q0, [%[a]]\n\t"                                                \
                   "vldrbt.8 q2, [%[b]]\n\t"                                                \
                   "vldrw.32 q7, [%[cst]]\n\t"                                              \
                   "vldrw.32 q1, [%[cst], #16]\n\t"                                         \
                   "vldrw.32 q3, [%[cst], #32]\n\t"                                         \
                   CONV_MVE_LOOP(CONV_MVE_ONE_BLOCK, CONV_MVE_CLAMP_HELD, LEFT)             \
                   CONV_MVE_OPERANDS)
#define CONV_MVE_TWO(LEFT)                                                                  \
  __asm__ volatile("vldrb.8 q0, [%[a]]\n\t"                                                 \
                   "vldrb.8 q2, [%[b]]\n\t"                                                 \
                   "vldrw.32 q7, [%[cst]]\n\t"                                              \
                   "vmsr p0, %[c]\n\t"                                                      \
                   "vpstt\n\t"                                                              \
                   "vldrbt.8 q1, [%[a], #16]\n\t"                                           \
                   "vldrbt.8 q3, [%[b], #16]\n\t"                                           \
                   CONV_MVE_LOOP(CONV_MVE_TWO_BLOCKS, CONV_MVE_CLAMP_LOADED, LEFT)          \
                   CONV_MVE_OPERANDS)

/* Patches x0, x1 (k <= 32 bytes) against `pairs` channel pairs of rows of k weights from
 * w, requantised into out[c] (pixel 0) and out[stride + c] (pixel 1); `left`: a channel
 * shifts left (conv_mve_prepare).  cst: the store offsets {0, stride, 1, stride + 1}, then
 * lo and hi in 4 lanes each.  Not inlined: P0 is written here, and gcc keeps no predicate
 * in it across a call (AAPCS: caller-saved). */
static __attribute__((noinline)) void conv_mve_pass(const int8_t *x0, const int8_t *x1,
                                                    int32_t k, const int8_t *w,
                                                    const conv_mve_pair_t *prm, int32_t pairs,
                                                    int32_t left, const int32_t *cst,
                                                    int32_t offset, int8_t *out) {
  /* a, b, c, d enter as the patches, the patch bytes' predicate and the pair count (12
   * registers are all gcc can give), then hold the sums */
  /* (VMLADAVA accumulates into even registers only) */
  register int32_t a __asm__("r4") = (int32_t)(uintptr_t)x0;
  register int32_t b __asm__("r6") = (int32_t)(uintptr_t)x1;
  register int32_t c __asm__("r8") = (int32_t)vctp8q((uint32_t)(k <= 16 ? k : k - 16));
  register int32_t d __asm__("r10") = pairs;
  const int8_t *w2;
  if (k <= 16 && left) {
    CONV_MVE_ONE(CONV_MVE_LEFT);
  } else if (k <= 16) {
    CONV_MVE_ONE("");
  } else if (left) {
    CONV_MVE_TWO(CONV_MVE_LEFT);
  } else {
    CONV_MVE_TWO("");
  }
}

/* patch_of, with a window inside the image copied a filter row (at most 16 bytes, else
 * patch_of) per predicated load and store, where copy_row's words and bytes cost 4 times as
 * many instructions for the 9-byte rows of a 3x3 filter over 3 channels. */
static const int8_t *conv_mve_patch(const cmsis_conv_job_t *job, int32_t pixel, int32_t slot) {
  const tflm_conv_params_t *p = job->p;
  const int32_t row = p->filter_w * p->input_c, line = p->dilation_h * p->input_w * p->input_c;
  int8_t *dst = job->scratch + slot * CMSIS_ROUND4(job->patch), *end = dst + job->patch;
  const int8_t *src;
  int32_t y0, x0;
  if (job->in_place || row > 16 || (src = inside_window(job, pixel, &y0, &x0)) == NULL) {
    return patch_of(job, pixel, slot);
  }
  {
    const mve_pred16_t lanes = vctp8q((uint32_t)row);
    for (; dst != end; dst += row, src += line) vstrbq_p_s8(dst, vldrbq_z_s8(src, lanes), lanes);
  }
  return end - job->patch;
}

/* The patches of pixels `pixel` and pixel + 1 into x[0], x[1]: 1x1 at stride 1 in place
 * (consecutive pixels, no call); windows both inside the image on one output row (most
 * pairs of a first 3x3 layer) copied a filter row of each per loop step, their top left
 * found with one division; else conv_mve_patch each (two calls, two divisions cost ~40%
 * of such a layer). */
static void conv_mve_patches(const cmsis_conv_job_t *job, int32_t pixel, const int8_t **x) {
  const tflm_conv_params_t *p = job->p;
  const int32_t row = p->filter_w * p->input_c, line = p->dilation_h * p->input_w * p->input_c;
  const int32_t oy = pixel / p->output_w, ox = pixel - oy * p->output_w;
  const int32_t y0 = oy * p->stride_h - p->pad_h, x0 = ox * p->stride_w - p->pad_w;
  if (job->in_place && p->stride_h == 1 && p->stride_w == 1) {
    x[0] = job->image + pixel * p->input_c;
    x[1] = x[0] + p->input_c;
    return;
  }
  if (job->in_place || row > 16 || p->dilation_w != 1 || ox + 1 >= p->output_w || x0 < 0 ||
      x0 + p->stride_w + p->filter_w > p->input_w || y0 < 0 ||
      y0 + (p->filter_h - 1) * p->dilation_h >= p->input_h) {
    x[0] = conv_mve_patch(job, pixel, 0);
    x[1] = conv_mve_patch(job, pixel + 1, 1);
    return;
  }
  {
    const mve_pred16_t lanes = vctp8q((uint32_t)row);
    const int32_t next = p->stride_w * p->input_c, gap = CMSIS_ROUND4(job->patch);
    const int8_t *src = job->image + (y0 * p->input_w + x0) * p->input_c;
    int8_t *dst = job->scratch, *end = dst + job->patch;
    for (; dst != end; dst += row, src += line) {
      vstrbq_p_s8(dst, vldrbq_z_s8(src, lanes), lanes);
      vstrbq_p_s8(dst + gap, vldrbq_z_s8(src + next, lanes), lanes);
    }
    x[0] = job->scratch;
    x[1] = job->scratch + gap;
  }
}

/* Pixels first .. pixels - 1 of one batch in pairs, every channel: returns the first pixel
 * not computed (an odd last one, left to the caller).  Needs the folded constants, patches
 * of at most 32 bytes and an even channel count. */
static int32_t conv_mve_pairs(const cmsis_conv_job_t *job, int32_t pixels) {
  conv_mve_pair_t prm[CONV_MVE_CHUNK / 2];
  const int32_t k = job->patch, cout = job->channels, stride = job->stride;
  const int32_t cst[12] = {0, stride, 1, stride + 1, job->p->act_min, job->p->act_min,
                           job->p->act_min, job->p->act_min, job->p->act_max, job->p->act_max,
                           job->p->act_max, job->p->act_max};
  int32_t first, pixel, left;
  {
    /* Channels go CONV_MVE_CHUNK at a time over every pixel, so a second chunk re-reads
     * each pixel's input after the first chunk wrote that pixel's (and later pixels')
     * outputs.  The planner may place the output over the consumed part of the input
     * (tflm_gen/overlap.py), which is safe only in the reference's order, every channel of
     * a pixel before the next pixel is read: then this path declines (with 32-channel
     * chunks vww's 1x1 32 -> 64 at --memory balanced came out wrong).  One chunk reads
     * each patch once, before its stores, as the reference does. */
    const tflm_conv_params_t *p = job->p;
    const int8_t *in_end = job->image + p->input_h * p->input_w * p->input_c;
    const int32_t overlap = job->output < in_end && job->image < job->output + pixels * stride;
    if (overlap && cout > CONV_MVE_CHUNK) return 0;
  }
  for (first = 0; first < cout; first += CONV_MVE_CHUNK) {
    const int32_t count = cout - first < CONV_MVE_CHUNK ? cout - first : CONV_MVE_CHUNK;
    left = conv_mve_prepare(job->folded, &job->requant, first, count, prm);
    for (pixel = 0; pixel + 1 < pixels; pixel += 2) {
      const int8_t *x[2];
      conv_mve_patches(job, pixel, x);
      conv_mve_pass(x[0], x[1], k, job->filter + first * k, prm, count >> 1, left, cst,
                    job->p->output_offset, job->output + pixel * stride + first);
    }
  }
  return pixels & ~1;
}

#endif /* CONV_MVE_ASM */
#endif /* TFLM_CMSIS_CONV_MVE_H */
