/* tflm-op: SQUARED_DIFFERENCE tflm_op_squared_difference types: float32,int8,int16,int32 */
/* SQUARED_DIFFERENCE with numpy-style broadcasting, bit-exact with TFLM's reference kernels.
 *   float32 / int32: d = a - b, then d * d (no activation).
 *   int8 / int16: both inputs shifted left (7 bits for int8, 0 for int16), rescaled to a
 *   common scale of twice the larger input scale, subtracted, squared, then rescaled by
 *   (2 * max_scale)^2 / (2^(2 * shift) * scale_out) and offset by zp_out, clamped to the
 *   type's range.  Multipliers are computed in double in prepare, as TFLM does. */
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
  int32_t left_shift;                                  /* 7 (int8) or 0 (int16) */
  int32_t input1_multiplier, input1_shift;
  int32_t input2_multiplier, input2_shift;
  int32_t output_multiplier, output_shift;
  int32_t qmin, qmax;                                  /* range of the output type */
} tflm_sqdiff_params_t;

static int32_t tflm_sqdiff_quant_params(const tflm_tensor_t *in, const tflm_tensor_t *out,
                                        tflm_sqdiff_params_t *p) {
  const float max_scale = in[0].scale > in[1].scale ? in[0].scale : in[1].scale;
  const double twice = 2.0 * (double)max_scale;
  double real_out;
  p->left_shift = out->type == TFLM_TYPE_INT8 ? 7 : 0;
  p->input1_offset = -in[0].zero_point;
  p->input2_offset = -in[1].zero_point;
  p->output_offset = out->zero_point;
  p->qmin = out->type == TFLM_TYPE_INT8 ? -128 : -32768;
  p->qmax = out->type == TFLM_TYPE_INT8 ? 127 : 32767;
  if (!(in[0].scale > 0.0f && in[1].scale > 0.0f && out->scale > 0.0f)) {
    return 0;
  }
  tflm_quantize_multiplier((double)in[0].scale / twice, &p->input1_multiplier,
                           &p->input1_shift);
  tflm_quantize_multiplier((double)in[1].scale / twice, &p->input2_multiplier,
                           &p->input2_shift);
  /* (1 << 2 * shift) * scale is a float product in TFLM (exact: a power of two). */
  real_out = twice * twice /
             (double)((float)((int32_t)1 << (2 * p->left_shift)) * out->scale);
  tflm_quantize_multiplier(real_out, &p->output_multiplier, &p->output_shift);
  if (out->type == TFLM_TYPE_INT16) {
    return in[0].zero_point == 0 && in[1].zero_point == 0 && out->zero_point == 0;
  }
  return 1;
}

static tflm_status_t tflm_sqdiff_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in[2], out;
  tflm_sqdiff_params_t *p;
  tflm_status_t status;
  p = (tflm_sqdiff_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  status = tflm_elementwise_prepare(ctx, node, 2, in, &out, &p->shape);
  if (status != TFLM_OK) {
    return status;
  }
  TFLM_KERNEL_CHECK(ctx, node, in[0].type == out.type && in[1].type == out.type,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p->type = out.type;
  node->user_data = p;
  if (out.type == TFLM_TYPE_INT8 || out.type == TFLM_TYPE_INT16) {
    TFLM_KERNEL_CHECK(ctx, node, tflm_sqdiff_quant_params(in, &out, p), TFLM_ERR_BAD_PARAMS);
    return TFLM_OK;
  }
  TFLM_KERNEL_CHECK(ctx, node, out.type == TFLM_TYPE_FLOAT32 || out.type == TFLM_TYPE_INT32,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  return TFLM_OK;
}

static void tflm_sqdiff_float(const void *params, const void *const *in, const int32_t *step,
                              void *out, int32_t n) {
  const float *x = (const float *)in[0];
  const float *y = (const float *)in[1];
  float *z = (float *)out;
  int32_t i;
  (void)params;
  for (i = 0; i < n; ++i) {
    const float d = x[i * step[0]] - y[i * step[1]];
    z[i] = d * d;
  }
}

static void tflm_sqdiff_int32(const void *params, const void *const *in, const int32_t *step,
                              void *out, int32_t n) {
  const int32_t *x = (const int32_t *)in[0];
  const int32_t *y = (const int32_t *)in[1];
  int32_t *z = (int32_t *)out;
  int32_t i;
  (void)params;
  for (i = 0; i < n; ++i) {
    const uint32_t d = (uint32_t)x[i * step[0]] - (uint32_t)y[i * step[1]];
    z[i] = (int32_t)(d * d); /* wraps without signed-overflow UB */
  }
}

static int32_t tflm_sqdiff_quantized(const tflm_sqdiff_params_t *p, int32_t a, int32_t b) {
  const int32_t shifted1 = (a + p->input1_offset) * ((int32_t)1 << p->left_shift);
  const int32_t shifted2 = (b + p->input2_offset) * ((int32_t)1 << p->left_shift);
  const int32_t diff =
      tflm_multiply_by_quantized_multiplier(shifted1, p->input1_multiplier, p->input1_shift) -
      tflm_multiply_by_quantized_multiplier(shifted2, p->input2_multiplier, p->input2_shift);
  int32_t v = tflm_multiply_by_quantized_multiplier(diff * diff, p->output_multiplier,
                                                    p->output_shift) +
              p->output_offset;
  v = v > p->qmin ? v : p->qmin;
  return v < p->qmax ? v : p->qmax;
}

static void tflm_sqdiff_int8(const void *params, const void *const *in, const int32_t *step,
                             void *out, int32_t n) {
  const tflm_sqdiff_params_t *p = (const tflm_sqdiff_params_t *)params;
  const int8_t *x = (const int8_t *)in[0];
  const int8_t *y = (const int8_t *)in[1];
  int8_t *z = (int8_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = (int8_t)tflm_sqdiff_quantized(p, x[i * step[0]], y[i * step[1]]);
  }
}

static void tflm_sqdiff_int16(const void *params, const void *const *in, const int32_t *step,
                              void *out, int32_t n) {
  const tflm_sqdiff_params_t *p = (const tflm_sqdiff_params_t *)params;
  const int16_t *x = (const int16_t *)in[0];
  const int16_t *y = (const int16_t *)in[1];
  int16_t *z = (int16_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = (int16_t)tflm_sqdiff_quantized(p, x[i * step[0]], y[i * step[1]]);
  }
}

static tflm_status_t tflm_sqdiff_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_sqdiff_params_t *p = (const tflm_sqdiff_params_t *)node->user_data;
  const void *in[2];
  int32_t sizes[2];
  tflm_elementwise_row_fn row = tflm_sqdiff_float;
  in[0] = tflm_node_input_data(ctx, node, 0);
  in[1] = tflm_node_input_data(ctx, node, 1);
  sizes[0] = sizes[1] = tflm_elementwise_type_size(p->type);
  if (p->type == TFLM_TYPE_INT8) {
    row = tflm_sqdiff_int8;
  } else if (p->type == TFLM_TYPE_INT16) {
    row = tflm_sqdiff_int16;
  } else if (p->type == TFLM_TYPE_INT32) {
    row = tflm_sqdiff_int32;
  }
  tflm_broadcast_run(&p->shape, p, 2, in, sizes, tflm_node_output_data(ctx, node, 0), sizes[0],
                     row);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_squared_difference = {
    NULL, TFLM_BUILTIN_SQUARED_DIFFERENCE, NULL, tflm_sqdiff_prepare,
    tflm_sqdiff_eval, NULL, NULL};
