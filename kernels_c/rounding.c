/* tflm-op: ROUND tflm_op_round types: float32 */
/* tflm-op: FLOOR_DIV tflm_op_floor_div types: float32 */
/* tflm-op: FLOOR_MOD tflm_op_floor_mod types: float32 */
/* ROUND, FLOOR_DIV and FLOOR_MOD on float32 (the only type TFLM runs), bit-exact with TFLM.
 *   ROUND: to nearest, ties to even (TFLM's RoundToNearest: floor, then up when the
 *   fraction is above one half, or exactly one half with an odd floor).
 *   FLOOR_DIV: floor(x / y) of the exact quotient (TFLM divides in double; here the float
 *   quotient is floored and corrected by one when the exact remainder x - q * y, from
 *   fmaf, shows the true quotient lies below an integral float quotient).  A zero divisor
 *   fails eval, as in TFLM.
 *   FLOOR_MOD: fmodf(x, y), moved by y when nonzero and of the other sign than y.
 * The binary ops broadcast numpy-style up to 6-D. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_elementwise.h"
#include "tflm_kernel.h"

/* Persistent op data of FLOOR_DIV / FLOOR_MOD (fixed-width fields only). */
typedef struct {
  tflm_broadcast_t shape;
  int32_t is_mod;         /* 1: FLOOR_MOD, 0: FLOOR_DIV */
  int32_t divisor_count;  /* elements of input 1 */
} tflm_floor_params_t;

static tflm_status_t tflm_floor_prepare(tflm_context_t *ctx, tflm_node_t *node,
                                        int32_t is_mod) {
  tflm_tensor_t in[2], out;
  tflm_floor_params_t *p;
  tflm_status_t status;
  p = (tflm_floor_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  status = tflm_elementwise_prepare(ctx, node, 2, in, &out, &p->shape);
  if (status != TFLM_OK) return status;
  TFLM_KERNEL_CHECK(ctx, node,
                    in[0].type == TFLM_TYPE_FLOAT32 && in[1].type == TFLM_TYPE_FLOAT32 &&
                        out.type == TFLM_TYPE_FLOAT32,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p->is_mod = is_mod;
  p->divisor_count = tflm_tensor_elements(&in[1]);
  node->user_data = p;
  return TFLM_OK;
}

static float tflm_floor_div_value(float x, float y) {
  const float q = x / y;
  const float f = floorf(q);
  if (f == q && isfinite(q)) {
    const float r = fmaf(-q, y, x); /* x - q * y, rounded once */
    if (r != 0.0f && ((r < 0.0f) != (y < 0.0f))) return q - 1.0f;
  }
  return f;
}

static float tflm_floor_mod_value(float x, float y) {
  const float m = fmodf(x, y);
  return (m != 0.0f && ((y < 0.0f) != (m < 0.0f))) ? m + y : m;
}

static void tflm_floor_row(const void *params, const void *const *in, const int32_t *step,
                           void *out, int32_t n) {
  const tflm_floor_params_t *p = (const tflm_floor_params_t *)params;
  const float *x = (const float *)in[0];
  const float *y = (const float *)in[1];
  float *z = (float *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    const float a = x[i * step[0]], b = y[i * step[1]];
    z[i] = p->is_mod ? tflm_floor_mod_value(a, b) : tflm_floor_div_value(a, b);
  }
}

static tflm_status_t tflm_floor_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_floor_params_t *p = (const tflm_floor_params_t *)node->user_data;
  const void *in[2];
  const int32_t sizes[2] = {4, 4};
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t i;
  in[0] = tflm_node_input_data(ctx, node, 0);
  in[1] = tflm_node_input_data(ctx, node, 1);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in[0] != NULL && in[1] != NULL && out != NULL,
                    TFLM_ERR_NOT_READY);
  if (!p->is_mod) {
    for (i = 0; i < p->divisor_count; ++i) {
      TFLM_KERNEL_CHECK(ctx, node, ((const float *)in[1])[i] != 0.0f, TFLM_ERROR);
    }
  }
  tflm_broadcast_run(&p->shape, p, 2, in, sizes, out, 4, tflm_floor_row);
  return TFLM_OK;
}

static tflm_status_t tflm_floor_div_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_floor_prepare(ctx, node, 0);
}

static tflm_status_t tflm_floor_mod_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_floor_prepare(ctx, node, 1);
}

/* To nearest, ties to even (TFLM's RoundToNearest). */
static float tflm_round_value(float x) {
  const float f = floorf(x);
  const float fraction = x - f;
  const int32_t down = fraction < 0.5f || (fraction == 0.5f && fmodf(f, 2.0f) == 0.0f);
  return down ? f : f + 1.0f;
}

TFLM_MAP_OP(tflm_op_round, TFLM_BUILTIN_ROUND, FLOAT32, float, float, tflm_round_value);

const tflm_registration_t tflm_op_floor_div = {
    NULL, TFLM_BUILTIN_FLOOR_DIV, NULL, tflm_floor_div_prepare, tflm_floor_eval,
    NULL, NULL};
const tflm_registration_t tflm_op_floor_mod = {
    NULL, TFLM_BUILTIN_FLOOR_MOD, NULL, tflm_floor_mod_prepare, tflm_floor_eval,
    NULL, NULL};
