/* tflm-op: FULLY_CONNECTED tflm_op_fully_connected types: float32,int8,int16 litert: hybrid */
/* FULLY_CONNECTED: the registration and its eval dispatch; the loops are in fully_connected_reference.c. */
#include <stddef.h>
#include <stdint.h>

#include "fully_connected_reference.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "weighted_common.h"

TFLM_WEIGHTED_OP(tflm_op_fully_connected, TFLM_BUILTIN_FULLY_CONNECTED, tflm_fully_connected_prepare,
                 tflm_fully_connected_reference_kernels, 0);
