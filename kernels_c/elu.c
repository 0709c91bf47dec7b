/* tflm-op: ELU tflm_op_elu types: float32,int8 */
/* ELU, bit-exact with TFLM's reference kernel.
 *   float32: x < 0 ? expm1f(x) : x.
 *   int8: a 256-entry table built in prepare in float, as TFLM builds it: each stored value
 *   v is dequantised (scale_in * (v - zp_in)), mapped through x < 0 ? expf(x) - 1 : x,
 *   multiplied by 1 / scale_out, rounded half away from zero, offset by zp_out and clamped. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_lut.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;       /* TFLM_TYPE_* of input and output */
  int32_t count;      /* elements */
  int8_t table[256];  /* int8: output for stored input v at index (uint8_t)v */
} tflm_elu_params_t;

/* The transform of the int8 table (the float kernel uses expm1f, as TFLM does). */
static float tflm_elu_transform(float x) { return x < 0.0f ? expf(x) - 1.0f : x; }

static tflm_status_t tflm_elu_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_elu_params_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 1, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8),
                                     TFLM_IO_SAME_COUNT, &in, &out));
  p = (tflm_elu_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in.type;
  p->count = tflm_tensor_elements(&in);
  if (in.type == TFLM_TYPE_INT8) {
    TFLM_KERNEL_CHECK(ctx, node, out.scale > 0.0f, TFLM_ERR_BAD_PARAMS);
    tflm_lut_generate_int8(tflm_elu_transform, in.scale, in.zero_point, out.scale,
                           out.zero_point, p->table);
  }
  node->user_data = p;
  return TFLM_OK;
}

static tflm_status_t tflm_elu_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_elu_params_t *p = (const tflm_elu_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t i;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  if (p->type == TFLM_TYPE_FLOAT32) {
    for (i = 0; i < p->count; ++i) {
      const float x = ((const float *)in)[i];
      ((float *)out)[i] = x < 0.0f ? expm1f(x) : x;
    }
  } else {
    tflm_lut_apply_int8(p->table, (const int8_t *)in, (int8_t *)out, p->count);
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_elu = {
    NULL, TFLM_BUILTIN_ELU, NULL, tflm_elu_prepare, tflm_elu_eval, NULL, NULL};
