/* MUL prepare (see mul_common.h and the type notes in mul_reference.c). */
#include <stddef.h>
#include <stdint.h>

#include "mul_common.h"
#include "mul_reference.h"
#include "tflm_elementwise.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* int8 / int16: TFLM's multiplier and clamp (zero points of 0 for int16). */
static TFLM_BINARY_FINISH(tflm_mul_finish) {
  tflm_mul_params_t *p = (tflm_mul_params_t *)data;
  int32_t qmin, qmax;
  const double real = (double)in[0].scale * (double)in[1].scale / (double)out->scale;
  if (out->type != TFLM_TYPE_INT8 && out->type != TFLM_TYPE_INT16) {
    return TFLM_OK;
  }
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
  tflm_binary_type_range(out->type, &qmin, &qmax);
  tflm_activation_range_quantized(activation, out->scale, out->zero_point, qmin, qmax,
                                  &p->binary.act_min, &p->binary.act_max);
  return TFLM_OK;
}

static const tflm_binary_op_t tflm_mul_op = {
    &tflm_mul_rows, sizeof(tflm_mul_params_t), TFLM_OPT_MUL_FUSED_ACTIVATION_FUNCTION, 1,
    tflm_mul_finish};

tflm_status_t tflm_mul_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_binary_op_prepare(ctx, node, &tflm_mul_op);
}
