/* DEPTHWISE_CONV_2D reference kernels: float32, int8 (per-channel or per-tensor int8 filter,
 * int32 bias) and int16 activations with int8 filter and int64 bias.
 *
 * Output channel oc = in_channel * depth_multiplier + m reads only input channel
 * oc / depth_multiplier.  Each output sums over filter_y, filter_x (skipping taps outside the
 * input), then adds the bias, then clamps: TFLM's order, so floats are bit-identical.
 * Layouts and the persistent block: conv_common.h; prepare: conv_common.c. */
#include <stddef.h>
#include <stdint.h>

#include "conv_hybrid.h"
#include "depthwise_reference.h"
#include "conv_walk.h"
#include "tflm_compiler.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* The taps of one output's window: output channel oc reads input channel
 * oc / depth_multiplier, one element per tap. */
static inline void depthwise_taps(const tflm_conv_params_t *p, const void *input,
                                              int32_t in_bytes, const void *filter,
                                              int32_t f_bytes, const tflm_conv_window_t *w,
                                              void *acc, tflm_conv_mac_fn mac) {
  const uint8_t *f = (const uint8_t *)filter + (size_t)w->f * f_bytes;
  tflm_conv_taps(p, input, in_bytes, w->oc / p->depth_multiplier, f, f_bytes, w->tap_stride, 1,
                 w, acc, mac);
}

/* Channels first .. first + count - 1 of a [1, FH, FW, C] filter (the whole one, or a
 * decoded block transposed back into that order): channel oc's taps C apart. */
static tflm_conv_block_t depthwise_channels(const tflm_conv_params_t *p, int32_t first,
                                            int32_t count) {
  tflm_conv_block_t block;
  block.first = first;
  block.count = count;
  block.channel_stride = 1;
  block.tap_stride = p->output_c;
  return block;
}

/* One decoded block of a compressed filter (channel-major rows of FH * FW taps), transposed
 * into `room` in the filter's own taps-major order (tflm_weighted_decode_prepare). */
static void depthwise_block(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                            const int8_t *channel_rows, int8_t *room, int32_t first,
                            int32_t count) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  const tflm_conv_block_t block = depthwise_channels(p, first, count);
  (void)ctx;
  tflm_weighted_transpose(channel_rows, count, p->filter_h * p->filter_w, p->output_c,
                          room + first);
  tflm_conv_walk_quantized(call, room + first, &block, depthwise_taps, count == p->output_c);
}

/* The whole filter may walk back: the planner may start its output inside its input. */
static TFLM_ALWAYS_INLINE tflm_status_t depthwise_run(tflm_context_t *ctx,
                                                      const tflm_weighted_call_t *call,
                                                      int32_t type) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  const tflm_conv_block_t whole = depthwise_channels(p, 0, p->output_c);
  return tflm_conv_run(ctx, call, type, &whole, p->filter_h * p->filter_w, depthwise_block,
                       NULL, depthwise_taps, 1);
}

TFLM_WEIGHTED_REFERENCE_DEFINE(depthwise_conv, tflm_conv_requant, tflm_conv_hybrid_eval,
                               depthwise_run);
