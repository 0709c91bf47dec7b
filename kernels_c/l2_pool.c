/* tflm-op: L2_POOL_2D tflm_op_l2_pool_2d types: float32 */
/* L2_POOL_2D on float32 NHWC (the only type TFLM runs): each output is
 * sqrtf(sum of squares / count) over the window cells inside the input, squares summed in
 * float row by row in window order, then clamped to the fused activation's range, as
 * TFLM's reference.  Padding and output size follow TFLM's SAME / VALID rule. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t batches, in_h, in_w, channels, out_h, out_w;
  int32_t filter_h, filter_w, stride_h, stride_w, pad_h, pad_w;
  float act_min, act_max;
} tflm_l2_pool_params_t;

/* Output size and leading padding of one spatial dimension (SAME pads the odd extra cell
 * after the input). */
static void l2_pool_padding(int32_t padding, int32_t stride, int32_t in_size, int32_t filter,
                            int32_t *out_size, int32_t *pad_before) {
  int32_t total;
  *out_size = padding == TFLM_PADDING_SAME ? (in_size + stride - 1) / stride
                                           : (in_size + stride - filter) / stride;
  total = (*out_size - 1) * stride + filter - in_size;
  *pad_before = total > 0 ? total / 2 : 0;
}

static tflm_status_t l2_pool_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_l2_pool_params_t *p;
  int32_t padding, out_h, out_w;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 1, TFLM_TYPE_BIT(FLOAT32), TFLM_IO_ANY_SHAPE,
                                     &in, &out));
  TFLM_KERNEL_CHECK(ctx, node, in.ndims == 4 && out.ndims == 4, TFLM_ERR_BAD_SHAPE);
  p = (tflm_l2_pool_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  padding = tflm_opt_int(node, TFLM_OPT_POOL_2D_PADDING, TFLM_PADDING_SAME);
  p->stride_w = tflm_opt_int(node, TFLM_OPT_POOL_2D_STRIDE_W, 0);
  p->stride_h = tflm_opt_int(node, TFLM_OPT_POOL_2D_STRIDE_H, 0);
  p->filter_w = tflm_opt_int(node, TFLM_OPT_POOL_2D_FILTER_WIDTH, 0);
  p->filter_h = tflm_opt_int(node, TFLM_OPT_POOL_2D_FILTER_HEIGHT, 0);
  TFLM_KERNEL_CHECK(ctx, node,
                    p->stride_w > 0 && p->stride_h > 0 && p->filter_w > 0 && p->filter_h > 0,
                    TFLM_ERR_BAD_PARAMS);
  tflm_activation_range_float(tflm_opt_int(node, TFLM_OPT_POOL_2D_FUSED_ACTIVATION_FUNCTION, 0),
                              &p->act_min, &p->act_max);
  p->batches = in.dims[0];
  p->in_h = in.dims[1];
  p->in_w = in.dims[2];
  p->channels = in.dims[3];
  l2_pool_padding(padding, p->stride_h, p->in_h, p->filter_h, &out_h, &p->pad_h);
  l2_pool_padding(padding, p->stride_w, p->in_w, p->filter_w, &out_w, &p->pad_w);
  p->out_h = out.dims[1];
  p->out_w = out.dims[2];
  TFLM_KERNEL_CHECK(ctx, node,
                    out.dims[0] == p->batches && out_h == p->out_h && out_w == p->out_w &&
                        out.dims[3] == p->channels,
                    TFLM_ERR_BAD_SHAPE);
  node->user_data = p;
  return TFLM_OK;
}

static tflm_status_t l2_pool_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_l2_pool_params_t *p = (const tflm_l2_pool_params_t *)node->user_data;
  const float *x = (const float *)tflm_node_input_data(ctx, node, 0);
  float *y = (float *)tflm_node_output_data(ctx, node, 0);
  int32_t b, oy, ox, c, fy, fx;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && x != NULL && y != NULL, TFLM_ERR_NOT_READY);
  for (b = 0; b < p->batches; ++b) {
    for (oy = 0; oy < p->out_h; ++oy) {
      const int32_t y0 = oy * p->stride_h - p->pad_h;
      const int32_t fy0 = y0 < 0 ? -y0 : 0;
      const int32_t fy1 = p->in_h - y0 < p->filter_h ? p->in_h - y0 : p->filter_h;
      for (ox = 0; ox < p->out_w; ++ox) {
        const int32_t x0 = ox * p->stride_w - p->pad_w;
        const int32_t fx0 = x0 < 0 ? -x0 : 0;
        const int32_t fx1 = p->in_w - x0 < p->filter_w ? p->in_w - x0 : p->filter_w;
        for (c = 0; c < p->channels; ++c) {
          float sum = 0.0f;
          int32_t count = 0;
          for (fy = fy0; fy < fy1; ++fy) {
            for (fx = fx0; fx < fx1; ++fx) {
              const float v =
                  x[((b * p->in_h + y0 + fy) * p->in_w + x0 + fx) * p->channels + c];
              sum += v * v;
              ++count;
            }
          }
          y[((b * p->out_h + oy) * p->out_w + ox) * p->channels + c] =
              tflm_clamp_float(sqrtf(sum / (float)count), p->act_min, p->act_max);
        }
      }
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_l2_pool_2d = {
    NULL, TFLM_BUILTIN_L2_POOL_2D, NULL, l2_pool_prepare, l2_pool_eval, NULL,
    NULL};
