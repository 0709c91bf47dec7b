/* tflm-op: SUB tflm_op_sub types: float32,int8,int16,int32 */
/* SUB with numpy-style broadcasting up to 6-D, bit-exact with TFLM's reference kernels.
 *   float32: a - b clamped to the fused activation's range.
 *   int8 / int16: TFLM's general quantised subtraction.  Both inputs are shifted left (20
 *   bits for int8, 15 for int16), rescaled to a common scale of twice the larger input
 *   scale, subtracted, then rescaled to the output scale.  The three real multipliers are
 *   computed in double in prepare, as the installed TFLM does (older sources divide in
 *   float first; the seanet int16 models tell the two apart).
 *   int32: a - b clamped to the activation range (TFLM applies it for int32 SUB). */
#include <stddef.h>
#include <stdint.h>

#include "tflm_elementwise.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  tflm_broadcast_t shape;
  int32_t type;                     /* TFLM_TYPE_* of inputs and output */
  int32_t input1_offset, input2_offset, output_offset; /* -zp1, -zp2, +zp_out */
  int32_t left_shift;               /* headroom shift: 20 (int8) or 15 (int16) */
  int32_t input1_multiplier, input1_shift;
  int32_t input2_multiplier, input2_shift;
  int32_t output_multiplier, output_shift;
  int32_t act_min, act_max;         /* quantised or int32 activation clamp */
  float act_min_f, act_max_f;       /* float activation clamp */
} tflm_sub_params_t;

/* Quantised parameters in double, as TFLM computes them; returns 0 when TFLM would refuse. */
static int32_t tflm_sub_quant_params(const tflm_tensor_t *in1, const tflm_tensor_t *in2,
                                     const tflm_tensor_t *out, tflm_sub_params_t *p) {
  const float twice_max_input_scale = 2.0f * (in1->scale > in2->scale ? in1->scale : in2->scale);
  double real1, real2, real_out;
  p->left_shift = out->type == TFLM_TYPE_INT16 ? 15 : 20;
  p->input1_offset = -in1->zero_point;
  p->input2_offset = -in2->zero_point;
  p->output_offset = out->zero_point;
  if (!(in1->scale > 0.0f && in2->scale > 0.0f && out->scale > 0.0f)) {
    return 0;
  }
  real1 = (double)in1->scale / (double)twice_max_input_scale;
  real2 = (double)in2->scale / (double)twice_max_input_scale;
  real_out = (double)twice_max_input_scale /
             ((double)((int32_t)1 << p->left_shift) * (double)out->scale);
  tflm_quantize_multiplier(real1, &p->input1_multiplier, &p->input1_shift);
  tflm_quantize_multiplier(real2, &p->input2_multiplier, &p->input2_shift);
  tflm_quantize_multiplier(real_out, &p->output_multiplier, &p->output_shift);
  /* QuantizeMultiplierSmallerThanOneExp insists on multipliers below one. */
  return real_out < 1.0;
}

static tflm_status_t tflm_sub_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in[2], out;
  tflm_sub_params_t *p;
  tflm_status_t status;
  const int32_t activation = tflm_opt_int(node, TFLM_OPT_SUB_FUSED_ACTIVATION_FUNCTION, 0);
  p = (tflm_sub_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
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
  if (out.type == TFLM_TYPE_INT8 || out.type == TFLM_TYPE_INT16) {
    const int32_t qmin = out.type == TFLM_TYPE_INT8 ? -128 : -32768;
    const int32_t qmax = out.type == TFLM_TYPE_INT8 ? 127 : 32767;
    TFLM_KERNEL_CHECK(ctx, node, tflm_sub_quant_params(&in[0], &in[1], &out, p),
                      TFLM_ERR_BAD_PARAMS);
    tflm_activation_range_quantized(activation, out.scale, out.zero_point, qmin, qmax,
                                    &p->act_min, &p->act_max);
  } else {
    TFLM_KERNEL_CHECK(ctx, node, out.type == TFLM_TYPE_FLOAT32 || out.type == TFLM_TYPE_INT32,
                      TFLM_ERR_UNSUPPORTED_TYPE);
  }
  node->user_data = p;
  return TFLM_OK;
}

static void tflm_sub_float(const void *params, const void *const *in, const int32_t *step,
                           void *out, int32_t n) {
  const tflm_sub_params_t *p = (const tflm_sub_params_t *)params;
  const float *x = (const float *)in[0];
  const float *y = (const float *)in[1];
  float *z = (float *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = tflm_clamp_float(x[i * step[0]] - y[i * step[1]], p->act_min_f, p->act_max_f);
  }
}

static void tflm_sub_int32(const void *params, const void *const *in, const int32_t *step,
                           void *out, int32_t n) {
  const tflm_sub_params_t *p = (const tflm_sub_params_t *)params;
  const int32_t *x = (const int32_t *)in[0];
  const int32_t *y = (const int32_t *)in[1];
  int32_t *z = (int32_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    /* Wraps on overflow without signed-overflow UB. */
    int32_t d = (int32_t)((uint32_t)x[i * step[0]] - (uint32_t)y[i * step[1]]);
    d = d > p->act_min ? d : p->act_min;
    z[i] = d < p->act_max ? d : p->act_max;
  }
}

/* The quantised difference of one pair of stored values, clamped to the activation range. */
static int32_t tflm_sub_quantized(const tflm_sub_params_t *p, int32_t a, int32_t b) {
  const int32_t shifted1 = (a + p->input1_offset) * ((int32_t)1 << p->left_shift);
  const int32_t shifted2 = (b + p->input2_offset) * ((int32_t)1 << p->left_shift);
  const int32_t scaled1 =
      tflm_multiply_by_quantized_multiplier(shifted1, p->input1_multiplier, p->input1_shift);
  const int32_t scaled2 =
      tflm_multiply_by_quantized_multiplier(shifted2, p->input2_multiplier, p->input2_shift);
  int32_t diff = tflm_multiply_by_quantized_multiplier(scaled1 - scaled2, p->output_multiplier,
                                                       p->output_shift) +
                 p->output_offset;
  diff = diff > p->act_min ? diff : p->act_min;
  return diff < p->act_max ? diff : p->act_max;
}

static void tflm_sub_int8(const void *params, const void *const *in, const int32_t *step,
                          void *out, int32_t n) {
  const tflm_sub_params_t *p = (const tflm_sub_params_t *)params;
  const int8_t *x = (const int8_t *)in[0];
  const int8_t *y = (const int8_t *)in[1];
  int8_t *z = (int8_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = (int8_t)tflm_sub_quantized(p, x[i * step[0]], y[i * step[1]]);
  }
}

static void tflm_sub_int16(const void *params, const void *const *in, const int32_t *step,
                           void *out, int32_t n) {
  const tflm_sub_params_t *p = (const tflm_sub_params_t *)params;
  const int16_t *x = (const int16_t *)in[0];
  const int16_t *y = (const int16_t *)in[1];
  int16_t *z = (int16_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = (int16_t)tflm_sub_quantized(p, x[i * step[0]], y[i * step[1]]);
  }
}

static tflm_status_t tflm_sub_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_sub_params_t *p = (const tflm_sub_params_t *)node->user_data;
  const void *in[2];
  int32_t sizes[2];
  tflm_elementwise_row_fn row = tflm_sub_float;
  in[0] = tflm_node_input_data(ctx, node, 0);
  in[1] = tflm_node_input_data(ctx, node, 1);
  sizes[0] = sizes[1] = tflm_elementwise_type_size(p->type);
  if (p->type == TFLM_TYPE_INT8) {
    row = tflm_sub_int8;
  } else if (p->type == TFLM_TYPE_INT16) {
    row = tflm_sub_int16;
  } else if (p->type == TFLM_TYPE_INT32) {
    row = tflm_sub_int32;
  }
  tflm_broadcast_run(&p->shape, p, 2, in, sizes, tflm_node_output_data(ctx, node, 0), sizes[0],
                     row);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_sub = {
    NULL, TFLM_BUILTIN_SUB, NULL, tflm_sub_prepare, tflm_sub_eval, NULL, NULL};
