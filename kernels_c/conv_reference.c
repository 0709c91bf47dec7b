/* CONV_2D reference kernels: float32, int8 (per-channel or per-tensor int8 filter, int32
 * bias) and int16 activations with int8 filter and int64 bias ("16x8").
 *
 * Each output is the sum over filter_y, filter_x, in_channel (in that order, skipping taps
 * outside the input), then the bias, then the activation clamp: the order of TFLM's
 * reference kernels, so float results are bit-identical too.  Layouts and the persistent
 * block are described in conv_common.h; prepare lives in conv_common.c. */
#include <stddef.h>
#include <stdint.h>

#include "conv_hybrid.h"
#include "conv_reference.h"
#include "conv_sparse.h"
#include "conv_walk.h"
#include "tflm_compiler.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Elements of one filter (one output channel). */
static int32_t conv_filter_size(const tflm_conv_params_t *p) {
  return p->filter_h * p->filter_w * p->filter_c;
}

/* The taps of one output's window: per tap, the channels of the output channel's group. */
static inline void conv_taps(const tflm_conv_params_t *p, const void *input,
                                         int32_t in_bytes, const void *filter,
                                         int32_t f_bytes, const tflm_conv_window_t *w,
                                         void *acc, tflm_conv_mac_fn mac) {
  const int32_t in_c0 = (w->oc / p->filters_per_group) * p->filter_c;
  const uint8_t *f = (const uint8_t *)filter + (size_t)w->f * f_bytes;
  tflm_conv_taps(p, input, in_bytes, in_c0, f, f_bytes, p->filter_c, p->filter_c, w, acc, mac);
}

/* The whole filter as one block. */
static tflm_conv_block_t conv_whole(const tflm_conv_params_t *p) {
  tflm_conv_block_t block;
  block.first = 0;
  block.count = p->output_c;
  block.channel_stride = conv_filter_size(p);
  block.tap_stride = p->filter_c;
  return block;
}

/* One decoded block of a compressed filter (rows of conv_filter_size weights). */
static void conv_block(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                       const int8_t *rows, int8_t *room, int32_t first, int32_t count) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  tflm_conv_block_t block = conv_whole(p);
  (void)ctx;
  (void)room;
  block.first = first;
  block.count = count;
  tflm_conv_walk_quantized(call, rows, &block, conv_taps, 0);
}

static TFLM_ALWAYS_INLINE tflm_status_t conv_run(tflm_context_t *ctx,
                                                 const tflm_weighted_call_t *call, int32_t type) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  const tflm_conv_block_t whole = conv_whole(p);
  if (type == TFLM_TYPE_INT8 && TFLM_CONV_IS_SPARSE(p)) {
    return tflm_conv_sparse_int8(ctx, call, &tflm_conv_sparse_portable);
  }
  /* int8 skips the channels whose weights are all 0 (a channel's output depends on its own
   * weights only, grouped convolutions too). */
  return tflm_conv_run(ctx, call, type, &whole, conv_filter_size(p), conv_block,
                       type == TFLM_TYPE_INT8 ? tflm_conv_dead_int8 : NULL, conv_taps, 0);
}

TFLM_WEIGHTED_REFERENCE_DEFINE(conv, tflm_conv_requant, tflm_conv_hybrid_eval, conv_run);
