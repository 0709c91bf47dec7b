/* AVERAGE_POOL_2D / MAX_POOL_2D prepare (see pooling_common.h). */
#include <stddef.h>
#include <stdint.h>

#include "pooling_common.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Output size and leading padding of one spatial dimension, as TFLM computes them. */
static int32_t tflm_pool_out_size(int32_t padding, int32_t in, int32_t filter, int32_t stride) {
  if (padding == TFLM_PADDING_SAME) {
    return (in + stride - 1) / stride;
  }
  return (in + stride - filter) / stride;
}

static int32_t tflm_pool_padding(int32_t in, int32_t filter, int32_t stride, int32_t out) {
  int32_t total = (out - 1) * stride + filter - in;
  /* An odd total puts the extra padding row/column after the input, not before. */
  return total > 0 ? total / 2 : 0;
}

/* Reads options, shapes and padding into p; returns a status for the caller to check. */
static tflm_status_t tflm_pool_shapes(tflm_context_t *ctx, tflm_node_t *node,
                                      const tflm_tensor_t *in, const tflm_tensor_t *out,
                                      tflm_pool_params_t *p) {
  const int32_t padding = tflm_opt_int(node, TFLM_OPT_POOL_2D_PADDING, TFLM_PADDING_SAME);
  p->stride_w = tflm_opt_int(node, TFLM_OPT_POOL_2D_STRIDE_W, 0);
  p->stride_h = tflm_opt_int(node, TFLM_OPT_POOL_2D_STRIDE_H, 0);
  p->filter_w = tflm_opt_int(node, TFLM_OPT_POOL_2D_FILTER_WIDTH, 0);
  p->filter_h = tflm_opt_int(node, TFLM_OPT_POOL_2D_FILTER_HEIGHT, 0);
  TFLM_KERNEL_CHECK(ctx, node, p->stride_w > 0 && p->stride_h > 0, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, p->filter_w > 0 && p->filter_h > 0, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, in->ndims == 4 && out->ndims == 4, TFLM_ERR_BAD_SHAPE);
  p->batches = in->dims[0];
  p->in_h = in->dims[1];
  p->in_w = in->dims[2];
  p->depth = in->dims[3];
  p->out_h = out->dims[1];
  p->out_w = out->dims[2];
  TFLM_KERNEL_CHECK(ctx, node, out->dims[0] == p->batches && out->dims[3] == p->depth,
                    TFLM_ERR_BAD_SHAPE);
  /* TFLM derives the padding from the computed output size; insisting that the output
   * tensor agrees also guarantees every window covers at least one input value. */
  TFLM_KERNEL_CHECK(ctx, node,
                    p->out_w == tflm_pool_out_size(padding, p->in_w, p->filter_w, p->stride_w),
                    TFLM_ERR_BAD_SHAPE);
  p->pad_w = tflm_pool_padding(p->in_w, p->filter_w, p->stride_w, p->out_w);
  if (tflm_node_band_pad(ctx, node, &p->pad_h)) {
    /* A band of a patch stage: its rows and top padding come from the stage; the first
     * and last windows (so all) must still cover one of the band's input rows. */
    TFLM_KERNEL_CHECK(ctx, node, p->pad_h < p->filter_h &&
                      (p->out_h - 1) * p->stride_h - p->pad_h < p->in_h, TFLM_ERR_BAD_SHAPE);
    return TFLM_OK;
  }
  TFLM_KERNEL_CHECK(ctx, node,
                    p->out_h == tflm_pool_out_size(padding, p->in_h, p->filter_h, p->stride_h),
                    TFLM_ERR_BAD_SHAPE);
  p->pad_h = tflm_pool_padding(p->in_h, p->filter_h, p->stride_h, p->out_h);
  return TFLM_OK;
}

tflm_status_t tflm_pool_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_pool_params_t *p;
  tflm_status_t status;
  int32_t activation = tflm_opt_int(node, TFLM_OPT_POOL_2D_FUSED_ACTIVATION_FUNCTION, 0);
  TFLM_KERNEL_TRY(tflm_node_check_io(
      ctx, node, 1, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8) | TFLM_TYPE_BIT(INT16),
      TFLM_IO_ANY_SHAPE, &in, &out));
  p = (tflm_pool_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in.type;
  status = tflm_pool_shapes(ctx, node, &in, &out, p);
  if (status != TFLM_OK) {
    return status;
  }
  tflm_activation_range_float(activation, &p->act_min_f, &p->act_max_f);
  if (in.type == TFLM_TYPE_INT8) {
    tflm_activation_range_quantized(activation, out.scale, out.zero_point, -128, 127,
                                    &p->act_min, &p->act_max);
  } else {
    tflm_activation_range_quantized(activation, out.scale, out.zero_point, -32768, 32767,
                                    &p->act_min, &p->act_max);
  }
  node->user_data = p;
  return TFLM_OK;
}

/* The window of output (out_y, out_x) clipped to the input. */
void tflm_pool_window(const tflm_pool_params_t *p, int32_t out_y, int32_t out_x,
                      tflm_pool_window_t *w) {
  const int32_t origin_y = out_y * p->stride_h - p->pad_h;
  const int32_t origin_x = out_x * p->stride_w - p->pad_w;
  w->y0 = origin_y > 0 ? origin_y : 0;
  w->x0 = origin_x > 0 ? origin_x : 0;
  w->y1 = origin_y + p->filter_h < p->in_h ? origin_y + p->filter_h : p->in_h;
  w->x1 = origin_x + p->filter_w < p->in_w ? origin_x + p->filter_w : p->in_w;
}

