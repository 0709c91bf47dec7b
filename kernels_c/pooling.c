/* tflm-op: AVERAGE_POOL_2D tflm_op_average_pool_2d types: float32,int8,int16 */
/* tflm-op: MAX_POOL_2D tflm_op_max_pool_2d types: float32,int8,int16 */
/* AVERAGE_POOL_2D and MAX_POOL_2D: the registrations and their eval dispatch; prepare is in
 * pooling_common.c, the loops in pooling_reference.c. */
#include <stddef.h>
#include <stdint.h>

#include "pooling_reference.h"
#include "tflm_kernel.h"

static tflm_status_t tflm_avg_pool_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_pool_params_t *p = (const tflm_pool_params_t *)node->user_data;
  tflm_pool_value_fn fn = p->type == TFLM_TYPE_FLOAT32 ? tflm_avg_pool_float
                          : p->type == TFLM_TYPE_INT8  ? tflm_avg_pool_int8
                                                       : tflm_avg_pool_int16;
  tflm_pool_run(p, (const uint8_t *)tflm_node_input_data(ctx, node, 0),
                (uint8_t *)tflm_node_output_data(ctx, node, 0), tflm_type_size(p->type),
                fn);
  return TFLM_OK;
}

static tflm_status_t tflm_max_pool_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_pool_params_t *p = (const tflm_pool_params_t *)node->user_data;
  tflm_pool_value_fn fn = p->type == TFLM_TYPE_FLOAT32 ? tflm_max_pool_float
                          : p->type == TFLM_TYPE_INT8  ? tflm_max_pool_int8
                                                       : tflm_max_pool_int16;
  tflm_pool_run(p, (const uint8_t *)tflm_node_input_data(ctx, node, 0),
                (uint8_t *)tflm_node_output_data(ctx, node, 0), tflm_type_size(p->type),
                fn);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_average_pool_2d = {
    NULL, TFLM_BUILTIN_AVERAGE_POOL_2D, NULL, tflm_pool_prepare, tflm_avg_pool_eval,
    NULL, NULL};

const tflm_registration_t tflm_op_max_pool_2d = {
    NULL, TFLM_BUILTIN_MAX_POOL_2D, NULL, tflm_pool_prepare, tflm_max_pool_eval,
    NULL, NULL};
