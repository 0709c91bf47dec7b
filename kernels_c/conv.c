/* tflm-op: CONV_2D tflm_op_conv_2d types: float32,int8,int16 litert: hybrid */
/* CONV_2D: the registration and its eval dispatch; the loops are in conv_reference.c. */
#include <stddef.h>
#include <stdint.h>

#include "conv_reference.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "weighted_common.h"

static tflm_status_t conv_eval(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_weighted_node_eval(ctx, node, &tflm_conv_reference_kernels, 0);
}

const tflm_registration_t tflm_op_conv_2d = {
    NULL, TFLM_BUILTIN_CONV_2D, NULL, tflm_conv_prepare, conv_eval, NULL, NULL};
