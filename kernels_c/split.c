/* tflm-op: SPLIT tflm_op_split types: float32,int8,int16,int32 */
/* tflm-op: SPLIT_V tflm_op_split_v types: float32,int8,int16,int32 */
/* tflm-op: UNPACK tflm_op_unpack types: float32,int8,int16,int32 */
/* SPLIT, SPLIT_V and UNPACK cut their input along one axis into the outputs, copying
 * elements unchanged.  The piece sizes are taken from the output tensors' shapes (which the
 * converter computed from num_splits / size_splits), so only the axis is read: it must be a
 * constant tensor (SPLIT, SPLIT_V) or the option (UNPACK). */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

/* The "split" of tflm_layout.h: input `joined` cut after dims[0 .. axis-1] of the input;
 * output k supplies the dims from axis_out on. */
static tflm_status_t split_prepare_axis(tflm_context_t *ctx, tflm_node_t *node, int32_t joined,
                                        int32_t axis, int32_t axis_out) {
  tflm_tensor_t in, out;
  tflm_layout_pieces_t *p;
  int32_t k, size;
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, joined, &in) == TFLM_OK, TFLM_ERROR);
  size = tflm_type_size(in.type);
  TFLM_KERNEL_CHECK(ctx, node, size > 0, TFLM_ERR_UNSUPPORTED_TYPE);
  if (axis < 0) axis += in.ndims;
  if (axis_out < 0) axis_out = axis;
  TFLM_KERNEL_CHECK(ctx, node, axis >= 0 && axis < in.ndims, TFLM_ERR_BAD_PARAMS);
  p = tflm_layout_pieces_alloc(ctx, node->outputs_count);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->outer = tflm_layout_product(in.dims, 0, axis);
  p->row_bytes = 0;
  p->first = 0;
  p->joined = joined;
  for (k = 0; k < node->outputs_count; ++k) {
    TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, k, &out) == TFLM_OK, TFLM_ERROR);
    TFLM_KERNEL_CHECK(ctx, node, out.type == in.type, TFLM_ERR_UNSUPPORTED_TYPE);
    TFLM_KERNEL_CHECK(ctx, node, axis_out <= out.ndims, TFLM_ERR_BAD_SHAPE);
    tflm_layout_piece_bytes(p)[k] = tflm_layout_product(out.dims, axis_out, out.ndims) * size;
    TFLM_KERNEL_CHECK(ctx, node, tflm_layout_piece_bytes(p)[k] * p->outer == out.bytes,
                      TFLM_ERR_BAD_SHAPE);
    p->row_bytes += tflm_layout_piece_bytes(p)[k];
  }
  TFLM_KERNEL_CHECK(ctx, node, p->row_bytes * p->outer == in.bytes, TFLM_ERR_BAD_SHAPE);
  node->user_data = p;
  return TFLM_OK;
}

/* The axis from a constant one-element int32 input tensor. */
static tflm_status_t constant_axis(tflm_context_t *ctx, tflm_node_t *node, int32_t index,
                                   int32_t *axis) {
  tflm_tensor_t t;
  TFLM_KERNEL_TRY(tflm_node_constant_input(ctx, node, index, TFLM_TYPE_BIT(INT32) | TFLM_TYPE_BIT(INT64), &t));
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(&t) == 1, TFLM_ERR_BAD_SHAPE);
  *axis = tflm_layout_read_index(&t, 0);
  return TFLM_OK;
}

/* SPLIT and SPLIT_V: `inputs` inputs, the axis a constant input, the data another. */
static tflm_status_t split_prepare_inputs(tflm_context_t *ctx, tflm_node_t *node,
                                          int32_t inputs, int32_t axis_input,
                                          int32_t data_input) {
  int32_t axis = 0;
  TFLM_KERNEL_CHECK(ctx, node, node->inputs_count == inputs && node->outputs_count >= 1,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_TRY(constant_axis(ctx, node, axis_input, &axis));
  return split_prepare_axis(ctx, node, data_input, axis, -1);
}

/* SPLIT: inputs (axis, input). */
static tflm_status_t split_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return split_prepare_inputs(ctx, node, 2, 0, 1);
}

/* SPLIT_V: inputs (input, size_splits, axis). */
static tflm_status_t split_v_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return split_prepare_inputs(ctx, node, 3, 2, 0);
}

/* UNPACK: the outputs drop the axis, so their dims from `axis` on are the input's after it. */
static tflm_status_t unpack_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in;
  int32_t axis = tflm_opt_int(node, TFLM_OPT_UNPACK_AXIS, 0);
  TFLM_KERNEL_CHECK(ctx, node, node->inputs_count == 1 && node->outputs_count >= 1,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 0, &in) == TFLM_OK, TFLM_ERROR);
  if (axis < 0) axis += in.ndims;
  TFLM_KERNEL_CHECK(ctx, node, axis >= 0 && axis < in.ndims, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, in.dims[axis] == node->outputs_count, TFLM_ERR_BAD_SHAPE);
  return split_prepare_axis(ctx, node, 0, axis, axis);
}

const tflm_registration_t tflm_op_split = {
    NULL, TFLM_BUILTIN_SPLIT, NULL, split_prepare, tflm_layout_split_eval, NULL,
    NULL};

const tflm_registration_t tflm_op_split_v = {
    NULL, TFLM_BUILTIN_SPLIT_V, NULL, split_v_prepare, tflm_layout_split_eval, NULL,
    NULL};

const tflm_registration_t tflm_op_unpack = {
    NULL, TFLM_BUILTIN_UNPACK, NULL, unpack_prepare, tflm_layout_split_eval, NULL,
    NULL};
