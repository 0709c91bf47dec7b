/* tflm-op: BROADCAST_TO tflm_op_broadcast_to types: float32,int8,int16,int32,int64,uint8,uint32,bool */
/* tflm-op: BROADCAST_ARGS tflm_op_broadcast_args types: int32,int64 */
/* BROADCAST_TO: the input repeated numpy-style to the output shape (the shape input gives
 * the same shape; the output tensor's is used), a strided copy with input stride 0 on the
 * broadcast axes.
 * BROADCAST_ARGS: the broadcast shape of two int32 / int64 shape vectors (right-aligned;
 * where they differ one of the two is 1); fails when they do not broadcast. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

static tflm_status_t broadcast_to_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_layout_view_t view;
  int32_t strides[TFLM_MAX_DIMS];
  int32_t k, shift;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, TFLM_TYPES_SIZED, TFLM_IO_ANY_SHAPE, &in, &out));
  TFLM_KERNEL_CHECK(ctx, node, in.ndims <= out.ndims, TFLM_ERR_BAD_SHAPE);
  tflm_layout_view_init(&view, tflm_type_size(in.type));
  tflm_layout_strides(in.dims, in.ndims, strides);
  tflm_layout_strides(out.dims, out.ndims, view.out_strides);
  shift = out.ndims - in.ndims;
  for (k = 0; k < out.ndims; ++k) {
    const int32_t d = k < shift ? 1 : in.dims[k - shift];
    TFLM_KERNEL_CHECK(ctx, node, d == out.dims[k] || d == 1, TFLM_ERR_BAD_SHAPE);
    view.dims[k] = out.dims[k];
    view.in_strides[k] = d == 1 ? 0 : strides[k - shift];
  }
  tflm_layout_view_align(&view, out.ndims);
  return tflm_layout_view_keep(ctx, node, &view);
}

static int64_t broadcast_args_read(const tflm_tensor_t *t, int32_t i) {
  return t->type == TFLM_TYPE_INT64 ? ((const int64_t *)t->data)[i]
                                    : ((const int32_t *)t->data)[i];
}

static tflm_status_t broadcast_args_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t a, b, out;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, 0, TFLM_IO_ANY_SHAPE, &a, &out));
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 1, &b) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node,
                    (a.type == TFLM_TYPE_INT32 || a.type == TFLM_TYPE_INT64) &&
                        a.type == b.type && a.type == out.type,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, a.ndims == 1 && b.ndims == 1 && out.ndims == 1,
                    TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, out.dims[0] == (a.dims[0] > b.dims[0] ? a.dims[0] : b.dims[0]),
                    TFLM_ERR_BAD_SHAPE);
  return TFLM_OK;
}

static tflm_status_t broadcast_args_eval(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t a, b, out;
  int32_t i;
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 0, &a) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 1, &b) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, &out) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, a.data != NULL && b.data != NULL && out.data != NULL,
                    TFLM_ERR_NOT_READY);
  for (i = 0; i < out.dims[0]; ++i) {
    const int32_t ia = i - (out.dims[0] - a.dims[0]), ib = i - (out.dims[0] - b.dims[0]);
    const int64_t da = ia >= 0 ? broadcast_args_read(&a, ia) : 1;
    const int64_t db = ib >= 0 ? broadcast_args_read(&b, ib) : 1;
    TFLM_KERNEL_CHECK(ctx, node, da == db || da == 1 || db == 1, TFLM_ERR_BAD_SHAPE);
    if (out.type == TFLM_TYPE_INT64) {
      ((int64_t *)out.data)[i] = da == 1 ? db : da;
    } else {
      ((int32_t *)out.data)[i] = (int32_t)(da == 1 ? db : da);
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_broadcast_to = {
    NULL, TFLM_BUILTIN_BROADCAST_TO, NULL, broadcast_to_prepare,
    tflm_layout_view_eval, NULL, NULL};
const tflm_registration_t tflm_op_broadcast_args = {
    NULL, TFLM_BUILTIN_BROADCAST_ARGS, NULL, broadcast_args_prepare,
    broadcast_args_eval, NULL, NULL};
