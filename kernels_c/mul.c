/* tflm-op: MUL tflm_op_mul types: float32,int8,int16,int32 */
/* MUL: the registration and its eval dispatch; prepare is in mul_common.c, the loops in
 * mul_reference.c. */
#include <stddef.h>
#include <stdint.h>

#include "mul_reference.h"
#include "tflm_elementwise.h"
#include "tflm_kernel.h"

static tflm_status_t tflm_mul_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_mul_params_t *p = (const tflm_mul_params_t *)node->user_data;
  const void *in[2];
  int32_t sizes[2];
  tflm_elementwise_row_fn row = tflm_mul_float;
  in[0] = tflm_node_input_data(ctx, node, 0);
  in[1] = tflm_node_input_data(ctx, node, 1);
  sizes[0] = sizes[1] = tflm_elementwise_type_size(p->type);
  if (p->type == TFLM_TYPE_INT8) {
    row = tflm_mul_int8;
  } else if (p->type == TFLM_TYPE_INT16) {
    row = tflm_mul_int16;
  } else if (p->type == TFLM_TYPE_INT32) {
    row = tflm_mul_int32;
  }
  tflm_broadcast_run(&p->shape, p, 2, in, sizes, tflm_node_output_data(ctx, node, 0), sizes[0],
                     row);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_mul = {
    NULL, TFLM_BUILTIN_MUL, NULL, tflm_mul_prepare, tflm_mul_eval, NULL, NULL};
