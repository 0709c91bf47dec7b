/* tflm-op: DEQUANTIZE tflm_op_dequantize types: int8,int16,uint8 */
/* DEQUANTIZE: real = scale * (q - zero_point) in float, per tensor, as TFLM's reference
 * (the integer difference is converted to float, then multiplied once). */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t input_type; /* TFLM_TYPE_INT8, _INT16 or _UINT8 */
  int32_t count;      /* elements */
  int32_t zero_point; /* of the input */
  float scale;        /* of the input */
} tflm_dequantize_params_t;

static tflm_status_t tflm_dequantize_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_dequantize_params_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 1, 0, TFLM_IO_SAME_COUNT, &in, &out));
  TFLM_KERNEL_CHECK(ctx, node,
                    in.type == TFLM_TYPE_INT8 || in.type == TFLM_TYPE_INT16 ||
                        in.type == TFLM_TYPE_UINT8,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, out.type == TFLM_TYPE_FLOAT32, TFLM_ERR_UNSUPPORTED_TYPE);
  p = (tflm_dequantize_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->input_type = in.type;
  p->count = tflm_tensor_elements(&in);
  p->zero_point = in.zero_point;
  p->scale = in.scale;
  node->user_data = p;
  return TFLM_OK;
}

static void tflm_dequantize_int8(const tflm_dequantize_params_t *p, const int8_t *in,
                                 float *out) {
  int32_t i;
  for (i = 0; i < p->count; ++i) {
    out[i] = p->scale * (float)((int32_t)in[i] - p->zero_point);
  }
}

static void tflm_dequantize_int16(const tflm_dequantize_params_t *p, const int16_t *in,
                                  float *out) {
  int32_t i;
  for (i = 0; i < p->count; ++i) {
    out[i] = p->scale * (float)((int32_t)in[i] - p->zero_point);
  }
}

static void tflm_dequantize_uint8(const tflm_dequantize_params_t *p, const uint8_t *in,
                                  float *out) {
  int32_t i;
  for (i = 0; i < p->count; ++i) {
    out[i] = p->scale * (float)((int32_t)in[i] - p->zero_point);
  }
}

static tflm_status_t tflm_dequantize_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_dequantize_params_t *p = (const tflm_dequantize_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  float *out = (float *)tflm_node_output_data(ctx, node, 0);
  if (p->input_type == TFLM_TYPE_INT8) {
    tflm_dequantize_int8(p, (const int8_t *)in, out);
  } else if (p->input_type == TFLM_TYPE_INT16) {
    tflm_dequantize_int16(p, (const int16_t *)in, out);
  } else {
    tflm_dequantize_uint8(p, (const uint8_t *)in, out);
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_dequantize = {
    NULL, TFLM_BUILTIN_DEQUANTIZE, NULL, tflm_dequantize_prepare,
    tflm_dequantize_eval, NULL, NULL};
