/* tflm-op: DIV tflm_op_div types: float32,int32 */
/* DIV with numpy-style broadcasting, bit-exact with TFLM's reference kernels:
 *   float32: a / b clamped to the fused activation's range.
 *   int32: a / b (C division, truncating toward zero) clamped to the activation range.
 *   A zero int32 divisor gives 0 here; TFLM's result is undefined there.
 * TFLM's int8 DIV (a reciprocal-based fixed-point path) is not implemented. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_elementwise.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  tflm_broadcast_t shape;
  int32_t type;               /* TFLM_TYPE_* of inputs and output */
  int32_t act_min, act_max;   /* int32 clamp */
  float act_min_f, act_max_f; /* float clamp */
} tflm_div_params_t;

static tflm_status_t tflm_div_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in[2], out;
  tflm_div_params_t *p;
  tflm_status_t status;
  const int32_t activation = tflm_opt_int(node, TFLM_OPT_DIV_FUSED_ACTIVATION_FUNCTION, 0);
  p = (tflm_div_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  status = tflm_elementwise_prepare(ctx, node, 2, in, &out, &p->shape);
  if (status != TFLM_OK) {
    return status;
  }
  TFLM_KERNEL_CHECK(ctx, node, in[0].type == out.type && in[1].type == out.type,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, out.type == TFLM_TYPE_FLOAT32 || out.type == TFLM_TYPE_INT32,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p->type = out.type;
  tflm_activation_range_float(activation, &p->act_min_f, &p->act_max_f);
  tflm_activation_range_int32(activation, &p->act_min, &p->act_max);
  node->user_data = p;
  return TFLM_OK;
}

static void tflm_div_float(const void *params, const void *const *in, const int32_t *step,
                           void *out, int32_t n) {
  const tflm_div_params_t *p = (const tflm_div_params_t *)params;
  const float *x = (const float *)in[0];
  const float *y = (const float *)in[1];
  float *z = (float *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = tflm_clamp_float(x[i * step[0]] / y[i * step[1]], p->act_min_f, p->act_max_f);
  }
}

static void tflm_div_int32(const void *params, const void *const *in, const int32_t *step,
                           void *out, int32_t n) {
  const tflm_div_params_t *p = (const tflm_div_params_t *)params;
  const int32_t *x = (const int32_t *)in[0];
  const int32_t *y = (const int32_t *)in[1];
  int32_t *z = (int32_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    const int32_t a = x[i * step[0]], b = y[i * step[1]];
    int32_t v = (b == 0 || (b == -1 && a == INT32_MIN)) ? 0 : a / b;
    v = v > p->act_min ? v : p->act_min;
    z[i] = v < p->act_max ? v : p->act_max;
  }
}

static tflm_status_t tflm_div_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_div_params_t *p = (const tflm_div_params_t *)node->user_data;
  const void *in[2];
  const int32_t sizes[2] = {4, 4};
  in[0] = tflm_node_input_data(ctx, node, 0);
  in[1] = tflm_node_input_data(ctx, node, 1);
  tflm_broadcast_run(&p->shape, p, 2, in, sizes, tflm_node_output_data(ctx, node, 0), 4,
                     p->type == TFLM_TYPE_INT32 ? tflm_div_int32 : tflm_div_float);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_div = {
    NULL, 42 /* BuiltinOperator DIV */, NULL, tflm_div_prepare, tflm_div_eval, NULL, NULL};
