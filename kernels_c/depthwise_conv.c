/* tflm-op: DEPTHWISE_CONV_2D tflm_op_depthwise_conv_2d types: float32,int8,int16 litert: hybrid */
/* DEPTHWISE_CONV_2D: the registration and its eval dispatch; the loops are in depthwise_reference.c. */
#include <stddef.h>
#include <stdint.h>

#include "depthwise_reference.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "weighted_common.h"

TFLM_WEIGHTED_OP(tflm_op_depthwise_conv_2d, TFLM_BUILTIN_DEPTHWISE_CONV_2D,
                 tflm_depthwise_conv_prepare, tflm_depthwise_conv_reference_kernels, 0);
