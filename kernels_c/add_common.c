/* ADD prepare (see add_common.h and the type notes in add_reference.c). */
#include <stddef.h>
#include <stdint.h>

#include "add_common.h"
#include "add_reference.h"
#include "tflm_elementwise.h"
#include "tflm_kernel.h"

static const tflm_binary_op_t tflm_add_op = {
    &tflm_add_rows, sizeof(tflm_add_params_t), TFLM_OPT_ADD_FUSED_ACTIVATION_FUNCTION, 1,
    tflm_binary_sum_finish};

tflm_status_t tflm_add_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_binary_op_prepare(ctx, node, &tflm_add_op);
}
