/* SOFTMAX prepare (see softmax_common.h and the type notes in softmax_reference.c). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "softmax_common.h"
#include "tflm_kernel.h"
#include "tflm_lut.h"
#include "tflm_quant.h"

/* Quantised parameters as TFLM computes them (PreprocessSoftmaxScaling, CalculateInputRadius):
 * the multiplier is capped at 2^31 - 1 so that large beta * scale saturates harmlessly. */
static int32_t tflm_softmax_quant_params(float beta, float input_scale,
                                         tflm_softmax_params_t *p) {
  const double max_multiplier = 2147483647.0;
  double real = (double)beta * (double)input_scale *
                (double)((int32_t)1 << (31 - TFLM_SOFTMAX_DIFF_INTEGER_BITS));
  int32_t radius_shift;
  if (!(real > 1.0)) {
    return 0; /* TFLM requires a multiplier above one (QuantizeMultiplierGreaterThanOne) */
  }
  tflm_quantize_multiplier(real < max_multiplier ? real : max_multiplier, &p->input_multiplier,
                           &p->input_left_shift);
  /* Largest difference whose rescaled value still fits Q5.26: floor(31 * 2^26 / 2^shift). */
  radius_shift = p->input_left_shift < 31 ? p->input_left_shift : 31;
  p->diff_min = -(int32_t)((((int32_t)1 << TFLM_SOFTMAX_DIFF_INTEGER_BITS) - 1) *
                           ((int32_t)1 << (31 - TFLM_SOFTMAX_DIFF_INTEGER_BITS)) >> radius_shift);
  return p->input_left_shift >= 0;
}

/* Output checks of TFLM: the quantised outputs have a fixed scale and zero point. */
static tflm_status_t tflm_softmax_check_output(tflm_context_t *ctx, tflm_node_t *node,
                                               const tflm_tensor_t *output) {
  if (output->type == TFLM_TYPE_INT8) {
    TFLM_KERNEL_CHECK(ctx, node, output->zero_point == -128, TFLM_ERR_BAD_PARAMS);
    TFLM_KERNEL_CHECK(ctx, node, output->scale == 1.0f / 256.0f, TFLM_ERR_BAD_PARAMS);
  } else {
    TFLM_KERNEL_CHECK(ctx, node, output->type == TFLM_TYPE_INT16, TFLM_ERR_UNSUPPORTED_TYPE);
    TFLM_KERNEL_CHECK(ctx, node, output->zero_point == -32768, TFLM_ERR_BAD_PARAMS);
    TFLM_KERNEL_CHECK(ctx, node,
                      fabsf(output->scale - 1.0f / 65536.0f) <= 0.001f / 65536.0f,
                      TFLM_ERR_BAD_PARAMS);
  }
  return TFLM_OK;
}

static float tflm_softmax_lut_exp(float x) { return expf(x); }
static float tflm_softmax_lut_reciprocal(float x) { return 1.0f / (1.0f + x); }

/* int16 -> int16 (scale 1/32768, zero point 0): differences are rescaled so that
 * [-65535, 0] covers [-10, 0], the range of the exp table. */
static tflm_status_t tflm_softmax_prepare_int16(tflm_context_t *ctx, tflm_node_t *node,
                                                const tflm_tensor_t *input,
                                                const tflm_tensor_t *output,
                                                tflm_softmax_int16_data_t *data) {
  tflm_softmax_params_t *p = &data->params;
  TFLM_KERNEL_CHECK(ctx, node, output->type == TFLM_TYPE_INT16, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, output->zero_point == 0, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node,
                    fabsf(output->scale - 1.0f / 32768.0f) <= 0.001f / 32768.0f,
                    TFLM_ERR_BAD_PARAMS);
  tflm_quantize_multiplier((double)input->scale * (double)p->beta / (10.0 / 65535.0),
                           &p->input_multiplier, &p->input_left_shift);
  p->diff_min = 0; /* unused: the exp table saturates instead */
  tflm_lut_generate_int16(tflm_softmax_lut_exp, -10.0f, 0.0f, -1.0f, 1.0f, data->exp_lut);
  tflm_lut_generate_int16(tflm_softmax_lut_reciprocal, 0.0f, 1.0f, -1.0f, 1.0f,
                          data->reciprocal_lut);
  return TFLM_OK;
}

/* Type checks and the parameters of each input type. */
static tflm_status_t tflm_softmax_prepare_types(tflm_context_t *ctx, tflm_node_t *node,
                                                const tflm_tensor_t *input,
                                                const tflm_tensor_t *output,
                                                tflm_softmax_params_t *p) {
  tflm_status_t status;
  if (input->type == TFLM_TYPE_FLOAT32) {
    TFLM_KERNEL_CHECK(ctx, node, output->type == TFLM_TYPE_FLOAT32, TFLM_ERR_UNSUPPORTED_TYPE);
    return TFLM_OK;
  }
  if (input->type == TFLM_TYPE_INT16) {
    return tflm_softmax_prepare_int16(ctx, node, input, output, (tflm_softmax_int16_data_t *)p);
  }
  TFLM_KERNEL_CHECK(ctx, node, input->type == TFLM_TYPE_INT8, TFLM_ERR_UNSUPPORTED_TYPE);
  status = tflm_softmax_check_output(ctx, node, output);
  if (status != TFLM_OK) {
    return status;
  }
  TFLM_KERNEL_CHECK(ctx, node, tflm_softmax_quant_params(p->beta, input->scale, p),
                    TFLM_ERR_BAD_PARAMS);
  return TFLM_OK;
}

tflm_status_t tflm_softmax_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t input, output;
  tflm_softmax_params_t *p;
  uint32_t size = (uint32_t)sizeof(tflm_softmax_params_t);
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 1, 0, TFLM_IO_SAME_COUNT, &input, &output));
  TFLM_KERNEL_CHECK(ctx, node, input.ndims >= 1, TFLM_ERR_BAD_SHAPE);
  if (input.type == TFLM_TYPE_INT16) {
    size = (uint32_t)sizeof(tflm_softmax_int16_data_t);
  }
  p = (tflm_softmax_params_t *)tflm_alloc_persistent(ctx, size);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->input_type = input.type;
  p->output_type = output.type;
  p->depth = input.dims[input.ndims - 1];
  TFLM_KERNEL_CHECK(ctx, node, p->depth > 0, TFLM_ERR_BAD_SHAPE);
  p->outer_size = tflm_tensor_elements(&input) / p->depth;
  p->beta = tflm_opt_float(node, TFLM_OPT_SOFTMAX_BETA, 0.0f);
  node->user_data = p;
  return tflm_softmax_prepare_types(ctx, node, &input, &output, p);
}

