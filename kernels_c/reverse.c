/* tflm-op: REVERSE_V2 tflm_op_reverse_v2 types: float32,int8,int16,int32,int64,uint8,bool */
/* REVERSE_V2: the input with the axes of a constant int32 axis tensor reversed (negative
 * axes count from the end).  A strided copy (tflm_layout.h) whose input strides are
 * negative on the reversed axes: whole elements move, so every dtype is bit-exact. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

static tflm_status_t reverse_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, axis, out;
  tflm_layout_view_t view;
  int32_t k, i;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, TFLM_TYPES_SIZED, TFLM_IO_ANY_SHAPE, &in, &out));
  TFLM_KERNEL_TRY(tflm_node_constant_input(ctx, node, 1, TFLM_TYPE_BIT(INT32) | TFLM_TYPE_BIT(INT64), &axis));
  TFLM_KERNEL_CHECK(ctx, node, in.bytes == out.bytes && in.ndims <= TFLM_MAX_DIMS,
                    TFLM_ERR_BAD_SHAPE);
  tflm_layout_view_init(&view, tflm_type_size(in.type));
  tflm_layout_strides(in.dims, in.ndims, view.in_strides);
  tflm_layout_strides(in.dims, in.ndims, view.out_strides);
  for (k = 0; k < in.ndims; ++k) view.dims[k] = in.dims[k];
  for (i = 0; i < tflm_tensor_elements(&axis); ++i) {
    k = tflm_layout_read_index(&axis, i);
    if (k < 0) k += in.ndims;
    TFLM_KERNEL_CHECK(ctx, node, k >= 0 && k < in.ndims, TFLM_ERR_BAD_PARAMS);
    if (view.in_strides[k] > 0 && in.dims[k] > 0) { /* a repeated axis reverses once */
      view.in_base += (in.dims[k] - 1) * view.in_strides[k];
      view.in_strides[k] = -view.in_strides[k];
    }
  }
  tflm_layout_view_align(&view, in.ndims);
  return tflm_layout_view_keep(ctx, node, &view);
}

const tflm_registration_t tflm_op_reverse_v2 = {
    NULL, TFLM_BUILTIN_REVERSE_V2, NULL, reverse_prepare, tflm_layout_view_eval,
    NULL, NULL};
