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
  tflm_layout_reduction_t shape;      /* the reduced axes and the input walk */
} tflm_reduce_min_params_t;

static tflm_status_t reduce_min_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_reduce_min_params_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8),
                                     TFLM_IO_ANY_SHAPE, &in, &out));
  if (in.type == TFLM_TYPE_INT8) {
    TFLM_KERNEL_CHECK(ctx, node, in.scale == out.scale && in.zero_point == out.zero_point,
                      TFLM_ERR_BAD_PARAMS);
  }
  p = (tflm_reduce_min_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in.type;
  TFLM_KERNEL_TRY(tflm_layout_reduction_init(ctx, node, &in, &out, &p->shape));
  node->user_data = p;
  return TFLM_OK;
}

static tflm_status_t reduce_min_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_reduce_min_params_t *p = (const tflm_reduce_min_params_t *)node->user_data;
  const tflm_layout_reduction_t *s = p != NULL ? &p->shape : NULL;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  tflm_layout_reduction_walk_t w;
  int32_t i, n;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  n = tflm_layout_reduction_start(s, &w);
  if (p->type == TFLM_TYPE_FLOAT32) {
    const float *x = (const float *)in;
    float *y = (float *)out;
    for (i = 0; i < s->out_elements; ++i) y[i] = FLT_MAX;
    for (i = 0; i < n; ++i, tflm_layout_reduction_next(s, &w)) {
      if (x[i] < y[w.at]) y[w.at] = x[i];
    }
  } else {
    const int8_t *x = (const int8_t *)in;
    int8_t *y = (int8_t *)out;
    for (i = 0; i < s->out_elements; ++i) y[i] = 127;
    for (i = 0; i < n; ++i, tflm_layout_reduction_next(s, &w)) {
      if (x[i] < y[w.at]) y[w.at] = x[i];
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_reduce_min = {
    NULL, TFLM_BUILTIN_REDUCE_MIN, NULL, reduce_min_prepare, reduce_min_eval, NULL,
    NULL};
