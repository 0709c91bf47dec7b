/* tflm-op: CONV_2D tflm_op_conv_2d types: float32,int8,int16 litert: hybrid */
/* CONV_2D: the registration and its eval dispatch; the loops are in conv_reference.c. */
#include <stddef.h>
#include <stdint.h>

#include "conv_hybrid.h"
#include "conv_reference.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "weighted_common.h"

static tflm_status_t conv_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)node->user_data;
  tflm_weighted_data_t d;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && tflm_weighted_data(ctx, node, &d),
                    TFLM_ERR_NOT_READY);
  tflm_requant_t requant;
  tflm_conv_requant(ctx, node, p, &requant);
  switch (p->type) {
    case TFLM_TYPE_HYBRID: /* float32 activations, int8 weights: LiteRT only */
      return tflm_conv_hybrid_eval(ctx, p, &d);
    case TFLM_TYPE_FLOAT32:
      tflm_conv_float32(p, (const float *)d.input, (const float *)d.filter, (const float *)d.bias,
                        (float *)d.output);
      return TFLM_OK;
    case TFLM_TYPE_INT8:
      tflm_conv_int8(p, &requant, (const int8_t *)d.input, (const int8_t *)d.filter, (const int32_t *)d.bias,
                     (int8_t *)d.output);
      return TFLM_OK;
    case TFLM_TYPE_INT16:
      tflm_conv_int16(p, &requant, (const int16_t *)d.input, (const int8_t *)d.filter, (const int64_t *)d.bias,
                      (int16_t *)d.output);
      return TFLM_OK;
    default:
      return TFLM_ERR_UNSUPPORTED_TYPE;
  }
}

const tflm_registration_t tflm_op_conv_2d = {
    NULL, TFLM_BUILTIN_CONV_2D, NULL, tflm_conv_prepare, conv_eval, NULL, NULL};
