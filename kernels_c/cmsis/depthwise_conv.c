/* tflm-op: DEPTHWISE_CONV_2D tflm_op_depthwise_conv_2d types: float32,int8,int16 */
/* DEPTHWISE_CONV_2D for the cmsis tag: int8 in blocks of 4 output channels.
 *
 * Per output pixel the filter window is clipped to the input once (the reference's skipped
 * taps), then each block of 4 consecutive output channels sums over the window's taps with
 * its 4 accumulators in registers: with depth multiplier 1 the 4 channels read 4 input
 * channels (one word), with a multiplier divisible by 4 they share one input channel.  Per
 * instruction set (cmsis_simd.h): MVE one VMLA over 4 int32 lanes per tap; DSP SXTB16 and
 * SMLABB/SMLATT; C four scalar MACs.  Other multipliers and the channel tail use the
 * scalar loop; float32 and int16 run the reference kernels (depthwise_reference.c).
 * Integer sums are exact, so every order gives the reference's result.  No scratch. */
#include <stddef.h>
#include <stdint.h>

#include "cmsis_simd.h"
#include "conv_common.h"
#include "depthwise_reference.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* The clipped filter window of one output pixel, with pointers to its first tap. */
typedef struct {
  const int8_t *input;   /* input pixel of the first tap, channel 0 */
  const int8_t *filter;  /* filter tap of the first tap, channel 0 */
  int32_t rows;          /* taps inside the input, vertically */
  int32_t cols;          /* and horizontally */
  int32_t input_step_x;  /* bytes between horizontal taps in the input */
  int32_t input_step_y;  /* and between vertical taps */
  int32_t filter_step_y; /* bytes between filter rows (taps step by Cout horizontally) */
  int32_t channels;      /* Cout: bytes between horizontal filter taps */
} dw_window_t;

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
  int32_t fy0, fy1, fx0, fx1;
  clip(y0, p->dilation_h, p->filter_h, p->input_h, &fy0, &fy1);
  clip(x0, p->dilation_w, p->filter_w, p->input_w, &fx0, &fx1);
  w->rows = fy1 > fy0 ? fy1 - fy0 : 0;
  w->cols = fx1 > fx0 ? fx1 - fx0 : 0;
  w->input = image + ((y0 + fy0 * p->dilation_h) * p->input_w + x0 + fx0 * p->dilation_w) *
                         p->input_c;
  w->filter = filter + (fy0 * p->filter_w + fx0) * p->output_c;
  w->input_step_x = p->dilation_w * p->input_c;
  w->input_step_y = p->dilation_h * p->input_w * p->input_c;
  w->filter_step_y = p->filter_w * p->output_c;
  w->channels = p->output_c;
}

#if defined(CMSIS_MVE)
/* acc[j] = sum over the window of filter[c + j] * (input[in_c (+ j)] + offset). */
static __attribute__((noinline)) void block4(const dw_window_t *w, int32_t in_c, int32_t c,
                                             int32_t broadcast, int32_t offset, int32_t acc[4]) {
  int32x4_t sum = vdupq_n_s32(0);
  int32_t y, x;
  for (y = 0; y < w->rows; ++y) {
    const int8_t *in = w->input + y * w->input_step_y + in_c;
    const int8_t *f = w->filter + y * w->filter_step_y + c;
    for (x = 0; x < w->cols; ++x, in += w->input_step_x, f += w->channels) {
      const int32x4_t values = broadcast ? vdupq_n_s32(*in + offset)
                                         : vaddq_n_s32(vldrbq_s32(in), offset);
      sum = vaddq_s32(sum, vmulq_s32(vldrbq_s32(f), values));
    }
  }
  vst1q_s32(acc, sum);
}
#elif defined(CMSIS_DSP)
/* Depth multiplier 1: 4 input channels, one word, SXTAB16 adds the offset. */
static __attribute__((noinline)) void block4_separate(const dw_window_t *w, int32_t c,
                                                      int32_t offset, int32_t acc[4]) {
  const int32_t offsets = (int32_t)(((uint32_t)offset & 0xffffu) * 0x10001u);
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, y, x;
  for (y = 0; y < w->rows; ++y) {
    const int8_t *in = w->input + y * w->input_step_y + c;
    const int8_t *f = w->filter + y * w->filter_step_y + c;
    for (x = w->cols; x > 0; --x, in += w->input_step_x, f += w->channels) {
      const int32_t weights = cmsis_read4(f), values = cmsis_read4(in);
      const int32_t w02 = __sxtb16(weights), w13 = cmsis_sxtb16_ror8(weights);
      const int32_t x02 = __sxtab16(offsets, values), x13 = cmsis_sxtab16_ror8(offsets, values);
      a0 = __smlabb(w02, x02, a0);
      a2 = __smlatt(w02, x02, a2);
      a1 = __smlabb(w13, x13, a1);
      a3 = __smlatt(w13, x13, a3);
    }
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

/* Depth multiplier a multiple of 4: one input value for the 4 channels. */
static __attribute__((noinline)) void block4_shared(const dw_window_t *w, int32_t in_c,
                                                    int32_t c, int32_t offset, int32_t acc[4]) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, y, x;
  for (y = 0; y < w->rows; ++y) {
    const int8_t *in = w->input + y * w->input_step_y + in_c;
    const int8_t *f = w->filter + y * w->filter_step_y + c;
    for (x = w->cols; x > 0; --x, in += w->input_step_x, f += w->channels) {
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
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, y, x;
  for (y = 0; y < w->rows; ++y) {
    const int8_t *in = w->input + y * w->input_step_y + in_c;
    const int8_t *f = w->filter + y * w->filter_step_y + c;
    for (x = 0; x < w->cols; ++x, in += w->input_step_x, f += w->channels) {
      a0 += f[0] * (in[0] + offset);
      a1 += f[1] * (in[step] + offset);
      a2 += f[2] * (in[2 * step] + offset);
      a3 += f[3] * (in[3 * step] + offset);
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
  int32_t acc = 0, y, x;
  for (y = 0; y < w->rows; ++y) {
    const int8_t *in = w->input + y * w->input_step_y + in_c;
    const int8_t *f = w->filter + y * w->filter_step_y + c;
    for (x = 0; x < w->cols; ++x, in += w->input_step_x, f += w->channels) {
      acc += *f * (*in + offset);
    }
  }
  return acc;
}

static int8_t finish(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                     const int32_t *bias, int32_t acc, int32_t c) {
  if (bias != NULL) acc += bias[c];
  return (int8_t)cmsis_requantize(acc, requant->multipliers[c], requant->shifts[c],
                                  p->output_offset, p->act_min, p->act_max);
}

/* finish for channels c .. c + 3, the parameters read once. */
static void finish4(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                    const int32_t *bias, const int32_t acc[4], int32_t c, int8_t *out) {
  const int32_t offset = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t *multipliers = requant->multipliers + c, *shifts = requant->shifts + c;
  int32_t j;
  for (j = 0; j < 4; ++j) {
    const int32_t sum = acc[j] + (bias != NULL ? bias[c + j] : 0);
    out[c + j] = (int8_t)cmsis_requantize(sum, multipliers[j], shifts[j], offset, lo, hi);
  }
}

/* All output channels of one pixel. */
static void pixel_int8(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                       const dw_window_t *w, const int32_t *bias, int8_t *out) {
  const int32_t m = p->depth_multiplier, offset = p->input_offset;
  const int32_t blocks = (m == 1 || m % 4 == 0) ? p->output_c & ~3 : 0;
  int32_t c, acc[4];
  for (c = 0; c < blocks; c += 4) {
    block4(w, c / m, c, m != 1, offset, acc);
    finish4(p, requant, bias, acc, c, out);
  }
  for (; c < p->output_c; ++c) out[c] = finish(p, requant, bias, single(w, c / m, c, offset), c);
}

static void depthwise_int8(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                           const int8_t *input, const int8_t *filter, const int32_t *bias,
                           int8_t *output) {
  int32_t b, oy, ox;
  dw_window_t w;
  for (b = 0; b < p->batches; ++b) {
    const int8_t *image = input + b * p->input_h * p->input_w * p->input_c;
    for (oy = 0; oy < p->output_h; ++oy) {
      for (ox = 0; ox < p->output_w; ++ox, output += p->output_c) {
        window_of(p, image, filter, oy, ox, &w);
        pixel_int8(p, requant, &w, bias, output);
      }
    }
  }
}

static tflm_status_t cmsis_depthwise_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)node->user_data;
  const void *input = tflm_node_input_data(ctx, node, 0);
  const void *filter = tflm_node_input_data(ctx, node, 1);
  const void *bias = node->inputs_count > 2 ? tflm_node_input_data(ctx, node, 2) : NULL;
  void *output = tflm_node_output_data(ctx, node, 0);
  tflm_requant_t requant;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && input != NULL && filter != NULL && output != NULL,
                    TFLM_ERR_NOT_READY);
  tflm_conv_requant(ctx, node, p, &requant);
  switch (p->type) {
    case TFLM_TYPE_FLOAT32:
      tflm_depthwise_conv_float32(p, (const float *)input, (const float *)filter,
                                  (const float *)bias, (float *)output);
      return TFLM_OK;
    case TFLM_TYPE_INT8:
      depthwise_int8(p, &requant, (const int8_t *)input, (const int8_t *)filter,
                     (const int32_t *)bias, (int8_t *)output);
      return TFLM_OK;
    case TFLM_TYPE_INT16:
      tflm_depthwise_conv_int16(p, &requant, (const int16_t *)input, (const int8_t *)filter,
                                (const int64_t *)bias, (int16_t *)output);
      return TFLM_OK;
    default:
      return TFLM_ERR_UNSUPPORTED_TYPE;
  }
}

const tflm_registration_t tflm_op_depthwise_conv_2d = {
    NULL, 4 /* BuiltinOperator DEPTHWISE_CONV_2D */, NULL, tflm_depthwise_conv_prepare,
    cmsis_depthwise_eval, NULL, NULL};
