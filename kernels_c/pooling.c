/* tflm-op: AVERAGE_POOL_2D tflm_op_average_pool_2d types: float32,int8,int16 */
/* tflm-op: MAX_POOL_2D tflm_op_max_pool_2d types: float32,int8,int16 */
/* AVERAGE_POOL_2D and MAX_POOL_2D: the registrations (TFLM_POOL_OP); prepare is in
 * pooling_common.c, the loops and the eval in pooling_reference.c. */
#include <stddef.h>
#include <stdint.h>

#include "pooling_reference.h"
#include "tflm_kernel.h"

TFLM_POOL_OP(tflm_op_average_pool_2d, TFLM_BUILTIN_AVERAGE_POOL_2D, tflm_avg_pool_values);
TFLM_POOL_OP(tflm_op_max_pool_2d, TFLM_BUILTIN_MAX_POOL_2D, tflm_max_pool_values);
