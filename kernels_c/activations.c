/* tflm-op: RELU tflm_op_relu types: float32,int8,int16 */
/* tflm-op: RELU6 tflm_op_relu6 types: float32,int8,int16 */
/* tflm-op: LEAKY_RELU tflm_op_leaky_relu types: float32,int8,int16 */
/* tflm-op: RELU_0_TO_1 tflm_op_relu_0_to_1 types: float32,int8 litert: float32,int8 */
/* RELU, RELU6 and LEAKY_RELU, bit-exact with TFLM's reference kernels.
 *   float32: x < 0 ? 0 : x; x > 6 ? 6 : (x < 0 ? 0 : x); x > 0 ? x : x * alpha.
 *   RELU int8 / int16: the input rescaled to the output's quantisation (scale_in / scale_out
 *   as a Q31 multiplier), clamped below at the output's zero point.
 *   RELU6 int8 / int16: no rescaling (TFLM uses the input's quantisation for the output):
 *   stored values clamped to [zp, zp + round(6 / scale)].
 *   LEAKY_RELU int8 / int16: (x - zp_in) rescaled by scale_in / scale_out when >= 0, by
 *   scale_in * alpha / scale_out otherwise, plus zp_out, clamped to the type.  Both
 *   multipliers are computed in double in prepare, as the installed TFLM does.
 *   RELU_0_TO_1 (onnx2tf's HardSigmoid; TFLM lacks it, the oracle is LiteRT's reference
 *   kernel): float32 x > 1 ? 1 : (x < 0 ? 0 : x); int8 as RELU with the clamp
 *   [zp, zp + round(1 / scale)] and LiteRT's multiplier: scale_in / scale_out divided in
 *   float, then widened to double. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;                       /* TFLM_TYPE_* of input and output */
  int32_t count;                      /* elements */
  int32_t input_offset, output_offset; /* zp_in, zp_out */
  int32_t multiplier, shift;          /* scale_in / scale_out (x >= 0) */
  int32_t alpha_multiplier, alpha_shift; /* scale_in * alpha / scale_out (LEAKY_RELU x < 0) */
  int32_t lo, hi;                     /* quantised clamp */
  float alpha;                        /* float LEAKY_RELU slope */
} tflm_act_params_t;

/* Common checks; allocates the op data and fills type, count and the type range. */
static tflm_status_t tflm_act_begin(tflm_context_t *ctx, tflm_node_t *node, tflm_tensor_t *in,
                                    tflm_tensor_t *out, tflm_act_params_t **params) {
  tflm_act_params_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(
      ctx, node, 1, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8) | TFLM_TYPE_BIT(INT16),
      TFLM_IO_SAME_COUNT, in, out));
  p = (tflm_act_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in->type;
  p->count = tflm_tensor_elements(in);
  p->input_offset = in->zero_point;
  p->output_offset = out->zero_point;
  p->lo = in->type == TFLM_TYPE_INT8 ? -128 : -32768;
  p->hi = in->type == TFLM_TYPE_INT8 ? 127 : 32767;
  p->multiplier = p->shift = p->alpha_multiplier = p->alpha_shift = 0;
  p->alpha = 0.0f;
  node->user_data = p;
  *params = p;
  return TFLM_OK;
}

static tflm_status_t tflm_relu_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_act_params_t *p;
  tflm_status_t status = tflm_act_begin(ctx, node, &in, &out, &p);
  if (status != TFLM_OK || in.type == TFLM_TYPE_FLOAT32) {
    return status;
  }
  if (in.type == TFLM_TYPE_INT16) {
    TFLM_KERNEL_CHECK(ctx, node, in.zero_point == 0 && out.zero_point == 0,
                      TFLM_ERR_BAD_PARAMS);
  }
  TFLM_KERNEL_CHECK(ctx, node, out.scale > 0.0f, TFLM_ERR_BAD_PARAMS);
  tflm_quantize_multiplier((double)in.scale / (double)out.scale, &p->multiplier, &p->shift);
  /* zp + round(0 / scale) = zp, not below the type's minimum. */
  p->lo = out.zero_point > p->lo ? out.zero_point : p->lo;
  return TFLM_OK;
}

static tflm_status_t tflm_relu6_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_act_params_t *p;
  float six;
  tflm_status_t status = tflm_act_begin(ctx, node, &in, &out, &p);
  if (status != TFLM_OK || in.type == TFLM_TYPE_FLOAT32) {
    return status;
  }
  TFLM_KERNEL_CHECK(ctx, node, in.scale > 0.0f, TFLM_ERR_BAD_PARAMS);
  /* FloatToQuantizedType(6.0f, scale, zp): round half away from zero, clamped to the type. */
  six = roundf(6.0f / in.scale) + (float)in.zero_point;
  p->hi = six < (float)p->hi ? (int32_t)six : p->hi;
  p->lo = in.zero_point > p->lo ? (in.zero_point < p->hi ? in.zero_point : p->hi) : p->lo;
  return TFLM_OK;
}

static tflm_status_t tflm_relu_0_to_1_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_act_params_t *p;
  float one;
  tflm_status_t status = tflm_act_begin(ctx, node, &in, &out, &p);
  if (status != TFLM_OK || in.type == TFLM_TYPE_FLOAT32) {
    return status;
  }
  TFLM_KERNEL_CHECK(ctx, node, in.type == TFLM_TYPE_INT8, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, out.scale > 0.0f, TFLM_ERR_BAD_PARAMS);
  tflm_quantize_multiplier((double)(in.scale / out.scale), &p->multiplier, &p->shift);
  p->lo = out.zero_point > p->lo ? out.zero_point : p->lo;
  /* zp + (int)roundf(1 / scale), computed in float; a huge quotient only means 127. */
  one = roundf(1.0f / out.scale) + (float)out.zero_point;
  p->hi = one < (float)p->hi ? (int32_t)one : p->hi;
  return TFLM_OK;
}

static tflm_status_t tflm_leaky_relu_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_act_params_t *p;
  tflm_status_t status = tflm_act_begin(ctx, node, &in, &out, &p);
  if (status != TFLM_OK) {
    return status;
  }
  p->alpha = tflm_opt_float(node, TFLM_OPT_LEAKY_RELU_ALPHA, 0.2f);
  if (in.type == TFLM_TYPE_FLOAT32) {
    return TFLM_OK;
  }
  TFLM_KERNEL_CHECK(ctx, node, out.scale > 0.0f, TFLM_ERR_BAD_PARAMS);
  tflm_quantize_multiplier((double)in.scale * (double)p->alpha / (double)out.scale,
                           &p->alpha_multiplier, &p->alpha_shift);
  tflm_quantize_multiplier((double)in.scale / (double)out.scale, &p->multiplier, &p->shift);
  return TFLM_OK;
}

static void tflm_act_float(int32_t builtin, const tflm_act_params_t *p, const float *x,
                           float *y) {
  int32_t i;
  for (i = 0; i < p->count; ++i) {
    const float v = x[i];
    if (builtin == TFLM_BUILTIN_RELU) {
      y[i] = v < 0.0f ? 0.0f : v;
    } else if (builtin == TFLM_BUILTIN_RELU6) {
      y[i] = v > 6.0f ? 6.0f : (v < 0.0f ? 0.0f : v);
    } else if (builtin == TFLM_BUILTIN_RELU_0_TO_1) {
      y[i] = v > 1.0f ? 1.0f : (v < 0.0f ? 0.0f : v);
    } else {                    /* LEAKY_RELU */
      y[i] = v > 0.0f ? v : v * p->alpha;
    }
  }
}

/* One quantised value of RELU / LEAKY_RELU (RELU has alpha_multiplier 0 and lo = zp). */
static int32_t tflm_act_rescale(const tflm_act_params_t *p, int32_t builtin, int32_t x) {
  const int32_t v = x - p->input_offset;
  int32_t r;
  if (builtin == TFLM_BUILTIN_RELU6) { /* clamp the stored value */
    r = x;
  } else if (v >= 0 || builtin == TFLM_BUILTIN_RELU || builtin == TFLM_BUILTIN_RELU_0_TO_1) {
    r = tflm_add_wrap(p->output_offset,
                      tflm_multiply_by_quantized_multiplier(v, p->multiplier, p->shift));
  } else {
    r = tflm_add_wrap(p->output_offset, tflm_multiply_by_quantized_multiplier(
                                            v, p->alpha_multiplier, p->alpha_shift));
  }
  r = r > p->lo ? r : p->lo;
  return r < p->hi ? r : p->hi;
}

static tflm_status_t tflm_act_eval(tflm_context_t *ctx, tflm_node_t *node, int32_t builtin) {
  const tflm_act_params_t *p = (const tflm_act_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t i;
  if (p->type == TFLM_TYPE_FLOAT32) {
    tflm_act_float(builtin, p, (const float *)in, (float *)out);
  } else if (p->type == TFLM_TYPE_INT8) {
    for (i = 0; i < p->count; ++i) {
      ((int8_t *)out)[i] = (int8_t)tflm_act_rescale(p, builtin, ((const int8_t *)in)[i]);
    }
  } else {
    for (i = 0; i < p->count; ++i) {
      ((int16_t *)out)[i] = (int16_t)tflm_act_rescale(p, builtin, ((const int16_t *)in)[i]);
    }
  }
  return TFLM_OK;
}

static tflm_status_t tflm_relu_eval(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_act_eval(ctx, node, TFLM_BUILTIN_RELU);
}

static tflm_status_t tflm_relu6_eval(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_act_eval(ctx, node, TFLM_BUILTIN_RELU6);
}

static tflm_status_t tflm_leaky_relu_eval(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_act_eval(ctx, node, TFLM_BUILTIN_LEAKY_RELU);
}

static tflm_status_t tflm_relu_0_to_1_eval(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_act_eval(ctx, node, TFLM_BUILTIN_RELU_0_TO_1);
}

const tflm_registration_t tflm_op_relu = {
    NULL, TFLM_BUILTIN_RELU, NULL, tflm_relu_prepare, tflm_relu_eval, NULL, NULL};
const tflm_registration_t tflm_op_relu6 = {
    NULL, TFLM_BUILTIN_RELU6, NULL, tflm_relu6_prepare, tflm_relu6_eval, NULL,
    NULL};
const tflm_registration_t tflm_op_leaky_relu = {
    NULL, TFLM_BUILTIN_LEAKY_RELU, NULL, tflm_leaky_relu_prepare,
    tflm_leaky_relu_eval, NULL, NULL};
const tflm_registration_t tflm_op_relu_0_to_1 = {
    NULL, TFLM_BUILTIN_RELU_0_TO_1, NULL, tflm_relu_0_to_1_prepare,
    tflm_relu_0_to_1_eval, NULL, NULL};
