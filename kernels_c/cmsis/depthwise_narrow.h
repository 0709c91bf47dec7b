/* Narrow early DEPTHWISE_CONV_2D layers on a DSP core (Cortex-M4/M7/M33): one input channel,
 * 3 filter rows of one quad (filter_w <= 4) and 8 output channels (person_detect's first
 * layer, a 3x3 filter of multiplier 8 over a grey image) whose activation keeps the whole
 * int8 range.  Included by depthwise_conv.c after row_quads3's helpers (dw_steps_fit,
 * quads_window); row_at tries it before row_quads3 (apart, so their frames never add up:
 * dw_narrow_row is not inlined).  Other cores: a stub that declines.
 *
 * row_quads3 sums each pixel's 4 channels of a block from registers (one row's input
 * widened, 8 SMLADs per row), so every weight word is read once per pixel: ~130 cycles per
 * pixel and block of 36 MACs.  Here 3 pixels x 2 channels per pass, as conv_narrow_rgb3
 * does for RGB first layers: the 3 pixels' rows widened once (SXTAB16: the input offset
 * added, as quad_block does) into 18 words on the kernel's stack, then per channel pair
 * and half of a row one chain of 5 loads (both channels' weight word of the DW_ROW_QUADS
 * record, the 3 pixels' input word) and 6 SMLADs, the 6 sums in registers over the 3 rows,
 * started at the bias; then the doubled sums requantised as dw_step does (its SMLAL with
 * the low word 2^31 is SMMLAR: the same high word), SSAT and a byte store each. */
#ifndef TFLM_CMSIS_DEPTHWISE_NARROW_H
#define TFLM_CMSIS_DEPTHWISE_NARROW_H

#if defined(CMSIS_DSP) && !defined(CMSIS_MVE)

#include "narrow_triples.h"

/* What dw_narrow_quads3 reads (offsets fixed by its assembly): per pixel of the first triple
 * its window's first byte and the bytes between its rows (in the image, or a copy with rows
 * 4 apart); each next triple's windows `advance` bytes after the previous ones. */
typedef struct {
  const int8_t *rows[3];
  int32_t line[3];
  int8_t *out;            /* the 3 pixels' 24 output bytes */
  const int32_t *weights; /* the DW_ROW_QUADS record's blocks */
  const int32_t *steps;   /* per channel pair: bias a, b, multiplier a, b, constant a, b,
                             right shift a, b (dw_step_t's values) */
  int32_t offsets;        /* the input offset in both halfwords */
  int32_t count;          /* triples, >= 1 */
  int32_t advance;
} dw_narrow_t;

/* The frame: the 18 widened words at [sp, #0], the dw_narrow_t at #72, the triple's out at
 * #76.  Pixel p's row y, words (x0 + o, x2 + o), (x1 + o, x3 + o) at 24p + 8y. */
#define DWN_X(p, y, e) "#((" #p ")*24+(" #y ")*8+" #e "*4)"
/* Channel 2k + s (block k >> 1, channel (2k + s) & 3 in it), row y, word e of the record. */
#define DWN_W(k, s, y, e) "#(((" #k ")>>1)*96+(" #y ")*32+((2*(" #k ")+" #s ")&3)*8+" #e "*4)"
#define DWN_T(k, word) "#((" #k ")*32+(" #word ")*4)"

/* Widens pixel p's 3 rows (one word each) into r3 (post-incremented); r0 the dw_narrow_t,
 * r2 the offsets. */
#define DWN_WIDEN(p)                                                                       \
  "ldr r12, [r0, #(4*" #p ")]\n\t"                                                       \
  "ldr lr, [r0, #(12+4*" #p ")]\n\t"                                                     \
  "ldr r4, [r12]\n\t"                                                                    \
  "ldr r6, [r12, lr]\n\t"                                                                \
  "add r12, r12, lr\n\t"                                                                 \
  "ldr r8, [r12, lr]\n\t"                                                                \
  "sxtab16 r5, r2, r4, ror #8\n\t"                                                       \
  "sxtab16 r4, r2, r4\n\t"                                                               \
  "sxtab16 r7, r2, r6, ror #8\n\t"                                                       \
  "sxtab16 r6, r2, r6\n\t"                                                               \
  "sxtab16 r9, r2, r8, ror #8\n\t"                                                       \
  "sxtab16 r8, r2, r8\n\t"                                                               \
  "stmia r3!, {r4-r9}\n\t"

#define DWN_LOADS(k, y, e)                                                                 \
  NARROW3_LOADS("[r1, " DWN_W(k, 0, y, e) "]", "[r1, " DWN_W(k, 1, y, e) "]",             \
                "[sp, " DWN_X(0, y, e) "]", "[sp, " DWN_X(1, y, e) "]",                   \
                "[sp, " DWN_X(2, y, e) "]")
#define DWN_HALF(k, y, e) DWN_LOADS(k, y, e) NARROW3_MACS
/* The first half-row: the sums start at the channels' biases. */
#define DWN_FIRST(k)                                                                       \
  NARROW3_FIRST("[lr, " DWN_T(k, 0) "]", "[lr, " DWN_T(k, 1) "]", DWN_LOADS(k, 0, 0))
/* One sum x of channel 2k + s doubled and requantised (r8 multiplier, r9 constant, r10
 * right shift), stored at r12 + `at`. */
#define DWN_ONE(x, at)                                                                     \
  "add " x ", " x ", " x "\n\t"                                                          \
  "sub r11, r9, " x ", lsr #31\n\t"                                                      \
  "smmlar " x ", " x ", r8, r11\n\t"                                                     \
  "asr " x ", " x ", r10\n\t"                                                            \
  "ssat " x ", #8, " x "\n\t"                                                            \
  "strb " x ", [r12, #(" at ")]\n\t"
#define DWN_REQUANT(k, s, x, y, z)                                                         \
  "ldr r8, [lr, " DWN_T(k, 2 + s) "]\n\t"                                                \
  "ldr r9, [lr, " DWN_T(k, 4 + s) "]\n\t"                                                \
  "ldr r10, [lr, " DWN_T(k, 6 + s) "]\n\t"                                               \
  DWN_ONE(x, "2*" #k "+" #s) DWN_ONE(y, "8+2*" #k "+" #s) DWN_ONE(z, "16+2*" #k "+" #s)
#define DWN_PAIR(k)                                                                        \
  DWN_FIRST(k) DWN_HALF(k, 0, 1) DWN_HALF(k, 1, 0) DWN_HALF(k, 1, 1) DWN_HALF(k, 2, 0)   \
  DWN_HALF(k, 2, 1)                                                                      \
  "ldr r12, [sp, #76]\n\t"                                                               \
  DWN_REQUANT(k, 0, "r2", "r3", "r4") DWN_REQUANT(k, 1, "r5", "r6", "r7")

/* `count` triples of output pixels, 8 channels each.  Argument: r0 the dw_narrow_t. */
__attribute__((naked, noinline)) static void dw_narrow_quads3(dw_narrow_t *job CMSIS_IN_ASM) {
  __asm__ volatile("push {r0, r1, r3-r11, lr}\n\t"
                   "sub sp, sp, #72\n\t"
                   "1:\n\t"
                   "mov r3, sp\n\t"
                   "ldr r2, [r0, #36]\n\t"
                   DWN_WIDEN(0) DWN_WIDEN(1) DWN_WIDEN(2)
                   "ldr r12, [r0, #24]\n\t"
                   "ldr r1, [r0, #28]\n\t"
                   "ldr lr, [r0, #32]\n\t"
                   "str r12, [sp, #76]\n\t"
                   DWN_PAIR(0) DWN_PAIR(1) DWN_PAIR(2) DWN_PAIR(3)
                   NARROW3_NEXT("72")
                   "add sp, sp, #72\n\t"
                   "pop {r0, r1, r3-r11, pc}\n\t");
}

/* Output row oy of a node row_quads3 runs (3 rows of one quad, steps that fit), into out,
 * when it has 8 channels and the whole int8 range: the pixels whose windows lie inside the
 * input in runs of triples, the others (copied by quads_window, the zero point outside)
 * one triple at a time; the last 1 or 2 pixels of the row as a triple repeating the last,
 * into a copy.  Returns 0 for other nodes (row_quads3 runs them). */
static __attribute__((noinline)) int32_t dw_narrow_row(const dw_job_t *job,
                                                       const int8_t *image, int32_t oy,
                                                       int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  const int32_t y0 = oy * p->stride_h - p->pad_h, width = p->output_w, sx = p->stride_w;
  const int32_t rows_inside = y0 >= 0 && y0 + 3 <= p->input_h;
  int32_t steps[32], patches[3][3], last[6], c, ox = 0, i, row;
  dw_narrow_t k;
  if (p->output_c != 8 || p->act_min != -128 || p->act_max != 127) return 0;
  for (c = 0; c < 8; ++c) { /* dw_step_t's values, per channel pair */
    int32_t *t = steps + 8 * (c >> 1) + (c & 1);
    const int32_t right = -job->requant.shifts[c];
    t[0] = job->bias != NULL ? job->bias[c] : 0;
    t[2] = job->requant.multipliers[c];
    t[4] = (INT32_C(1) << (right - 1)) + p->output_offset * (INT32_C(1) << right);
    t[6] = right;
  }
  k.weights = job->quads + 5;
  k.steps = steps;
  k.offsets = (int32_t)(((uint32_t)p->input_offset & 0xffffu) * 0x10001u);
  k.advance = 3 * sx;
  while (ox < width) {
    const int32_t x0 = ox * sx - p->pad_w;
    int32_t inside = 0;
    if (rows_inside && x0 >= 0 && x0 + 4 <= p->input_w) {
      inside = (p->input_w - 4 - x0) / sx + 1;
      if (inside > width - ox) inside = width - ox;
    }
    k.out = out + 8 * ox;
    if (inside >= 3) {
      k.count = inside / 3;
      for (i = 0; i < 3; ++i) {
        k.rows[i] = image + y0 * p->input_w + x0 + i * sx;
        k.line[i] = p->input_w;
      }
      ox += 3 * k.count; /* before the call, which counts k.count down */
      dw_narrow_quads3(&k);
      continue;
    }
    k.count = 1;
    for (i = 0; i < 3; ++i) { /* past the row's end: its last pixel again */
      const int32_t x = ox + i < width ? ox + i : width - 1;
      k.rows[i] = quads_window(job, image, oy, x, (int8_t *)patches[i], &row);
      k.line[i] = row;
    }
    if (width - ox < 3) k.out = (int8_t *)last;
    dw_narrow_quads3(&k);
    for (i = 0; k.out == (int8_t *)last && i < 8 * (width - ox); ++i) {
      out[8 * ox + i] = ((const int8_t *)last)[i];
    }
    ox += 3;
  }
  return 1;
}

#else
static int32_t dw_narrow_row(const dw_job_t *job, const int8_t *image, int32_t oy,
                             int8_t *out) {
  (void)job;
  (void)image;
  (void)oy;
  (void)out;
  return 0;
}
#endif /* CMSIS_DSP && !CMSIS_MVE */
#endif /* TFLM_CMSIS_DEPTHWISE_NARROW_H */
