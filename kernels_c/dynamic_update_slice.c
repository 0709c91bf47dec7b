/* tflm-op: DYNAMIC_UPDATE_SLICE tflm_op_dynamic_update_slice types: float32,int8,int16,int32 */
/* DYNAMIC_UPDATE_SLICE: the operand with `update` written at start_indices (an int32 or
 * int64 vector read at eval, one per axis), each start clamped to [0, dim - update dim] as
 * TFLM does.  Whole elements move, so the copy is bit-exact for every dtype. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

static tflm_status_t dus_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t operand, update, start, out;
  tflm_layout_view_t view;
  int32_t k;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 3, 0, TFLM_IO_ANY_SHAPE, &operand, &out));
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 1, &update) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 2, &start) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node,
                    operand.type == out.type && update.type == out.type &&
                        tflm_type_size(out.type) > 0,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, start.type == TFLM_TYPE_INT32 || start.type == TFLM_TYPE_INT64,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node,
                    operand.bytes == out.bytes && update.ndims == operand.ndims &&
                        tflm_tensor_elements(&start) == operand.ndims,
                    TFLM_ERR_BAD_SHAPE);
  tflm_layout_view_init(&view, tflm_type_size(out.type));
  tflm_layout_strides(update.dims, update.ndims, view.in_strides);
  tflm_layout_strides(operand.dims, operand.ndims, view.out_strides);
  for (k = 0; k < operand.ndims; ++k) {
    TFLM_KERNEL_CHECK(ctx, node, update.dims[k] <= operand.dims[k], TFLM_ERR_BAD_SHAPE);
    view.dims[k] = update.dims[k];
  }
  tflm_layout_view_align(&view, operand.ndims);
  return tflm_layout_view_keep(ctx, node, &view); /* out_base is set at every eval */
}

static tflm_status_t dus_eval(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_layout_view_t *view = (tflm_layout_view_t *)node->user_data;
  tflm_tensor_t operand, update, start, out;
  int32_t k, shift;
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 0, &operand) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 1, &update) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 2, &start) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, &out) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, view != NULL && operand.data != NULL && update.data != NULL &&
                                   start.data != NULL && out.data != NULL,
                    TFLM_ERR_NOT_READY);
  shift = TFLM_MAX_DIMS - operand.ndims;
  view->out_base = 0;
  for (k = 0; k < operand.ndims; ++k) {
    const int64_t s = start.type == TFLM_TYPE_INT64 ? ((const int64_t *)start.data)[k]
                                                    : ((const int32_t *)start.data)[k];
    const int64_t high = operand.dims[k] - update.dims[k];
    const int64_t clamped = s < 0 ? 0 : (s > high ? high : s);
    view->out_base += (int32_t)clamped * view->out_strides[k + shift];
  }
  tflm_layout_move((uint8_t *)out.data, (const uint8_t *)operand.data, out.bytes);
  tflm_layout_view_copy(view, (const uint8_t *)update.data, (uint8_t *)out.data);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_dynamic_update_slice = {
    NULL, TFLM_BUILTIN_DYNAMIC_UPDATE_SLICE, NULL, dus_prepare, dus_eval, NULL,
    NULL};
