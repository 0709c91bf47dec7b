/* tflm-op: CONCATENATION tflm_op_concatenation types: float32,int8,int16,int32,int64,bool */
/* tflm-op: PACK tflm_op_pack types: float32,int8,int16,int32,int64 */
/* CONCATENATION and PACK join their inputs along one axis.  Like TFLM's reference kernels
 * they copy elements unchanged: quantised inputs are not rescaled (TFLM requires them to
 * share the output's quantisation).  Both are "joins" of tflm_layout.h: the output is
 * `outer` rows, each the concatenation of one row of every input. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

/* Checks the output type and returns the element size (0 when unsupported). */
static int32_t join_element_size(tflm_context_t *ctx, tflm_node_t *node, tflm_tensor_t *out) {
  if (tflm_node_output(ctx, node, 0, out) != TFLM_OK) return 0;
  return tflm_type_size(out->type);
}

/* Axis in [0, ndims) from a possibly negative option value; -1 when out of range. */
static int32_t join_axis(int32_t axis, int32_t ndims) {
  if (axis < 0) axis += ndims;
  return axis >= 0 && axis < ndims ? axis : -1;
}

/* One join piece per input: `inner` elements of input k (its dims from axis_in on) per row. */
static tflm_status_t join_prepare(tflm_context_t *ctx, tflm_node_t *node, int32_t axis,
                                  int32_t axis_in) {
  tflm_tensor_t out, in;
  tflm_layout_pieces_t *p;
  int32_t k, size = join_element_size(ctx, node, &out);
  TFLM_KERNEL_CHECK(ctx, node, node->outputs_count == 1 && node->inputs_count >= 1,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, size > 0, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, axis >= 0, TFLM_ERR_BAD_PARAMS);
  p = tflm_layout_pieces_alloc(ctx, node->inputs_count);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->outer = tflm_layout_product(out.dims, 0, axis);
  p->row_bytes = 0;
  p->first = 0;
  p->joined = 0;
  for (k = 0; k < node->inputs_count; ++k) {
    TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, k, &in) == TFLM_OK, TFLM_ERROR);
    TFLM_KERNEL_CHECK(ctx, node, in.type == out.type, TFLM_ERR_UNSUPPORTED_TYPE);
    TFLM_KERNEL_CHECK(ctx, node, axis_in <= in.ndims, TFLM_ERR_BAD_SHAPE);
    TFLM_KERNEL_CHECK(ctx, node, tflm_layout_product(in.dims, 0, axis_in) == p->outer,
                      TFLM_ERR_BAD_SHAPE);
    tflm_layout_piece_bytes(p)[k] = tflm_layout_product(in.dims, axis_in, in.ndims) * size;
    p->row_bytes += tflm_layout_piece_bytes(p)[k];
  }
  TFLM_KERNEL_CHECK(ctx, node, p->row_bytes * p->outer == out.bytes, TFLM_ERR_BAD_SHAPE);
  node->user_data = p;
  return TFLM_OK;
}

static tflm_status_t concatenation_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t out;
  int32_t axis;
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, &out) == TFLM_OK, TFLM_ERROR);
  /* TFLM's kernel accepts no fused activation either. */
  TFLM_KERNEL_CHECK(ctx, node,
                    tflm_opt_int(node, TFLM_OPT_CONCATENATION_FUSED_ACTIVATION_FUNCTION,
                                 TFLM_ACT_NONE) == TFLM_ACT_NONE,
                    TFLM_ERR_BAD_PARAMS);
  axis = join_axis(tflm_opt_int(node, TFLM_OPT_CONCATENATION_AXIS, 0), out.ndims);
  return join_prepare(ctx, node, axis, axis);
}

/* PACK: the inputs have rank R, the output R + 1 with the new axis at `axis`. */
static tflm_status_t pack_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t out;
  int32_t axis;
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, &out) == TFLM_OK, TFLM_ERROR);
  axis = join_axis(tflm_opt_int(node, TFLM_OPT_PACK_AXIS, 0), out.ndims);
  TFLM_KERNEL_CHECK(ctx, node, axis < 0 || out.dims[axis] == node->inputs_count,
                    TFLM_ERR_BAD_SHAPE);
  return join_prepare(ctx, node, axis, axis);
}

const tflm_registration_t tflm_op_concatenation = {
    NULL, TFLM_BUILTIN_CONCATENATION, NULL, concatenation_prepare,
    tflm_layout_join_eval, NULL, NULL};

const tflm_registration_t tflm_op_pack = {
    NULL, TFLM_BUILTIN_PACK, NULL, pack_prepare, tflm_layout_join_eval, NULL, NULL};
