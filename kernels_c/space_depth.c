/* tflm-op: DEPTH_TO_SPACE tflm_op_depth_to_space types: float32,int8 */
/* tflm-op: SPACE_TO_DEPTH tflm_op_space_to_depth types: float32,int8 */
/* DEPTH_TO_SPACE and SPACE_TO_DEPTH on NHWC tensors with block size b, as TFLM orders them:
 *   depth_to_space out[n, h*b + by, w*b + bx, c] = in[n, h, w, (by*b + bx)*C + c]
 *   space_to_depth out[n, h, w, (by*b + bx)*C + c] = in[n, h*b + by, w*b + bx, c]
 * Both are six-axis strided copies (tflm_layout.h), elements unchanged. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

static tflm_status_t block_views(tflm_context_t *ctx, tflm_node_t *node, int32_t field,
                                 tflm_tensor_t *in, tflm_tensor_t *out, int32_t *block) {
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 1, TFLM_TYPES_SIZED, TFLM_IO_ANY_SHAPE, in, out));
  TFLM_KERNEL_CHECK(ctx, node, in->ndims == 4 && out->ndims == 4, TFLM_ERR_BAD_SHAPE);
  *block = tflm_opt_int(node, field, 0);
  TFLM_KERNEL_CHECK(ctx, node, *block >= 1, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, in->dims[0] == out->dims[0] && in->bytes == out->bytes,
                    TFLM_ERR_BAD_SHAPE);
  return TFLM_OK;
}

/* The copy walks the output in order as [N, H, by, W, bx, C] (depth_to_space). */
static tflm_status_t depth_to_space_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_layout_view_t v;
  int32_t b, c;
  tflm_status_t status = block_views(ctx, node, TFLM_OPT_DEPTH_TO_SPACE_BLOCK_SIZE, &in, &out, &b);
  if (status != TFLM_OK) return status;
  c = out.dims[3];
  TFLM_KERNEL_CHECK(ctx, node, in.dims[3] == b * b * c && out.dims[1] == in.dims[1] * b &&
                                   out.dims[2] == in.dims[2] * b,
                    TFLM_ERR_BAD_SHAPE);
  tflm_layout_view_init(&v, tflm_type_size(in.type));
  v.dims[0] = in.dims[0];
  v.dims[1] = in.dims[1];
  v.dims[2] = b;
  v.dims[3] = in.dims[2];
  v.dims[4] = b;
  v.dims[5] = c;
  v.in_strides[0] = in.dims[1] * in.dims[2] * in.dims[3];
  v.in_strides[1] = in.dims[2] * in.dims[3];
  v.in_strides[2] = b * c;
  v.in_strides[3] = in.dims[3];
  v.in_strides[4] = c;
  v.in_strides[5] = 1;
  tflm_layout_strides(v.dims, TFLM_MAX_DIMS, v.out_strides);
  return tflm_layout_view_keep(ctx, node, &v);
}

/* The copy walks the output in order as [N, H, W, by, bx, C] (space_to_depth). */
static tflm_status_t space_to_depth_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_layout_view_t v;
  int32_t b, c;
  tflm_status_t status = block_views(ctx, node, TFLM_OPT_SPACE_TO_DEPTH_BLOCK_SIZE, &in, &out, &b);
  if (status != TFLM_OK) return status;
  c = in.dims[3];
  TFLM_KERNEL_CHECK(ctx, node, out.dims[3] == b * b * c && in.dims[1] == out.dims[1] * b &&
                                   in.dims[2] == out.dims[2] * b,
                    TFLM_ERR_BAD_SHAPE);
  tflm_layout_view_init(&v, tflm_type_size(in.type));
  v.dims[0] = out.dims[0];
  v.dims[1] = out.dims[1];
  v.dims[2] = out.dims[2];
  v.dims[3] = b;
  v.dims[4] = b;
  v.dims[5] = c;
  v.in_strides[0] = in.dims[1] * in.dims[2] * c;
  v.in_strides[1] = b * in.dims[2] * c;
  v.in_strides[2] = b * c;
  v.in_strides[3] = in.dims[2] * c;
  v.in_strides[4] = c;
  v.in_strides[5] = 1;
  tflm_layout_strides(v.dims, TFLM_MAX_DIMS, v.out_strides);
  return tflm_layout_view_keep(ctx, node, &v);
}

const tflm_registration_t tflm_op_depth_to_space = {
    NULL, TFLM_BUILTIN_DEPTH_TO_SPACE, NULL, depth_to_space_prepare,
    tflm_layout_view_eval, NULL, NULL};

const tflm_registration_t tflm_op_space_to_depth = {
    NULL, TFLM_BUILTIN_SPACE_TO_DEPTH, NULL, space_to_depth_prepare,
    tflm_layout_view_eval, NULL, NULL};
