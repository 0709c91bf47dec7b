/* tflm-op: TRANSPOSE tflm_op_transpose types: float32,int8,int16 */
/* TRANSPOSE: output axis i is input axis perm[i].  perm must be a constant tensor (int32 or
 * int64) of one entry per input dimension, up to six.  Elements are copied unchanged. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

static tflm_status_t transpose_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, perm, out;
  tflm_layout_view_t view;
  int32_t in_strides[TFLM_MAX_DIMS];
  int32_t i, seen = 0;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, TFLM_TYPES_SIZED, TFLM_IO_ANY_SHAPE, &in, &out));
  TFLM_KERNEL_TRY(tflm_node_constant_input(ctx, node, 1, 0, &perm));
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(&perm) == in.ndims && out.ndims == in.ndims,
                    TFLM_ERR_BAD_SHAPE);
  tflm_layout_view_init(&view, tflm_type_size(in.type));
  tflm_layout_strides(in.dims, in.ndims, in_strides);
  tflm_layout_strides(out.dims, out.ndims, view.out_strides);
  for (i = 0; i < in.ndims; ++i) {
    int32_t axis = tflm_layout_read_index(&perm, i);
    if (axis < 0) axis += in.ndims;
    TFLM_KERNEL_CHECK(ctx, node, axis >= 0 && axis < in.ndims && !(seen & (1 << axis)),
                      TFLM_ERR_BAD_PARAMS);
    seen |= 1 << axis;
    TFLM_KERNEL_CHECK(ctx, node, out.dims[i] == in.dims[axis], TFLM_ERR_BAD_SHAPE);
    view.dims[i] = out.dims[i];
    view.in_strides[i] = in_strides[axis];
  }
  tflm_layout_view_align(&view, in.ndims);
  return tflm_layout_view_keep(ctx, node, &view);
}

const tflm_registration_t tflm_op_transpose = {
    NULL, TFLM_BUILTIN_TRANSPOSE, NULL, transpose_prepare, tflm_layout_view_eval,
    NULL, NULL};
