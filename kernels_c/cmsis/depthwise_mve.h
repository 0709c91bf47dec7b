/* DEPTHWISE_CONV_2D int8, 3x3, depth multiplier 1, no dilation, on Helium (MVE, Cortex-M55):
 * 16 channels per pass in int8 lanes, raw input bytes, the input offset folded into the sum's
 * start (bias + input_offset * sum(w), computed per block of 16 channels at the start of each
 * invoke, on the stack: no layout record, no arena).
 *
 * Two taps at a time: VMULLB / VMULLT.S8 give the exact int16 products of the even / odd
 * channels, and the two taps' products are added in int16, exact because every weight is in
 * [-127, 127] (checked first; TFLM's int8 filters are symmetric): |x w| <= 128 * 127, two of
 * them <= 32,512.  Then VMOVLB / VMOVLT widen into 4 int32 accumulators, channels
 * {0,4,8,12}, {2,6,10,14}, {1,5,9,13}, {3,7,11,15}: 18 instructions per 32 MACs, where int16
 * lanes with the offset added take 28.  Requantisation on the 4 accumulators with the
 * per-channel parameters in that lane order (cmsis_mve_mul_by_qm's steps, the shift split
 * into left and right once per block), narrowed back into channel order (DW_MVE_NARROW_STORE).
 *
 * A pixel whose window leaves the input, or a block of fewer than 16 channels, is first
 * copied into a 3x3x16 window on the stack, the outside taps holding the input zero point
 * (which adds zp * w + input_offset * w = 0 to the folded sum, as TFLM's skipped taps do);
 * a row with many such pixels (dw_mve_band: a small map's) copies its 3 input rows once into
 * a padded band instead.
 * With 8 channels and stride 1, two neighbouring interior pixels are one pass (16 input
 * bytes are both pixels' channels at every tap; the block's lanes repeat channels 0..7).
 *
 * Loops: per block of channels, per pixel (dw_mve_run says why that is safe with the
 * planner's overlap); the caller checks the rest (dw_mve_fits).  Integer sums are exact, so
 * the result is the reference's.
 * Written for tflm-gen from the MVE intrinsic reference; no code of Arm's CMSIS-NN. */
#ifndef TFLM_CMSIS_DEPTHWISE_MVE_H
#define TFLM_CMSIS_DEPTHWISE_MVE_H

#include <stddef.h>
#include <stdint.h>

#include "cmsis_simd.h"
#include "conv_common.h"
#include "tflm_quant.h"

/* Assembly with 11 register operands: an unoptimised build (frame pointer kept, -O0) cannot
 * give them, and runs depthwise_conv.c's own MVE loops. */
#if defined(CMSIS_MVE) && defined(__OPTIMIZE__)
#define DW_MVE_ASM 1

/* One block of channels, in the lane order of the accumulators (dw_mve_lane). */
typedef struct {
  int8_t w[9][16];     /* taps row-major, lane j = channel chan(j) (0 past the block) */
  int32_t folded[16];  /* bias + input_offset * sum(w), per accumulator lane */
  int32_t mult[16];    /* Q31 multipliers */
  int32_t left[16];    /* max(shift, 0) */
  int32_t right[16];   /* min(shift, 0): minus the right shift */
  int32_t left_any;    /* 1 when a channel of the block shifts left */
} dw_mve_block_t;

/* The assembly (dw_mve_pass) reads the fields at these byte offsets. */
typedef char dw_mve_offsets_agree[offsetof(dw_mve_block_t, folded) == 144 &&
                                          offsetof(dw_mve_block_t, left) == 272 ? 1 : -1];

/* The channel (0..15) of lane i % 4 of accumulator i / 4 (see above). */
static const uint8_t dw_mve_order[16] = {0, 4, 8, 12, 2, 6, 10, 14, 1, 5, 9, 13, 3, 7, 11, 15};

/* 1 when the node takes this path: 3x3, multiplier 1, no dilation, shifts in [-31, 31]
 * (cmsis_mve_mul_by_qm's range), every weight above -128 (the int16 pair sums). */
static int32_t dw_mve_fits(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                           const int8_t *filter) {
  const int32_t bytes = 9 * p->output_c;
  int32_t i, low = 0;
  if (p->filter_h != 3 || p->filter_w != 3 || p->depth_multiplier != 1 ||
      p->dilation_h != 1 || p->dilation_w != 1) {
    return 0;
  }
  for (i = 0; i < p->output_c; ++i) {
    if (requant->shifts[i] < -31 || requant->shifts[i] > 31) return 0;
  }
  for (i = 0; i < bytes; i += 16) {
    low |= vminvq_s8(0, vldrbq_z_s8(filter + i, vctp8q((uint32_t)(bytes - i)))) == -128;
  }
  return !low;
}

/* Block of channels c .. c + count - 1; `repeat`: lanes 8..15 repeat channels 0..7 (two
 * pixels per pass, count 8).  The sums of the weights widened in the accumulators' lane
 * order as the pass does, the per-channel parameters gathered in that order. */
static void dw_mve_setup(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                         const int32_t *bias, const int8_t *filter, int32_t c, int32_t count,
                         int32_t repeat, dw_mve_block_t *b) {
  const mve_pred16_t lanes = vctp8q((uint32_t)count);
  const uint8x16_t again = vandq_u8(vidupq_n_u8(0u, 1), vdupq_n_u8(7u));
  const int32x4_t zero = vdupq_n_s32(0);
  int16x8_t even = vdupq_n_s16(0), odd = even;
  int32x4_t sums[4];
  int32_t i, k;
  for (k = 0; k < 9; ++k) {
    const int8_t *row = filter + k * p->output_c + c;
    const int8x16_t w = repeat ? vldrbq_gather_offset_s8(row, again) : vldrbq_z_s8(row, lanes);
    vstrbq_s8(b->w[k], w);
    even = vaddq_s16(even, vmovlbq_s8(w));
    odd = vaddq_s16(odd, vmovltq_s8(w));
  }
  sums[0] = vmovlbq_s16(even);
  sums[1] = vmovltq_s16(even);
  sums[2] = vmovlbq_s16(odd);
  sums[3] = vmovltq_s16(odd);
  b->left_any = 0;
  for (i = 0; i < 4; ++i) {
    /* the lanes' channels (repeated, or a valid one past count: their bytes are not kept) */
    uint32x4_t ch = vldrbq_u32(dw_mve_order + 4 * i);
    ch = repeat ? vandq_u32(ch, vdupq_n_u32(7u)) : vminq_u32(ch, vdupq_n_u32((uint32_t)count - 1u));
    {
      const int32x4_t start = bias != NULL ? vldrwq_gather_shifted_offset_s32(bias + c, ch) : zero;
      const int32x4_t shift = vldrwq_gather_shifted_offset_s32(requant->shifts + c, ch);
      vstrwq_s32(b->folded + 4 * i, vmlaq_n_s32(start, sums[i], p->input_offset));
      vstrwq_s32(b->mult + 4 * i, vldrwq_gather_shifted_offset_s32(requant->multipliers + c, ch));
      vstrwq_s32(b->left + 4 * i, vmaxq_s32(shift, zero));
      b->left_any |= vmaxvq_s32(0, shift) > 0;
      vstrwq_s32(b->right + 4 * i, vminq_s32(shift, zero));
    }
  }
}

/* Accumulator a (lanes i .. i + 3 of the block) requantised: cmsis_mve_mul_by_qm with the
 * block's split shifts, plus the output offset, clamped. */
static inline int32x4_t dw_mve_requant(int32x4_t a, const dw_mve_block_t *b, int32_t i,
                                       const tflm_conv_params_t *p) {
  const int32x4_t right = vldrwq_s32(b->right + i);
  int32x4_t high = vqrdmulhq_s32(vshlq_s32(a, vldrwq_s32(b->left + i)), vldrwq_s32(b->mult + i));
  high = vqaddq_s32(high, vshrq_n_s32(vandq_s32(high, right), 31));
  high = vaddq_n_s32(vrshlq_s32(high, right), p->output_offset);
  return vminq_s32(vmaxq_s32(high, vdupq_n_s32(p->act_min)), vdupq_n_s32(p->act_max));
}

/* Two taps' products added in int16 (exact, see above) in q6 (even channels) and q7 (odd),
 * widened into the accumulators q0..q3; the taps at [A] and [B], their weights the next two
 * rows at %[w] (the second row read twice: its first copy becomes the even products). */
#define DW_MVE_WIDEN                                                                       \
  "vmovlb.s16 q4, q6\n\t"                                                                  \
  "vadd.i32 q0, q0, q4\n\t"                                                                \
  "vmovlt.s16 q4, q6\n\t"                                                                  \
  "vadd.i32 q1, q1, q4\n\t"                                                                \
  "vmovlb.s16 q4, q7\n\t"                                                                  \
  "vadd.i32 q2, q2, q4\n\t"                                                                \
  "vmovlt.s16 q4, q7\n\t"                                                                  \
  "vadd.i32 q3, q3, q4\n\t"
#define DW_MVE_FIRST(A)                                                                    \
  "vldrb.8 q4, [" A "]\n\t"                                                                \
  "vldrb.8 q5, [%[w]], #16\n\t"                                                            \
  "vmullb.s8 q6, q4, q5\n\t"                                                               \
  "vmullt.s8 q7, q4, q5\n\t"
#define DW_MVE_SECOND(B)                                                                   \
  "vldrb.8 q4, [" B "]\n\t"                                                                \
  "vldrb.8 q5, [%[w]]\n\t"                                                                 \
  "vmullb.s8 q5, q4, q5\n\t"                                                               \
  "vadd.i16 q6, q6, q5\n\t"                                                                \
  "vldrb.8 q5, [%[w]], #16\n\t"                                                            \
  "vmullt.s8 q4, q4, q5\n\t"                                                               \
  "vadd.i16 q7, q7, q4\n\t"
/* The left shift of accumulator Q, left out when no channel of the block shifts left
 * (most: an effective scale below 1). */
#define DW_MVE_LEFT(Q, I)                                                                  \
  "vldrw.32 q5, [%[b], #" I "]\n\t"                                                        \
  "vshl.s32 " Q ", " Q ", q5\n\t"
#define DW_MVE_NO_LEFT(Q, I) ""
/* Accumulator Q requantised in place (cmsis_mve_mul_by_qm with the split shift, plus the
 * offset); the parameters at %[b] + I (left), + I - 64 (multiplier), + I + 64 (right). */
#define DW_MVE_REQUANT(Q, I, LEFT)                                                         \
  LEFT(Q, I)                                                                               \
  "vldrw.32 q4, [%[b], #" I " - 64]\n\t"                                                   \
  "vqrdmulh.s32 " Q ", " Q ", q4\n\t"                                                      \
  "vldrw.32 q5, [%[b], #" I " + 64]\n\t"                                                   \
  "vand q4, " Q ", q5\n\t"                                                                 \
  "vshr.s32 q4, q4, #31\n\t"                                                               \
  "vqadd.s32 " Q ", " Q ", q4\n\t"                                                         \
  "vrshl.s32 " Q ", " Q ", q5\n\t"                                                         \
  "vadd.i32 " Q ", " Q ", %[offset]\n\t"
/* The 4 requantised accumulators narrowed with saturation into the 16 channels in order:
 * int16 lanes of q4 {0, 2, .., 14} (q0 bottom, q1 top), of q5 {1, 3, .., 15}, then bytes
 * q4 bottom, q5 top.  Saturating to int8 first does not change the clamp to [lo, hi]
 * (inside int8), now one VMAX and one VMIN on 16 lanes, and one 16-byte store (the
 * scatter of 4 bytes per accumulator took 4 instructions each). */
#define DW_MVE_NARROW_STORE                                                                \
  "vqmovnb.s32 q4, q0\n\t"                                                                 \
  "vqmovnt.s32 q4, q1\n\t"                                                                 \
  "vqmovnb.s32 q5, q2\n\t"                                                                 \
  "vqmovnt.s32 q5, q3\n\t"                                                                 \
  "vqmovnb.s16 q6, q4\n\t"                                                                 \
  "vqmovnt.s16 q6, q5\n\t"                                                                 \
  "vdup.8 q7, %[lo]\n\t"                                                                   \
  "vmax.s8 q6, q6, q7\n\t"                                                                 \
  "vdup.8 q7, %[hi]\n\t"                                                                   \
  "vmin.s8 q6, q6, q7\n\t"                                                                 \
  "vstrb.8 q6, [%[out]]\n\t"

/* The instructions of dw_mve_pass (the weights read row by row from %[b]). */
#define DW_MVE_PASS(LEFT)                                                                   \
  "mov %[w], %[b]\n\t"                                                                      \
  "vldrw.32 q0, [%[b], #144]\n\t"                                                           \
  "vldrw.32 q1, [%[b], #160]\n\t"                                                           \
  "vldrw.32 q2, [%[b], #176]\n\t"                                                           \
  "vldrw.32 q3, [%[b], #192]\n\t"                                                           \
  "add %[x], %[in], %[tap]\n\t"                                                             \
  DW_MVE_FIRST("%[in]")                                                                     \
  DW_MVE_SECOND("%[x]")                                                                     \
  DW_MVE_WIDEN                                                                              \
  "add %[x], %[x], %[tap]\n\t"                                                              \
  DW_MVE_FIRST("%[x]")                                                                      \
  DW_MVE_SECOND("%[r1]")                                                                    \
  DW_MVE_WIDEN                                                                              \
  "add %[x], %[r1], %[tap]\n\t"                                                             \
  "add %[r1], %[x], %[tap]\n\t"                                                             \
  DW_MVE_FIRST("%[x]")                                                                      \
  DW_MVE_SECOND("%[r1]")                                                                    \
  DW_MVE_WIDEN                                                                              \
  "add %[x], %[r2], %[tap]\n\t"                                                             \
  DW_MVE_FIRST("%[r2]")                                                                     \
  DW_MVE_SECOND("%[x]")                                                                     \
  DW_MVE_WIDEN                                                                              \
  "add %[x], %[x], %[tap]\n\t"                                                              \
  DW_MVE_FIRST("%[x]")                                                                      \
  DW_MVE_WIDEN                                                                              \
  DW_MVE_REQUANT("q0", "272", LEFT)                                                         \
  DW_MVE_REQUANT("q1", "288", LEFT)                                                         \
  DW_MVE_REQUANT("q2", "304", LEFT)                                                         \
  DW_MVE_REQUANT("q3", "320", LEFT)                                                         \
  DW_MVE_NARROW_STORE

#define DW_MVE_PASS_OPERANDS                                                                \
  : [w] "=&r"(w), [x] "=&r"(x), [r1] "+r"(r1), [out] "+r"(out)                              \
  : [in] "r"(in), [r2] "r"(r2), [tap] "r"(tap), [b] "r"(b), [offset] "r"(p->output_offset), \
    [lo] "r"(lo), [hi] "r"(hi)                                                              \
  : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "memory"

/* One pass: the window's taps at in + ky * row + kx * tap, 16 lanes, into out[0..15] in
 * channel order.  Assembly: from intrinsics gcc hoists every load and spills. */
static void dw_mve_pass(const int8_t *in, int32_t tap, int32_t row, const dw_mve_block_t *b,
                        const tflm_conv_params_t *p, int8_t *out) {
  const int8_t *r1 = in + row, *r2 = r1 + row, *x, *w;
  const int32_t lo = p->act_min, hi = p->act_max;
  if (b->left_any) {
    __asm__ volatile(DW_MVE_PASS(DW_MVE_LEFT) DW_MVE_PASS_OPERANDS);
  } else {
    __asm__ volatile(DW_MVE_PASS(DW_MVE_NO_LEFT) DW_MVE_PASS_OPERANDS);
  }
}

/* Output pixel (oy, ox), channels c .. c + count - 1, through the window copied with the
 * zero point in its outside taps (16 bytes a tap, lanes past count read as 0). */
static void dw_mve_copied(const tflm_conv_params_t *p, const int8_t *image, int32_t oy,
                          int32_t ox, int32_t count, const dw_mve_block_t *b, int8_t *out) {
  const int32_t y0 = oy * p->stride_h - p->pad_h, x0 = ox * p->stride_w - p->pad_w;
  const mve_pred16_t lanes = vctp8q((uint32_t)count);
  const int8x16_t zero_point = vdupq_n_s8((int8_t)-p->input_offset);
  int8_t window[9 * 16];
  int32_t ky, kx;
  for (ky = 0; ky < 3; ++ky) {
    for (kx = 0; kx < 3; ++kx) {
      const int32_t y = y0 + ky, x = x0 + kx;
      int8_t *dst = window + 16 * (3 * ky + kx);
      if (y < 0 || y >= p->input_h || x < 0 || x >= p->input_w) {
        vstrbq_s8(dst, zero_point);
      } else {
        vstrbq_s8(dst, vldrbq_z_s8(image + (y * p->input_w + x) * p->input_c, lanes));
      }
    }
  }
  if (count == 16) {
    dw_mve_pass(window, 16, 48, b, p, out);
    return;
  }
  dw_mve_pass(window, 16, 48, b, p, window); /* every tap is read before the stores */
  vstrbq_p_s8(out, vldrbq_s8(window), lanes);
}

/* First output column whose window starts inside the input, one past the last ending in it. */
static void dw_mve_columns(const tflm_conv_params_t *p, int32_t *first, int32_t *end) {
  *first = (p->pad_w + p->stride_w - 1) / p->stride_w;
  *end = p->input_w + p->pad_w >= 3 ? (p->input_w + p->pad_w - 3) / p->stride_w + 1 : 0;
  if (*end > p->output_w) *end = p->output_w;
  if (*end < *first) *end = *first;
}

/* Bytes of the padded rows of dw_mve_band: 3 rows of at most 32 taps of 16 channels. */
#define DW_MVE_BAND_BYTES (3 * 32 * 16)

/* Output row oy of a full block (16 channels) through its 3 input rows copied once, with
 * the zero point outside the input, into one padded band: every pixel then runs in place
 * in the band, where dw_mve_copied copies 9 taps per border pixel (most pixels of a 6x6
 * map).  Every read precedes the row's stores: a value the reference reads after one of
 * them is one that store does not overwrite (the planner's overlap rule, dw_mve_run).
 * Returns 0 (nothing written) when the row is wider than the band. */
static int32_t dw_mve_band(const tflm_conv_params_t *p, const int8_t *image, int32_t oy,
                           const dw_mve_block_t *b, int8_t *out) {
  const int32_t span = (p->output_w - 1) * p->stride_w + 3, C = p->input_c;
  const int32_t y0 = oy * p->stride_h - p->pad_h, x0 = -p->pad_w;
  const int8x16_t zero_point = vdupq_n_s8((int8_t)-p->input_offset);
  int8_t band[DW_MVE_BAND_BYTES];
  int8_t *dst = band;
  int32_t ky, j, ox;
  if (3 * span * 16 > DW_MVE_BAND_BYTES) return 0;
  for (ky = 0; ky < 3; ++ky) {
    const int32_t y = y0 + ky;
    int8_t *row_end = dst + span * 16;
    const int8_t *src;
    if (y < 0 || y >= p->input_h) {
      for (; dst != row_end; dst += 16) vstrbq_s8(dst, zero_point);
      continue;
    }
    src = image + y * p->input_w * C;
    for (j = x0; j < 0; ++j, dst += 16) vstrbq_s8(dst, zero_point);
    for (; j < x0 + span && j < p->input_w; ++j, dst += 16) {
      vstrbq_s8(dst, vldrbq_s8(src + j * C));
    }
    for (; dst != row_end; dst += 16) vstrbq_s8(dst, zero_point);
  }
  for (ox = 0; ox < p->output_w; ++ox) {
    dw_mve_pass(band + ox * p->stride_w * 16, 16, span * 16, b, p, out + ox * C);
  }
  return 1;
}

/* Output row oy of one block: interior pixels read in place (two per pass when `repeat`),
 * the others copied; last pixel first when `backward`. */
static void dw_mve_row(const tflm_conv_params_t *p, const int8_t *image, int32_t oy, int32_t c,
                       int32_t count, int32_t repeat, int32_t backward,
                       const dw_mve_block_t *b, int8_t *out) {
  const int32_t y0 = oy * p->stride_h - p->pad_h, C = p->input_c, row = p->input_w * C;
  const int32_t per = repeat ? 2 : 1;
  int32_t first = 0, end = 0, ox;
  if (y0 >= 0 && y0 + 3 <= p->input_h && (count == 16 || repeat)) {
    dw_mve_columns(p, &first, &end);
  }
  out += c;
  image += c;
  /* the band copies 3 rows of taps, dw_mve_copied 9 taps per border pixel */
  if (count == 16 && 4 * (first + p->output_w - end) >= (p->output_w - 1) * p->stride_w + 3 &&
      dw_mve_band(p, image, oy, b, out)) {
    return;
  }
  if (!backward) {
    for (ox = 0; ox < first; ++ox) dw_mve_copied(p, image, oy, ox, count, b, out + ox * C);
    for (; ox + per <= end; ox += per) {
      dw_mve_pass(image + y0 * row + (ox * p->stride_w - p->pad_w) * C, C, row, b, p,
                  out + ox * C);
    }
    for (; ox < p->output_w; ++ox) dw_mve_copied(p, image, oy, ox, count, b, out + ox * C);
    return;
  }
  for (ox = p->output_w - 1; ox >= end; --ox) {
    dw_mve_copied(p, image, oy, ox, count, b, out + ox * C);
  }
  for (ox = end - per; ox >= first; ox -= per) {
    dw_mve_pass(image + y0 * row + (ox * p->stride_w - p->pad_w) * C, C, row, b, p,
                out + ox * C);
  }
  for (ox += per - 1; ox >= 0; --ox) dw_mve_copied(p, image, oy, ox, count, b, out + ox * C);
}

/* The node (dw_mve_fits).  When the output overlaps the input (the planner's overlaps:
 * tflm_gen/overlap.py, tflm_starts_inside) a whole number of pixels away, each block walks
 * its pixels in the reference's order (last first when the output starts inside the input):
 * a block's stores land on its own channels of input pixels no later pass of the block
 * reads (the reference walk's reason, channel by channel), and on no channel another block
 * reads.  Returns 0 (nothing written) when the overlap is otherwise. */
static int32_t dw_mve_run(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                          const int32_t *bias, const int8_t *input, const int8_t *filter,
                          int8_t *output) {
  const int32_t image = p->input_h * p->input_w * p->input_c;
  const int32_t pixels = p->output_h * p->output_w * p->output_c;
  const int32_t repeat = p->output_c == 8 && p->stride_w == 1;
  const int32_t backward = tflm_starts_inside(input, (size_t)p->batches * (size_t)image, output);
  dw_mve_block_t block;
  int32_t n, c, oy;
  const int32_t overlap = output < input + (size_t)p->batches * (size_t)image &&
                          input < output + (size_t)p->batches * (size_t)pixels;
  if (overlap && (p->batches != 1 || (output - input) % p->input_c != 0)) return 0;
  for (c = 0; c < p->output_c; c += 16) {
    const int32_t count = p->output_c - c < 16 ? p->output_c - c : 16;
    dw_mve_setup(p, requant, bias, filter, c, count, repeat, &block);
    for (n = 0; n < p->batches; ++n) {
      for (oy = 0; oy < p->output_h; ++oy) {
        const int32_t y = backward ? p->output_h - 1 - oy : oy;
        dw_mve_row(p, input + n * image, y, c, count, repeat, backward, &block,
                   output + n * pixels + y * p->output_w * p->output_c);
      }
    }
  }
  return 1;
}

#endif /* DW_MVE_ASM */
#endif /* TFLM_CMSIS_DEPTHWISE_MVE_H */
