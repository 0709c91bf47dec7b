/* tflm-op: FULLY_CONNECTED tflm_op_fully_connected types: float32,int8,int16 litert: hybrid */
/* FULLY_CONNECTED: the registration and its eval dispatch; the loops are in fully_connected_reference.c. */
#include <stddef.h>
#include <stdint.h>

#include "fully_connected_hybrid.h"
#include "fully_connected_reference.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "weighted_common.h"

static tflm_status_t fully_connected_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)node->user_data;
  tflm_weighted_data_t d;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && tflm_weighted_data(ctx, node, &d),
                    TFLM_ERR_NOT_READY);
  tflm_requant_t requant;
  tflm_fully_connected_requant(ctx, node, p, &requant);
  switch (p->type) {
    case TFLM_TYPE_HYBRID: /* float32 activations, int8 weights: LiteRT only */
      return tflm_fully_connected_hybrid_eval(ctx, p, &d);
    case TFLM_TYPE_FLOAT32:
      tflm_fully_connected_float32(p, (const float *)d.input, (const float *)d.filter,
                                   (const float *)d.bias, (float *)d.output);
      return TFLM_OK;
    case TFLM_TYPE_INT8:
      tflm_fully_connected_int8(p, &requant, (const int8_t *)d.input, (const int8_t *)d.filter,
                                (const int32_t *)d.bias, (int8_t *)d.output);
      return TFLM_OK;
    case TFLM_TYPE_INT16:
      tflm_fully_connected_int16(p, &requant, (const int16_t *)d.input, (const int8_t *)d.filter,
                                 (const int64_t *)d.bias, (int16_t *)d.output);
      return TFLM_OK;
    default:
      return TFLM_ERR_UNSUPPORTED_TYPE;
  }
}

const tflm_registration_t tflm_op_fully_connected = {
    NULL, TFLM_BUILTIN_FULLY_CONNECTED, NULL, tflm_fully_connected_prepare,
    fully_connected_eval, NULL, NULL};
