/* tflm-op: REDUCE_ALL tflm_op_reduce_all types: bool */
/* REDUCE_ALL (logical AND) of a bool tensor over the axes of a constant int32 axis tensor
 * (negative axes count from the end, duplicates ignored), keep_dims or not (the output
 * layout is the same): outputs start true and become false at any false input. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

static tflm_status_t reduce_all_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_layout_reduction_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, TFLM_TYPE_BIT(BOOL), TFLM_IO_ANY_SHAPE,
                                     &in, &out));
  p = (tflm_layout_reduction_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  TFLM_KERNEL_TRY(tflm_layout_reduction_init(ctx, node, &in, &out, p));
  node->user_data = p;
  return TFLM_OK;
}

static tflm_status_t reduce_all_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_layout_reduction_t *p = (const tflm_layout_reduction_t *)node->user_data;
  const uint8_t *x = (const uint8_t *)tflm_node_input_data(ctx, node, 0);
  uint8_t *y = (uint8_t *)tflm_node_output_data(ctx, node, 0);
  tflm_layout_reduction_walk_t w;
  int32_t i, n;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && x != NULL && y != NULL, TFLM_ERR_NOT_READY);
  n = tflm_layout_reduction_start(p, &w);
  for (i = 0; i < p->out_elements; ++i) y[i] = 1;
  for (i = 0; i < n; ++i, tflm_layout_reduction_next(p, &w)) {
    if (!x[i]) y[w.at] = 0;
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_reduce_all = {
    NULL, TFLM_BUILTIN_REDUCE_ALL, NULL, reduce_all_prepare, reduce_all_eval,
    NULL, NULL};
