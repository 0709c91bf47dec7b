/* tflm-op: MAXIMUM tflm_op_maximum types: float32,int8,int16,int32,int64 */
/* tflm-op: MINIMUM tflm_op_minimum types: float32,int8,int16,int32,int64 */
/* MAXIMUM and MINIMUM with numpy-style broadcasting, bit-exact with TFLM's reference
 * kernels: a > b ? a : b (a < b ? a : b), comparing stored values as they are.  TFLM does
 * not requantise, so quantised inputs are assumed to share the output's parameters; a NaN
 * in a yields b, as in TFLM. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_elementwise.h"
#include "tflm_kernel.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  tflm_broadcast_t shape;
  int32_t type;        /* TFLM_TYPE_* of inputs and output */
  int32_t is_maximum;  /* 1 MAXIMUM, 0 MINIMUM */
} tflm_minmax_params_t;

static tflm_status_t tflm_minmax_prepare(tflm_context_t *ctx, tflm_node_t *node,
                                         int32_t is_maximum) {
  tflm_tensor_t in[2], out;
  tflm_minmax_params_t *p;
  tflm_status_t status;
  p = (tflm_minmax_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  status = tflm_elementwise_prepare(ctx, node, 2, in, &out, &p->shape);
  if (status != TFLM_OK) {
    return status;
  }
  TFLM_KERNEL_CHECK(ctx, node, in[0].type == out.type && in[1].type == out.type,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node,
                    out.type == TFLM_TYPE_FLOAT32 || out.type == TFLM_TYPE_INT8 ||
                        out.type == TFLM_TYPE_INT16 || out.type == TFLM_TYPE_INT32 ||
                        out.type == TFLM_TYPE_INT64,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p->type = out.type;
  p->is_maximum = is_maximum;
  node->user_data = p;
  return TFLM_OK;
}

static tflm_status_t tflm_maximum_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_minmax_prepare(ctx, node, 1);
}

static tflm_status_t tflm_minimum_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_minmax_prepare(ctx, node, 0);
}

/* One row function per element type; `max` picks the comparison. */
#define TFLM_MINMAX_ROW(name, type)                                                      \
  static void name(const void *params, const void *const *in, const int32_t *step,       \
                   void *out, int32_t n) {                                               \
    const int32_t max = ((const tflm_minmax_params_t *)params)->is_maximum;             \
    const type *x = (const type *)in[0];                                                 \
    const type *y = (const type *)in[1];                                                 \
    type *z = (type *)out;                                                               \
    int32_t i;                                                                           \
    for (i = 0; i < n; ++i) {                                                            \
      const type a = x[i * step[0]], b = y[i * step[1]];                                 \
      z[i] = max ? (a > b ? a : b) : (a < b ? a : b);                                    \
    }                                                                                    \
  }

TFLM_MINMAX_ROW(tflm_minmax_float, float)
TFLM_MINMAX_ROW(tflm_minmax_int8, int8_t)
TFLM_MINMAX_ROW(tflm_minmax_int16, int16_t)
TFLM_MINMAX_ROW(tflm_minmax_int32, int32_t)
TFLM_MINMAX_ROW(tflm_minmax_int64, int64_t)

static tflm_status_t tflm_minmax_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_minmax_params_t *p = (const tflm_minmax_params_t *)node->user_data;
  const void *in[2];
  int32_t sizes[2];
  tflm_elementwise_row_fn row = tflm_minmax_float;
  in[0] = tflm_node_input_data(ctx, node, 0);
  in[1] = tflm_node_input_data(ctx, node, 1);
  sizes[0] = sizes[1] = tflm_elementwise_type_size(p->type);
  switch (p->type) {
    case TFLM_TYPE_INT8: row = tflm_minmax_int8; break;
    case TFLM_TYPE_INT16: row = tflm_minmax_int16; break;
    case TFLM_TYPE_INT32: row = tflm_minmax_int32; break;
    case TFLM_TYPE_INT64: row = tflm_minmax_int64; break;
    default: break;
  }
  tflm_broadcast_run(&p->shape, p, 2, in, sizes, tflm_node_output_data(ctx, node, 0), sizes[0],
                     row);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_maximum = {
    NULL, TFLM_BUILTIN_MAXIMUM, NULL, tflm_maximum_prepare, tflm_minmax_eval,
    NULL, NULL};
const tflm_registration_t tflm_op_minimum = {
    NULL, TFLM_BUILTIN_MINIMUM, NULL, tflm_minimum_prepare, tflm_minmax_eval,
    NULL, NULL};
