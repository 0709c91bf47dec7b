/* tflm-op: MUL tflm_op_mul types: float32,int8,int16,int32 */
/* MUL: the registration and its eval dispatch; prepare is in mul_common.c, the loops in
 * mul_reference.c. */
#include <stddef.h>
#include <stdint.h>

#include "mul_reference.h"
#include "tflm_elementwise.h"
#include "tflm_kernel.h"

static tflm_status_t tflm_mul_eval(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_binary_eval(ctx, node, &tflm_mul_rows);
}

const tflm_registration_t tflm_op_mul = {
    NULL, TFLM_BUILTIN_MUL, NULL, tflm_mul_prepare, tflm_mul_eval, NULL, NULL};
