/* tflm-op: REDUCE_ALL tflm_op_reduce_all types: bool */
/* REDUCE_ALL (logical AND) of a bool tensor over the axes of a constant int32 axis tensor
 * (negative axes count from the end, duplicates ignored), keep_dims or not (the output
 * layout is the same): outputs start true and become false at any false input. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t dims[TFLM_MAX_DIMS];        /* input dims right-aligned in six (leading 1s) */
  int32_t out_strides[TFLM_MAX_DIMS]; /* output stride of each input axis, 0 when reduced */
  int32_t in_elements;
  int32_t out_elements;
} tflm_reduce_all_params_t;

static tflm_status_t reduce_all_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, axis, out;
  tflm_reduce_all_params_t *p;
  int32_t i, k, shift, stride = 1, mask = 0;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, TFLM_TYPE_BIT(BOOL), TFLM_IO_ANY_SHAPE,
                                     &in, &out));
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 1, &axis) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, axis.type == TFLM_TYPE_INT32, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, axis.data != NULL && axis.is_constant, TFLM_ERR_BAD_PARAMS);
  for (i = 0; i < tflm_tensor_elements(&axis); ++i) {
    int32_t a = tflm_layout_read_index(&axis, i);
    if (a < 0) a += in.ndims;
    TFLM_KERNEL_CHECK(ctx, node, a >= 0 && a < in.ndims, TFLM_ERR_BAD_PARAMS);
    mask |= 1 << a;
  }
  p = (tflm_reduce_all_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  shift = TFLM_MAX_DIMS - in.ndims;
  for (k = 0; k < TFLM_MAX_DIMS; ++k) {
    p->dims[k] = k < shift ? 1 : in.dims[k - shift];
    p->out_strides[k] = 0;
  }
  for (k = TFLM_MAX_DIMS - 1; k >= shift; --k) {
    if (!(mask & (1 << (k - shift)))) {
      p->out_strides[k] = stride;
      stride *= p->dims[k];
    }
  }
  p->out_elements = stride;
  p->in_elements = tflm_tensor_elements(&in);
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(&out) == p->out_elements,
                    TFLM_ERR_BAD_SHAPE);
  node->user_data = p;
  return TFLM_OK;
}

static tflm_status_t reduce_all_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_reduce_all_params_t *p = (const tflm_reduce_all_params_t *)node->user_data;
  const uint8_t *x = (const uint8_t *)tflm_node_input_data(ctx, node, 0);
  uint8_t *y = (uint8_t *)tflm_node_output_data(ctx, node, 0);
  int32_t idx[TFLM_MAX_DIMS] = {0, 0, 0, 0, 0, 0};
  int32_t i, k, at = 0;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && x != NULL && y != NULL, TFLM_ERR_NOT_READY);
  for (i = 0; i < p->out_elements; ++i) y[i] = 1;
  for (i = 0; i < p->in_elements; ++i) {
    if (!x[i]) y[at] = 0;
    /* Row-major step of the input; `at` follows the output offset. */
    for (k = TFLM_MAX_DIMS - 1; k >= 0; --k) {
      ++idx[k];
      at += p->out_strides[k];
      if (idx[k] < p->dims[k]) break;
      at -= p->out_strides[k] * p->dims[k];
      idx[k] = 0;
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_reduce_all = {
    NULL, TFLM_BUILTIN_REDUCE_ALL, NULL, reduce_all_prepare, reduce_all_eval,
    NULL, NULL};
