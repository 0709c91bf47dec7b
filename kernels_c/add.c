/* tflm-op: ADD tflm_op_add types: float32,int8,int16,int32 */
/* ADD: the registration and its eval dispatch; prepare is in add_common.c, the loops in
 * add_reference.c. */
#include <stddef.h>
#include <stdint.h>

#include "add_reference.h"
#include "tflm_elementwise.h"
#include "tflm_kernel.h"

static tflm_status_t tflm_add_eval(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_binary_eval(ctx, node, &tflm_add_rows);
}

const tflm_registration_t tflm_op_add = {
    NULL, TFLM_BUILTIN_ADD, NULL, tflm_add_prepare, tflm_add_eval, NULL, NULL};
