/* tflm-op: MUL tflm_op_mul types: float32,int8,int16,int32 */
/* MUL with numpy-style broadcasting, bit-exact with TFLM's reference kernels.
 *   float32: a * b clamped to the fused activation's range.
 *   int8 / int16: (a - zp1) * (b - zp2) rescaled by scale1 * scale2 / scale_out (a Q31
 *   multiplier computed in double in prepare), plus zp_out, clamped to the activation
 *   range.  TFLM requires zero points of 0 for int16.
 *   int32: a * b clamped to the activation range. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_elementwise.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  tflm_broadcast_t shape;
  int32_t type;                                        /* TFLM_TYPE_* of the output */
  int32_t input1_offset, input2_offset, output_offset; /* -zp1, -zp2, +zp_out */
  int32_t output_multiplier, output_shift;             /* scale1 * scale2 / scale_out */
  int32_t act_min, act_max;                            /* quantised or int32 clamp */
  float act_min_f, act_max_f;                          /* float clamp */
} tflm_mul_params_t;

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

static tflm_status_t tflm_mul_prepare(tflm_context_t *ctx, tflm_node_t *node) {
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

static void tflm_mul_float(const void *params, const void *const *in, const int32_t *step,
                           void *out, int32_t n) {
  const tflm_mul_params_t *p = (const tflm_mul_params_t *)params;
  const float *x = (const float *)in[0];
  const float *y = (const float *)in[1];
  float *z = (float *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = tflm_clamp_float(x[i * step[0]] * y[i * step[1]], p->act_min_f, p->act_max_f);
  }
}

static void tflm_mul_int32(const void *params, const void *const *in, const int32_t *step,
                           void *out, int32_t n) {
  const tflm_mul_params_t *p = (const tflm_mul_params_t *)params;
  const int32_t *x = (const int32_t *)in[0];
  const int32_t *y = (const int32_t *)in[1];
  int32_t *z = (int32_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    /* Wraps on overflow without signed-overflow UB. */
    int32_t v = (int32_t)((uint32_t)x[i * step[0]] * (uint32_t)y[i * step[1]]);
    v = v > p->act_min ? v : p->act_min;
    z[i] = v < p->act_max ? v : p->act_max;
  }
}

static int32_t tflm_mul_quantized(const tflm_mul_params_t *p, int32_t a, int32_t b) {
  int32_t v = tflm_multiply_by_quantized_multiplier((a + p->input1_offset) *
                                                        (b + p->input2_offset),
                                                    p->output_multiplier, p->output_shift) +
              p->output_offset;
  v = v > p->act_min ? v : p->act_min;
  return v < p->act_max ? v : p->act_max;
}

static void tflm_mul_int8(const void *params, const void *const *in, const int32_t *step,
                          void *out, int32_t n) {
  const tflm_mul_params_t *p = (const tflm_mul_params_t *)params;
  const int8_t *x = (const int8_t *)in[0];
  const int8_t *y = (const int8_t *)in[1];
  int8_t *z = (int8_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = (int8_t)tflm_mul_quantized(p, x[i * step[0]], y[i * step[1]]);
  }
}

static void tflm_mul_int16(const void *params, const void *const *in, const int32_t *step,
                           void *out, int32_t n) {
  const tflm_mul_params_t *p = (const tflm_mul_params_t *)params;
  const int16_t *x = (const int16_t *)in[0];
  const int16_t *y = (const int16_t *)in[1];
  int16_t *z = (int16_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = (int16_t)tflm_mul_quantized(p, x[i * step[0]], y[i * step[1]]);
  }
}

static tflm_status_t tflm_mul_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_mul_params_t *p = (const tflm_mul_params_t *)node->user_data;
  const void *in[2];
  int32_t sizes[2];
  tflm_elementwise_row_fn row = tflm_mul_float;
  in[0] = tflm_node_input_data(ctx, node, 0);
  in[1] = tflm_node_input_data(ctx, node, 1);
  sizes[0] = sizes[1] = tflm_elementwise_type_size(p->type);
  if (p->type == TFLM_TYPE_INT8) {
    row = tflm_mul_int8;
  } else if (p->type == TFLM_TYPE_INT16) {
    row = tflm_mul_int16;
  } else if (p->type == TFLM_TYPE_INT32) {
    row = tflm_mul_int32;
  }
  tflm_broadcast_run(&p->shape, p, 2, in, sizes, tflm_node_output_data(ctx, node, 0), sizes[0],
                     row);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_mul = {
    NULL, 18 /* BuiltinOperator MUL */, NULL, tflm_mul_prepare, tflm_mul_eval, NULL, NULL};
