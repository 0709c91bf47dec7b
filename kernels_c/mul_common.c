/* MUL prepare (see mul_common.h and the type notes in mul_reference.c). */
#include <stddef.h>
#include <stdint.h>

#include "mul_common.h"
#include "tflm_elementwise.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

static tflm_status_t tflm_mul_quant_params(tflm_context_t *ctx, tflm_node_t *node,
                                           const tflm_tensor_t *in, const tflm_tensor_t *out,
                                           int32_t activation, tflm_mul_params_t *p) {
  const int32_t qmin = out->type == TFLM_TYPE_INT8 ? -128 : -32768;
  const int32_t qmax = out->type == TFLM_TYPE_INT8 ? 127 : 32767;
  const double real = (double)in[0].scale * (double)in[1].scale / (double)out->scale;
  TFLM_KERNEL_CHECK(ctx, node, out->scale > 0.0f, TFLM_ERR_BAD_PARAMS);
  tflm_quantize_multiplier(real, &p->output_multiplier, &p->output_shift);
  p->input1_offset = -in[0].zero_point;
  p->input2_offset = -in[1].zero_point;
  p->output_offset = out->zero_point;
  if (out->type == TFLM_TYPE_INT16) {
    TFLM_KERNEL_CHECK(ctx, node,
                      in[0].zero_point == 0 && in[1].zero_point == 0 && out->zero_point == 0,
                      TFLM_ERR_BAD_PARAMS);
  }
  tflm_activation_range_quantized(activation, out->scale, out->zero_point, qmin, qmax,
                                  &p->act_min, &p->act_max);
  return TFLM_OK;
}

tflm_status_t tflm_mul_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in[2], out;
  tflm_mul_params_t *p;
  tflm_status_t status;
  const int32_t activation = tflm_opt_int(node, TFLM_OPT_MUL_FUSED_ACTIVATION_FUNCTION, 0);
  p = (tflm_mul_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  status = tflm_elementwise_prepare(ctx, node, 2, in, &out, &p->shape);
  if (status != TFLM_OK) {
    return status;
  }
  TFLM_KERNEL_CHECK(ctx, node, in[0].type == out.type && in[1].type == out.type,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p->type = out.type;
  tflm_activation_range_float(activation, &p->act_min_f, &p->act_max_f);
  tflm_activation_range_int32(activation, &p->act_min, &p->act_max);
  node->user_data = p;
  if (out.type == TFLM_TYPE_INT8 || out.type == TFLM_TYPE_INT16) {
    return tflm_mul_quant_params(ctx, node, in, &out, activation, p);
  }
  TFLM_KERNEL_CHECK(ctx, node, out.type == TFLM_TYPE_FLOAT32 || out.type == TFLM_TYPE_INT32,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  return TFLM_OK;
}

