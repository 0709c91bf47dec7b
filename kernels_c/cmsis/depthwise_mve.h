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
 * into left and right once per block), bytes scattered to their channels.
 *
 * A pixel whose window leaves the input, or a block of fewer than 16 channels, is first
 * copied into a 3x3x16 window on the stack, the outside taps holding the input zero point
 * (which adds zp * w + input_offset * w = 0 to the folded sum, as TFLM's skipped taps do).
 * With 8 channels and stride 1, two neighbouring interior pixels are one pass (16 input
 * bytes are both pixels' channels at every tap; the block's lanes repeat channels 0..7).
 *
 * Loops: per block of channels, per pixel, so it runs only when the output does not start
 * inside the input (tflm_starts_inside walks pixel by pixel); the caller checks the rest
 * (dw_mve_fits).  Integer sums are exact, so the result is the reference's.
 * Written for tflm-gen from the MVE intrinsic reference; no code of Arm's CMSIS-NN. */
#ifndef TFLM_CMSIS_DEPTHWISE_MVE_H
#define TFLM_CMSIS_DEPTHWISE_MVE_H

#include <stdint.h>

#include "cmsis_simd.h"
#include "conv_common.h"
#include "tflm_quant.h"

#if defined(CMSIS_MVE)

/* One block of channels, in the lane order of the accumulators (dw_mve_lane). */
typedef struct {
  int8_t w[9][16];     /* taps row-major, lane j = channel chan(j) (0 past the block) */
  int32_t folded[16];  /* bias + input_offset * sum(w), per accumulator lane */
  int32_t mult[16];    /* Q31 multipliers */
  int32_t left[16];    /* max(shift, 0) */
  int32_t right[16];   /* min(shift, 0): minus the right shift */
  mve_pred16_t store[4]; /* the accumulator lanes of the block's own channels (c < count) */
} dw_mve_block_t;

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
 * pixels per pass, count 8). */
static void dw_mve_setup(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                         const int32_t *bias, const int8_t *filter, int32_t c, int32_t count,
                         int32_t repeat, dw_mve_block_t *b) {
  const int32_t lanes = repeat ? 16 : count;
  int32_t i, k;
  for (k = 0; k < 9; ++k) {
    for (i = 0; i < 16; ++i) {
      b->w[k][i] = i < lanes ? filter[k * p->output_c + c + (i % count)] : 0;
    }
  }
  for (i = 0; i < 16; ++i) {
    const int32_t j = dw_mve_order[i], ch = c + (j < lanes ? j % count : 0);
    int32_t sum = 0;
    for (k = 0; k < 9; ++k) sum += b->w[k][j];
    b->folded[i] = tflm_add_wrap(bias != NULL ? bias[ch] : 0,
                                 (int32_t)((uint32_t)p->input_offset * (uint32_t)sum));
    b->mult[i] = requant->multipliers[ch];
    b->left[i] = requant->shifts[ch] > 0 ? requant->shifts[ch] : 0;
    b->right[i] = requant->shifts[ch] < 0 ? requant->shifts[ch] : 0;
  }
  for (i = 0; i < 4; ++i) {
    b->store[i] = vcmpcsq_u32(vdupq_n_u32((uint32_t)count - 1u), vldrbq_u32(dw_mve_order + 4 * i));
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

/* Two taps' products added in int16 (exact, see above), widened into the accumulators. */
#define DW_MVE_PAIR(xa, wa, xb, wb)                                                        \
  do {                                                                                     \
    const int8x16_t x0_ = vldrbq_s8(xa), w0_ = vldrbq_s8(wa);                              \
    const int8x16_t x1_ = vldrbq_s8(xb), w1_ = vldrbq_s8(wb);                              \
    const int16x8_t e_ = vaddq_s16(vmullbq_int_s8(x0_, w0_), vmullbq_int_s8(x1_, w1_));    \
    const int16x8_t o_ = vaddq_s16(vmulltq_int_s8(x0_, w0_), vmulltq_int_s8(x1_, w1_));    \
    a0 = vaddq_s32(a0, vmovlbq_s16(e_));                                                   \
    a1 = vaddq_s32(a1, vmovltq_s16(e_));                                                   \
    a2 = vaddq_s32(a2, vmovlbq_s16(o_));                                                   \
    a3 = vaddq_s32(a3, vmovltq_s16(o_));                                                   \
  } while (0)

/* One pass: the window's taps at in + ky * row + kx * tap, 16 lanes, into out (all 16 bytes
 * when `whole`, else the block's count). */
static void dw_mve_pass(const int8_t *in, int32_t tap, int32_t row, const dw_mve_block_t *b,
                        const tflm_conv_params_t *p, int32_t whole, int8_t *out) {
  const int8_t *r1 = in + row, *r2 = r1 + row;
  const uint32x4_t at = vidupq_n_u32(0u, 4);
  int32x4_t a0 = vldrwq_s32(b->folded), a1 = vldrwq_s32(b->folded + 4);
  int32x4_t a2 = vldrwq_s32(b->folded + 8), a3 = vldrwq_s32(b->folded + 12);
  const int8x16_t x8 = vldrbq_s8(r2 + 2 * tap), w8 = vldrbq_s8(b->w[8]);
  DW_MVE_PAIR(in, b->w[0], in + tap, b->w[1]);
  DW_MVE_PAIR(in + 2 * tap, b->w[2], r1, b->w[3]);
  DW_MVE_PAIR(r1 + tap, b->w[4], r1 + 2 * tap, b->w[5]);
  DW_MVE_PAIR(r2, b->w[6], r2 + tap, b->w[7]);
  {
    const int16x8_t e = vmullbq_int_s8(x8, w8), o = vmulltq_int_s8(x8, w8);
    a0 = vaddq_s32(a0, vmovlbq_s16(e));
    a1 = vaddq_s32(a1, vmovltq_s16(e));
    a2 = vaddq_s32(a2, vmovlbq_s16(o));
    a3 = vaddq_s32(a3, vmovltq_s16(o));
  }
  a0 = dw_mve_requant(a0, b, 0, p);
  a1 = dw_mve_requant(a1, b, 4, p);
  a2 = dw_mve_requant(a2, b, 8, p);
  a3 = dw_mve_requant(a3, b, 12, p);
  if (whole) {
    vstrbq_scatter_offset_s32(out, at, a0);
    vstrbq_scatter_offset_s32(out + 2, at, a1);
    vstrbq_scatter_offset_s32(out + 1, at, a2);
    vstrbq_scatter_offset_s32(out + 3, at, a3);
  } else {
    vstrbq_scatter_offset_p_s32(out, at, a0, b->store[0]);
    vstrbq_scatter_offset_p_s32(out + 2, at, a1, b->store[1]);
    vstrbq_scatter_offset_p_s32(out + 1, at, a2, b->store[2]);
    vstrbq_scatter_offset_p_s32(out + 3, at, a3, b->store[3]);
  }
}

/* Output pixel (oy, ox), channels c .. c + count - 1, through the window copied with the
 * zero point in its outside taps (16 bytes a tap, lanes past count read as 0). */
static void dw_mve_copied(const tflm_conv_params_t *p, const int8_t *image, int32_t oy,
                          int32_t ox, int32_t c, int32_t count, const dw_mve_block_t *b,
                          int8_t *out) {
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
        vstrbq_s8(dst, vldrbq_z_s8(image + (y * p->input_w + x) * p->input_c + c, lanes));
      }
    }
  }
  dw_mve_pass(window, 16, 48, b, p, count == 16, out);
}

/* First output column whose window starts inside the input, one past the last ending in it. */
static void dw_mve_columns(const tflm_conv_params_t *p, int32_t *first, int32_t *end) {
  *first = (p->pad_w + p->stride_w - 1) / p->stride_w;
  *end = p->input_w + p->pad_w >= 3 ? (p->input_w + p->pad_w - 3) / p->stride_w + 1 : 0;
  if (*end > p->output_w) *end = p->output_w;
  if (*end < *first) *end = *first;
}

/* Output row oy of one block: interior pixels read in place (two per pass when `repeat`),
 * the others copied. */
static void dw_mve_row(const tflm_conv_params_t *p, const int8_t *image, int32_t oy, int32_t c,
                       int32_t count, int32_t repeat, const dw_mve_block_t *b, int8_t *out) {
  const int32_t y0 = oy * p->stride_h - p->pad_h, C = p->input_c, row = p->input_w * C;
  const int32_t per = repeat ? 2 : 1, step = per * p->stride_w * C;
  int32_t first = 0, end = 0, ox = 0;
  const int8_t *in;
  if (y0 >= 0 && y0 + 3 <= p->input_h && (count == 16 || repeat)) {
    dw_mve_columns(p, &first, &end);
  }
  for (; ox < first; ++ox) dw_mve_copied(p, image, oy, ox, c, count, b, out + ox * C + c);
  if (end > first) {
    in = image + y0 * row + (first * p->stride_w - p->pad_w) * C + c;
    for (; ox + per <= end; ox += per, in += step) {
      dw_mve_pass(in, C, row, b, p, 1, out + ox * C + c);
    }
  }
  for (; ox < p->output_w; ++ox) dw_mve_copied(p, image, oy, ox, c, count, b, out + ox * C + c);
}

/* The node (dw_mve_fits), output not starting inside the input. */
static void dw_mve_run(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                       const int32_t *bias, const int8_t *input, const int8_t *filter,
                       int8_t *output) {
  const int32_t image = p->input_h * p->input_w * p->input_c;
  const int32_t pixels = p->output_h * p->output_w * p->output_c;
  const int32_t repeat = p->output_c == 8 && p->stride_w == 1;
  dw_mve_block_t block;
  int32_t n, c, oy;
  for (c = 0; c < p->output_c; c += 16) {
    const int32_t count = p->output_c - c < 16 ? p->output_c - c : 16;
    dw_mve_setup(p, requant, bias, filter, c, count, repeat, &block);
    for (n = 0; n < p->batches; ++n) {
      for (oy = 0; oy < p->output_h; ++oy) {
        dw_mve_row(p, input + n * image, oy, c, count, repeat, &block,
                   output + n * pixels + oy * p->output_w * p->output_c);
      }
    }
  }
}

#endif /* CMSIS_MVE */
#endif /* TFLM_CMSIS_DEPTHWISE_MVE_H */
