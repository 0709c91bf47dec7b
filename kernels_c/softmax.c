/* tflm-op: SOFTMAX tflm_op_softmax types: float32,int8,int16 */
/* SOFTMAX: the registration and its eval dispatch; prepare is in softmax_common.c, the loops
 * in softmax_reference.c. */
#include <stddef.h>
#include <stdint.h>

#include "softmax_reference.h"
#include "tflm_kernel.h"

static tflm_status_t tflm_softmax_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_softmax_params_t *p = (const tflm_softmax_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  if (p->input_type == TFLM_TYPE_FLOAT32) {
    tflm_softmax_float(p, (const float *)in, (float *)out);
    return TFLM_OK;
  }
  if (p->input_type == TFLM_TYPE_INT16) {
    tflm_softmax_int16((const tflm_softmax_int16_data_t *)node->user_data,
                       (const int16_t *)in, (int16_t *)out);
    return TFLM_OK;
  }
  return tflm_softmax_int8(p, (const int8_t *)in, out);
}

const tflm_registration_t tflm_op_softmax = {
    NULL, TFLM_BUILTIN_SOFTMAX, NULL, tflm_softmax_prepare, tflm_softmax_eval,
    NULL, NULL};
