/* tflm-op: DEPTHWISE_CONV_2D tflm_op_depthwise_conv_2d types: float32,int8,int16 litert: hybrid */
/* DEPTHWISE_CONV_2D for the cmsis tag: int8 in blocks of 4 output channels.
 *
 * 3x3 nodes of multiplier 1 with the offline layout the generator writes into the model
 * (tflm_gen/layout.py, DW_TAP_PAIRS, read through tflm_node_layout), on every core but MVE:
 * each block of 4 channels starts at its folded constant (bias + input_offset * sum(w),
 * doubled) and sums raw input bytes over all 9 taps, paired two taps of a column (rows 0
 * and 1) or of row 2 per SMLAD (PKHBT / PKHTB + SXTB16 make a channel's two taps one
 * halfword pair), then requantises with the record's per-channel steps, output offset
 * included (one SMMLAR and one shift), and stores the 4 bytes clamped in one word (or byte
 * by byte, unclamped, when the activation keeps the whole int8 range): 110 instructions,
 * 131 cycles (Cortex-M4 table) per 36 MACs in one assembly function (layout_blocks; plain C
 * on other cores, the host build's path).  Runs of stride 1 take two neighbouring pixels
 * per pass (layout_pairs): each column's pair of rows 0 and 1 is unpacked once for both
 * pixels and every weight and requantisation word read once, 197 instructions, 219 cycles
 * per 72 MACs unclamped; runs of stride 2 likewise (layout_pairs2, the two windows share
 * one column), about 20 instructions more.  Rows whose runs the node's shape fixes take
 * them from a plan set up once per call (plan_rows).  Its stride-1 rows inside the input
 * (unclamped, 5 pixels wide or more) take three pixels per pass (layout_triples: 5 columns
 * unpacked for 3 windows, each half's requantisation words read once for 3 pixels), 273
 * instructions, 307 cycles per 108 MACs (204.7 per 72), the row's first triple with its
 * column 0 outside, the last with its column 4 (or a right pair, or an inner and a right
 * pair, after them); 8 channels run their inner triples with the step an immediate
 * (unclamped_triples8, 294 cycles).  A border pixel (or pair) whose window has one row
 * and / or one column outside runs a variant that reads the zero point (one word on its
 * stack) for the outside taps, which adds exactly 0 to the folded sum, as TFLM's skipped
 * taps do; other border windows (inputs of 1 or 2 pixels) are first copied with the zero
 * point outside.  So every pixel sums the same 9 taps.
 *
 * Nodes of one input channel and a multiplier divisible by 4 (micro_speech's 10x8 filter of 8
 * channels, person_detect's first 3x3 layer) with their DW_ROW_QUADS record, on every core
 * but MVE: per pixel and block of 4 channels, each filter row's taps 4 at a time, the 4
 * input bytes widened once with the input offset added (SXTAB16, SXTAB16 ROR #8) and
 * multiplied by the record's int16 weight pairs of the 4 channels (8 SMLADs, the weights
 * read by LDRD), then requantised from the bias on like the other blocks (pixel_quads;
 * plain C on the host).  A window whose rows of round4(filter_w) bytes leave the input is
 * first copied (at most 256 bytes, on the stack) with the zero point outside, which adds
 * exactly 0, as TFLM's skipped taps do.
 *
 * Otherwise per output pixel the filter window is clipped to the input once (the
 * reference's skipped taps), then each block of 4 consecutive output channels sums over the
 * window's taps with its 4 accumulators (started at the bias) in registers, and is
 * requantised at once: with depth multiplier 1 the 4 channels read 4 input channels (one
 * word), with a multiplier divisible by 4 they share one input channel.  On MVE a 3x3 node of
 * multiplier 1 runs depthwise_mve.h instead (16 channels of int8 pair products per assembly
 * pass, blocks of channels outermost) unless a weight is -128 or the planner's overlap is not
 * a whole number of pixels.  Per instruction set
 * (cmsis_simd.h): MVE, for multiplier 1, 16 (or 8) channels per pass widened to int16 lanes,
 * offset added, with widening multiplies into int32 even / odd lanes, then
 * cmsis_mve_requantize (gathered per-channel parameters, scattered bytes), other multipliers
 * 4 int32 lanes per tap; DSP SXTB16 and SMLABB/SMLATT, pixels whose 3x3 window of
 * multiplier 1 lies inside the input found without clipping and all their channels summed
 * in one function, 9 taps unrolled; C four scalar MACs.  Other multipliers and the channel
 * tail use the scalar loop; float32 and int16 run the reference kernels
 * (depthwise_reference.c).  Integer sums are exact, so every order gives the reference's
 * result.  No scratch: a border pixel's window copy (at most 288 bytes) is on the stack. */
#include <stddef.h>
#include <stdint.h>

#include "cmsis_simd.h"
#include "conv_common.h"
#include "conv_hybrid.h"
#include "depthwise_mve.h"
#include "depthwise_reference.h"
#include "tflm_decode.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "weighted_common.h"

/* The clipped filter window of one output pixel, walked with pointer steps. */
typedef struct {
  const int8_t *input;   /* input pixel of the first tap, channel 0 */
  const int8_t *filter;  /* filter tap of the first tap, channel 0 */
  int32_t rows;          /* taps inside the input, vertically */
  int32_t cols;          /* and horizontally */
  int32_t input_step;    /* bytes between horizontal taps in the input */
  int32_t filter_step;   /* and in the filter (Cout) */
  int32_t input_skip;    /* from past the last tap of a row to the first of the next */
  int32_t filter_skip;
} dw_window_t;

/* Everything one int8 evaluation needs. */
typedef struct {
  const tflm_conv_params_t *p;
  tflm_requant_t requant;
  const int32_t *bias;  /* NULL when absent */
  int32_t fast;         /* CMSIS_REQUANT_* or 0 (cmsis_requant_mode) */
  int32_t square3;      /* 1: 3x3 filter, multiplier 1, no dilation (unrolled when inside) */
  int32_t shared3;      /* 1: 3x3 filter, multiplier a multiple of 4, no dilation */
  const int32_t *quads; /* the node's DW_ROW_QUADS record (tflm_gen/layout.py) when it agrees
                           with the node (one input channel, no dilation) and not MVE, else
                           NULL: every pixel is summed from it */
  const int32_t *pairs; /* the node's DW_TAP_PAIRS blocks (tflm_gen/layout.py) when square3
                           and not MVE, else NULL: interior pixels are summed from them */
} dw_job_t;

/* The kind of DEPTHWISE_CONV_2D layout record this kernel reads (tflm_gen/layout.py), the
 * words of one block of 4 channels in it (4 folded constants, 22 of weights, 12 of
 * requantisation), where its requantisation starts, the largest right shift it holds, and
 * the blocks of a border pixel copied at a time (on the stack). */
#define DW_TAP_PAIRS 55
#define DW_BLOCK_WORDS 38
#define DW_BLOCK_STEPS 26
#define DW_MAX_SHIFT 22
#define DW_CHUNK_BLOCKS 8

/* The kind of the record of a coded filter on DW_TAP_PAIRS' conditions (tflm_gen/layout.py):
 * kind and channels only; the kernel builds the DW_TAP_PAIRS blocks from the decoded
 * weights, the bias and its own requantisation. */
#define DW_CODED_TAP_STEPS 21

/* The kind of the one-input-channel DEPTHWISE_CONV_2D record (tflm_gen/layout.py) and the
 * most bytes of its padded window (filter_h * 4 * quads), copied on the stack at a border. */
#define DW_ROW_QUADS 4
#define DW_QUAD_BYTES 256

/* First tap index >= 0 and one past the last inside [0, size) for start + tap * step. */
static void clip(int32_t start, int32_t step, int32_t taps, int32_t size, int32_t *first,
                 int32_t *end) {
  int32_t lo = start < 0 ? (-start + step - 1) / step : 0;
  int32_t hi = size - start <= 0 ? 0 : (size - start + step - 1) / step;
  *first = lo;
  *end = hi < taps ? hi : taps;
}

static void window_of(const tflm_conv_params_t *p, const int8_t *image, const int8_t *filter,
                      int32_t oy, int32_t ox, dw_window_t *w) {
  const int32_t y0 = oy * p->stride_h - p->pad_h, x0 = ox * p->stride_w - p->pad_w;
  int32_t fy0 = 0, fy1 = p->filter_h, fx0 = 0, fx1 = p->filter_w;
  const int32_t row = p->input_w * p->input_c;
  const int32_t taps = p->input_c * p->depth_multiplier; /* the filter's tap stride */
  if (y0 < 0 || y0 + (fy1 - 1) * p->dilation_h >= p->input_h) {
    clip(y0, p->dilation_h, p->filter_h, p->input_h, &fy0, &fy1);
  }
  if (x0 < 0 || x0 + (fx1 - 1) * p->dilation_w >= p->input_w) {
    clip(x0, p->dilation_w, p->filter_w, p->input_w, &fx0, &fx1);
  }
  w->rows = fy1 > fy0 ? fy1 - fy0 : 0;
  w->cols = fx1 > fx0 ? fx1 - fx0 : 0;
  w->input = image + (y0 + fy0 * p->dilation_h) * row + (x0 + fx0 * p->dilation_w) * p->input_c;
  w->filter = filter + (fy0 * p->filter_w + fx0) * taps;
  w->input_step = p->dilation_w * p->input_c;
  w->filter_step = taps;
  w->input_skip = p->dilation_h * row - w->cols * w->input_step;
  w->filter_skip = (p->filter_w - w->cols) * taps;
}

#if defined(CMSIS_MVE)
/* Requantises acc, the sums of channels c + lanes[j] (bias not yet added), into out[c +
 * lanes[j]]: per-lane multipliers, shifts and bias gathered, the bytes scattered. */
static inline void mve_store(const dw_job_t *job, int32x4_t acc, int32_t c, uint32x4_t lanes,
                             int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  const int32x4_t multiplier = vldrwq_gather_shifted_offset_s32(job->requant.multipliers + c,
                                                                lanes);
  const int32x4_t shift = vldrwq_gather_shifted_offset_s32(job->requant.shifts + c, lanes);
  if (job->bias != NULL) {
    acc = vaddq_s32(acc, vldrwq_gather_shifted_offset_s32(job->bias + c, lanes));
  }
  vstrbq_scatter_offset_s32(out + c, lanes, cmsis_mve_requantize(acc, multiplier, shift,
                                                                 p->output_offset,
                                                                 p->act_min, p->act_max));
}

/* One tap of 8 channels, multiplier 1: int8 widened to int16 lanes, the input offset added
 * (|x + offset| <= 255), products exact in int32: even channels to e, odd ones to o. */
#define DW_TAP8(in_ptr, f_ptr, e, o)                                                     \
  do {                                                                                   \
    const int16x8_t x_ = vaddq_n_s16(vldrbq_s16(in_ptr), offset);                        \
    const int16x8_t w_ = vldrbq_s16(f_ptr);                                              \
    e = vaddq_s32(e, vmullbq_int_s16(x_, w_));                                           \
    o = vaddq_s32(o, vmulltq_int_s16(x_, w_));                                           \
  } while (0)

/* Multiplier 1: channels c .. c + 15 summed over the window, then requantised. */
static __attribute__((noinline)) void block16(const dw_job_t *job, const dw_window_t *w,
                                              int32_t c, int8_t *out) {
  const int16_t offset = (int16_t)job->p->input_offset;
  const int8_t *in = w->input + c, *f = w->filter + c;
  const uint32x4_t even = vidupq_n_u32(0u, 2);
  int32x4_t e0 = vdupq_n_s32(0), o0 = e0, e1 = e0, o1 = e0;
  int32_t y, x;
  for (y = w->rows; y > 0; --y, in += w->input_skip, f += w->filter_skip) {
    for (x = w->cols; x > 0; --x, in += w->input_step, f += w->filter_step) {
      DW_TAP8(in, f, e0, o0);
      DW_TAP8(in + 8, f + 8, e1, o1);
    }
  }
  mve_store(job, e0, c, even, out);
  mve_store(job, o0, c + 1, even, out);
  mve_store(job, e1, c + 8, even, out);
  mve_store(job, o1, c + 9, even, out);
}

/* The same for channels c .. c + 7. */
static __attribute__((noinline)) void block8(const dw_job_t *job, const dw_window_t *w,
                                             int32_t c, int8_t *out) {
  const int16_t offset = (int16_t)job->p->input_offset;
  const int8_t *in = w->input + c, *f = w->filter + c;
  const uint32x4_t even = vidupq_n_u32(0u, 2);
  int32x4_t e0 = vdupq_n_s32(0), o0 = e0;
  int32_t y, x;
  for (y = w->rows; y > 0; --y, in += w->input_skip, f += w->filter_skip) {
    for (x = w->cols; x > 0; --x, in += w->input_step, f += w->filter_step) {
      DW_TAP8(in, f, e0, o0);
    }
  }
  mve_store(job, e0, c, even, out);
  mve_store(job, o0, c + 1, even, out);
}

/* Channels c .. c + 3 (input channel in_c (+ j)), one int32 lane each, requantised. */
static __attribute__((noinline)) void block4(const dw_job_t *job, const dw_window_t *w,
                                             int32_t in_c, int32_t c, int32_t broadcast,
                                             int8_t *out) {
  const int32_t offset = job->p->input_offset;
  const int8_t *in = w->input + in_c, *f = w->filter + c;
  int32x4_t sum = vdupq_n_s32(0);
  int32_t y, x;
  for (y = w->rows; y > 0; --y, in += w->input_skip, f += w->filter_skip) {
    for (x = w->cols; x > 0; --x, in += w->input_step, f += w->filter_step) {
      const int32x4_t values = broadcast ? vdupq_n_s32(*in + offset)
                                         : vaddq_n_s32(vldrbq_s32(in), offset);
      sum = vaddq_s32(sum, vmulq_s32(vldrbq_s32(f), values));
    }
  }
  mve_store(job, sum, c, vidupq_n_u32(0u, 1), out);
}
#elif defined(CMSIS_DSP)
/* One tap of 4 channels, multiplier 1: SXTAB16 adds the input offset to both halves. */
#define DW_TAP4(in_ptr, f_ptr)                                                           \
  do {                                                                                   \
    const int32_t weights_ = cmsis_read4(f_ptr), values_ = cmsis_read4(in_ptr);          \
    const int32_t w02_ = __sxtb16(weights_), w13_ = cmsis_sxtb16_ror8(weights_);         \
    const int32_t x02_ = __sxtab16(offsets, values_);                                    \
    const int32_t x13_ = cmsis_sxtab16_ror8(offsets, values_);                           \
    a0 = __smlabb(w02_, x02_, a0);                                                       \
    a2 = __smlatt(w02_, x02_, a2);                                                       \
    a1 = __smlabb(w13_, x13_, a1);                                                       \
    a3 = __smlatt(w13_, x13_, a3);                                                       \
  } while (0)

/* Multiplier 1: 4 input channels per word. */
static __attribute__((noinline)) void block4_separate(const dw_window_t *w, int32_t c,
                                                      int32_t offset, int32_t acc[4]) {
  const int32_t offsets = (int32_t)(((uint32_t)offset & 0xffffu) * 0x10001u);
  const int8_t *in = w->input + c, *f = w->filter + c;
  const int32_t in_step = w->input_step, f_step = w->filter_step;
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], y, x;
  for (y = w->rows; y > 0; --y, in += w->input_skip, f += w->filter_skip) {
    for (x = w->cols; x > 0; --x, in += in_step, f += f_step) DW_TAP4(in, f);
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

/* One tap of 4 channels of multiplier 1 in assembly, the weights and inputs read at the
 * addressing modes f_at and i_at: acc[j] += w[j] * (x[j] + offset), the offset added by
 * SXTAB16. */
#define DW_TAP_ASM(f_at, i_at)                                                           \
  "ldr %[w], " f_at "\n\t"                                                               \
  "ldr %[x], " i_at "\n\t"                                                               \
  "sxtb16 %[t], %[w]\n\t"                                                                \
  "sxtab16 %[u], %[o], %[x]\n\t"                                                         \
  "smlabb %[a0], %[t], %[u], %[a0]\n\t"                                                  \
  "smlatt %[a2], %[t], %[u], %[a2]\n\t"                                                  \
  "sxtb16 %[t], %[w], ror #8\n\t"                                                        \
  "sxtab16 %[u], %[o], %[x], ror #8\n\t"                                                 \
  "smlabb %[a1], %[t], %[u], %[a1]\n\t"                                                  \
  "smlatt %[a3], %[t], %[u], %[a3]\n\t"
#define DW_TAP0 DW_TAP_ASM("[%[f]]", "[%[i]]")
#define DW_TAP1 DW_TAP_ASM("[%[f], %[s]]", "[%[i], %[s]]")
#define DW_TAP2 DW_TAP_ASM("[%[f], %[s], lsl #1]", "[%[i], %[s], lsl #1]")

/* The taps of one row of a 3x3 window of multiplier 1 (step bytes apart in the input and the
 * filter), then in += row and f += 3 * step, the next row of the window.  The taps are
 * assembly: compiled from C, gcc hoists the loads of the window and spills accumulators.
 * 12 register operands, as many as gcc can always give (the frame pointer aside). */
#define DW_ROW_ASM(taps)                                                                 \
  do {                                                                                   \
    __asm__(taps                                                                         \
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [w] "=&r"(w),  \
              [x] "=&r"(x), [t] "=&r"(t), [u] "=&r"(u)                                   \
            : [i] "r"(in), [f] "r"(f), [s] "r"(step), [o] "r"(offsets)                   \
            : "memory");                                                                 \
    in += row;                                                                           \
    f += 3 * step;                                                                       \
  } while (0)

/* Depth multiplier a multiple of 4: one input value for the 4 channels. */
static __attribute__((noinline)) void block4_shared(const dw_window_t *w, int32_t in_c,
                                                    int32_t c, int32_t offset, int32_t acc[4]) {
  const int8_t *in = w->input + in_c, *f = w->filter + c;
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], y, x;
  for (y = w->rows; y > 0; --y, in += w->input_skip, f += w->filter_skip) {
    for (x = w->cols; x > 0; --x, in += w->input_step, f += w->filter_step) {
      const int32_t weights = cmsis_read4(f), value = *in + offset;
      const int32_t w02 = __sxtb16(weights), w13 = cmsis_sxtb16_ror8(weights);
      a0 = __smlabb(w02, value, a0);
      a2 = __smlatb(w02, value, a2);
      a1 = __smlabb(w13, value, a1);
      a3 = __smlatb(w13, value, a3);
    }
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

static void block4(const dw_window_t *w, int32_t in_c, int32_t c, int32_t broadcast,
                   int32_t offset, int32_t acc[4]) {
  if (broadcast) {
    block4_shared(w, in_c, c, offset, acc);
  } else {
    block4_separate(w, c, offset, acc);
  }
}
#else
static void block4(const dw_window_t *w, int32_t in_c, int32_t c, int32_t broadcast,
                   int32_t offset, int32_t acc[4]) {
  const int32_t step = broadcast ? 0 : 1;
  const int8_t *in = w->input + in_c, *f = w->filter + c;
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], y, x;
  for (y = w->rows; y > 0; --y, in += w->input_skip, f += w->filter_skip) {
    for (x = w->cols; x > 0; --x, in += w->input_step, f += w->filter_step) {
      a0 = tflm_mac_wrap(a0, f[0], in[0] + offset);
      a1 = tflm_mac_wrap(a1, f[1], in[step] + offset);
      a2 = tflm_mac_wrap(a2, f[2], in[2 * step] + offset);
      a3 = tflm_mac_wrap(a3, f[3], in[3 * step] + offset);
    }
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}
#endif

/* One channel: sum over the window of filter[c] * (input[in_c] + offset). */
static int32_t single(const dw_window_t *w, int32_t in_c, int32_t c, int32_t offset) {
  const int8_t *in = w->input + in_c, *f = w->filter + c;
  int32_t acc = 0, y, x;
  for (y = w->rows; y > 0; --y, in += w->input_skip, f += w->filter_skip) {
    for (x = w->cols; x > 0; --x, in += w->input_step, f += w->filter_step) {
      acc = tflm_mac_wrap(acc, *f, *in + offset);
    }
  }
  return acc;
}

static int8_t finish(const dw_job_t *job, int32_t acc, int32_t c) {
  const tflm_conv_params_t *p = job->p;
  if (job->bias != NULL) acc = tflm_add_wrap(acc, job->bias[c]);
  return (int8_t)cmsis_requantize(acc, job->requant.multipliers[c], job->requant.shifts[c],
                                  p->output_offset, p->act_min, p->act_max);
}

#if !defined(CMSIS_MVE)
/* Requantises channels c .. c + 3 (bias already in acc) into out[c ..]. */
static inline void finish4(const dw_job_t *job, const int32_t acc[4], int32_t c, int8_t *out) {
  const int32_t offset = job->p->output_offset, lo = job->p->act_min, hi = job->p->act_max;
  const int32_t *multipliers = job->requant.multipliers + c, *shifts = job->requant.shifts + c;
  int32_t j;
  if (job->fast == CMSIS_REQUANT_STRICT) {
    cmsis_requantize4_strict(acc, multipliers, shifts, offset, lo, hi, out + c);
  } else if (job->fast == CMSIS_REQUANT_FAST) {
    cmsis_requantize4_fast(acc, multipliers, shifts, offset, lo, hi, out + c);
  } else {
    for (j = 0; j < 4; ++j) {
      out[c + j] = (int8_t)cmsis_requantize(acc[j], multipliers[j], shifts[j], offset, lo, hi);
    }
  }
}

/* The block's accumulators, started at the bias. */
static void start4(const dw_job_t *job, int32_t c, int32_t acc[4]) {
  int32_t j;
  for (j = 0; j < 4; ++j) acc[j] = job->bias != NULL ? job->bias[c + j] : 0;
}

#endif

/* All output channels of one pixel. */
#if defined(CMSIS_MVE)
static void pixel_int8(const dw_job_t *job, const dw_window_t *w, int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  const int32_t m = p->depth_multiplier, offset = p->input_offset;
  const int32_t blocks = (m == 1 || m % 4 == 0) ? p->output_c & ~3 : 0;
  int32_t c = 0;
  if (m == 1) {
    for (; c + 16 <= p->output_c; c += 16) block16(job, w, c, out);
    if (c + 8 <= p->output_c) {
      block8(job, w, c, out);
      c += 8;
    }
  }
  for (; c < blocks; c += 4) block4(job, w, c / m, c, m != 1, out);
  for (; c < p->output_c; ++c) out[c] = finish(job, single(w, c / m, c, offset), c);
}
#else
static void pixel_int8(const dw_job_t *job, const dw_window_t *w, int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  const int32_t m = p->depth_multiplier, offset = p->input_offset;
  const int32_t blocks = (m == 1 || m % 4 == 0) ? p->output_c & ~3 : 0;
  int32_t c, acc[4];
  for (c = 0; c < blocks; c += 4) {
    start4(job, c, acc);
    block4(w, c / m, c, m != 1, offset, acc);
    finish4(job, acc, c, out);
  }
  for (; c < p->output_c; ++c) out[c] = finish(job, single(w, c / m, c, offset), c);
}

#endif


/* The output_c % 4 last channels of one pixel, window w on the plain filter. */
static void last_channels(const dw_job_t *job, const dw_window_t *w, int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  int32_t c;
  for (c = p->output_c & ~3; c < p->output_c; ++c) {
    out[c] = finish(job, single(w, c, c, p->input_offset), c);
  }
}

#if defined(CMSIS_DSP) && !defined(CMSIS_MVE)
/* The part of a 3x3 window (multiplier 1, no dilation) inside the input. */
typedef struct {
  const int8_t *input;  /* its first tap, channel 0 */
  const int8_t *filter; /* the filter tap of that tap, channel 0 */
  int32_t rows, cols;   /* its taps inside the input, each in 0..3 */
} dw_square3_t;

/* Channels c .. c + 3 of window: the sums from the bias on, then one row at a time in
 * assembly (all three columns, or the two or one the input holds). */
static inline __attribute__((always_inline)) void sums3(const dw_square3_t *window,
                                                        const int32_t *bias, int32_t c,
                                                        int32_t row, int32_t step,
                                                        int32_t offsets, int32_t acc[4]) {
  const int8_t *in = window->input + c, *f = window->filter + c;
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, w, x, t, u, y;
  if (bias != NULL) {
    a0 = bias[c];
    a1 = bias[c + 1];
    a2 = bias[c + 2];
    a3 = bias[c + 3];
  }
  if (window->rows == 3 && window->cols == 3) { /* inside the input: no branch per row */
    DW_ROW_ASM(DW_TAP0 DW_TAP1 DW_TAP2);
    DW_ROW_ASM(DW_TAP0 DW_TAP1 DW_TAP2);
    DW_ROW_ASM(DW_TAP0 DW_TAP1 DW_TAP2);
    y = 0;
  } else {
    y = window->rows;
  }
  for (; y > 0; --y) {
    if (window->cols == 3) {
      DW_ROW_ASM(DW_TAP0 DW_TAP1 DW_TAP2);
    } else if (window->cols == 2) {
      DW_ROW_ASM(DW_TAP0 DW_TAP1);
    } else if (window->cols == 1) {
      DW_ROW_ASM(DW_TAP0);
    }
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

/* Channels 0 .. channels & ~3 of one output pixel of a 3x3 node of multiplier 1 without
 * dilation: blocks of 4 by sums3, then requantised.  mode: job->fast, a constant in each
 * copy pixel_square3 makes, so that each holds one requantisation.  Everything is read into
 * locals first: int8 stores may alias anything, so fields read through job would be
 * reloaded per block. */
static inline __attribute__((always_inline)) void blocks_with(const dw_job_t *job,
                                                              const dw_square3_t *window,
                                                              int8_t *out, int32_t mode) {
  const tflm_conv_params_t *p = job->p;
  const int32_t *bias = job->bias, *multipliers = job->requant.multipliers;
  const int32_t *shifts = job->requant.shifts;
  const int32_t row = p->input_w * p->input_c, step = p->input_c, channels = p->output_c;
  const int32_t out_offset = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t offsets = (int32_t)(((uint32_t)p->input_offset & 0xffffu) * 0x10001u);
  int32_t c, j, acc[4];
  for (c = 0; c + 4 <= channels; c += 4) {
    sums3(window, bias, c, row, step, offsets, acc);
    if (mode) {
      cmsis_requantize4(mode, acc, multipliers + c, shifts + c, out_offset, lo, hi, out + c);
    } else {
      for (j = 0; j < 4; ++j) {
        out[c + j] = (int8_t)cmsis_requantize(acc[j], multipliers[c + j], shifts[c + j],
                                              out_offset, lo, hi);
      }
    }
  }
}

/* All channels of one output pixel of a 3x3 node of multiplier 1 without dilation: the
 * blocks of 4, then the output_c % 4 last channels one by one. */
static __attribute__((noinline)) void pixel_square3(const dw_job_t *job,
                                                   const dw_square3_t *window, int8_t *out) {
  switch (job->fast) {
    case CMSIS_REQUANT_STRICT:
      blocks_with(job, window, out, CMSIS_REQUANT_STRICT);
      break;
    case CMSIS_REQUANT_FAST:
      blocks_with(job, window, out, CMSIS_REQUANT_FAST);
      break;
    case CMSIS_REQUANT_WIDE:
      blocks_with(job, window, out, CMSIS_REQUANT_WIDE);
      break;
    default:
      blocks_with(job, window, out, 0);
      break;
  }
  if (job->p->output_c & 3) {
    const int32_t step = job->p->input_c;
    dw_window_t w;
    w.input = window->input;
    w.filter = window->filter;
    w.rows = window->rows;
    w.cols = window->cols;
    w.input_step = w.filter_step = step;
    w.input_skip = job->p->input_w * step - w.cols * step;
    w.filter_skip = (3 - w.cols) * step;
    last_channels(job, &w, out);
  }
}

/* One tap k of shared_taps: the 4 channels' weights widened, each times the tap's input. */
#define DW_SHARED_TAP(k)                                                                 \
  do {                                                                                   \
    const int32_t weights_ = cmsis_read4(filter + (k) * cout);                           \
    const int32_t w02_ = __sxtb16(weights_), w13_ = cmsis_sxtb16_ror8(weights_);         \
    a0 = __smlabb(w02_, x[k], a0);                                                       \
    a2 = __smlatb(w02_, x[k], a2);                                                       \
    a1 = __smlabb(w13_, x[k], a1);                                                       \
    a3 = __smlatb(w13_, x[k], a3);                                                       \
  } while (0)

/* Channels c .. c + 3 of a 3x3 window of a multiplier divisible by 4 (one input channel,
 * its 9 taps in x with the offset added), from the bias on: the 9 taps unrolled. */
static inline void shared_taps(const int8_t *filter, int32_t cout, const int32_t x[9],
                               int32_t acc[4]) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  DW_SHARED_TAP(0);
  DW_SHARED_TAP(1);
  DW_SHARED_TAP(2);
  DW_SHARED_TAP(3);
  DW_SHARED_TAP(4);
  DW_SHARED_TAP(5);
  DW_SHARED_TAP(6);
  DW_SHARED_TAP(7);
  DW_SHARED_TAP(8);
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

/* Output pixel (oy, ox) of a 3x3 node of a multiplier divisible by 4 (person_detect's first
 * layer: 1 input channel, 8 outputs) when its window lies inside the input; 1 if done.  Each
 * input channel's 9 taps are read once for all its output channels, then blocks of 4. */
static int32_t pixel_shared3(const dw_job_t *job, const int8_t *image, const int8_t *filter,
                             int32_t oy, int32_t ox, int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  const int32_t y0 = oy * p->stride_h - p->pad_h, x0 = ox * p->stride_w - p->pad_w;
  const int32_t m = p->depth_multiplier, step = p->input_c, row = p->input_w * step;
  const int8_t *in;
  int32_t i, c, k, x[9], acc[4];
  if (!job->shared3 || y0 < 0 || x0 < 0 || y0 + 3 > p->input_h || x0 + 3 > p->input_w) {
    return 0;
  }
  in = image + (y0 * p->input_w + x0) * step;
  for (i = 0; i < step; ++i) {
    for (k = 0; k < 9; k += 3) {
      const int8_t *tap = in + k / 3 * row + i;
      x[k] = tap[0] + p->input_offset;
      x[k + 1] = tap[step] + p->input_offset;
      x[k + 2] = tap[2 * step] + p->input_offset;
    }
    for (c = i * m; c < (i + 1) * m; c += 4) {
      start4(job, c, acc);
      shared_taps(filter + c, p->output_c, x, acc);
      finish4(job, acc, c, out);
    }
  }
  return 1;
}

/* Output pixel (oy, ox) by pixel_square3 (or pixel_shared3) when the node suits it; 1 if
 * done.  Its window is clipped to the input by bounds on the taps, never tested tap by tap. */
static int32_t pixel_fast(const dw_job_t *job, const int8_t *image, const int8_t *filter,
                          int32_t oy, int32_t ox, int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  const int32_t y0 = oy * p->stride_h - p->pad_h, x0 = ox * p->stride_w - p->pad_w;
  const int32_t fy0 = y0 < 0 ? -y0 : 0, fx0 = x0 < 0 ? -x0 : 0;
  const int32_t fy1 = p->input_h - y0 < 3 ? p->input_h - y0 : 3;
  const int32_t fx1 = p->input_w - x0 < 3 ? p->input_w - x0 : 3;
  dw_square3_t window;
  if (!job->square3) return pixel_shared3(job, image, filter, oy, ox, out);
  window.rows = fy1 > fy0 ? fy1 - fy0 : 0;
  window.cols = fx1 > fx0 ? fx1 - fx0 : 0;
  if (window.cols == 0) window.rows = 0;
  window.input = image + ((y0 + fy0) * p->input_w + x0 + fx0) * p->input_c;
  window.filter = filter + (fy0 * 3 + fx0) * p->input_c; /* multiplier 1 */
  pixel_square3(job, &window, out);
  return 1;
}
#else
static int32_t pixel_fast(const dw_job_t *job, const int8_t *image, const int8_t *filter,
                          int32_t oy, int32_t ox, int8_t *out) {
  (void)job;
  (void)image;
  (void)filter;
  (void)oy;
  (void)ox;
  (void)out;
  return 0;
}
#endif

/* v repeated in the 4 bytes of a word. */
static inline __attribute__((always_inline)) int32_t bytes4(int32_t v) {
  return (int32_t)(((uint32_t)v & 0xffu) * 0x01010101u);
}

/* patch[0 .. bytes) = the word `fill` repeated (bytes a multiple of 4). */
static inline __attribute__((always_inline)) void fill_words(int8_t *patch, int32_t fill,
                                                              int32_t bytes) {
  int32_t i;
  for (i = 0; i < bytes; i += 4) cmsis_write4(patch + i, fill);
}

#if !defined(CMSIS_MVE)
#if defined(CMSIS_DSP)
/* Channels c .. c + 3 (one block of a DW_ROW_QUADS record, tflm_gen/layout.py) of the window
 * of a one-channel input whose top-left tap is `in` (rows `row` bytes apart), from acc on:
 * per filter row and group of 4 taps, the 4 input bytes widened with the input offset added
 * (x0 + o, x2 + o) and (x1 + o, x3 + o), then one SMLAD per channel and word of the record's
 * weight pairs (w0, w2), (w1, w3). */
/* lo, hi = the two words at w, then w += 2: one LDRD (gcc loads them one by one). */
static inline void dw_read2(const int32_t **w, int32_t *lo, int32_t *hi) {
  __asm__("ldrd %0, %1, [%2], #8"
          : "=r"(*lo), "=r"(*hi), "+r"(*w)
          : "m"(*(const int32_t(*)[2]) * w));
}

/* One group of 4 taps of the 4 channels: the input bytes at x, the weights from w on. */
#define DW_QUAD(x)                                                                       \
  do {                                                                                   \
    const int32_t v_ = cmsis_read4(x);                                                   \
    const int32_t x02_ = __sxtab16(offsets, v_), x13_ = cmsis_sxtab16_ror8(offsets, v_); \
    int32_t p_, q_;                                                                      \
    dw_read2(&w, &p_, &q_);                                                              \
    a0 = __smlad(q_, x13_, __smlad(p_, x02_, a0));                                       \
    dw_read2(&w, &p_, &q_);                                                              \
    a1 = __smlad(q_, x13_, __smlad(p_, x02_, a1));                                       \
    dw_read2(&w, &p_, &q_);                                                              \
    a2 = __smlad(q_, x13_, __smlad(p_, x02_, a2));                                       \
    dw_read2(&w, &p_, &q_);                                                              \
    a3 = __smlad(q_, x13_, __smlad(p_, x02_, a3));                                       \
  } while (0)

static void quad_block(const int8_t *in, int32_t row, int32_t rows, int32_t quads,
                       const int32_t *w, int32_t offsets, int32_t acc[4]) {
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], y, q;
  if (quads == 2) { /* rows of 5 to 8 taps (micro_speech's 10x8): no loop per row */
    for (y = rows; y > 0; --y, in += row) {
      DW_QUAD(in);
      DW_QUAD(in + 4);
    }
  } else {
    for (y = rows; y > 0; --y, in += row) {
      const int8_t *x = in;
      for (q = quads; q > 0; --q, x += 4) DW_QUAD(x);
    }
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}
#else
/* quad_block in C (the host build's path over the same record). */
static void quad_block(const int8_t *in, int32_t row, int32_t rows, int32_t quads,
                       const int32_t *w, int32_t offsets, int32_t acc[4]) {
  const int32_t offset = (int16_t)(uint16_t)((uint32_t)offsets & 0xffffu);
  int32_t y, q, j, t;
  for (y = rows; y > 0; --y, in += row) {
    for (q = 0; q < quads; ++q, w += 8) {
      for (j = 0; j < 4; ++j) {
        for (t = 0; t < 4; ++t) { /* tap 4q + t: word t & 1, half t >> 1 */
          const uint32_t word = (uint32_t)w[2 * j + (t & 1)];
          const int32_t weight = (int16_t)(uint16_t)(word >> (16 * (t >> 1)));
          acc[j] = tflm_mac_wrap(acc[j], weight, in[4 * q + t] + offset);
        }
      }
    }
  }
}
#endif

/* The window of output pixel (oy, ox) of a node with a DW_ROW_QUADS record: read in place
 * when its rows of 4Q bytes lie inside the input (*row = input_w), else copied into patch
 * (DW_QUAD_BYTES) with the zero point in the bytes outside (each adds zp * w + input_offset
 * * w = 0, as TFLM's skipped taps do; *row = 4Q). */
static const int8_t *quads_window(const dw_job_t *job, const int8_t *image, int32_t oy,
                                  int32_t ox, int8_t *patch, int32_t *row) {
  const tflm_conv_params_t *p = job->p;
  const int32_t y0 = oy * p->stride_h - p->pad_h, x0 = ox * p->stride_w - p->pad_w;
  const int32_t fh = p->filter_h, width = 4 * job->quads[4];
  const int8_t zero_point = (int8_t)(-p->input_offset);
  const int32_t kx0 = x0 < 0 ? (-x0 < width ? -x0 : width) : 0;
  const int32_t kx1 = p->input_w - x0 < width ? (p->input_w - x0 > kx0 ? p->input_w - x0 : kx0)
                                               : width;
  int32_t ky, kx;
  if (y0 >= 0 && x0 >= 0 && y0 + fh <= p->input_h && x0 + width <= p->input_w) {
    *row = p->input_w;
    return image + y0 * p->input_w + x0;
  }
  fill_words(patch, bytes4(zero_point), fh * width);
  for (ky = y0 < 0 ? -y0 : 0; ky < fh && y0 + ky < p->input_h; ++ky) {
    int8_t *dst = patch + ky * width;
    const int8_t *src = image + (y0 + ky) * p->input_w; /* tap kx: src[x0 + kx] */
    if (kx1 - kx0 == width) {
      for (kx = 0; kx < width; kx += 4) cmsis_write4(dst + kx, cmsis_read4(src + x0 + kx));
    } else {
      for (kx = kx0; kx < kx1; ++kx) dst[kx] = src[x0 + kx];
    }
  }
  *row = width;
  return patch;
}

/* Output pixel (oy, ox) of a node with a DW_ROW_QUADS record: every block of 4 channels over
 * its window (quads_window), then requantised. */
static void pixel_quads(const dw_job_t *job, const int8_t *image, int32_t oy, int32_t ox,
                        int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  const int32_t fh = p->filter_h, quads = job->quads[4];
  const int32_t words = fh * quads * 8;
  const int32_t offsets = (int32_t)(((uint32_t)p->input_offset & 0xffffu) * 0x10001u);
  const int32_t *w = job->quads + 5;
  int32_t words_of_patch[DW_QUAD_BYTES / 4];
  int32_t row, c, acc[4];
  const int8_t *in = quads_window(job, image, oy, ox, (int8_t *)words_of_patch, &row);
  for (c = 0; c < p->output_c; c += 4, w += words) {
    start4(job, c, acc);
    quad_block(in, row, fh, quads, w, offsets, acc);
    finish4(job, acc, c, out);
  }
}

#if defined(CMSIS_DSP)
/* One channel's bias and requantisation of its doubled sum, computed once per output row
 * (row_quads3) instead of once per pixel: DW_TAP_PAIRS's steps (multiplier, 2^(r-1) +
 * output offset * 2^r, r; tflm_gen/layout.py) with the 64-bit start's low word 2^31,
 * exact for |sum| < 2^30 and r in [1, DW_MAX_SHIFT] (dw_steps_fit). */
typedef struct {
  int32_t bias;       /* the sum's start (0 without a bias) */
  int32_t multiplier;
  int32_t low;        /* 2^31: the 64-bit start's low word */
  int32_t constant;   /* its high word, less 1 for a negative sum */
  int32_t right;      /* r = -shift */
} dw_step_t;

/* The most channels row_quads3 holds steps for (on the stack). */
#define DW_ROW_CHANNELS 16

/* TFLM's requantisation of acc plus the output offset from a channel's step: the sum
 * doubled, the 64-bit start plus 2 acc * multiplier, its high word shifted right by r
 * (layout_blocks' DW_REQUANT_ASM, there with SMMLAR); 6 instructions, loads included. */
static inline __attribute__((always_inline)) int32_t dw_step(const dw_step_t *t, int32_t acc) {
  int32_t multiplier, low, high, right;
  __asm__("add %[a], %[a], %[a]\n\t"
          "ldrd %[m], %[lo], [%[t], #4]\n\t"
          "ldrd %[hi], %[r], [%[t], #12]\n\t"
          "sub %[hi], %[hi], %[a], lsr #31\n\t"
          "smlal %[lo], %[hi], %[a], %[m]\n\t"
          "asr %[a], %[hi], %[r]"
          : [a] "+&r"(acc), [m] "=&r"(multiplier), [lo] "=&r"(low), [hi] "=&r"(high),
            [r] "=&r"(right)
          : [t] "r"(t), "m"(*t));
  return acc;
}

/* What row_quads3's pixels read, copied out of the node once per row into locals (int8
 * stores may alias the node's fields: read through it they would be reloaded per pixel). */
typedef struct {
  const dw_step_t *channel;   /* per channel: bias and requantisation step */
  const int32_t *weights;     /* the record's first block */
  int32_t channels;           /* output_c */
  int32_t offsets;            /* the input offset in both halfwords (SXTAB16) */
  int32_t lo4, hi4;           /* act_min, act_max in the 4 bytes */
} dw_row3_t;

/* Every channel of one pixel of a 3-row, one-quad DW_ROW_QUADS node (filters 3x1 .. 3x4:
 * person_detect's first layer) over the window at `in`: per block of 4 channels the 3 rows
 * unrolled (few live values: the accumulators, one row's widened input, one weight pair),
 * then the requantisation from the row's constants t, 4 channels stored clamped in one
 * word. */
static inline __attribute__((always_inline)) void pixel_quads3(const dw_row3_t *r,
                                                               const int8_t *in, int32_t row,
                                                               int8_t *out) {
  const int32_t offsets = r->offsets, lo4 = r->lo4, hi4 = r->hi4;
  const int32_t *w = r->weights;
  const dw_step_t *t = r->channel;
  const int8_t *end = out + r->channels;
  for (; out < end; out += 4, t += 4) {
    int32_t a0 = t[0].bias, a1 = t[1].bias, a2 = t[2].bias, a3 = t[3].bias;
    DW_QUAD(in); /* quad_block's step: each row's 4 bytes widened, 8 SMLADs */
    DW_QUAD(in + row);
    DW_QUAD(in + 2 * row);
    cmsis_store4_clamped4(dw_step(&t[0], a0), dw_step(&t[1], a1), dw_step(&t[2], a2),
                          dw_step(&t[3], a3), lo4, hi4, out);
  }
}

/* 1 when dw_step is exact for every channel: right shifts r in [1, DW_MAX_SHIFT] (the
 * constant fits), a multiplier in [2^30, 2^31) and |bias| < 2^29, so that |sum| < 2^30 (a
 * window of at most 12 taps adds below 12 * 128 * 255 < 2^19) and 2 * sum fits; the
 * high word, |2 sum * multiplier / 2^32| < 2^30 plus a constant below 2^30, fits too. */
static int32_t dw_steps_fit(const dw_job_t *job) {
  int32_t c;
  for (c = 0; c < job->p->output_c; ++c) {
    const int32_t right = -job->requant.shifts[c], m = job->requant.multipliers[c];
    const int32_t bias = job->bias != NULL ? job->bias[c] : 0;
    if (right < 1 || right > DW_MAX_SHIFT || m < (INT32_C(1) << 30) ||
        bias >= (INT32_C(1) << 29) || bias <= -(INT32_C(1) << 29)) {
      return 0;
    }
  }
  return 1;
}

/* Whether row_quads3 runs the node: a DW_ROW_QUADS record of 3 rows of one quad, at most
 * DW_ROW_CHANNELS channels whose steps fit, pixels output_c bytes apart. */
static int32_t rows_quads3(const dw_job_t *job, int32_t out_stride) {
  const tflm_conv_params_t *p = job->p;
  return job->quads != NULL && p->filter_h == 3 && job->quads[4] == 1 &&
         p->output_c <= DW_ROW_CHANNELS && out_stride == p->output_c && dw_steps_fit(job);
}

/* Output row oy of a node rows_quads3 accepts, into out. */
static void row_quads3(const dw_job_t *job, const int8_t *image, int32_t oy, int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  dw_step_t t[DW_ROW_CHANNELS];
  int32_t words_of_patch[DW_QUAD_BYTES / 4];
  const int32_t y0 = oy * p->stride_h - p->pad_h;
  const int32_t inside = y0 >= 0 && y0 + 3 <= p->input_h;
  const int8_t *line = image + y0 * p->input_w;
  const int32_t width = p->output_w, stride = p->stride_w, pad = p->pad_w;
  const int32_t input_w = p->input_w;
  dw_row3_t r;
  int32_t c, ox, row;
  r.channel = t;
  r.weights = job->quads + 5;
  r.channels = p->output_c;
  r.offsets = (int32_t)(((uint32_t)p->input_offset & 0xffffu) * 0x10001u);
  r.lo4 = bytes4(p->act_min);
  r.hi4 = bytes4(p->act_max);
  for (c = 0; c < p->output_c; ++c) {
    const int32_t right = -job->requant.shifts[c];
    t[c].bias = job->bias != NULL ? job->bias[c] : 0;
    t[c].multiplier = job->requant.multipliers[c];
    t[c].low = INT32_MIN;
    t[c].constant = (INT32_C(1) << (right - 1)) + p->output_offset * (INT32_C(1) << right);
    t[c].right = right;
  }
  for (ox = 0; ox < width; ++ox, out += r.channels) {
    const int32_t x0 = ox * stride - pad;
    if (inside && x0 >= 0 && x0 + 4 <= input_w) { /* most pixels: no call */
      pixel_quads3(&r, line + x0, input_w, out);
    } else {
      pixel_quads3(&r, quads_window(job, image, oy, ox, (int8_t *)words_of_patch, &row), row,
                   out);
    }
  }
}
#endif
#else
static void pixel_quads(const dw_job_t *job, const int8_t *image, int32_t oy, int32_t ox,
                        int8_t *out) {
  (void)job;
  (void)image;
  (void)oy;
  (void)ox;
  (void)out;
}
#endif

#include "depthwise_narrow.h" /* dw_narrow_row: 8-channel rows, 3 pixels per pass */

/* No row_quads3 without the DSP instructions (nor on MVE): every pixel takes pixel_at. */
#if !defined(CMSIS_DSP) || defined(CMSIS_MVE)
static int32_t rows_quads3(const dw_job_t *job, int32_t out_stride) {
  (void)job;
  (void)out_stride;
  return 0;
}

static void row_quads3(const dw_job_t *job, const int8_t *image, int32_t oy, int8_t *out) {
  (void)job;
  (void)image;
  (void)oy;
  (void)out;
}
#endif

/* What layout_blocks writes: `pixels` output pixels of `width` bytes (4 per block, every
 * block of the node: consecutive pixels are contiguous) from out on, the window of each
 * next pixel `in_advance` bytes after the previous one's end.  Ten 32-bit words on the
 * Cortex-M, which the assembly copies onto its stack in one LDM. */
typedef struct {
  int8_t *out;           /* the next block's 4 bytes */
  const int8_t *out_end; /* the end of the current pixel */
  int32_t lo4, hi4;      /* act_min, act_max repeated in the 4 bytes */
  int32_t pixels;        /* pixels left, >= 1 */
  int32_t in_advance;    /* input bytes from past one window's last block to the next */
  int32_t width;         /* output bytes per pixel: 4 * blocks */
  int32_t rewind;        /* layout bytes of the blocks: back to the first for each pixel */
  int32_t out_advance;   /* output bytes from past one pixel to the next: 0, or -2 * width
                            for a run last pixel first */
  int32_t zero4;         /* the input zero point in the 4 bytes: a border's outside taps */
} dw_run_t;

#if defined(CMSIS_DSP) && !defined(CMSIS_MVE)
/* One tap pair of 4 channels of layout_blocks: r8 holds tap k's input word (channels 0..3),
 * r9 tap j's.  PKHBT / PKHTB put each channel's two bytes into one word, SXTB16 (ROR #8)
 * widens a channel's pair to two halfwords, SMLAD multiplies it by the channel's two
 * weights (w_k, w_j) of the layout: 8 MACs in 14 instructions, loads included.  The weights
 * are read by single LDRs right after the input's: a load after a load takes one cycle,
 * an LDM of two words three. */
#define DW_PAIR_ASM                                                                      \
  "ldr r11, [r1], #4\n\t"                                                                \
  "ldr r12, [r1], #4\n\t"                                                                \
  "pkhbt r10, r8, r9, lsl #16\n\t" /* a0 a1 b0 b1 */                                     \
  "pkhtb r8, r9, r8, asr #16\n\t"  /* a2 a3 b2 b3 */                                     \
  "sxtb16 r9, r10\n\t"                                                                   \
  "smlad r4, r11, r9, r4\n\t"                                                            \
  "sxtb16 r10, r10, ror #8\n\t"                                                          \
  "smlad r5, r12, r10, r5\n\t"                                                           \
  "sxtb16 r9, r8\n\t"                                                                    \
  "sxtb16 r10, r8, ror #8\n\t"                                                           \
  "ldr r11, [r1], #4\n\t"                                                                \
  "ldr r12, [r1], #4\n\t"                                                                \
  "smlad r6, r11, r9, r6\n\t"                                                            \
  "smlad r7, r12, r10, r7\n\t"

/* The doubled sum in `acc` requantised, output offset included, from the layout's
 * (multiplier, 2^(r-1) + offset * 2^r, r): the 64-bit start (high word less 1 for a
 * negative sum, SMMLAR adds the low word's 2^31) plus 2 acc * multiplier, its high word
 * shifted right by r.  Three chained LDRs (4 cycles). */
#define DW_REQUANT_ASM(acc)                                                              \
  "ldr r9, [r1, #4]\n\t"                                                                 \
  "ldr r10, [r1, #8]\n\t"                                                                \
  "ldr r8, [r1], #12\n\t"                                                                \
  "sub r9, r9, " acc ", lsr #31\n\t"                                                     \
  "smmlar " acc ", " acc ", r8, r9\n\t"                                                  \
  "asr " acc ", " acc ", r10\n\t"

/* The loads of a window's 9 taps in layout_blocks' order: taps 1 4, 2 5, 0 3, 7 8, 6 (r8,
 * r9, r8, r9, ...), row pointers r0, r3, lr, step r2.  A tap outside the input reads the
 * zero point from the run's copy on the stack ([sp, #36]), which adds exactly 0 to the
 * folded sum, as TFLM's skipped tap does; a row pointer whose column-0 tap is outside still
 * moves to the next block (ADD); a row outside is never read, so it is not moved. */
#define DW_IN(reg, at) "ldr " reg ", " at "\n\t"
#define DW_ZP(reg) "ldr " reg ", [sp, #36]\n\t"
#define DW_ZP_ADD(reg, row) DW_ZP(reg) "add " row ", " row ", #4\n\t"
#define DW_AT0(row) "[" row "], #4" /* column 0, then the next block */
#define DW_AT1(row) "[" row ", r2]"
#define DW_AT2(row) "[" row ", r2, lsl #1]"
/* A row's taps 1, 2, 0 into registers a, b, a: inside, outside, or column 0 or 2 outside. */
#define DW_ROW_IN(row, a, b) DW_IN(a, DW_AT1(row)), DW_IN(b, DW_AT2(row)), DW_IN(a, DW_AT0(row))
#define DW_ROW_OUT(a, b) DW_ZP(a), DW_ZP(b), DW_ZP(a)
#define DW_ROW_LEFT(row, a, b) DW_IN(a, DW_AT1(row)), DW_IN(b, DW_AT2(row)), DW_ZP_ADD(a, row)
#define DW_ROW_RIGHT(row, a, b) DW_IN(a, DW_AT1(row)), DW_ZP(b), DW_IN(a, DW_AT0(row))
#define DW_ROW0 DW_ROW_IN("r0", "r8", "r8")
#define DW_ROW0_OUT DW_ROW_OUT("r8", "r8")
#define DW_ROW0_LEFT DW_ROW_LEFT("r0", "r8", "r8")
#define DW_ROW0_RIGHT DW_ROW_RIGHT("r0", "r8", "r8")
#define DW_ROW1 DW_ROW_IN("r3", "r9", "r9")
#define DW_ROW1_LEFT DW_ROW_LEFT("r3", "r9", "r9")
#define DW_ROW1_RIGHT DW_ROW_RIGHT("r3", "r9", "r9")
#define DW_ROW2 DW_ROW_IN("lr", "r8", "r9")
#define DW_ROW2_OUT DW_ROW_OUT("r8", "r9")
#define DW_ROW2_LEFT DW_ROW_LEFT("lr", "r8", "r9")
#define DW_ROW2_RIGHT DW_ROW_RIGHT("lr", "r8", "r9")

/* The 4 saturated values r4..r7 stored at the run's out ([sp]), r8 then past them and r9
 * the pixel's end: clamped to [lo4, hi4] as one word (DW_CLAMPED), or as they are when the
 * activation's range is the whole int8 one (DW_UNCLAMPED: 4 byte stores, no clamp). */
#define DW_CLAMPED                                                                       \
  "pkhbt r4, r4, r6, lsl #16\n\t" /* v0, v2 */                                           \
  "pkhbt r5, r5, r7, lsl #16\n\t" /* v1, v3 */                                           \
  "uxtb16 r4, r4\n\t"                                                                    \
  "uxtb16 r5, r5\n\t"                                                                    \
  "orr r4, r4, r5, lsl #8\n\t" /* v0 v1 v2 v3 */                                         \
  "ldmia sp, {r8, r9, r10, r11}\n\t" /* out, out_end, lo4, hi4 */                        \
  "ssub8 r12, r4, r10\n\t"                                                               \
  "sel r4, r4, r10\n\t"                                                                  \
  "ssub8 r12, r11, r4\n\t"                                                               \
  "sel r4, r4, r11\n\t"                                                                  \
  "str r4, [r8], #4\n\t"
#define DW_UNCLAMPED                                                                     \
  "ldrd r8, r9, [sp]\n\t"                                                                \
  "strb r5, [r8, #1]\n\t"                                                                \
  "strb r6, [r8, #2]\n\t"                                                                \
  "strb r7, [r8, #3]\n\t"                                                                \
  "strb r4, [r8], #4\n\t"

/* A run's entry: r4-r11 and lr saved, the run's 10 words (the fifth argument's) copied onto
 * the stack; and its next pixel (or pair) once out (r8) reached out_end: the window
 * pointers (r0 and `rows`) moved by in_advance, the blocks rewound, out moved by
 * out_advance, else the return. */
#define DW_RUN_ENTER                                                                     \
  "push {r4-r11, lr}\n\t"                                                                \
  "ldr r8, [sp, #36]\n\t"                                                                \
  "ldmia r8, {r4-r12, lr}\n\t"                                                           \
  "push {r4-r12, lr}\n\t" /* the run's words */
#define DW_RUN_NEXT(rows)                                                                \
  "ldr r9, [sp, #16]\n\t" /* pixels left */                                              \
  "subs r9, r9, #1\n\t"                                                                  \
  "beq 2f\n\t"                                                                           \
  "str r9, [sp, #16]\n\t"                                                                \
  "ldrd r9, r10, [sp, #20]\n\t" /* in_advance, width */                                  \
  "add r0, r0, r9\n\t"                                                                   \
  rows                                                                                   \
  "ldrd r9, r11, [sp, #28]\n\t" /* rewind, out_advance */                                \
  "sub r1, r1, r9\n\t"                                                                   \
  "add r8, r8, r11\n\t"                                                                  \
  "add r10, r8, r10\n\t"                                                                 \
  "strd r8, r10, [sp]\n\t" /* the next out, out_end */                                   \
  "b 1b\n\t"                                                                             \
  "2:\n\t"                                                                               \
  "add sp, sp, #40\n\t"                                                                  \
  "pop {r4-r11, pc}\n\t"

/* The signature of every run function below: the window's first tap, the blocks, the taps'
 * and rows' steps in bytes, the run; naked, so each saves what it uses itself. */
#define DW_RUN_FUNCTION(name)                                                            \
  __attribute__((naked, noinline)) static void name(                                     \
      const int8_t *in CMSIS_IN_ASM, const int32_t *blocks CMSIS_IN_ASM,                 \
      int32_t step CMSIS_IN_ASM, int32_t row CMSIS_IN_ASM,                               \
      const dw_run_t *run CMSIS_IN_ASM)

/* For the blocks of a DW_TAP_PAIRS stream (tflm_gen/layout.py, word aligned) from the first
 * on and the window whose top-left tap, channel 0 of the first block, is `in` (taps `step`
 * bytes apart in a row, rows `row` bytes apart): each block's 4 sums from its folded
 * constants over the 9 taps (doubled), requantised, clamped to [lo, hi] and stored as one
 * word, then the same for the run's next pixels.  Arguments: r0 in (then row 0), r1 blocks,
 * r2 step, r3 row (then row 1's pointer), [sp] run, whose 10 words are copied to [sp, #0..]
 * (out #0, out_end #4, lo4 #8, hi4 #12, pixels #16, in_advance #20, width #24, rewind #28,
 * out_advance #32, zero4 #36).  Tap pairs DW_PAIRS' (1, 4), (2, 5), (0, 3), (7, 8), then
 * the single tap 6 (then past the pairs' (6, 7)), loaded as the rows' macros say (DW_ROW0
 * ..: the window inside the input, or a border's).
 * Each row pointer moves to the next block on the last tap read through it.  14 registers,
 * so assembly throughout (naked: it saves r4-r11 itself); 110 instructions (131 cycles)
 * per block of 36 MACs unclamped, 116 (139) clamped, 14 (23) more per pixel. */
#define DW_LAYOUT_BLOCKS(name, store, row0, row1, row2)                                  \
  DW_RUN_FUNCTION(name) {                                                                \
    DW_LAYOUT_TAPS(store, row0, row1, row2);                                             \
  }
#define DW_LAYOUT_TAPS(store, t1, t2, t0, t4, t5, t3, t7, t8, t6)                        \
  __asm__ volatile(                                                                      \
      DW_RUN_ENTER                                                                       \
      "add lr, r0, r3, lsl #1\n\t" /* row 2 */                                           \
      "add r3, r0, r3\n\t"         /* row 1 */                                           \
      "1:\n\t"                                                                           \
      "ldmia r1!, {r4-r7}\n\t" /* the folded constants */                                \
      t1 t4 DW_PAIR_ASM                                                                  \
      t2 t5 DW_PAIR_ASM                                                                  \
      t0 t3 DW_PAIR_ASM                                                                  \
      t7 t8 DW_PAIR_ASM                                                                  \
      t6                                                                                 \
      "ldr r11, [r1], #4\n\t"                                                            \
      "ldr r12, [r1], #20\n\t" /* past (6, 7): layout_pairs' */                          \
      "sxtb16 r9, r8\n\t"                                                                \
      "smlabb r4, r11, r9, r4\n\t"                                                       \
      "smlatt r6, r11, r9, r6\n\t"                                                       \
      "sxtb16 r9, r8, ror #8\n\t"                                                        \
      "smlabb r5, r12, r9, r5\n\t"                                                       \
      "smlatt r7, r12, r9, r7\n\t"                                                       \
      DW_REQUANT_ASM("r4")                                                               \
      DW_REQUANT_ASM("r5")                                                               \
      DW_REQUANT_ASM("r6")                                                               \
      DW_REQUANT_ASM("r7")                                                               \
      "ssat r4, #8, r4\n\t"                                                              \
      "ssat r5, #8, r5\n\t"                                                              \
      "ssat r6, #8, r6\n\t"                                                              \
      "ssat r7, #8, r7\n\t"                                                              \
      store                                                                              \
      "str r8, [sp]\n\t"                                                                 \
      "cmp r8, r9\n\t"                                                                   \
      "bne 1b\n\t"                                                                       \
      /* the pixel is done: the next one's window and blocks */                          \
      DW_RUN_NEXT("add r3, r3, r9\n\t" "add lr, lr, r9\n\t"))

/* The window inside the input, and the borders of one row or column outside (top, bottom,
 * left, right and the four corners), each clamped and unclamped: layout_run picks one by
 * the taps outside and the activation's range. */
DW_LAYOUT_BLOCKS(layout_blocks, DW_CLAMPED, DW_ROW0, DW_ROW1, DW_ROW2)
DW_LAYOUT_BLOCKS(layout_top, DW_CLAMPED, DW_ROW0_OUT, DW_ROW1, DW_ROW2)
DW_LAYOUT_BLOCKS(layout_bottom, DW_CLAMPED, DW_ROW0, DW_ROW1, DW_ROW2_OUT)
DW_LAYOUT_BLOCKS(layout_left, DW_CLAMPED, DW_ROW0_LEFT, DW_ROW1_LEFT, DW_ROW2_LEFT)
DW_LAYOUT_BLOCKS(layout_right, DW_CLAMPED, DW_ROW0_RIGHT, DW_ROW1_RIGHT, DW_ROW2_RIGHT)
DW_LAYOUT_BLOCKS(layout_top_left, DW_CLAMPED, DW_ROW0_OUT, DW_ROW1_LEFT, DW_ROW2_LEFT)
DW_LAYOUT_BLOCKS(layout_top_right, DW_CLAMPED, DW_ROW0_OUT, DW_ROW1_RIGHT, DW_ROW2_RIGHT)
DW_LAYOUT_BLOCKS(layout_bottom_left, DW_CLAMPED, DW_ROW0_LEFT, DW_ROW1_LEFT, DW_ROW2_OUT)
DW_LAYOUT_BLOCKS(layout_bottom_right, DW_CLAMPED, DW_ROW0_RIGHT, DW_ROW1_RIGHT, DW_ROW2_OUT)
DW_LAYOUT_BLOCKS(unclamped_blocks, DW_UNCLAMPED, DW_ROW0, DW_ROW1, DW_ROW2)
DW_LAYOUT_BLOCKS(unclamped_top, DW_UNCLAMPED, DW_ROW0_OUT, DW_ROW1, DW_ROW2)
DW_LAYOUT_BLOCKS(unclamped_bottom, DW_UNCLAMPED, DW_ROW0, DW_ROW1, DW_ROW2_OUT)
DW_LAYOUT_BLOCKS(unclamped_left, DW_UNCLAMPED, DW_ROW0_LEFT, DW_ROW1_LEFT, DW_ROW2_LEFT)
DW_LAYOUT_BLOCKS(unclamped_right, DW_UNCLAMPED, DW_ROW0_RIGHT, DW_ROW1_RIGHT, DW_ROW2_RIGHT)
DW_LAYOUT_BLOCKS(unclamped_top_left, DW_UNCLAMPED, DW_ROW0_OUT, DW_ROW1_LEFT, DW_ROW2_LEFT)
DW_LAYOUT_BLOCKS(unclamped_top_right, DW_UNCLAMPED, DW_ROW0_OUT, DW_ROW1_RIGHT, DW_ROW2_RIGHT)
DW_LAYOUT_BLOCKS(unclamped_bottom_left, DW_UNCLAMPED, DW_ROW0_LEFT, DW_ROW1_LEFT, DW_ROW2_OUT)
DW_LAYOUT_BLOCKS(unclamped_bottom_right, DW_UNCLAMPED, DW_ROW0_RIGHT, DW_ROW1_RIGHT, DW_ROW2_OUT)

/* layout_pairs: a run of pixel pairs (A, B = A + 1, stride 1) from the same blocks, per block
 * two halves of 2 channels (0 and 1, then 2 and 3) with A's and B's sums in r4, r5 and r6,
 * r7.  Each of the 4 columns of the pair's window (B's window is A's one column right)
 * unpacks its rows 0 and 1 once, as a pair per channel (PKHBT / PKHTB + SXTB16), for both
 * pixels: SMLAD by the column pair (w_x, w_3+x) of A's column x and of B's column x - 1.
 * Row 2's 4 words make (r21, r22), which A takes by (7, 8) and B by (6, 7), and (r20, r23):
 * A's tap 6 by (6, 7)'s bottom half, B's tap 8 by (7, 8)'s top one.  Every weight and
 * requantisation word is read once for the two pixels.  Registers: r0 the window's column
 * (walked right for the first half, back for the second), r1 the block, r2 step, r3 row,
 * r4-r7 sums, r8-r12 and lr the loads.  The half's offsets in the block (DW_<word>_<half>,
 * bytes) and the channel pair its PKH takes: */
#define DW_O(name, h) DW_O_(name, h)
#define DW_O_(name, h) DW_##name##_##h
#define DW_F0_0 "#0"
#define DW_F1_0 "#4"
#define DW_F0_1 "#8"
#define DW_F1_1 "#12"
#define DW_V1A_0 "#16"
#define DW_V1B_0 "#20"
#define DW_V1A_1 "#24"
#define DW_V1B_1 "#28"
#define DW_V2A_0 "#32"
#define DW_V2B_0 "#36"
#define DW_V2A_1 "#40"
#define DW_V2B_1 "#44"
#define DW_V0A_0 "#48"
#define DW_V0B_0 "#52"
#define DW_V0A_1 "#56"
#define DW_V0B_1 "#60"
#define DW_W8A_0 "#64"
#define DW_W8B_0 "#68"
#define DW_W8A_1 "#72"
#define DW_W8B_1 "#76"
#define DW_W6A_0 "#88"
#define DW_W6B_0 "#92"
#define DW_W6A_1 "#96"
#define DW_W6B_1 "#100"
#define DW_MA_0 "#104"
#define DW_SA_0 "#108"
#define DW_RA_0 "#112"
#define DW_MB_0 "#116"
#define DW_SB_0 "#120"
#define DW_RB_0 "#124"
#define DW_MA_1 "#128"
#define DW_SA_1 "#132"
#define DW_RA_1 "#136"
#define DW_MB_1 "#140"
#define DW_SB_1 "#144"
#define DW_RB_1 "#148"
#define DW_OUT_0 "#0"
#define DW_OUT_1 "#2"
#define DW_OUT1_0 "#1"
#define DW_OUT1_1 "#3"
#define DW_END_0 "" /* the run's out_end: only the second half ends a block */
#define DW_END_1 "ldr r9, [sp, #4]\n\t"
#define DW_PK_0(d, x, y) "pkhbt " d ", " x ", " y ", lsl #16\n\t" /* channels 0, 1 */
#define DW_PK_1(d, x, y) "pkhtb " d ", " y ", " x ", asr #16\n\t" /* channels 2, 3 */
#define DW_LDW(reg, name, h) "ldr " reg ", [r1, " DW_O(name, h) "]\n\t"
/* A column's rows 0 (inside, or the zero point of a row outside) and 1 into r8, r9; the
 * pair unpacked into r9 (the half's first channel) and r8 (its second). */
#define DW_P_R0_IN(reg) "ldr " reg ", [r0]\n\t"
#define DW_P_R0_OUT(reg) DW_ZP(reg)
#define DW_P_COL(r0load) r0load("r8") "ldr r9, [r0, r3]\n\t"
#define DW_P_COL_OUT(r0load) DW_ZP("r8") DW_ZP("r9") /* a column left or right of the input */
#define DW_P_UNPACK(pk) pk("r8", "r8", "r9") "sxtb16 r9, r8\n\t" "sxtb16 r8, r8, ror #8\n\t"
#define DW_P_MAC(acc0, acc1, w0, w1) DW_P_MAC_FROM(acc0, acc1, w0, w1, acc0, acc1)
#define DW_P_MAC_FROM(acc0, acc1, w0, w1, from0, from1)                                  \
  "smlad " acc0 ", " w0 ", r9, " from0 "\n\t"                                            \
  "smlad " acc1 ", " w1 ", r8, " from1 "\n\t"
/* The half's folded constants into one pixel's sums (r4, r5 unless said): the other
 * pixel's sums start from them at their first SMLAD (DW_P_MAC_FROM, DW_YA_<half>). */
#define DW_P_INIT_IN(h, a, b) DW_LDW(a, F0, h) DW_LDW(b, F1, h)
#define DW_P_INIT(h) DW_P_INIT_IN(h, "r4", "r5")
#define DW_YA_0 "r4" /* row 2 first: B's sums start from A's constants */
#define DW_YB_0 "r5"
#define DW_YA_1 "r6" /* row 2 last: B's sums go on */
#define DW_YB_1 "r7"
/* The 4 columns from `edge0` on (DW_P_COL, or DW_P_COL_OUT outside), r0 moved by `move`:
 * the first feeds pixel X (sums x0, x1) by its column pair wf, the two inner ones Y by the
 * previous pair and X by theirs, the last (`edge1`) Y by wl; `init` after the first loads. */
#define DW_P_WALK(h, pk, r0load, edge0, edge1, move, x0, x1, y0, y1, wfA, wfB, wlA, wlB, init, \
                  from0, from1)                                                          \
  edge0(r0load) DW_LDW("r10", wfA, h) DW_LDW("r11", wfB, h) init DW_P_UNPACK(pk)         \
  DW_P_MAC_FROM(x0, x1, "r10", "r11", from0, from1) move                                 \
  DW_P_COL(r0load) DW_LDW("r12", V1A, h) DW_LDW("lr", V1B, h) DW_P_UNPACK(pk)            \
  DW_P_MAC(y0, y1, "r10", "r11") DW_P_MAC(x0, x1, "r12", "lr") move                      \
  DW_P_COL(r0load) DW_LDW("r10", wlA, h) DW_LDW("r11", wlB, h) DW_P_UNPACK(pk)           \
  DW_P_MAC(y0, y1, "r12", "lr") DW_P_MAC(x0, x1, "r10", "r11") move                      \
  edge1(r0load) DW_P_UNPACK(pk) DW_P_MAC(y0, y1, "r10", "r11")
/* Columns 0 .. 3 (r0 ends at column 3), and 3 .. 0 (the sums started there); col0 and col3
 * load columns 0 and 3. */
#define DW_P_FORWARD(h, pk, r0load, col0, col3)                                          \
  DW_P_WALK(h, pk, r0load, col0, col3, "add r0, r0, r2\n\t", "r4", "r5", "r6", "r7", V0A, V0B, \
            V2A, V2B, "", "r4", "r5")
#define DW_P_BACKWARD(h, pk, r0load, col0, col3)                                         \
  DW_P_WALK(h, pk, r0load, col3, col0, "sub r0, r0, r2\n\t", "r6", "r7", "r4", "r5", V2A, V2B, \
            V0A, V0B, DW_P_INIT(h), "r4", "r5")
/* Row 2's words r20 .. r23 of the window at column r0 (inside, column 0 or 3 outside, or a
 * row outside), then its taps for both pixels. */
#define DW_P_ROW2_AT(r20, r23)                                                           \
  "add r12, r0, r3, lsl #1\n\t"                                                          \
  "add lr, r12, r2\n\t"                                                                  \
  r20                                                                                    \
  "ldr r9, [lr]\n\t"                                                                     \
  "ldr r10, [r12, r2, lsl #1]\n\t"                                                       \
  r23
#define DW_P_ROW2_IN DW_P_ROW2_AT("ldr r8, [r12]\n\t", "ldr r11, [lr, r2, lsl #1]\n\t")
#define DW_P_ROW2_LEFT DW_P_ROW2_AT(DW_ZP("r8"), "ldr r11, [lr, r2, lsl #1]\n\t")
#define DW_P_ROW2_RIGHT DW_P_ROW2_AT("ldr r8, [r12]\n\t", DW_ZP("r11"))
#define DW_P_ROW2_OUT DW_ZP("r8") DW_ZP("r9") DW_ZP("r10") DW_ZP("r11")
#define DW_P_ROW2(h, pk)                                                                 \
  pk("r9", "r9", "r10") pk("r8", "r8", "r11")                                            \
  "sxtb16 r10, r9\n\t"          /* (r21, r22) */                                         \
  "sxtb16 r9, r9, ror #8\n\t"                                                            \
  "sxtb16 r11, r8\n\t"          /* (r20, r23) */                                         \
  "sxtb16 r8, r8, ror #8\n\t"                                                            \
  DW_LDW("r12", W8A, h) DW_LDW("lr", W6A, h)                                             \
  "smlatt r6, r12, r11, " DW_O(YA, h) "\n\t"                                              \
  "smlad r4, r12, r10, r4\n\t"                                                           \
  "smlad r6, lr, r10, r6\n\t"                                                            \
  "smlabb r4, lr, r11, r4\n\t"                                                           \
  DW_LDW("r12", W8B, h) DW_LDW("lr", W6B, h)                                             \
  "smlatt r7, r12, r8, " DW_O(YB, h) "\n\t"                                               \
  "smlad r5, r12, r9, r5\n\t"                                                            \
  "smlad r7, lr, r9, r7\n\t"                                                             \
  "smlabb r5, lr, r8, r5\n\t"
/* The half's 4 sums requantised (its two channels' steps read once) and saturated. */
#define DW_P_REQUANT(h)                                                                  \
  DW_LDW("r8", MA, h) DW_LDW("r9", SA, h) DW_LDW("r10", RA, h) DW_LDW("r11", MB, h)      \
  DW_LDW("r12", SB, h)                                                                   \
  "sub lr, r9, r4, lsr #31\n\t"                                                          \
  "smmlar r4, r4, r8, lr\n\t"                                                            \
  "asr r4, r4, r10\n\t"                                                                  \
  "sub r9, r9, r6, lsr #31\n\t"                                                          \
  "smmlar r6, r6, r8, r9\n\t"                                                            \
  "asr r6, r6, r10\n\t"                                                                  \
  DW_LDW("r10", RB, h)                                                                   \
  "sub lr, r12, r5, lsr #31\n\t"                                                         \
  "smmlar r5, r5, r11, lr\n\t"                                                           \
  "asr r5, r5, r10\n\t"                                                                  \
  "sub r12, r12, r7, lsr #31\n\t"                                                        \
  "smmlar r7, r7, r11, r12\n\t"                                                          \
  "asr r7, r7, r10\n\t"                                                                  \
  "ssat r4, #8, r4\n\t"                                                                  \
  "ssat r5, #8, r5\n\t"                                                                  \
  "ssat r6, #8, r6\n\t"                                                                  \
  "ssat r7, #8, r7\n\t"
/* The half's 4 bytes stored at out + 2h (A's) and out + width + 2h (B's), r8 then the run's
 * out, r9 its out_end: clamped to [lo4, hi4] as one word (DW_P_CLAMPED), or as they are
 * when the activation's range is the whole int8 one (DW_P_UNCLAMPED). */
#define DW_P_CLAMPED(h)                                                                  \
  "pkhbt r4, r4, r6, lsl #16\n\t"                                                        \
  "pkhbt r5, r5, r7, lsl #16\n\t"                                                        \
  "uxtb16 r4, r4\n\t"                                                                    \
  "uxtb16 r5, r5\n\t"                                                                    \
  "orr r4, r4, r5, lsl #8\n\t" /* A's 2 bytes, B's 2 */                                  \
  "ldmia sp, {r8, r9, r10, r11}\n\t" /* out, out_end, lo4, hi4 */                        \
  "ssub8 lr, r4, r10\n\t"                                                                \
  "sel r4, r4, r10\n\t"                                                                  \
  "ssub8 lr, r11, r4\n\t"                                                                \
  "sel r4, r4, r11\n\t"                                                                  \
  "add r12, r8, r2\n\t" /* B's: width == step */                                         \
  "strh r4, [r8, " DW_O(OUT, h) "]\n\t"                                                  \
  "lsr r4, r4, #16\n\t"                                                                  \
  "strh r4, [r12, " DW_O(OUT, h) "]\n\t"
#define DW_P_UNCLAMPED(h)                                                                \
  "ldr r8, [sp]\n\t"                                                                     \
  DW_O(END, h)                                                                           \
  "strb r4, [r8, " DW_O(OUT, h) "]\n\t"                                                  \
  "strb r5, [r8, " DW_O(OUT1, h) "]\n\t"                                                 \
  "add r12, r8, r2\n\t" /* B's: width == step */                                         \
  "strb r6, [r12, " DW_O(OUT, h) "]\n\t"                                                 \
  "strb r7, [r12, " DW_O(OUT1, h) "]\n\t"
/* A pair's or triple's next block (window, layout and out 4 bytes on), back to its start
 * (1:) until out reaches the pixel's end (r9). */
#define DW_NEXT_BLOCK                                                                    \
  "add r0, r0, #4\n\t"                                                                   \
  "add r1, r1, #152\n\t" /* 4 * DW_BLOCK_WORDS */                                        \
  "add r8, r8, #4\n\t"                                                                   \
  "str r8, [sp]\n\t"                                                                     \
  "cmp r8, r9\n\t"                                                                       \
  "bne 1b\n\t"
/* For the run's pixel pairs (pixels: pairs; out: A's first block, out_end its end; width
 * bytes per pixel, B's from out + width; in_advance and out_advance: from past A's window's
 * and A's last block to the next pair's), arguments as layout_blocks'.  Each half's 4
 * bytes are stored after the two windows' words of its channels were read.  Raster order:
 * the planner keeps B's output below B's window, so a byte of it overwrites at most a
 * channel c' <= c of the pixel before, which the pair read already.  Last pair first (an
 * output started inside the input a whole number of pixels on): A's byte of channel c
 * overwrites channel c of an input pixel, which both windows read already.  212
 * instructions (242 cycles) per block of 72 MACs clamped, 197 (219) unclamped (two
 * layout_blocks: 232 (278), 220 (262)), 12 (20) more per pair. */
#define DW_LAYOUT_PAIRS(name, store, r0load, row2, col0, col3)                           \
  DW_PAIRS_OF(name, store, row2, DW_P_ROW2(0, DW_PK_0),                                  \
              DW_P_FORWARD(0, DW_PK_0, r0load, col0, col3),                              \
              DW_P_BACKWARD(1, DW_PK_1, r0load, col0, col3), DW_P_ROW2(1, DW_PK_1))
/* A pair run whose halves take row 2 by `row2` then `ops0` / `ops1`, and rows 0 and 1 by
 * `walk0` (after row 2) and `walk1` (before it). */
#define DW_PAIRS_OF(name, store, row2, ops0, walk0, walk1, ops1)                         \
  DW_RUN_FUNCTION(name) {                                                                \
    __asm__ volatile(                                                                    \
        DW_RUN_ENTER                                                                     \
        "1:\n\t"                                                                         \
        row2 DW_P_INIT(0) ops0 walk0                                                     \
        DW_P_REQUANT(0) store(0)                                                         \
        walk1 row2 ops1                                                                  \
        DW_P_REQUANT(1) store(1)                                                         \
        DW_NEXT_BLOCK                                                                    \
        DW_RUN_NEXT("")); /* the pair is done: the next one's window and blocks */       \
  }

/* The pairs whose window lies inside the input, whose row 0 lies above it, whose row 2
 * below, whose column 0 left of it, whose column 3 right of it, unclamped (the activations
 * models use: the whole int8 range); clamped only inside. */
DW_LAYOUT_PAIRS(unclamped_pairs, DW_P_UNCLAMPED, DW_P_R0_IN, DW_P_ROW2_IN, DW_P_COL, DW_P_COL)
DW_LAYOUT_PAIRS(unclamped_pairs_top, DW_P_UNCLAMPED, DW_P_R0_OUT, DW_P_ROW2_IN, DW_P_COL,
                DW_P_COL)
DW_LAYOUT_PAIRS(unclamped_pairs_bottom, DW_P_UNCLAMPED, DW_P_R0_IN, DW_P_ROW2_OUT, DW_P_COL,
                DW_P_COL)
DW_LAYOUT_PAIRS(unclamped_pairs_left, DW_P_UNCLAMPED, DW_P_R0_IN, DW_P_ROW2_LEFT, DW_P_COL_OUT,
                DW_P_COL)
DW_LAYOUT_PAIRS(unclamped_pairs_right, DW_P_UNCLAMPED, DW_P_R0_IN, DW_P_ROW2_RIGHT, DW_P_COL,
                DW_P_COL_OUT)
/* The corners: a row's first or last pair whose row 0 or row 2 lies outside as well. */
DW_LAYOUT_PAIRS(unclamped_pairs_top_left, DW_P_UNCLAMPED, DW_P_R0_OUT, DW_P_ROW2_LEFT,
                DW_P_COL_OUT, DW_P_COL)
DW_LAYOUT_PAIRS(unclamped_pairs_top_right, DW_P_UNCLAMPED, DW_P_R0_OUT, DW_P_ROW2_RIGHT,
                DW_P_COL, DW_P_COL_OUT)
DW_LAYOUT_PAIRS(unclamped_pairs_bottom_left, DW_P_UNCLAMPED, DW_P_R0_IN, DW_P_ROW2_OUT,
                DW_P_COL_OUT, DW_P_COL)
DW_LAYOUT_PAIRS(unclamped_pairs_bottom_right, DW_P_UNCLAMPED, DW_P_R0_IN, DW_P_ROW2_OUT,
                DW_P_COL, DW_P_COL_OUT)
DW_LAYOUT_PAIRS(layout_pairs, DW_P_CLAMPED, DW_P_R0_IN, DW_P_ROW2_IN, DW_P_COL, DW_P_COL)

/* layout_pairs2: the pairs of stride 2 (B's window two columns right of A's: 5 columns, the
 * middle one A's column 2 and B's column 0), as layout_pairs: each column's rows 0 and 1
 * unpacked once for both pixels, every weight and requantisation word read once.  The
 * first half walks columns 0, 2, 4, 3, 1 (A by (0, 3); B by (0, 3), A by (2, 5); B by
 * (2, 5); B by (1, 4); A by (1, 4)), the second 1, 3, 4, 2, 0, so each column pair's words
 * are loaded with a column's.  Row 2's 5 words make (r20, r21) and (r22, r23), which A and
 * B take by (6, 7), and (r22, r24): A's and B's tap 8 by (7, 8)'s top half.  About 20
 * instructions per block more than layout_pairs (a fifth column and row-2 word), against
 * two layout_blocks' 220. */
#define DW_Q_COLS(h, pk, r0load, col4)                                                   \
  DW_P_COL(r0load) DW_LDW("r10", V0A, h) DW_LDW("r11", V0B, h) DW_P_UNPACK(pk)           \
  DW_P_MAC("r4", "r5", "r10", "r11") "add r0, r0, r2, lsl #1\n\t"                        \
  DW_P_COL(r0load) DW_LDW("r12", V2A, h) DW_LDW("lr", V2B, h) DW_P_UNPACK(pk)            \
  DW_P_MAC("r6", "r7", "r10", "r11") DW_P_MAC("r4", "r5", "r12", "lr")                   \
  "add r0, r0, r2, lsl #1\n\t"                                                           \
  col4(r0load) DW_P_UNPACK(pk) DW_P_MAC("r6", "r7", "r12", "lr") "sub r0, r0, r2\n\t"    \
  DW_P_COL(r0load) DW_LDW("r10", V1A, h) DW_LDW("r11", V1B, h) DW_P_UNPACK(pk)           \
  DW_P_MAC("r6", "r7", "r10", "r11") "sub r0, r0, r2, lsl #1\n\t"                        \
  DW_P_COL(r0load) DW_P_UNPACK(pk) DW_P_MAC("r4", "r5", "r10", "r11")
#define DW_Q_COLS_BACK(h, pk, r0load, col4)                                              \
  DW_P_COL(r0load) DW_LDW("r10", V1A, h) DW_LDW("r11", V1B, h)                           \
  DW_P_INIT_IN(h, "r6", "r7") DW_P_UNPACK(pk)                                            \
  DW_P_MAC_FROM("r4", "r5", "r10", "r11", "r6", "r7") "add r0, r0, r2, lsl #1\n\t"       \
  DW_P_COL(r0load) DW_P_UNPACK(pk) DW_P_MAC("r6", "r7", "r10", "r11")                    \
  "add r0, r0, r2\n\t"                                                                   \
  col4(r0load) DW_LDW("r12", V2A, h) DW_LDW("lr", V2B, h) DW_P_UNPACK(pk)                \
  DW_P_MAC("r6", "r7", "r12", "lr") "sub r0, r0, r2, lsl #1\n\t"                         \
  DW_P_COL(r0load) DW_LDW("r10", V0A, h) DW_LDW("r11", V0B, h) DW_P_UNPACK(pk)           \
  DW_P_MAC("r4", "r5", "r12", "lr") DW_P_MAC("r6", "r7", "r10", "r11")                   \
  "sub r0, r0, r2, lsl #1\n\t"                                                           \
  DW_P_COL(r0load) DW_P_UNPACK(pk) DW_P_MAC("r4", "r5", "r10", "r11")
/* Row 2's words r20 .. r24 of the window at column r0 (inside, column 4 outside, or the
 * row outside), then its taps for both pixels. */
#define DW_Q_ROW2_AT(r24)                                                                \
  "add r12, r0, r3, lsl #1\n\t"                                                          \
  "add lr, r12, r2\n\t"                                                                  \
  "ldr r8, [r12]\n\t"                                                                    \
  "ldr r9, [lr]\n\t"                                                                     \
  "ldr r10, [r12, r2, lsl #1]\n\t"                                                       \
  "ldr r11, [lr, r2, lsl #1]\n\t"                                                        \
  r24
#define DW_Q_ROW2_IN DW_Q_ROW2_AT("ldr r12, [r12, r2, lsl #2]\n\t")
#define DW_Q_ROW2_RIGHT DW_Q_ROW2_AT(DW_ZP("r12"))
#define DW_Q_ROW2_OUT DW_ZP("r8") DW_ZP("r9") DW_ZP("r10") DW_ZP("r11") DW_ZP("r12")
#define DW_Q_ROW2(h, pk)                                                                 \
  pk("r8", "r8", "r9") pk("r9", "r10", "r11") pk("r10", "r10", "r12")                    \
  "sxtb16 r11, r10\n\t"         /* (r22, r24) */                                         \
  "sxtb16 r10, r10, ror #8\n\t"                                                          \
  DW_LDW("r12", W8A, h) DW_LDW("lr", W8B, h)                                             \
  "smlatt r6, r12, r11, " DW_O(YA, h) "\n\t"                                              \
  "smlatb r4, r12, r11, r4\n\t"                                                          \
  "smlatt r7, lr, r10, " DW_O(YB, h) "\n\t"                                               \
  "smlatb r5, lr, r10, r5\n\t"                                                           \
  "sxtb16 r11, r8\n\t"          /* (r20, r21) */                                         \
  "sxtb16 r8, r8, ror #8\n\t"                                                            \
  DW_LDW("r12", W6A, h) DW_LDW("lr", W6B, h)                                             \
  "smlad r4, r12, r11, r4\n\t"                                                           \
  "smlad r5, lr, r8, r5\n\t"                                                             \
  "sxtb16 r11, r9\n\t"          /* (r22, r23) */                                         \
  "sxtb16 r9, r9, ror #8\n\t"                                                            \
  "smlad r6, r12, r11, r6\n\t"                                                           \
  "smlad r7, lr, r9, r7\n\t"
#define DW_LAYOUT_PAIRS2(name, store, row2, col4)                                        \
  DW_PAIRS_OF(name, store, row2, DW_Q_ROW2(0, DW_PK_0),                                  \
              DW_Q_COLS(0, DW_PK_0, DW_P_R0_IN, col4),                                   \
              DW_Q_COLS_BACK(1, DW_PK_1, DW_P_R0_IN, col4), DW_Q_ROW2(1, DW_PK_1))

/* Stride 2's pairs inside the input, with column 4 right of it, row 2 below it, or both
 * (SAME padding of an even size), unclamped. */
DW_LAYOUT_PAIRS2(unclamped_pairs2, DW_P_UNCLAMPED, DW_Q_ROW2_IN, DW_P_COL)
DW_LAYOUT_PAIRS2(unclamped_pairs2_right, DW_P_UNCLAMPED, DW_Q_ROW2_RIGHT, DW_P_COL_OUT)
DW_LAYOUT_PAIRS2(unclamped_pairs2_bottom, DW_P_UNCLAMPED, DW_Q_ROW2_OUT, DW_P_COL)
DW_LAYOUT_PAIRS2(unclamped_pairs2_bottom_right, DW_P_UNCLAMPED, DW_Q_ROW2_OUT, DW_P_COL_OUT)

/* layout_triples: a run of pixel triples (A, B = A + 1, C = A + 2, stride 1, unclamped) from
 * the same DW_TAP_PAIRS blocks, as layout_pairs but three windows per pass: the 5 columns
 * of the triple's window each unpack rows 0 and 1 once for the 2 channels of a half and
 * feed up to 3 pixels (A by its column pair k, B by k - 1, C by k - 2), so a pixel costs
 * 5/3 of a column's unpacking against layout_pairs' 2, and each half's requantisation words
 * are read once for 3 pixels.  Row 2's 5 words make (r20, r21): A by (6, 7), B's tap 6 by
 * its bottom half; (r22, r23): B by (7, 8), C by (6, 7), A's tap 8 by (7, 8)'s top half;
 * and r24 alone: C's tap 8.  Registers: r0 the window's column in row 2 (walked right for
 * the first half, back for the second: rows 0 and 1 at r0 + 2 r3 and r0 + r3, so no row
 * needs a pointer of its own), r1 the block, r2 step, r3 minus row, sums A r4 r5, B r6
 * r7, C r10 r11, r8 r9 the unpacked column, r12 lr one column pair's weights (kept for the
 * next column when it takes the same pair).  A column's rows 0 and 1 (inside or outside)
 * and row 2's words of the window at r0 (inside, column 0 left of the input or column 4
 * right of it): */
#define DW_T_COL "ldr r8, [r0, r3, lsl #1]\n\t" "ldr r9, [r0, r3]\n\t"
#define DW_T_COL_OUT DW_ZP("r8") DW_ZP("r9")
#define DW_T_R2A_IN "ldr r8, [r0]\n\t" "ldr r9, [r0, r2]\n\t"
#define DW_T_R2A_LEFT DW_ZP("r8") "ldr r9, [r0, r2]\n\t"
#define DW_T_R2B_IN                                                                      \
  "add r9, r0, r2\n\t"                                                                   \
  "ldr r8, [r0, r2, lsl #1]\n\t"                                                         \
  "ldr r9, [r9, r2, lsl #1]\n\t"
#define DW_T_R2C_IN "ldr r9, [r0, r2, lsl #2]\n\t"
#define DW_T_ROW2_IN DW_T_R2A_IN, DW_T_R2B_IN, DW_T_R2C_IN
#define DW_T_ROW2_LEFT DW_T_R2A_LEFT, DW_T_R2B_IN, DW_T_R2C_IN
#define DW_T_ROW2_RIGHT DW_T_R2A_IN, DW_T_R2B_IN, DW_ZP("r9")
/* C's tap 8 from r24's channel of the half: the bottom halfword of SXTB16's (half 0) or its
 * top (half 1). */
#define DW_T8_0 "smlatb"
#define DW_T8_1 "smlatt"
/* The half's sums of A and C (`ac`) or of all three pixels from its folded constants. */
#define DW_T_INIT_AC(h)                                                                  \
  DW_LDW("r4", F0, h) DW_LDW("r5", F1, h) DW_LDW("r10", F0, h) DW_LDW("r11", F1, h)
#define DW_T_INIT(h) DW_T_INIT_AC(h) DW_LDW("r6", F0, h) DW_LDW("r7", F1, h)
/* Row 2's taps of the three pixels, the weights of (r20, r21) loaded with them, then
 * `init`; B's sums from `b0`, `b1` (A's constants when row 2 comes first). */
#define DW_T_ROW2(h, pk, init, b0, b1, r2a, r2b, r2c)                                    \
  r2a DW_LDW("r12", W6A, h) DW_LDW("lr", W6B, h) init DW_P_UNPACK(pk)                    \
  "smlabt r6, r12, r9, " b0 "\n\t"                                                        \
  "smlad r4, r12, r9, r4\n\t"                                                            \
  "smlabt r7, lr, r8, " b1 "\n\t"                                                         \
  "smlad r5, lr, r8, r5\n\t"                                                             \
  r2b DW_P_UNPACK(pk) DW_P_MAC("r10", "r11", "r12", "lr")                                \
  DW_LDW("r12", W8A, h) DW_LDW("lr", W8B, h) DW_P_MAC("r6", "r7", "r12", "lr")           \
  "smlatb r4, r12, r9, r4\n\t"                                                           \
  "smlatb r5, lr, r8, r5\n\t"                                                            \
  r2c                                                                                    \
  "sxtb16 r8, r9\n\t"                                                                    \
  "sxtb16 r9, r9, ror #8\n\t"                                                            \
  DW_O(T8, h) " r10, r12, r8, r10\n\t"                                                   \
  DW_O(T8, h) " r11, lr, r9, r11\n\t"
/* Rows 0 and 1 of the 5 columns from `edge0` on (DW_T_COL, or DW_T_COL_OUT outside) to
 * `edge1`, r0 moved by `move`: the first feeds pixel X (sums x0, x1) by its column pair
 * near, the next ones B (r6, r7) by the pair before and X by the next, the middle one Z
 * (z0, z1) by near as well, the last Z by far; each column's first pair kept from the
 * column before.  `init` with the first loads. */
#define DW_T_WALK(h, pk, edge0, edge1, move, init, x0, x1, z0, z1, nearA, nearB, midA, midB, \
                  farA, farB)                                                            \
  edge0 DW_LDW("r12", nearA, h) DW_LDW("lr", nearB, h) init DW_P_UNPACK(pk)              \
  DW_P_MAC(x0, x1, "r12", "lr") move                                                     \
  DW_T_COL DW_P_UNPACK(pk) DW_P_MAC("r6", "r7", "r12", "lr")                             \
  DW_LDW("r12", midA, h) DW_LDW("lr", midB, h) DW_P_MAC(x0, x1, "r12", "lr") move        \
  DW_T_COL DW_P_UNPACK(pk) DW_P_MAC("r6", "r7", "r12", "lr")                             \
  DW_LDW("r12", nearA, h) DW_LDW("lr", nearB, h) DW_P_MAC(z0, z1, "r12", "lr")           \
  DW_LDW("r12", farA, h) DW_LDW("lr", farB, h) DW_P_MAC(x0, x1, "r12", "lr") move        \
  DW_T_COL DW_P_UNPACK(pk) DW_P_MAC("r6", "r7", "r12", "lr")                             \
  DW_LDW("r12", midA, h) DW_LDW("lr", midB, h) DW_P_MAC(z0, z1, "r12", "lr") move        \
  edge1 DW_LDW("r12", farA, h) DW_LDW("lr", farB, h) DW_P_UNPACK(pk)                     \
  DW_P_MAC(z0, z1, "r12", "lr")
/* Columns 0 .. 4 (A by (0, 3) first; r0 ends at column 4), and 4 .. 0 with the sums
 * started there (C by (2, 5) first); col0 and col4 load columns 0 and 4. */
#define DW_T_FORWARD(h, pk, col0, col4, next)                                            \
  DW_T_WALK(h, pk, col0, col4, next, "", "r4", "r5", "r10", "r11", V0A, V0B, V1A, V1B, V2A, \
            V2B)
#define DW_T_BACKWARD(h, pk, col0, col4, back)                                           \
  DW_T_WALK(h, pk, col4, col0, back, DW_T_INIT(h), "r10", "r11", "r4", "r5", V2A, V2B, V1A, \
            V1B, V0A, V0B)
/* One channel's 3 sums requantised from its (multiplier, start, shift) words. */
#define DW_T_REQUANT_CH(h, m, s, r, x, y, z)                                             \
  DW_LDW("r8", m, h) DW_LDW("r9", s, h) DW_LDW("r12", r, h)                               \
  "sub lr, r9, " x ", lsr #31\n\t"                                                       \
  "smmlar " x ", " x ", r8, lr\n\t"                                                      \
  "asr " x ", " x ", r12\n\t"                                                            \
  "sub lr, r9, " y ", lsr #31\n\t"                                                       \
  "smmlar " y ", " y ", r8, lr\n\t"                                                      \
  "asr " y ", " y ", r12\n\t"                                                            \
  "sub r9, r9, " z ", lsr #31\n\t"                                                       \
  "smmlar " z ", " z ", r8, r9\n\t"                                                      \
  "asr " z ", " z ", r12\n\t"
/* The half's 6 sums requantised and saturated. */
#define DW_T_REQUANT(h)                                                                  \
  DW_T_REQUANT_CH(h, MA, SA, RA, "r4", "r6", "r10")                                      \
  DW_T_REQUANT_CH(h, MB, SB, RB, "r5", "r7", "r11")                                      \
  "ssat r4, #8, r4\n\t"                                                                  \
  "ssat r5, #8, r5\n\t"                                                                  \
  "ssat r6, #8, r6\n\t"                                                                  \
  "ssat r7, #8, r7\n\t"                                                                  \
  "ssat r10, #8, r10\n\t"                                                                \
  "ssat r11, #8, r11\n\t"
/* Stored at out + 2h, out + width + 2h and out + 2 width + 2h (width == step), r8 then the
 * run's out, r9 its out_end. */
#define DW_T_STORE(h)                                                                    \
  "ldr r8, [sp]\n\t"                                                                     \
  DW_O(END, h)                                                                           \
  "strb r4, [r8, " DW_O(OUT, h) "]\n\t"                                                  \
  "strb r5, [r8, " DW_O(OUT1, h) "]\n\t"                                                 \
  "add r12, r8, r2\n\t"                                                                  \
  "strb r6, [r12, " DW_O(OUT, h) "]\n\t"                                                 \
  "strb r7, [r12, " DW_O(OUT1, h) "]\n\t"                                                \
  "add r12, r12, r2\n\t"                                                                 \
  "strb r10, [r12, " DW_O(OUT, h) "]\n\t"                                                \
  "strb r11, [r12, " DW_O(OUT1, h) "]\n\t"
/* A triple run (pixels: triples; out: A's first block, out_end its end; in_advance and
 * out_advance: from past A's window's and A's last block to the next triple's), arguments
 * as layout_blocks' but r0 the window's row 2 and r3 minus row; columns 0 and 4 inside or
 * outside (row2: row 2's three loads).  Each half's 6 bytes are stored after the three
 * windows' words of its channels were read; over the input, the caller keeps the output
 * where they overwrite only bytes read already (triples_may_overlap), or past every byte
 * the rows still to come read (depthwise_backwards). */
#define DW_LAYOUT_TRIPLES(name, col0, col4, row2) DW_TRIPLES_OF(name, col0, col4, row2)
#define DW_TRIPLES_OF(name, col0, col4, r2a, r2b, r2c)                                   \
  DW_RUN_FUNCTION(name) {                                                                \
    __asm__ volatile(                                                                    \
        DW_RUN_ENTER                                                                     \
        "1:\n\t"                                                                         \
        DW_T_ROW2(0, DW_PK_0, DW_T_INIT_AC(0), "r4", "r5", r2a, r2b, r2c)                \
        DW_T_FORWARD(0, DW_PK_0, col0, col4, "add r0, r0, r2\n\t")                      \
        DW_T_REQUANT(0) DW_T_STORE(0)                                                    \
        DW_T_BACKWARD(1, DW_PK_1, col0, col4, "sub r0, r0, r2\n\t")                     \
        DW_T_ROW2(1, DW_PK_1, "", "r6", "r7", r2a, r2b, r2c)                             \
        DW_T_REQUANT(1) DW_T_STORE(1)                                                    \
        DW_NEXT_BLOCK                                                                    \
        DW_RUN_NEXT("")); /* the triple is done: the next one's window and blocks */     \
  }

/* The triples whose window lies inside the input, whose column 0 lies left of it, whose
 * column 4 right of it (a row's first and last triple), unclamped. */
DW_LAYOUT_TRIPLES(unclamped_triples, DW_T_COL, DW_T_COL, DW_T_ROW2_IN)
DW_LAYOUT_TRIPLES(unclamped_triples_left, DW_T_COL_OUT, DW_T_COL, DW_T_ROW2_LEFT)
DW_LAYOUT_TRIPLES(unclamped_triples_right, DW_T_COL, DW_T_COL_OUT, DW_T_ROW2_RIGHT)

/* unclamped_triples for 8 channels inside (row_triples' inner triples: vww's 48 x 48 of op
 * 1): the step an immediate, so r2 holds out (no load of it per half, B's and C's bytes at
 * r2 + 8 and r2 + 16, row 2's words at r0 + 8k); the two blocks looped by out's bit 2 (out
 * 8-byte aligned: row_triples checks), the next triple's window, blocks and out moved by
 * constants. */
#define DW_T8_ROW2_IN                                                                    \
  "ldr r8, [r0]\n\t" "ldr r9, [r0, #8]\n\t", "ldr r8, [r0, #16]\n\t" "ldr r9, [r0, #24]\n\t", \
  "ldr r9, [r0, #32]\n\t"
#define DW_T8_STORE(h)                                                                   \
  "strb r4, [r2, " DW_O(OUT, h) "]\n\t"                                                  \
  "strb r5, [r2, " DW_O(OUT1, h) "]\n\t"                                                 \
  "strb r6, [r2, " DW_O(OUT, h) "+8]\n\t"                                                \
  "strb r7, [r2, " DW_O(OUT1, h) "+8]\n\t"                                               \
  "strb r10, [r2, " DW_O(OUT, h) "+16]\n\t"                                              \
  "strb r11, [r2, " DW_O(OUT1, h) "+16]\n\t"
#define DW_T8_BLOCK(r2a, r2b, r2c)                                                       \
  DW_T_ROW2(0, DW_PK_0, DW_T_INIT_AC(0), "r4", "r5", r2a, r2b, r2c)                      \
  DW_T_FORWARD(0, DW_PK_0, DW_T_COL, DW_T_COL, "add r0, r0, #8\n\t")                     \
  DW_T_REQUANT(0) DW_T8_STORE(0)                                                         \
  DW_T_BACKWARD(1, DW_PK_1, DW_T_COL, DW_T_COL, "sub r0, r0, #8\n\t")                    \
  DW_T_ROW2(1, DW_PK_1, "", "r6", "r7", r2a, r2b, r2c)                                   \
  DW_T_REQUANT(1) DW_T8_STORE(1)
#define DW_T8_BLOCK_OF(rows2) DW_T8_BLOCK(rows2)
DW_RUN_FUNCTION(unclamped_triples8) {
  __asm__ volatile(DW_RUN_ENTER
                   "ldr r2, [sp]\n\t" /* out */
                   "1:\n\t"
                   DW_T8_BLOCK_OF(DW_T8_ROW2_IN)
                   "add r0, r0, #4\n\t"
                   "add r1, r1, #152\n\t" /* 4 * DW_BLOCK_WORDS */
                   "add r2, r2, #4\n\t"
                   "tst r2, #4\n\t"
                   "bne 1b\n\t" /* the second block */
                   "ldr r9, [sp, #16]\n\t" /* triples left */
                   "subs r9, r9, #1\n\t"
                   "beq 2f\n\t"
                   "str r9, [sp, #16]\n\t"
                   "add r0, r0, #16\n\t"  /* in_advance */
                   "sub r1, r1, #304\n\t" /* 2 * 4 * DW_BLOCK_WORDS */
                   "add r2, r2, #16\n\t"  /* out_advance */
                   "b 1b\n\t"
                   "2:\n\t"
                   "add sp, sp, #40\n\t"
                   "pop {r4-r11, pc}\n\t");
}
#else
/* The halfword `half` (0 low, 1 high) of a layout word, as int16. */
static int32_t half_of(int32_t word, int32_t half) {
  return (int16_t)(uint16_t)((uint32_t)word >> (16 * half));
}

/* layout_blocks' requantisation of one doubled sum from the record's (multiplier,
 * 2^(r-1) + offset * 2^r, r), output offset included (SMMLAR's 2^31 in the low word). */
static int32_t requantize_from(int32_t acc, const int32_t *step) {
  const uint32_t high_start = (uint32_t)step[1] - ((uint32_t)acc >> 31);
  const int64_t start = (int64_t)(((uint64_t)high_start << 32) | UINT32_C(0x80000000));
  return (int32_t)((start + (int64_t)acc * step[0]) >> 32) >> step[2];
}

/* The sums of one block (4 channels) of the window at `in`, from its folded constants. */
static void block_sums(const int8_t *in, const int32_t *block, int32_t step, int32_t row,
                       int32_t sums[4]) {
  static const int8_t first[4] = {1, 2, 0, 7}, second[4] = {4, 5, 3, 8}; /* DW_PAIRS */
  static const int8_t single_channel[4] = {0, 2, 1, 3}; /* SXTB16 order of the single tap */
  const int32_t *w = block + 4;
  int32_t j, k;
  for (j = 0; j < 4; ++j) sums[j] = block[j];
  for (k = 0; k < 4; ++k, w += 4) {
    const int8_t *a = in + first[k] / 3 * row + first[k] % 3 * step;
    const int8_t *z = in + second[k] / 3 * row + second[k] % 3 * step;
    for (j = 0; j < 4; ++j) {
      sums[j] = tflm_mac_wrap(sums[j], half_of(w[j], 0), a[j]);
      sums[j] = tflm_mac_wrap(sums[j], half_of(w[j], 1), z[j]);
    }
  }
  for (j = 0; j < 4; ++j) {
    const int32_t c = single_channel[j];
    sums[c] = tflm_mac_wrap(sums[c], half_of(w[j / 2], j % 2), in[2 * row + c]);
  }
}

/* layout_blocks in C (the host build's path over the same layout). */
static void layout_blocks(const int8_t *in, const int32_t *blocks, int32_t step, int32_t row,
                          const dw_run_t *run) {
  const int32_t lo = (int8_t)run->lo4, hi = (int8_t)run->hi4;
  const int32_t *block;
  int8_t *out = run->out;
  int32_t pixel, sums[4], j, value;
  for (pixel = 0; pixel < run->pixels;
       ++pixel, in += run->in_advance, out += run->out_advance) {
    const int8_t *end = out + run->width;
    for (block = blocks; out != end; out += 4, in += 4, block += DW_BLOCK_WORDS) {
      block_sums(in, block, step, row, sums);
      for (j = 0; j < 4; ++j) {
        value = requantize_from(sums[j], block + DW_BLOCK_STEPS + 3 * j);
        out[j] = (int8_t)(value < lo ? lo : value > hi ? hi : value);
      }
    }
  }
}
#endif

#if defined(CMSIS_DSP) && !defined(CMSIS_MVE)
/* dst[0 .. 4 * words) = src[...] (words >= 1; dst word aligned): 4 words per LDM / STM
 * pair when src is word aligned and words a multiple of 4, else one word per LDR / STR
 * (4 instructions a word), where gcc would call memcpy for a loop of cmsis_read4 /
 * cmsis_write4. */
static inline void copy_words(int8_t *dst, const int8_t *src, int32_t words) {
  int32_t word;
  if (((uintptr_t)src & 3u) == 0 && (words & 3) == 0) {
    __asm__ volatile(
        "1:\n\t"
        "ldmia %[s]!, {r4-r7}\n\t"
        "stmia %[d]!, {r4-r7}\n\t"
        "subs %[n], %[n], #4\n\t"
        "bne 1b\n\t"
        : [s] "+r"(src), [d] "+r"(dst), [n] "+r"(words)
        :
        : "r4", "r5", "r6", "r7", "memory", "cc");
    return;
  }
  __asm__ volatile(
      "1:\n\t"
      "ldr %[w], [%[s]], #4\n\t"
      "str %[w], [%[d]], #4\n\t"
      "subs %[n], %[n], #1\n\t"
      "bne 1b\n\t"
      : [w] "=&r"(word), [s] "+r"(src), [d] "+r"(dst), [n] "+r"(words)
      :
      : "memory", "cc");
}
#else
static void copy_words(int8_t *dst, const int8_t *src, int32_t words) {
  int32_t i;
  for (i = 0; i < 4 * words; i += 4) cmsis_write4(dst + i, cmsis_read4(src + i));
}
#endif

/* Channels c .. c + width - 1 (width a multiple of 4) of the 3x3 window whose top-left tap
 * is input pixel (y0, x0), copied into patch [3][3][width]; the taps outside the input hold
 * the zero point, which adds exactly 0 to a folded sum (zp * w + input_offset * w = 0), as
 * TFLM's skipped taps do. */
static void gather_taps(const tflm_conv_params_t *p, const int8_t *image, int32_t y0,
                        int32_t x0, int32_t c, int32_t width, int8_t *patch) {
  const int32_t zero_point = bytes4(-p->input_offset);
  int32_t ky, kx;
  for (ky = 0; ky < 3; ++ky) {
    const int32_t y = y0 + ky;
    if (y < 0 || y >= p->input_h) {
      fill_words(patch, zero_point, 3 * width);
      patch += 3 * width;
      continue;
    }
    for (kx = 0; kx < 3; ++kx, patch += width) {
      const int32_t x = x0 + kx;
      if (x < 0 || x >= p->input_w) {
        fill_words(patch, zero_point, width);
      } else {
        copy_words(patch, image + (y * p->input_w + x) * p->input_c + c, width >> 2);
      }
    }
  }
}

/* A run of one pixel of `blocks` blocks from out on (4 bytes each). */
static void run_of(const tflm_conv_params_t *p, int8_t *out, int32_t blocks, dw_run_t *run) {
  run->out = out;
  run->out_end = out + 4 * blocks;
  run->lo4 = bytes4(p->act_min);
  run->hi4 = bytes4(p->act_max);
  run->pixels = 1;
  run->in_advance = 0;
  run->width = 4 * blocks;
  run->rewind = 4 * DW_BLOCK_WORDS * blocks;
  run->out_advance = 0;
  run->zero4 = bytes4(-p->input_offset);
}

/* Which taps of a 3-tap side starting at `start` lie outside [0, size): 0 none, 1 the first
 * only, 2 the last only, 3 any other case (layout_blocks' variants do not cover it). */
static int32_t side_outside(int32_t start, int32_t size) {
  if (start >= 0 && start + 3 <= size) return 0;
  if (start == -1 && size >= 2) return 1;
  if (start >= 0 && start + 2 == size) return 2;
  return 3;
}

#if defined(CMSIS_DSP) && !defined(CMSIS_MVE)
typedef void (*dw_blocks_t)(const int8_t *, const int32_t *, int32_t, int32_t,
                            const dw_run_t *);

/* layout_blocks' variant for the activation (clamped or not: the whole int8 range), the
 * taps outside: rows (side_outside of the window's first row) by columns (of its first
 * column). */
static const dw_blocks_t dw_variants[2][3][3] = {
    {{layout_blocks, layout_left, layout_right},
     {layout_top, layout_top_left, layout_top_right},
     {layout_bottom, layout_bottom_left, layout_bottom_right}},
    {{unclamped_blocks, unclamped_left, unclamped_right},
     {unclamped_top, unclamped_top_left, unclamped_top_right},
     {unclamped_bottom, unclamped_bottom_left, unclamped_bottom_right}}};

/* `run` from the layout for the window whose top-left tap is input pixel (y0, x0), in or
 * out of the input, with the variant for its rows and columns outside; 0 when no variant
 * covers them.  The variant never reads a tap outside, so the window's address may lie
 * outside the input (computed as an integer). */
static int32_t layout_run(const dw_job_t *job, const int8_t *image, int32_t y0, int32_t x0,
                          const dw_run_t *run) {
  const tflm_conv_params_t *p = job->p;
  const int32_t rows = side_outside(y0, p->input_h), cols = side_outside(x0, p->input_w);
  const int32_t step = p->input_c;
  const intptr_t at = ((intptr_t)y0 * p->input_w + x0) * step;
  if (rows == 3 || cols == 3) return 0;
  dw_variants[p->act_min == -128 && p->act_max == 127][rows][cols](
      (const int8_t *)((uintptr_t)image + (uintptr_t)at), job->pairs, step,
      p->input_w * step, run);
  return 1;
}
#else
static int32_t layout_run(const dw_job_t *job, const int8_t *image, int32_t y0, int32_t x0,
                          const dw_run_t *run) {
  const tflm_conv_params_t *p = job->p;
  if (side_outside(y0, p->input_h) != 0 || side_outside(x0, p->input_w) != 0) return 0;
  layout_blocks(image + (y0 * p->input_w + x0) * p->input_c, job->pairs, p->input_c,
                p->input_w * p->input_c, run);
  return 1;
}
#endif

/* Which columns of a pair's window lie outside the input (pairs_fit). */
#define DW_INSIDE 0
#define DW_LEFT 1
#define DW_RIGHT 2

#if defined(CMSIS_DSP) && !defined(CMSIS_MVE)
/* layout_pairs' variant for the activation (clamped or not), the window's rows
 * (side_outside: inside, row 0 or row 2 outside) and columns (DW_INSIDE, DW_LEFT: column 0
 * outside, DW_RIGHT: column 3); NULL: none. */
static const dw_blocks_t dw_pair_variants[2][3][3] = {
    {{layout_pairs, NULL, NULL}, {NULL, NULL, NULL}, {NULL, NULL, NULL}},
    {{unclamped_pairs, unclamped_pairs_left, unclamped_pairs_right},
     {unclamped_pairs_top, unclamped_pairs_top_left, unclamped_pairs_top_right},
     {unclamped_pairs_bottom, unclamped_pairs_bottom_left, unclamped_pairs_bottom_right}}};

/* The variant of layout_pairs for the pairs of row y0 whose windows' columns are `cols`
 * (stride 1), NULL when none. */
static dw_blocks_t pairs_fit(const dw_job_t *job, int32_t y0, int32_t cols) {
  const tflm_conv_params_t *p = job->p;
  const int32_t rows = side_outside(y0, p->input_h);
  if (p->stride_w != 1 || rows == 3) return NULL;
  return dw_pair_variants[p->act_min == -128 && p->act_max == 127][rows][cols];
}

/* 1 when pairs_at takes pairs of row y0 (out: its first pixel) whose windows' columns are
 * `cols`: a variant fits, and backwards the output starts a whole number of pixels into
 * the input. */
static int32_t pairs_can(const dw_job_t *job, const int8_t *image, int32_t y0, int32_t cols,
                         const int8_t *out, int32_t backwards) {
  return pairs_fit(job, y0, cols) != NULL &&
         (!backwards ||
          ((uintptr_t)out - (uintptr_t)image) % (uint32_t)job->p->input_c == 0);
}

/* `pairs` pixel pairs of row oy (out: the row's first pixel, y0 its window's first row)
 * from the pair whose first pixel is output column x on, in one run of layout_pairs'
 * variant: raster, or last pair first (`backwards`: then x is the last pair's, for an
 * output started inside the input a whole number of pixels on).  The pixels it took: 2 *
 * pairs, or 0 when no variant fits. */
static int32_t pairs_at(const dw_job_t *job, const int8_t *image, int32_t y0, int32_t x,
                        int32_t pairs, int32_t cols, int8_t *out, int32_t backwards) {
  const tflm_conv_params_t *p = job->p;
  const int32_t step = p->input_c;
  const intptr_t at = ((intptr_t)y0 * p->input_w + x - p->pad_w) * step;
  const dw_blocks_t pairs_of = pairs_fit(job, y0, cols);
  dw_run_t run;
  if (pairs < 1 || !pairs_can(job, image, y0, cols, out, backwards)) return 0;
  run_of(p, out + x * step, step >> 2, &run);
  run.pixels = pairs;
  run.in_advance = backwards ? -3 * step : step; /* from past A's window's blocks */
  run.out_advance = backwards ? -3 * step : step;
  pairs_of((const int8_t *)((uintptr_t)image + (uintptr_t)at), job->pairs, step,
           p->input_w * step, &run);
  return 2 * pairs;
}
#else
static int32_t pairs_can(const dw_job_t *job, const int8_t *image, int32_t y0, int32_t cols,
                         const int8_t *out, int32_t backwards) {
  (void)job;
  (void)image;
  (void)y0;
  (void)cols;
  (void)out;
  (void)backwards;
  return 0;
}

static int32_t pairs_at(const dw_job_t *job, const int8_t *image, int32_t y0, int32_t x,
                        int32_t pairs, int32_t cols, int8_t *out, int32_t backwards) {
  (void)job;
  (void)image;
  (void)y0;
  (void)x;
  (void)pairs;
  (void)cols;
  (void)out;
  (void)backwards;
  return 0;
}
#endif

/* All channels of output pixel (oy, ox) from the layout: the blocks of 4 read in place by
 * layout_run when a variant covers the window (inside, or one row and / or column outside),
 * else DW_CHUNK_BLOCKS at a time from the window copied with the zero point in its outside
 * taps; then the output_c % 4 last channels on the plain filter. */
static __attribute__((noinline)) void pixel_layout(const dw_job_t *job, const int8_t *image,
                                                  const int8_t *filter, int32_t oy,
                                                  int32_t ox, int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  const int32_t y0 = oy * p->stride_h - p->pad_h, x0 = ox * p->stride_w - p->pad_w;
  const int32_t blocks = p->output_c >> 2;
  int32_t patch[9 * DW_CHUNK_BLOCKS], b, n;
  dw_run_t run;
  dw_window_t w;
  run_of(p, out, blocks, &run);
  if (!layout_run(job, image, y0, x0, &run)) {
    for (b = 0; b < blocks; b += n) {
      n = blocks - b < DW_CHUNK_BLOCKS ? blocks - b : DW_CHUNK_BLOCKS;
      gather_taps(p, image, y0, x0, 4 * b, 4 * n, (int8_t *)patch);
      run_of(p, out + 4 * b, n, &run);
      layout_blocks((const int8_t *)patch, job->pairs + DW_BLOCK_WORDS * b, 4 * n, 12 * n,
                    &run);
    }
  }
  if (p->output_c & 3) {
    window_of(p, image, filter, oy, ox, &w);
    last_channels(job, &w, out);
  }
}

/* First output column >= 0 whose window starts at or right of the input's left edge, and
 * one past the last whose window ends inside it. */
static void inner_columns(const tflm_conv_params_t *p, int32_t *first, int32_t *end) {
  *first = (p->pad_w + p->stride_w - 1) / p->stride_w;
  *end = p->input_w + p->pad_w >= 3 ? (p->input_w + p->pad_w - 3) / p->stride_w + 1 : 0;
  if (*end > p->output_w) *end = p->output_w;
  if (*end < *first) *end = *first;
}

/* 1 when the pair of the row's last two pixels (end - 1, end) runs as DW_RIGHT: end, whose
 * window has only its last column outside, is the row's last pixel, and end - 1 an inner
 * one from `from` on. */
static int32_t right_pair(const dw_job_t *job, const int8_t *image, int32_t y0, int32_t from,
                          int32_t end, int8_t *out, int32_t backwards) {
  const tflm_conv_params_t *p = job->p;
  return end == p->output_w - 1 && end > from &&
         side_outside(end - p->pad_w, p->input_w) == 2 &&
         pairs_can(job, image, y0, DW_RIGHT, out, backwards);
}

/* Output row oy (out: its first pixel) of a node whose layout covers every channel: the
 * pixels whose window's columns lie inside the input in pairs (pairs_at), the first and
 * the last pixel paired with their neighbour when only their outer column lies outside
 * (DW_LEFT, DW_RIGHT), the rest of them in one call of layout_run (a row outside at the
 * top or bottom taken by its variant), the others one by one; in raster order. */
static void row_layout(const dw_job_t *job, const int8_t *image, const int8_t *filter,
                       int32_t oy, int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  const int32_t y0 = oy * p->stride_h - p->pad_h, step = p->input_c;
  const int32_t paired = p->stride_w == 1; /* else no pair runs: not even their checks */
  int32_t first = 0, end = 0, ox = 0, right;
  dw_run_t run;
  if (side_outside(y0, p->input_h) != 3) inner_columns(p, &first, &end);
  if (paired && first == 1 && end > 1) ox = pairs_at(job, image, y0, 0, 1, DW_LEFT, out, 0);
  for (; ox < first; ++ox) pixel_layout(job, image, filter, oy, ox, out + ox * step);
  right = paired && ((end - ox) & 1) && right_pair(job, image, y0, ox, end, out, 0);
  end -= right; /* end - 1 waits for its pair */
  if (paired && end > ox) ox += pairs_at(job, image, y0, ox, (end - ox) >> 1, DW_INSIDE, out, 0);
  if (end > ox) {
    run_of(p, out + ox * step, step >> 2, &run);
    run.pixels = end - ox;
    run.in_advance = (p->stride_w - 1) * step;
    if (!layout_run(job, image, y0, ox * p->stride_w - p->pad_w, &run)) {
      for (; ox < end; ++ox) pixel_layout(job, image, filter, oy, ox, out + ox * step);
    }
  }
  if (right) end += pairs_at(job, image, y0, end, 1, DW_RIGHT, out, 0);
  for (ox = end; ox < p->output_w; ++ox) {
    pixel_layout(job, image, filter, oy, ox, out + ox * step);
  }
}

#if defined(CMSIS_DSP) && !defined(CMSIS_MVE)
/* layout_pairs2's variants (unclamped): the window inside or row 2 below the input, by
 * column 4 inside or right of it. */
static const dw_blocks_t dw_pair2_variants[2][2] = {
    {unclamped_pairs2, unclamped_pairs2_right},
    {unclamped_pairs2_bottom, unclamped_pairs2_bottom_right}};

/* 1 when row y0's pairs of stride 2 may run forward into out (the row's first pixel): the
 * row's output lies outside the 3 input rows its windows read, or a whole number of pixels
 * from the input (a half stores B's bytes before A's next channels are read: then each byte
 * overwrites only its own channel of an input pixel, which both windows read already). */
static int32_t forward_pairs2(const tflm_conv_params_t *p, const int8_t *image, int32_t y0,
                              const int8_t *out) {
  const int32_t line = p->input_w * p->input_c;
  const intptr_t at = (intptr_t)out - (intptr_t)image;
  return at + p->output_w * p->input_c <= (intptr_t)y0 * line ||
         at >= ((intptr_t)y0 + 3) * line || at % p->input_c == 0;
}

/* The pair runs of a row, their run's words but out, out_end and pixels set up once per
 * evaluation (row_layout's checks and set-up cost a row about 500 instructions), for an
 * unclamped activation and: stride 1 with SAME padding of one column outside each side of
 * an even width of 4 or more (row_layout's DW_LEFT pair, inner pairs and DW_RIGHT pair), or
 * stride 2 without left padding where every window's columns lie inside the input but
 * those of the last pixel, whose column 2 may lie right of it (SAME padding of an even
 * width). */
typedef struct {
  int32_t on;      /* 1: stride 1, 2: stride 2, 0: every row takes row_layout */
  int16_t right;   /* stride 2: the last pixel's column 2 lies outside */
  int16_t triples; /* 1: stride 1's rows in layout_triples where a variant fits (a width
                      divisible by 3, the output off the input: depthwise_int8) */
  dw_run_t run;    /* with the triples' advances when triples, else the pairs'; row_planned
                      sets the pairs' for its inner pairs.  One run, the flags in one word:
                      the plan lies in the frame of depthwise_int8, under every call of the
                      walk (issue #18: stack) */
} dw_row_plan_t;

/* layout_triples' variants for the windows' rows (side_outside: inside, row 0 or row 2
 * outside) and columns (DW_INSIDE, DW_LEFT: column 0 outside, DW_RIGHT: column 4); NULL:
 * none (layout_pairs' rows). */
static const dw_blocks_t dw_triple_variants[3][3] = {
    {unclamped_triples, unclamped_triples_left, unclamped_triples_right},
    {NULL, NULL, NULL},
    {NULL, NULL, NULL}};

/* 1 when the node's stride-1 rows run in triples (unclamped, SAME, widths of 5 or more,
 * odd ones too: row_triples' tails). */
static int32_t triples_fit(const tflm_conv_params_t *p) {
  return p->act_min == -128 && p->act_max == 127 && p->stride_w == 1 && p->pad_w == 1 &&
         p->output_w == p->input_w && p->output_w >= 5;
}

static void plan_rows(const dw_job_t *job, dw_row_plan_t *plan) {
  const tflm_conv_params_t *p = job->p;
  const int32_t w = p->output_w, inside = (p->input_w - 3) / 2 + 1; /* stride 2 */
  const int32_t unclamped = p->act_min == -128 && p->act_max == 127;
  plan->right = (int16_t)(inside == w - 1 && 2 * w == p->input_w);
  plan->on = 0;
  if (unclamped && p->stride_w == 1 && p->pad_w == 1 && w == p->input_w && w >= 4 &&
      !(w & 1)) {
    plan->on = 1;
  } else if (unclamped && p->stride_w == 2 && p->pad_w == 0 && p->input_w >= 3 &&
             (inside >= w || plan->right)) {
    plan->on = 2;
  }
  run_of(p, NULL, p->input_c >> 2, &plan->run);
  plan->triples = (int16_t)triples_fit(p);
  /* from past A's window's blocks to the next pair's, or to the next triple's (the inner
     run most rows take; row_planned's pairs set theirs) */
  plan->run.in_advance = (plan->triples ? 2 : 2 * p->stride_w - 1) * p->input_c;
  plan->run.out_advance = (plan->triples ? 2 : 1) * p->input_c;
}

/* `count` runs of variant `of` (pairs or triples) from output column x of row y0's windows
 * on (out: the row's first pixel), from `run` (a plan's); `down` rows lower with the row
 * negated (layout_triples: 2). */
static inline __attribute__((always_inline)) void planned_run(
    const dw_job_t *job, dw_run_t *run, dw_blocks_t of, const int8_t *image, int32_t y0,
    int32_t x, int32_t count, int8_t *out, int32_t down) {
  const tflm_conv_params_t *p = job->p;
  const int32_t step = p->input_c, row = p->input_w * step;
  const intptr_t at =
      (intptr_t)(y0 + down) * row + (intptr_t)(x * p->stride_w - p->pad_w) * step;
  run->out = out + x * step;
  run->out_end = run->out + step;
  run->pixels = count;
  of((const int8_t *)((uintptr_t)image + (uintptr_t)at), job->pairs, step,
     down ? -row : row, run);
}

/* `pairs` pairs of variant pairs_of from output column x of row y0's windows on (out: the
 * row's first pixel), from the plan's run. */
static inline __attribute__((always_inline)) void planned_pairs(
    const dw_job_t *job, dw_row_plan_t *plan, dw_blocks_t pairs_of, const int8_t *image,
    int32_t y0, int32_t x, int32_t pairs, int8_t *out) {
  planned_run(job, &plan->run, pairs_of, image, y0, x, pairs, out, 0);
}

/* Row y0's windows (rows outside: side_outside) by the plan in triples (out: the row's
 * first pixel), the first with its column 0 outside; the last 3 pixels as a triple with
 * its column 4 outside, the last 2 as layout_pairs' right pair, or the last 4 as an inner
 * pair and the right one (widths of 3k, 3k + 2 and 3k + 1); 0 when no variant fits. */
static int32_t row_triples(const dw_job_t *job, dw_row_plan_t *plan, const int8_t *image,
                           int32_t y0, int32_t rows, int8_t *out) {
  const dw_blocks_t *variants = dw_triple_variants[rows];
  const dw_blocks_t *pairs = dw_pair_variants[1][rows];
  const int32_t w = job->p->output_w, tail = w % 3 == 0 ? 3 : w % 3 == 2 ? 2 : 4;
  if (!plan->triples || variants[DW_INSIDE] == NULL) return 0;
  planned_run(job, &plan->run, variants[DW_LEFT], image, y0, 0, 1, out, 2);
  if (w - tail > 3) {
    const int32_t eight = rows == 0 && job->p->input_c == 8 && ((uintptr_t)out & 7) == 0;
    planned_run(job, &plan->run, eight ? unclamped_triples8 : variants[DW_INSIDE], image, y0,
                3, (w - tail) / 3 - 1, out, 2);
  }
  if (tail == 3) {
    planned_run(job, &plan->run, variants[DW_RIGHT], image, y0, w - 3, 1, out, 2);
    return 1;
  }
  if (tail == 4) planned_run(job, &plan->run, pairs[DW_INSIDE], image, y0, w - 4, 1, out, 0);
  planned_run(job, &plan->run, pairs[DW_RIGHT], image, y0, w - 2, 1, out, 0);
  return 1;
}

/* Output row oy (out: its first pixel) of a plan of stride 2, in raster order, when its
 * windows' rows lie inside the input or only row 2 below it: the pixels in pairs of
 * layout_pairs2, the last pair apart when its column 4 lies outside, a last odd pixel by
 * pixel_layout.  0 when it does not run the row. */
static int32_t row_pairs2(const dw_job_t *job, dw_row_plan_t *plan, const int8_t *image,
                          const int8_t *filter, int32_t oy, int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  const int32_t y0 = oy * p->stride_h - p->pad_h, rows = side_outside(y0, p->input_h);
  const int32_t n = p->output_w, last_apart = plan->right && !(n & 1);
  const int32_t pairs = (n >> 1) - last_apart;
  if (plan->on != 2 || (rows != 0 && rows != 2) || !forward_pairs2(p, image, y0, out)) {
    return 0;
  }
  if (pairs > 0) { /* a run takes one pair at least */
    planned_pairs(job, plan, dw_pair2_variants[rows >> 1][0], image, y0, 0, pairs, out);
  }
  if (n & 1) {
    pixel_layout(job, image, filter, oy, n - 1, out + (n - 1) * p->input_c);
  } else if (last_apart) {
    planned_pairs(job, plan, dw_pair2_variants[rows >> 1][1], image, y0, n - 2, 1, out);
  }
  return 1;
}

/* Output row oy (out: its first pixel) by the plan, with the variants for its windows'
 * rows (inside, row 0 above or row 2 below the input): 1, or 0 when there is no plan or no
 * variant (row_layout's rows). */
static int32_t row_planned(const dw_job_t *job, dw_row_plan_t *plan, const int8_t *image,
                           int32_t oy, int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  const int32_t y0 = oy * p->stride_h - p->pad_h, w = p->output_w;
  const int32_t rows = side_outside(y0, p->input_h);
  const dw_blocks_t *variants = dw_pair_variants[1][rows == 3 ? 0 : rows];
  if (rows == 3) return 0;
  if (row_triples(job, plan, image, y0, rows, out)) return 1;
  if (plan->on != 1) return 0;
  planned_pairs(job, plan, variants[DW_LEFT], image, y0, 0, 1, out);
  if (w > 4) { /* the pairs' advances (stride 1), then the triples' again (plan_rows) */
    plan->run.in_advance = p->input_c;
    plan->run.out_advance = p->input_c;
    planned_pairs(job, plan, variants[DW_INSIDE], image, y0, 2, (w - 4) >> 1, out);
    plan->run.in_advance = 2 * p->input_c;
    plan->run.out_advance = 2 * p->input_c;
  }
  planned_pairs(job, plan, variants[DW_RIGHT], image, y0, w - 2, 1, out);
  return 1;
}

/* `count` triples of variant `of` from output column x of row y0's windows on (out: the
 * row's first pixel), last first: each stores a channel's bytes over input bytes of that
 * channel its windows read already (an output a whole number of pixels into the input, at
 * or past the end of each pixel's window: tflm_gen/overlap.py backward_start). */
static void triples_back(const dw_job_t *job, dw_blocks_t of, const int8_t *image,
                         int32_t y0, int32_t x, int32_t count, int8_t *out) {
  dw_run_t run;
  run_of(job->p, NULL, job->p->input_c >> 2, &run);
  run.in_advance = -4 * job->p->input_c; /* from past A's window's blocks to the triple before */
  run.out_advance = -4 * job->p->input_c;
  planned_run(job, &run, of, image, y0, x, count, out, 2);
}

/* Output row oy (inside the input) as row_triples, last pixel first (row_layout_backwards);
 * 0 when the node takes no triples or the output is not a whole number of pixels into the
 * input. */
static int32_t row_triples_backwards(const dw_job_t *job, const int8_t *image, int32_t oy,
                                     int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  const int32_t y0 = oy * p->stride_h - p->pad_h, w = p->output_w;
  const int32_t tail = w % 3 == 0 ? 3 : w % 3 == 2 ? 2 : 4, inner = (w - 3 - tail) / 3;
  if (!triples_fit(p) || side_outside(y0, p->input_h) != 0 ||
      ((uintptr_t)out - (uintptr_t)image) % (uint32_t)p->input_c != 0) {
    return 0;
  }
  if (tail == 3) {
    triples_back(job, unclamped_triples_right, image, y0, w - 3, 1, out);
  } else {
    pairs_at(job, image, y0, w - 2, 1, DW_RIGHT, out, 1);
    if (tail == 4) pairs_at(job, image, y0, w - 4, 1, DW_INSIDE, out, 1);
  }
  if (inner > 0) triples_back(job, unclamped_triples, image, y0, 3 * inner, inner, out);
  triples_back(job, unclamped_triples_left, image, y0, 0, 1, out);
  return 1;
}
#else
typedef struct {
  int32_t on;
  int32_t triples;
} dw_row_plan_t;

static int32_t row_pairs2(const dw_job_t *job, dw_row_plan_t *plan, const int8_t *image,
                          const int8_t *filter, int32_t oy, int8_t *out) {
  (void)job;
  (void)plan;
  (void)image;
  (void)filter;
  (void)oy;
  (void)out;
  return 0;
}

static void plan_rows(const dw_job_t *job, dw_row_plan_t *plan) {
  (void)job;
  plan->on = 0;
  plan->triples = 0;
}

static int32_t row_planned(const dw_job_t *job, dw_row_plan_t *plan, const int8_t *image,
                           int32_t oy, int8_t *out) {
  (void)job;
  (void)plan;
  (void)image;
  (void)oy;
  (void)out;
  return 0;
}

static int32_t row_triples_backwards(const dw_job_t *job, const int8_t *image, int32_t oy,
                                     int8_t *out) {
  (void)job;
  (void)image;
  (void)oy;
  (void)out;
  return 0;
}
#endif

/* Output row oy (out: its first pixel) as row_layout, last pixel first (an output the
 * planner started inside the input: depthwise_backwards): the last pixels (as DW_RIGHT's
 * pair, or one by one), the inner ones in pairs from the right, then in one run of
 * layout_run backwards (out and the window step back after each pixel), then the first
 * ones (as DW_LEFT's pair, or one by one). */
static void row_layout_backwards(const dw_job_t *job, const int8_t *image,
                                 const int8_t *filter, int32_t oy, int8_t *out) {
  const tflm_conv_params_t *p = job->p;
  const int32_t y0 = oy * p->stride_h - p->pad_h, step = p->input_c;
  const int32_t paired = p->stride_w == 1 && ((uintptr_t)out - (uintptr_t)image) % step == 0;
  int32_t first = 0, end = 0, ox, left, start;
  dw_run_t run;
  if (row_triples_backwards(job, image, oy, out)) return;
  if (side_outside(y0, p->input_h) != 3) inner_columns(p, &first, &end);
  if (paired && right_pair(job, image, y0, first, end, out, 1)) {
    pairs_at(job, image, y0, end - 1, 1, DW_RIGHT, out, 1);
    end -= 1;
  } else {
    for (ox = p->output_w - 1; ox >= end; --ox) {
      pixel_layout(job, image, filter, oy, ox, out + ox * step);
    }
  }
  left = paired && first == 1 && ((end - first) & 1) &&
         pairs_can(job, image, y0, DW_LEFT, out, 1);
  start = first + left; /* first waits for its pair */
  if (paired && end > start) {
    end -= pairs_at(job, image, y0, end - 2, (end - start) >> 1, DW_INSIDE, out, 1);
  }
  if (end > start) {
    run_of(p, out + (end - 1) * step, step >> 2, &run);
    run.pixels = end - start;
    run.in_advance = -(p->stride_w + 1) * step;
    run.out_advance = -2 * step;
    if (!layout_run(job, image, y0, (end - 1) * p->stride_w - p->pad_w, &run)) {
      for (ox = end - 1; ox >= start; --ox) {
        pixel_layout(job, image, filter, oy, ox, out + ox * step);
      }
    }
  }
  if (left) {
    pairs_at(job, image, y0, 0, 1, DW_LEFT, out, 1);
    return;
  }
  for (ox = first - 1; ox >= 0; --ox) pixel_layout(job, image, filter, oy, ox, out + ox * step);
}

#if !defined(CMSIS_MVE)
/* 1 when the record's per-channel requantisation steps (multiplier, 2^(r-1) + offset *
 * 2^r, r) are the node's own multipliers, output offset and right shifts r in
 * [1, DW_MAX_SHIFT]. */
static int32_t steps_agree(const dw_job_t *job, const int32_t *blocks, int32_t channels) {
  const int32_t offset = job->p->output_offset;
  int32_t c;
  for (c = 0; c < channels; ++c) {
    const int32_t *step = blocks + (c >> 2) * DW_BLOCK_WORDS + DW_BLOCK_STEPS + 3 * (c & 3);
    const int32_t r = -job->requant.shifts[c];
    if (r < 1 || r > DW_MAX_SHIFT || step[0] != job->requant.multipliers[c] ||
        step[1] != (INT32_C(1) << (r - 1)) + offset * (INT32_C(1) << r) || step[2] != r) {
      return 0;
    }
  }
  return 1;
}

/* The node's DW_TAP_PAIRS blocks when its record agrees with the node (3x3, multiplier 1,
 * no dilation, output_c channels, 4 or more, its requantisation) and is word aligned
 * (LDM), else NULL. */
static const int32_t *find_layout(tflm_context_t *ctx, const tflm_node_t *node,
                                  const dw_job_t *job) {
  int32_t words;
  const int32_t *record = tflm_node_layout(ctx, node, &words);
  const int32_t channels = job->p->output_c;
  if (record == NULL || !job->square3 || channels < 4 || words < 2 ||
      ((uintptr_t)record & 3u) != 0 || record[0] != DW_TAP_PAIRS || record[1] != channels ||
      (int64_t)words != 2 + (int64_t)(channels >> 2) * DW_BLOCK_WORDS ||
      !steps_agree(job, record + 2, channels & ~3)) {
    return NULL;
  }
  return record + 2;
}

/* The node's DW_ROW_QUADS record when it agrees with the node (one input channel, output_c
 * a multiple of 4, its filter size, no dilation, at most DW_QUAD_BYTES a window) and is word
 * aligned, else NULL. */
static const int32_t *find_quads(tflm_context_t *ctx, const tflm_node_t *node,
                                 const tflm_conv_params_t *p) {
  int32_t words;
  const int32_t *record = tflm_node_layout(ctx, node, &words);
  const int32_t quads = (p->filter_w + 3) / 4;
  if (record == NULL || words < 5 || ((uintptr_t)record & 3u) != 0 ||
      record[0] != DW_ROW_QUADS || p->input_c != 1 || p->output_c < 4 ||
      (p->output_c & 3) != 0 || p->dilation_h != 1 || p->dilation_w != 1 ||
      record[1] != p->output_c || record[2] != p->filter_h || record[3] != p->filter_w ||
      record[4] != quads || (int64_t)p->filter_h * 4 * quads > DW_QUAD_BYTES ||
      (int64_t)words != 5 + (int64_t)(p->output_c >> 2) * p->filter_h * quads * 8) {
    return NULL;
  }
  return record;
}

/* The layout blocks the pixel loops use: none on MVE, whose 16-channel passes read the plain
 * filter (a constant there, so its branches fold away). */
static inline const int32_t *layout_of(const dw_job_t *job) { return job->pairs; }
#else
static const int32_t *find_layout(tflm_context_t *ctx, const tflm_node_t *node,
                                  const dw_job_t *job) {
  (void)ctx;
  (void)node;
  (void)job;
  return NULL;
}

static inline const int32_t *layout_of(const dw_job_t *job) {
  (void)job;
  return NULL;
}
#endif

static void pixel_at(const dw_job_t *job, const int8_t *image, const int8_t *filter,
                     int32_t oy, int32_t ox, int8_t *out) {
  dw_window_t w;
  if (layout_of(job) != NULL) {
    pixel_layout(job, image, filter, oy, ox, out);
    return;
  }
  if (job->quads != NULL) {
    pixel_quads(job, image, oy, ox, out);
    return;
  }
  if (pixel_fast(job, image, filter, oy, ox, out)) return;
  window_of(job->p, image, filter, oy, ox, &w);
  pixel_int8(job, &w, out);
}

/* Whether the forward walk takes whole rows from the layout: every channel in its blocks
 * and pixels output_c bytes apart (not a decoded block of channels). */
static int32_t rows_from_layout(const dw_job_t *job, int32_t out_stride) {
  return layout_of(job) != NULL && (job->p->output_c & 3) == 0 &&
         out_stride == job->p->output_c;
}

/* The whole-row walk of the node, chosen once per call: row_layout (1), row_quads3 (2),
 * row_pairs2 else row_layout (3: stride 2) or none (0: pixel by pixel). */
static int32_t row_walk_of(const dw_job_t *job, int32_t out_stride) {
  if (rows_from_layout(job, out_stride)) return job->p->stride_w == 2 ? 3 : 1;
  return rows_quads3(job, out_stride) ? 2 : 0;
}

/* Output row oy into out (its first pixel) by the row walk `walk` (row_walk_of, not 0),
 * from `plan` (plan_rows) when it covers the row. */
static inline __attribute__((always_inline)) void row_at(const dw_job_t *job, int32_t walk,
                                                          dw_row_plan_t *plan,
                                                          const int8_t *image,
                   const int8_t *filter, int32_t oy, int8_t *out) {
  if (walk == 1 && row_planned(job, plan, image, oy, out)) return;
  if (walk == 3 && row_pairs2(job, plan, image, filter, oy, out)) return;
  if (walk != 2) {
    row_layout(job, image, filter, oy, out);
  } else if (!dw_narrow_row(job, image, oy, out)) {
    row_quads3(job, image, oy, out);
  }
}

/* 1 when out lies past the input's first min(end, input_h) rows of `line` bytes. */
static inline int32_t row_past(const int8_t *input, int32_t end, int32_t input_h,
                               int32_t line, const int8_t *out) {
  return (uintptr_t)out >= (uintptr_t)(input + (end < input_h ? end : input_h) * line);
}

/* The narrowest output rows the last-pixel-first walk runs as row walks. */
#define DW_WALK_PIXELS 8

/* Last pixel first, for an output the planner started inside the input
 * (tflm_starts_inside): each pixel then covers only input no later pixel reads.  A row
 * that lies past every input byte rows 0 .. oy read (up to row oy's last tap row) runs as
 * one row walk: no later row reads what it writes.  Only rows of DW_WALK_PIXELS or more,
 * or a plan's (plan_rows, set up once per call): on other narrower ones the walk's setup
 * costs more than the pixels' own calls (kws' 5); of a plan of triples only, only the
 * rows it takes (inside the input), not row_layout, whose frame would lie under
 * pixel_layout's (issue #18: stack).  Other rows of a node with DW_TAP_PAIRS blocks run
 * last pixel first through the layout (row_layout_backwards), the others pixel by pixel. */
static void depthwise_backwards(const dw_job_t *job, const int8_t *input,
                                const int8_t *filter, int8_t *output, int32_t out_stride) {
  const tflm_conv_params_t *p = job->p;
  const int32_t row_bytes = p->output_w * out_stride;
  const int32_t line = p->input_w * p->input_c, input_h = p->input_h;
  const int32_t step = p->stride_h, last_tap = (p->filter_h - 1) * p->dilation_h + 1;
  const int32_t backwards_rows = rows_from_layout(job, out_stride);
  dw_row_plan_t plan;
  int32_t oy, ox, walk;
  plan_rows(job, &plan);
  walk = row_walk_of(job, out_stride);
  if (p->output_w < DW_WALK_PIXELS && ((!plan.on && !plan.triples) || walk == 2)) walk = 0;
  for (oy = p->output_h - 1; oy >= 0; --oy) {
    int8_t *row = output + oy * row_bytes;
    if (walk != 0 && row_past(input, oy * step - p->pad_h + last_tap, input_h, line, row)) {
      if (p->output_w >= DW_WALK_PIXELS || plan.on) { /* else a plan of triples only */
        row_at(job, walk, &plan, input, filter, oy, row);
        continue;
      }
      if (row_planned(job, &plan, input, oy, row)) continue;
    }
    if (backwards_rows) {
      row_layout_backwards(job, input, filter, oy, row);
      continue;
    }
    for (ox = p->output_w - 1; ox >= 0; --ox) {
      pixel_at(job, input, filter, oy, ox, row + ox * out_stride);
    }
  }
}

/* 1 when layout_triples may write output in raster order over the input: the output lies
 * off it, or (stride 1, one row of padding above) each pixel's output ends at most its
 * window's first tap (the planner's clearance: tflm_gen/overlap.py) and starts exactly
 * one pixel before it (k = 0) or a pixel or more lower (k >= step).  A triple writes C's
 * byte of channel c while A's window still holds unread channels of later blocks: at
 * window(A) + step - k + c, which is A's column 1 channel c - k (read: k <= c) or column 0
 * channel step + c - k (read only if k >= step) or below A's window. */
static int32_t triples_may_overlap(const tflm_conv_params_t *p, const int8_t *input,
                                   const int8_t *output, int32_t row_bytes) {
  const intptr_t in_bytes = (intptr_t)p->batches * p->input_h * p->input_w * p->input_c;
  const intptr_t out_bytes = (intptr_t)p->batches * p->output_h * row_bytes;
  const intptr_t below = (intptr_t)input - (intptr_t)output; /* output start below input */
  const intptr_t k = below - (intptr_t)(p->input_w + 2) * p->input_c;
  if (below >= out_bytes || -below >= in_bytes) return 1; /* apart */
  return p->batches == 1 && p->stride_h == 1 && p->pad_h == 1 &&
         (k == 0 || k >= p->input_c);
}

/* Raster order, or last pixel first (depthwise_backwards) when the planner started the
 * output inside the input.  out_stride: output channels per pixel (more than p->output_c
 * for a decoded block). */
static void depthwise_int8(const dw_job_t *job, const int8_t *input, const int8_t *filter,
                           int8_t *output, int32_t out_stride) {
  const tflm_conv_params_t *p = job->p;
  const int32_t image_size = p->input_h * p->input_w * p->input_c;
  const int32_t row_bytes = p->output_w * out_stride;
  int32_t b, oy, ox, walk;
  dw_row_plan_t plan;
  if (p->batches == 1 && tflm_starts_inside(input, (size_t)image_size, output)) {
    depthwise_backwards(job, input, filter, output, out_stride);
    return;
  }
  walk = row_walk_of(job, out_stride);
  plan_rows(job, &plan);
  if (!triples_may_overlap(p, input, output, row_bytes)) plan.triples = 0;
  for (b = 0; b < p->batches; ++b) {
    const int8_t *image = input + b * image_size;
    for (oy = 0; oy < p->output_h; ++oy) {
      if (walk != 0) {
        row_at(job, walk, &plan, image, filter, oy, output);
        output += row_bytes;
        continue;
      }
      for (ox = 0; ox < p->output_w; ++ox, output += out_stride) {
        pixel_at(job, image, filter, oy, ox, output);
      }
    }
  }
}

/* The job of node parameters p with requantisation `requant` and cmsis_requant_mode `fast`,
 * no bias, no layout. */
static void job_from(const tflm_conv_params_t *p, const tflm_requant_t *requant, int32_t fast,
                     dw_job_t *job) {
  job->p = p;
  job->requant = *requant;
  job->bias = NULL;
  job->fast = fast;
  job->square3 = p->filter_h == 3 && p->filter_w == 3 && p->depth_multiplier == 1 &&
                 p->dilation_h == 1 && p->dilation_w == 1;
  job->shared3 = p->filter_h == 3 && p->filter_w == 3 && p->depth_multiplier % 4 == 0 &&
                 p->dilation_h == 1 && p->dilation_w == 1;
  job->quads = NULL;
  job->pairs = NULL;
}

/* The tag's persistent block, in node->user_data (16 bytes on every target): what prepare
 * learnt once of the node's arrays rather than a pass over them every invoke. */
typedef struct {
  uint64_t shared;      /* address of the tflm_conv_params_t made by the shared prepare */
  int32_t requant_mode; /* cmsis_requant_mode of the node's int8 arrays (0 otherwise) */
  int32_t pairs;        /* 1: the node's DW_TAP_PAIRS record agrees with it (find_layout) */
} cmsis_dw_node_t;

static void job_of(const tflm_weighted_call_t *call, dw_job_t *job) {
  const cmsis_dw_node_t *own = (const cmsis_dw_node_t *)call->own;
  job_from((const tflm_conv_params_t *)call->params, &call->requant, own->requant_mode, job);
  job->bias = call->data.bias;
}

/* One decoded block of a compressed filter (multiplier 1 unless it is the only block),
 * transposed into `room` in the filter's own taps-major order: the node seen as `count`
 * channels from `first` on (input, filter and output read from channel `first`; every
 * stride comes from input_c, which stays, or from the caller: output_c only bounds the
 * channel loops). */
static void dw_block(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                     const int8_t *channel_rows, int8_t *room, int32_t first, int32_t count) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  tflm_conv_params_t narrow = *p;
  dw_job_t job;
  (void)ctx;
  tflm_weighted_transpose(channel_rows, count, p->filter_h * p->filter_w, p->output_c,
                          room + first);
  job_of(call, &job);
  if (count == p->output_c) { /* one block: the whole filter, any multiplier */
    depthwise_int8(&job, call->data.input, room, call->data.output, p->output_c);
    return;
  }
  narrow.output_c = count;
  job.p = &narrow;
  if (job.bias != NULL) job.bias += first;
  job.requant.multipliers += first;
  job.requant.shifts += first;
  depthwise_int8(&job, (const int8_t *)call->data.input + first, room + first,
                 (int8_t *)call->data.output + first, p->output_c);
}

/* 1 when the node has a DW_CODED_TAP_STEPS record (a coded filter the generator found fit
 * for the DW_TAP_PAIRS blocks) that agrees with its shapes (3x3, multiplier 1, no
 * dilation, output_c channels, 4 or more).  The shifts are checked as the blocks are
 * built. */
static int32_t coded_steps(tflm_context_t *ctx, const tflm_node_t *node,
                           const tflm_conv_params_t *p) {
  int32_t words;
  const int32_t *record = tflm_node_layout(ctx, node, &words);
  return record != NULL && words == 2 && record[0] == DW_CODED_TAP_STEPS &&
         record[1] == p->output_c && p->output_c >= 4 && p->filter_h == 3 &&
         p->filter_w == 3 && p->depth_multiplier == 1 && p->dilation_h == 1 &&
         p->dilation_w == 1;
}

/* A compressed filter with a DW_CODED_TAP_STEPS record: the scratch its DW_TAP_PAIRS blocks
 * are built in, on every core (MVE never reads it, but the generator's arena model does not
 * know the core).  Its handle is the decoding scratch's plus 1: requests are numbered in
 * order, checked here. */
static tflm_status_t coded_scratch(tflm_context_t *ctx, tflm_node_t *node,
                                   const tflm_conv_params_t *p) {
  int32_t handle = -1;
  tflm_status_t status;
  if (p->type != TFLM_TYPE_INT8 || p->decode_scratch < 0 || !coded_steps(ctx, node, p)) {
    return TFLM_OK;
  }
  status = tflm_request_scratch(ctx, 4u * DW_BLOCK_WORDS * (uint32_t)(p->output_c >> 2), &handle);
  if (status != TFLM_OK) return status;
  TFLM_KERNEL_CHECK(ctx, node, handle == p->decode_scratch + 1, TFLM_ERR_MODEL);
  return TFLM_OK;
}

/* The shared prepare (a compressed filter's decoding scratch), the tag's block (int8: the
 * requantisation mode and whether the layout record agrees, learnt here once), then
 * coded_scratch. */
static tflm_status_t cmsis_dw_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  cmsis_dw_node_t *mine;
  const tflm_conv_params_t *p;
  tflm_requant_t requant;
  dw_job_t job;
  tflm_status_t status = tflm_depthwise_conv_prepare(ctx, node);
  if (status != TFLM_OK) return status;
  p = (const tflm_conv_params_t *)node->user_data;
  mine = (cmsis_dw_node_t *)tflm_alloc_persistent(ctx, (uint32_t)sizeof(cmsis_dw_node_t));
  TFLM_KERNEL_CHECK(ctx, node, mine != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  mine->shared = (uint64_t)(uintptr_t)p;
  mine->requant_mode = 0;
  mine->pairs = 0;
  if (p->type == TFLM_TYPE_INT8) {
    tflm_conv_requant(ctx, node, p, &requant);
    mine->requant_mode = cmsis_requant_mode(requant.multipliers, requant.shifts, p->output_c);
    job_from(p, &requant, mine->requant_mode, &job);
    mine->pairs = find_layout(ctx, node, &job) != NULL;
  }
  status = coded_scratch(ctx, node, p);
  if (status != TFLM_OK) return status;
  node->user_data = mine;
  return TFLM_OK;
}

#if !defined(CMSIS_MVE)
/* A DW_TAP_PAIRS word: int16 a in the low half, b in the high one. */
static int32_t halves(int32_t a, int32_t b) {
  return (int32_t)(((uint32_t)a & 0xffffu) | ((uint32_t)b << 16));
}

/* The DW_TAP_PAIRS blocks (tflm_gen/layout.py) of the decoded rows [C][9], for `count`
 * blocks of 4 channels: folded constants from the weights and the bias, requantisation
 * steps from the node's multipliers, shifts and output offset; 0 when a multiplier is not
 * positive or a right shift outside [1, DW_MAX_SHIFT] (the generator's conditions). */
static int32_t build_tap_pairs(const dw_job_t *job, const int8_t *rows, int32_t count,
                               int32_t *blocks) {
  static const int8_t first[5] = {1, 2, 0, 7, 6}, second[5] = {4, 5, 3, 8, 7}; /* DW_PAIRS */
  const uint32_t offset = (uint32_t)job->p->output_offset;
  const int32_t *bias = job->bias;
  int32_t b, c, j, k;
  for (b = 0; b < count; ++b, rows += 36, blocks += DW_BLOCK_WORDS) {
    for (j = 0; j < 4; ++j) {
      int32_t *step = blocks + DW_BLOCK_STEPS + 3 * j;
      uint32_t sum = 0;
      c = 4 * b + j;
      step[2] = -job->requant.shifts[c];
      if (step[2] < 1 || step[2] > DW_MAX_SHIFT || job->requant.multipliers[c] <= 0) return 0;
      for (k = 0; k < 9; ++k) sum += (uint32_t)(int32_t)rows[9 * j + k];
      sum = (bias != NULL ? (uint32_t)bias[c] : 0u) + (uint32_t)job->p->input_offset * sum;
      blocks[j] = (int32_t)(2u * sum);
      step[0] = job->requant.multipliers[c];
      step[1] = (int32_t)((1u << (step[2] - 1)) + (offset << step[2]));
    }
    for (k = 0; k < 5; ++k) { /* (6, 7) after the single tap */
      for (j = 0; j < 4; ++j) {
        blocks[4 + 4 * k + 2 * (k == 4) + j] =
            halves(2 * rows[9 * j + first[k]], 2 * rows[9 * j + second[k]]);
      }
    }
    blocks[20] = halves(2 * rows[6], 2 * rows[18 + 6]); /* tap 6: SXTB16's channel order */
    blocks[21] = halves(2 * rows[9 + 6], 2 * rows[27 + 6]);
  }
  return 1;
}

/* The decoded filter (one block of every channel, multiplier 1) of a node with a
 * DW_CODED_TAP_STEPS record run as the plain filter's DW_TAP_PAIRS blocks, built in the
 * node's second scratch; the output_c % 4 last channels from the rows transposed into
 * `room`, as dw_block does.  Any other block, or a node the blocks do not fit: dw_block. */
static void dw_coded_block(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                           const int8_t *rows, int8_t *room, int32_t first, int32_t count) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  int32_t *blocks;
  dw_job_t job;
  job_of(call, &job);
  if (!coded_steps(ctx, call->node, p) || count != p->output_c) {
    dw_block(ctx, call, rows, room, first, count);
    return;
  }
  blocks = (int32_t *)tflm_get_scratch(ctx, p->decode_scratch + 1);
  if (blocks == NULL ||
      !build_tap_pairs(&job, rows, count >> 2, blocks)) {
    dw_block(ctx, call, rows, room, first, count);
    return;
  }
  if (count & 3) tflm_weighted_transpose(rows, count, 9, count, room);
  job.pairs = blocks;
  depthwise_int8(&job, call->data.input, room, call->data.output, count);
}
#endif

/* True when the compressed filter is coded as one block of every channel. */
static int one_block(tflm_context_t *ctx, const tflm_weighted_call_t *call) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  tflm_coded_t coded;
  tflm_decode_t d;
  return tflm_node_coded_input(ctx, call->node, 1, &coded) &&
         tflm_decode_reopen(&d, coded.data, coded.bytes, coded.table, coded.table_bytes,
                            p->output_c, p->filter_h * p->filter_w) == TFLM_OK &&
         d.blocks == 1;
}

static tflm_status_t run_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  dw_job_t job;
  if (p->decode_scratch >= 0) { /* a compressed filter, per decoded block */
    if (p->depth_multiplier != 1 && !one_block(ctx, call)) {
      return tflm_depthwise_conv_run_int8(ctx, call); /* input channels cross blocks */
    }
#if !defined(CMSIS_MVE)
    return tflm_weighted_decoded(ctx, call, p->decode_scratch, p->output_c,
                                 p->filter_h * p->filter_w, dw_coded_block);
#else
    return tflm_weighted_decoded(ctx, call, p->decode_scratch, p->output_c,
                                 p->filter_h * p->filter_w, dw_block);
#endif
  }
#if defined(DW_MVE_ASM)
  if (dw_mve_fits(p, &call->requant, call->data.filter) &&
      dw_mve_run(p, &call->requant, call->data.bias, call->data.input, call->data.filter,
                 call->data.output)) {
    return TFLM_OK;
  }
#endif
  job_of(call, &job);
  if (((const cmsis_dw_node_t *)call->own)->pairs) {
    int32_t words;
    job.pairs = tflm_node_layout(ctx, call->node, &words) + 2; /* as prepare found it */
  }
#if !defined(CMSIS_MVE)
  job.quads = find_quads(ctx, call->node, p);
#endif
  depthwise_int8(&job, call->data.input, call->data.filter, call->data.output, p->output_c);
  return TFLM_OK;
}

static const tflm_weighted_kernels_t cmsis_depthwise_kernels = {
    tflm_conv_requant, tflm_conv_hybrid_eval, tflm_depthwise_conv_run_float32, run_int8,
    tflm_depthwise_conv_run_int16};

/* node->user_data is this tag's block, which starts with the shared parameters' address. */
TFLM_WEIGHTED_OP(tflm_op_depthwise_conv_2d, TFLM_BUILTIN_DEPTHWISE_CONV_2D, cmsis_dw_prepare,
                 cmsis_depthwise_kernels, 1);
