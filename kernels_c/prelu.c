/* tflm-op: PRELU tflm_op_prelu types: float32,int8,int16 */
/* PRELU (x, alpha broadcast against each other), bit-exact with TFLM's reference kernels.
 *   float32: x >= 0 ? x : x * alpha.
 *   int8 / int16 (alpha int8): v = x - zp_in; v >= 0 is rescaled by scale_in / scale_out,
 *   v < 0 is multiplied by (alpha - zp_alpha) and rescaled by
 *   scale_in * scale_alpha / scale_out (both multipliers computed in double in prepare);
 *   plus zp_out, clamped to the type. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_elementwise.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  tflm_broadcast_t shape;
  int32_t type, alpha_type;        /* TFLM_TYPE_* of input / output and of alpha */
  int32_t input_offset, alpha_offset, output_offset; /* -zp_in, -zp_alpha, +zp_out */
  int32_t multiplier1, shift1;     /* scale_in / scale_out */
  int32_t multiplier2, shift2;     /* scale_in * scale_alpha / scale_out */
  int32_t qmin, qmax;              /* range of the output type */
} tflm_prelu_params_t;

static tflm_status_t tflm_prelu_quant(tflm_context_t *ctx, tflm_node_t *node,
                                      const tflm_tensor_t *in, const tflm_tensor_t *out,
                                      tflm_prelu_params_t *p) {
  TFLM_KERNEL_CHECK(ctx, node, in[1].type == TFLM_TYPE_INT8, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, out->scale > 0.0f, TFLM_ERR_BAD_PARAMS);
  tflm_quantize_multiplier((double)in[0].scale / (double)out->scale, &p->multiplier1,
                           &p->shift1);
  tflm_quantize_multiplier((double)in[0].scale * (double)in[1].scale / (double)out->scale,
                           &p->multiplier2, &p->shift2);
  p->input_offset = -in[0].zero_point;
  p->alpha_offset = -in[1].zero_point;
  p->output_offset = out->zero_point;
  p->qmin = out->type == TFLM_TYPE_INT8 ? -128 : -32768;
  p->qmax = out->type == TFLM_TYPE_INT8 ? 127 : 32767;
  return TFLM_OK;
}

static tflm_status_t tflm_prelu_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in[2], out;
  tflm_prelu_params_t *p;
  tflm_status_t status;
  p = (tflm_prelu_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  status = tflm_elementwise_prepare(ctx, node, 2, in, &out, &p->shape);
  if (status != TFLM_OK) {
    return status;
  }
  TFLM_KERNEL_CHECK(ctx, node, in[0].type == out.type, TFLM_ERR_UNSUPPORTED_TYPE);
  p->type = out.type;
  p->alpha_type = in[1].type;
  node->user_data = p;
  if (out.type == TFLM_TYPE_INT8 || out.type == TFLM_TYPE_INT16) {
    return tflm_prelu_quant(ctx, node, in, &out, p);
  }
  TFLM_KERNEL_CHECK(ctx, node, out.type == TFLM_TYPE_FLOAT32 && in[1].type == out.type,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  return TFLM_OK;
}

static void tflm_prelu_float(const void *params, const void *const *in, const int32_t *step,
                             void *out, int32_t n) {
  const float *x = (const float *)in[0];
  const float *alpha = (const float *)in[1];
  float *z = (float *)out;
  int32_t i;
  (void)params;
  for (i = 0; i < n; ++i) {
    const float v = x[i * step[0]];
    z[i] = v >= 0.0f ? v : v * alpha[i * step[1]];
  }
}

static int32_t tflm_prelu_quantized(const tflm_prelu_params_t *p, int32_t x, int32_t alpha) {
  const int32_t v = x + p->input_offset;
  int32_t r;
  if (v >= 0) {
    r = tflm_multiply_by_quantized_multiplier(v, p->multiplier1, p->shift1);
  } else {
    r = tflm_multiply_by_quantized_multiplier(v * (alpha + p->alpha_offset), p->multiplier2,
                                              p->shift2);
  }
  r += p->output_offset;
  r = r > p->qmin ? r : p->qmin;
  return r < p->qmax ? r : p->qmax;
}

static void tflm_prelu_int8(const void *params, const void *const *in, const int32_t *step,
                            void *out, int32_t n) {
  const tflm_prelu_params_t *p = (const tflm_prelu_params_t *)params;
  const int8_t *x = (const int8_t *)in[0];
  const int8_t *alpha = (const int8_t *)in[1];
  int8_t *z = (int8_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = (int8_t)tflm_prelu_quantized(p, x[i * step[0]], alpha[i * step[1]]);
  }
}

static void tflm_prelu_int16(const void *params, const void *const *in, const int32_t *step,
                             void *out, int32_t n) {
  const tflm_prelu_params_t *p = (const tflm_prelu_params_t *)params;
  const int16_t *x = (const int16_t *)in[0];
  const int8_t *alpha = (const int8_t *)in[1];
  int16_t *z = (int16_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = (int16_t)tflm_prelu_quantized(p, x[i * step[0]], alpha[i * step[1]]);
  }
}

static tflm_status_t tflm_prelu_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_prelu_params_t *p = (const tflm_prelu_params_t *)node->user_data;
  const void *in[2];
  int32_t sizes[2];
  tflm_elementwise_row_fn row = tflm_prelu_float;
  in[0] = tflm_node_input_data(ctx, node, 0);
  in[1] = tflm_node_input_data(ctx, node, 1);
  sizes[0] = tflm_elementwise_type_size(p->type);
  sizes[1] = tflm_elementwise_type_size(p->alpha_type);
  if (p->type == TFLM_TYPE_INT8) {
    row = tflm_prelu_int8;
  } else if (p->type == TFLM_TYPE_INT16) {
    row = tflm_prelu_int16;
  }
  tflm_broadcast_run(&p->shape, p, 2, in, sizes, tflm_node_output_data(ctx, node, 0), sizes[0],
                     row);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_prelu = {
    NULL, TFLM_BUILTIN_PRELU, NULL, tflm_prelu_prepare, tflm_prelu_eval, NULL,
    NULL};
