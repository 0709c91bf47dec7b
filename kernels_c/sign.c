/* tflm-op: SIGN tflm_op_sign types: float32,float64,int32 litert: float32,float64,int32 */
/* SIGN, bit-exact with LiteRT's reference kernel (TFLM lacks the op): (0 < x) - (x < 0) in
 * the input's type, so -0.0 gives +0.0; a NaN passes through with its bits (as LiteRT's
 * output shows).  Prepare keeps nothing: eval reads the type and element count from the
 * tensors, so the op costs no arena. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"

static tflm_status_t tflm_sign_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  TFLM_KERNEL_TRY(tflm_node_check_io(
      ctx, node, 1, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(FLOAT64) | TFLM_TYPE_BIT(INT32),
      TFLM_IO_SAME_COUNT, &in, &out));
  return TFLM_OK;
}

static tflm_status_t tflm_sign_eval(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  int32_t i, count;
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 0, &in) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, &out) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, in.data != NULL && out.data != NULL, TFLM_ERR_NOT_READY);
  count = tflm_tensor_elements(&in);
  if (in.type == TFLM_TYPE_FLOAT32) {
    for (i = 0; i < count; ++i) {
      const float x = ((const float *)in.data)[i];
      ((float *)out.data)[i] = x != x ? x : (float)((0.0f < x) - (x < 0.0f));
    }
  } else if (in.type == TFLM_TYPE_FLOAT64) {
    for (i = 0; i < count; ++i) {
      const double x = ((const double *)in.data)[i];
      ((double *)out.data)[i] = x != x ? x : (double)((0.0 < x) - (x < 0.0));
    }
  } else {
    for (i = 0; i < count; ++i) {
      const int32_t x = ((const int32_t *)in.data)[i];
      ((int32_t *)out.data)[i] = (0 < x) - (x < 0);
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_sign = {
    NULL, TFLM_BUILTIN_SIGN, NULL, tflm_sign_prepare, tflm_sign_eval, NULL, NULL};
