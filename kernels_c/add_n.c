/* tflm-op: ADD_N tflm_op_add_n types: float32,int8 */
/* ADD_N: the elementwise sum of two or more tensors of one shape, bit-exact with TFLM.
 *   float32: 0.0f plus each input in input order.
 *   int8 (all inputs share scale and zero point, as TFLM requires): like ADD, every input
 *   (x - zp) is shifted left by 20 and halved by a Q31 multiplier, the results summed in
 *   int32, then rescaled by 2 * scale_in / (2^20 * scale_out) and offset by zp_out.  As in
 *   TFLM the sum starts from the rescaled value of -zp_in, not from zero. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"

#define TFLM_ADD_N_LEFT_SHIFT 20

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;            /* TFLM_TYPE_* of inputs and output */
  int32_t count;           /* elements per tensor */
  int32_t input_offset;    /* -zp_in */
  int32_t output_offset;   /* zp_out */
  int32_t input_multiplier, input_shift;
  int32_t output_multiplier, output_shift;
} tflm_add_n_params_t;

static tflm_status_t tflm_add_n_check(tflm_context_t *ctx, tflm_node_t *node,
                                      const tflm_tensor_t *first, const tflm_tensor_t *out) {
  tflm_tensor_t in;
  int32_t i;
  TFLM_KERNEL_CHECK(ctx, node, first->type == out->type && first->bytes == out->bytes,
                    TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node,
                    first->type == TFLM_TYPE_FLOAT32 || first->type == TFLM_TYPE_INT8,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  for (i = 1; i < node->inputs_count; ++i) {
    TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, i, &in) == TFLM_OK, TFLM_ERROR);
    TFLM_KERNEL_CHECK(ctx, node, in.type == first->type && in.bytes == first->bytes,
                      TFLM_ERR_BAD_SHAPE);
    if (in.type == TFLM_TYPE_INT8) {
      TFLM_KERNEL_CHECK(ctx, node,
                        in.scale == first->scale && in.zero_point == first->zero_point,
                        TFLM_ERR_BAD_PARAMS);
    }
  }
  return TFLM_OK;
}

static tflm_status_t tflm_add_n_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t first, out;
  tflm_add_n_params_t *p;
  tflm_status_t status;
  double twice_scale;
  TFLM_KERNEL_CHECK(ctx, node, node->inputs_count >= 2 && node->outputs_count == 1,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 0, &first) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, &out) == TFLM_OK, TFLM_ERROR);
  status = tflm_add_n_check(ctx, node, &first, &out);
  if (status != TFLM_OK) return status;
  p = (tflm_add_n_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = out.type;
  p->count = tflm_tensor_elements(&out);
  p->input_offset = -first.zero_point;
  p->output_offset = out.zero_point;
  node->user_data = p;
  if (out.type == TFLM_TYPE_INT8) {
    TFLM_KERNEL_CHECK(ctx, node, first.scale > 0.0f && out.scale > 0.0f, TFLM_ERR_BAD_PARAMS);
    twice_scale = 2.0 * (double)first.scale;
    tflm_quantize_multiplier((double)first.scale / twice_scale, &p->input_multiplier,
                             &p->input_shift);
    tflm_quantize_multiplier(
        twice_scale / ((double)((int32_t)1 << TFLM_ADD_N_LEFT_SHIFT) * (double)out.scale),
        &p->output_multiplier, &p->output_shift);
  }
  return TFLM_OK;
}

static int32_t tflm_add_n_scaled(const tflm_add_n_params_t *p, int32_t stored) {
  const int32_t shifted = (stored + p->input_offset) * ((int32_t)1 << TFLM_ADD_N_LEFT_SHIFT);
  return tflm_multiply_by_quantized_multiplier(shifted, p->input_multiplier, p->input_shift);
}

static tflm_status_t tflm_add_n_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_add_n_params_t *p = (const tflm_add_n_params_t *)node->user_data;
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t i, j;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && out != NULL, TFLM_ERR_NOT_READY);
  for (j = 0; j < node->inputs_count; ++j) {
    TFLM_KERNEL_CHECK(ctx, node, tflm_node_input_data(ctx, node, j) != NULL, TFLM_ERR_NOT_READY);
  }
  for (i = 0; i < p->count; ++i) {
    if (p->type == TFLM_TYPE_FLOAT32) {
      float sum = 0.0f;
      for (j = 0; j < node->inputs_count; ++j) {
        sum += ((const float *)tflm_node_input_data(ctx, node, j))[i];
      }
      ((float *)out)[i] = sum;
    } else {
      int32_t sum = tflm_add_n_scaled(p, 0), v;
      for (j = 0; j < node->inputs_count; ++j) {
        sum += tflm_add_n_scaled(p, ((const int8_t *)tflm_node_input_data(ctx, node, j))[i]);
      }
      v = tflm_multiply_by_quantized_multiplier(sum, p->output_multiplier, p->output_shift) +
          p->output_offset;
      ((int8_t *)out)[i] = (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v));
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_add_n = {
    NULL, TFLM_BUILTIN_ADD_N, NULL, tflm_add_n_prepare, tflm_add_n_eval, NULL,
    NULL};
