/* tflm-op: CONV_2D tflm_op_conv_2d types: float32,int8,int16 litert: hybrid */
/* CONV_2D: the registration and its eval dispatch; the loops are in conv_reference.c. */
#include <stddef.h>
#include <stdint.h>

#include "conv_reference.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "weighted_common.h"

TFLM_WEIGHTED_OP(tflm_op_conv_2d, TFLM_BUILTIN_CONV_2D, tflm_conv_prepare,
                 tflm_conv_reference_kernels, 0);
