/* tflm-op: REDUCE_MIN tflm_op_reduce_min types: float32,int8 */
/* REDUCE_MIN over the axes of a constant int32 axis tensor (negative axes count from the
 * end, duplicates ignored), keep_dims or not (the output layout is the same), as TFLM's
 * reference: float outputs start at FLT_MAX and take each input that is smaller, in
 * row-major input order (so NaN is skipped); int8 requires equal input and output
 * quantisation and takes the minimum stored value. */
#include <float.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;                       /* TFLM_TYPE_* of input and output */
  int32_t dims[TFLM_MAX_DIMS];        /* input dims right-aligned in six (leading 1s) */
  int32_t out_strides[TFLM_MAX_DIMS]; /* output stride of each input axis, 0 when reduced */
  int32_t in_elements;
  int32_t out_elements;
} tflm_reduce_min_params_t;

static tflm_status_t reduce_min_axes(tflm_context_t *ctx, tflm_node_t *node, int32_t ndims,
                                     int32_t *mask) {
  tflm_tensor_t axis;
  int32_t i;
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 1, &axis) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, axis.data != NULL && axis.is_constant, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, axis.type == TFLM_TYPE_INT32, TFLM_ERR_UNSUPPORTED_TYPE);
  *mask = 0;
  for (i = 0; i < tflm_tensor_elements(&axis); ++i) {
    int32_t a = tflm_layout_read_index(&axis, i);
    if (a < 0) a += ndims;
    TFLM_KERNEL_CHECK(ctx, node, a >= 0 && a < ndims, TFLM_ERR_BAD_PARAMS);
    *mask |= 1 << a;
  }
  return TFLM_OK;
}

static void reduce_min_shapes(const tflm_tensor_t *in, int32_t mask,
                              tflm_reduce_min_params_t *p) {
  const int32_t shift = TFLM_MAX_DIMS - in->ndims;
  int32_t k, stride = 1;
  for (k = 0; k < TFLM_MAX_DIMS; ++k) {
    p->dims[k] = k < shift ? 1 : in->dims[k - shift];
    p->out_strides[k] = 0;
  }
  for (k = TFLM_MAX_DIMS - 1; k >= shift; --k) {
    if (!(mask & (1 << (k - shift)))) {
      p->out_strides[k] = stride;
      stride *= p->dims[k];
    }
  }
  p->out_elements = stride;
  p->in_elements = tflm_tensor_elements(in);
}

static tflm_status_t reduce_min_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_reduce_min_params_t *p;
  int32_t mask = 0;
  tflm_status_t status;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8),
                                     TFLM_IO_ANY_SHAPE, &in, &out));
  if (in.type == TFLM_TYPE_INT8) {
    TFLM_KERNEL_CHECK(ctx, node, in.scale == out.scale && in.zero_point == out.zero_point,
                      TFLM_ERR_BAD_PARAMS);
  }
  status = reduce_min_axes(ctx, node, in.ndims, &mask);
  if (status != TFLM_OK) return status;
  p = (tflm_reduce_min_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in.type;
  reduce_min_shapes(&in, mask, p);
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(&out) == p->out_elements,
                    TFLM_ERR_BAD_SHAPE);
  node->user_data = p;
  return TFLM_OK;
}

/* Row-major walk of the input: idx counts, *at follows the output offset. */
static void reduce_min_next(const tflm_reduce_min_params_t *p, int32_t *idx, int32_t *at) {
  int32_t k;
  for (k = TFLM_MAX_DIMS - 1; k >= 0; --k) {
    ++idx[k];
    *at += p->out_strides[k];
    if (idx[k] < p->dims[k]) return;
    *at -= p->out_strides[k] * p->dims[k];
    idx[k] = 0;
  }
}

static tflm_status_t reduce_min_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_reduce_min_params_t *p = (const tflm_reduce_min_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t idx[TFLM_MAX_DIMS] = {0, 0, 0, 0, 0, 0};
  int32_t i, at = 0;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  if (p->type == TFLM_TYPE_FLOAT32) {
    const float *x = (const float *)in;
    float *y = (float *)out;
    for (i = 0; i < p->out_elements; ++i) y[i] = FLT_MAX;
    for (i = 0; i < p->in_elements; ++i, reduce_min_next(p, idx, &at)) {
      if (x[i] < y[at]) y[at] = x[i];
    }
  } else {
    const int8_t *x = (const int8_t *)in;
    int8_t *y = (int8_t *)out;
    for (i = 0; i < p->out_elements; ++i) y[i] = 127;
    for (i = 0; i < p->in_elements; ++i, reduce_min_next(p, idx, &at)) {
      if (x[i] < y[at]) y[at] = x[i];
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_reduce_min = {
    NULL, TFLM_BUILTIN_REDUCE_MIN, NULL, reduce_min_prepare, reduce_min_eval, NULL,
    NULL};
