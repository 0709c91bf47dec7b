/* tflm-op: FULLY_CONNECTED tflm_op_fully_connected types: float32,int8,int16 litert: hybrid */
/* FULLY_CONNECTED: the registration and its eval dispatch; the loops are in fully_connected_reference.c. */
#include <stddef.h>
#include <stdint.h>

#include "fully_connected_reference.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "weighted_common.h"

static tflm_status_t fully_connected_eval(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_weighted_node_eval(ctx, node, &tflm_fully_connected_reference_kernels, 0);
}

const tflm_registration_t tflm_op_fully_connected = {
    NULL, TFLM_BUILTIN_FULLY_CONNECTED, NULL, tflm_fully_connected_prepare,
    fully_connected_eval, NULL, NULL};
