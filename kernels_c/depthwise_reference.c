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

void tflm_depthwise_conv_int8(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                              const int8_t *input, const int8_t *filter, const int32_t *bias,
                              int8_t *output) {
  const tflm_conv_block_t block = depthwise_channels(p, 0, p->output_c);
  tflm_conv_walk(p, requant, input, 1, filter, bias, output, 1, &block, depthwise_taps,
                 tflm_conv_output_int8, 1);
}

void tflm_depthwise_conv_int16(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                               const int16_t *input, const int8_t *filter,
                               const int64_t *bias, int16_t *output) {
  const tflm_conv_block_t block = depthwise_channels(p, 0, p->output_c);
  tflm_conv_walk(p, requant, input, 2, filter, bias, output, 2, &block, depthwise_taps,
                 tflm_conv_output_int16, 1);
}

void tflm_depthwise_conv_float32(const tflm_conv_params_t *p, const float *input,
                                 const float *filter, const float *bias, float *output) {
  const tflm_conv_block_t block = depthwise_channels(p, 0, p->output_c);
  tflm_conv_walk(p, NULL, input, 4, filter, bias, output, 4, &block, depthwise_taps,
                 tflm_conv_output_float32, 1);
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
  tflm_conv_walk_block(call, room + first, &block, depthwise_taps, count == p->output_c);
}

static tflm_status_t depthwise_run_decoded(tflm_context_t *ctx,
                                           const tflm_weighted_call_t *call) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  return tflm_weighted_decoded(ctx, call, p->decode_scratch, p->output_c,
                               p->filter_h * p->filter_w, depthwise_block);
}

TFLM_WEIGHTED_RUN_FLOAT(tflm_depthwise_conv_run_float32, tflm_depthwise_conv_float32)
static TFLM_WEIGHTED_RUN_QUANT(depthwise_run_int8, tflm_depthwise_conv_int8)
static TFLM_WEIGHTED_RUN_QUANT(depthwise_run_int16, tflm_depthwise_conv_int16)

tflm_status_t tflm_depthwise_conv_run_int8(tflm_context_t *ctx,
                                           const tflm_weighted_call_t *call) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  return p->decode_scratch >= 0 ? depthwise_run_decoded(ctx, call)
                                : depthwise_run_int8(ctx, call);
}

tflm_status_t tflm_depthwise_conv_run_int16(tflm_context_t *ctx,
                                            const tflm_weighted_call_t *call) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  return p->decode_scratch >= 0 ? depthwise_run_decoded(ctx, call)
                                : depthwise_run_int16(ctx, call);
}

const tflm_weighted_kernels_t tflm_depthwise_conv_reference_kernels = {
    tflm_conv_requant, tflm_conv_hybrid_eval, tflm_depthwise_conv_run_float32,
    tflm_depthwise_conv_run_int8, tflm_depthwise_conv_run_int16};
