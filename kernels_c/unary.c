/* tflm-op: ABS tflm_op_abs types: float32,int8,int16 */
/* tflm-op: NEG tflm_op_neg types: float32 */
/* tflm-op: EXP tflm_op_exp types: float32 */
/* tflm-op: LOG tflm_op_log types: float32 */
/* tflm-op: SQRT tflm_op_sqrt types: float32 */
/* tflm-op: RSQRT tflm_op_rsqrt types: float32,int8,int16 */
/* tflm-op: SQUARE tflm_op_square types: float32 */
/* tflm-op: SIN tflm_op_sin types: float32 */
/* tflm-op: COS tflm_op_cos types: float32 */
/* tflm-op: FLOOR tflm_op_floor types: float32 */
/* tflm-op: CEIL tflm_op_ceil types: float32 */
/* Elementwise unary math, bit-exact with TFLM's reference kernels.
 *   float32: the libm float function of each op (fabsf, -x, expf, logf, sqrtf,
 *   1 / sqrtf(x), x * x, sinf, cosf, floorf, ceilf).
 *   ABS int8 / int16: |x - zp_in|, rescaled by scale_in / scale_out when the scales differ
 *   (multiplier in double), plus zp_out, clamped; int16 without quantisation is plain |x|.
 *   RSQRT int8 / int16: 1 / sqrt(x - zp_in) as TFLM's fixed-point inverse square root,
 *   rescaled by 1 / (sqrt(scale_in) * scale_out); x == zp gives the type's maximum.  TFLM
 *   fails on x < zp; so do we.  TFLM's Prepare means to refuse int16 RSQRT, but its check
 *   casts the type to a function pointer and never fails, so Eval's int16 case runs; int16
 *   needs quantisation with zero points 0 (without it TFLM reads op data it never set, so
 *   we refuse that). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "tflm_sigmoid.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t builtin;                    /* BuiltinOperator code: selects the function */
  int32_t type;                       /* TFLM_TYPE_* of input and output */
  int32_t count;                      /* elements */
  int32_t quantized;                  /* int16 ABS: 0 when the input has no quantisation */
  int32_t input_offset, output_offset; /* zp_in, zp_out */
  int32_t needs_rescale;              /* ABS: the scales differ */
  int32_t multiplier, shift;          /* ABS / RSQRT output rescale */
  int32_t qmin, qmax;                 /* range of the type */
} tflm_unary_params_t;

static tflm_status_t tflm_unary_quant(tflm_context_t *ctx, tflm_node_t *node,
                                      const tflm_tensor_t *in, const tflm_tensor_t *out,
                                      tflm_unary_params_t *p) {
  p->quantized = in->nscales > 0;
  if (!p->quantized) {
    TFLM_KERNEL_CHECK(ctx, node, in->type == TFLM_TYPE_INT16 && p->builtin == TFLM_BUILTIN_ABS,
                      TFLM_ERR_BAD_PARAMS);
    return TFLM_OK;
  }
  TFLM_KERNEL_CHECK(ctx, node, out->nscales > 0 && out->scale > 0.0f, TFLM_ERR_BAD_PARAMS);
  p->input_offset = in->zero_point;
  p->output_offset = out->zero_point;
  if (in->type == TFLM_TYPE_INT16) {
    TFLM_KERNEL_CHECK(ctx, node, in->zero_point == 0 && out->zero_point == 0,
                      TFLM_ERR_BAD_PARAMS);
  }
  p->needs_rescale = in->scale != out->scale;
  if (p->builtin == TFLM_BUILTIN_RSQRT) {
    tflm_quantize_multiplier(1.0 / (sqrt((double)in->scale) * (double)out->scale),
                             &p->multiplier, &p->shift);
  } else if (p->needs_rescale) {
    tflm_quantize_multiplier((double)in->scale / (double)out->scale, &p->multiplier,
                             &p->shift);
  }
  return TFLM_OK;
}

/* Types TFLM accepts per op: float32 everywhere, int8 and int16 for ABS and RSQRT. */
static int32_t tflm_unary_type_ok(int32_t builtin, int32_t type) {
  if (type == TFLM_TYPE_FLOAT32) {
    return 1;
  }
  return (builtin == TFLM_BUILTIN_ABS || builtin == TFLM_BUILTIN_RSQRT) &&
         (type == TFLM_TYPE_INT8 || type == TFLM_TYPE_INT16);
}

static tflm_status_t tflm_unary_prepare(tflm_context_t *ctx, tflm_node_t *node,
                                        int32_t builtin) {
  tflm_tensor_t in, out;
  tflm_unary_params_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 1, 0, TFLM_IO_SAME_COUNT, &in, &out));
  TFLM_KERNEL_CHECK(ctx, node, in.type == out.type && tflm_unary_type_ok(builtin, in.type),
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p = (tflm_unary_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->builtin = builtin;
  p->type = in.type;
  p->count = tflm_tensor_elements(&in);
  p->quantized = p->needs_rescale = p->multiplier = p->shift = 0;
  p->input_offset = p->output_offset = 0;
  p->qmin = in.type == TFLM_TYPE_INT8 ? -128 : -32768;
  p->qmax = in.type == TFLM_TYPE_INT8 ? 127 : 32767;
  node->user_data = p;
  if (in.type == TFLM_TYPE_FLOAT32) {
    return TFLM_OK;
  }
  return tflm_unary_quant(ctx, node, &in, &out, p);
}

static float tflm_unary_float(int32_t builtin, float x) {
  switch (builtin) {
    case TFLM_BUILTIN_ABS: return fabsf(x);
    case TFLM_BUILTIN_NEG: return -x;
    case TFLM_BUILTIN_EXP: return expf(x);
    case TFLM_BUILTIN_LOG: return logf(x);
    case TFLM_BUILTIN_SQRT: return sqrtf(x);
    case TFLM_BUILTIN_RSQRT: return 1.0f / sqrtf(x);
    case TFLM_BUILTIN_SQUARE: return x * x;
    case TFLM_BUILTIN_SIN: return sinf(x);
    case TFLM_BUILTIN_COS: return cosf(x);
    case TFLM_BUILTIN_FLOOR: return floorf(x);
    default: return ceilf(x);        /* CEIL */
  }
}

static int32_t tflm_unary_clamp(const tflm_unary_params_t *p, int32_t v) {
  v = v > p->qmin ? v : p->qmin;
  return v < p->qmax ? v : p->qmax;
}

/* Quantised ABS of one stored value. */
static int32_t tflm_abs_quantized(const tflm_unary_params_t *p, int32_t x) {
  int32_t v;
  if (!p->quantized) {
    return x < 0 ? -x : x; /* -(-32768) wraps to -32768 when stored, as TFLM's std::abs */
  }
  /* Wrapping arithmetic: TFLM's bits on every valid model, defined on crafted offsets. */
  v = (int32_t)((uint32_t)x - (uint32_t)p->input_offset);
  v = v < 0 ? (int32_t)(0u - (uint32_t)v) : v;
  if (p->needs_rescale) {
    v = tflm_multiply_by_quantized_multiplier(v, p->multiplier, p->shift);
  }
  return tflm_unary_clamp(p, tflm_add_wrap(v, p->output_offset));
}

/* Quantised RSQRT of one stored value (x >= zp). */
static int32_t tflm_rsqrt_quantized(const tflm_unary_params_t *p, int32_t x) {
  const int32_t shift = 20; /* keeps the intermediate an integer, as TFLM */
  const int32_t v = x - p->input_offset;
  int32_t inv_multiplier, inv_shift, scaled;
  if (v == 0) {
    return p->qmax;
  }
  tflm_fp_inv_sqrt(v, &inv_multiplier, &inv_shift);
  scaled = tflm_multiply_by_quantized_multiplier(1, inv_multiplier, inv_shift + shift);
  return tflm_unary_clamp(p, tflm_multiply_by_quantized_multiplier(scaled, p->multiplier,
                                                                   p->shift - shift) +
                                 p->output_offset);
}

/* Quantised ABS or RSQRT of one stored value; 0 when RSQRT's input is below zp_in (no real
 * result: TFLM fails the invoke), else 1 with the result in *y. */
static int32_t tflm_unary_quantized(const tflm_unary_params_t *p, int32_t x, int32_t *y) {
  if (p->builtin != TFLM_BUILTIN_RSQRT) {
    *y = tflm_abs_quantized(p, x);
    return 1;
  }
  if (x < p->input_offset) {
    return 0;
  }
  *y = tflm_rsqrt_quantized(p, x);
  return 1;
}

static tflm_status_t tflm_unary_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_unary_params_t *p = (const tflm_unary_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t i, y = 0;
  if (p->type == TFLM_TYPE_FLOAT32) {
    for (i = 0; i < p->count; ++i) {
      ((float *)out)[i] = tflm_unary_float(p->builtin, ((const float *)in)[i]);
    }
  } else if (p->type == TFLM_TYPE_INT16) {
    for (i = 0; i < p->count; ++i) {
      TFLM_KERNEL_CHECK(ctx, node, tflm_unary_quantized(p, ((const int16_t *)in)[i], &y),
                        TFLM_ERROR);
      ((int16_t *)out)[i] = (int16_t)y;
    }
  } else {
    for (i = 0; i < p->count; ++i) {
      TFLM_KERNEL_CHECK(ctx, node, tflm_unary_quantized(p, ((const int8_t *)in)[i], &y),
                        TFLM_ERROR);
      ((int8_t *)out)[i] = (int8_t)y;
    }
  }
  return TFLM_OK;
}

/* One prepare per op (the registration carries no argument). */
#define TFLM_UNARY_OP(name, code)                                                     \
  static tflm_status_t tflm_##name##_prepare(tflm_context_t *ctx, tflm_node_t *node) { \
    return tflm_unary_prepare(ctx, node, code);                                       \
  }                                                                                   \
  const tflm_registration_t tflm_op_##name = {                                        \
      NULL, code, NULL, tflm_##name##_prepare, tflm_unary_eval, NULL, NULL};

TFLM_UNARY_OP(abs, TFLM_BUILTIN_ABS)
TFLM_UNARY_OP(neg, TFLM_BUILTIN_NEG)
TFLM_UNARY_OP(exp, TFLM_BUILTIN_EXP)
TFLM_UNARY_OP(log, TFLM_BUILTIN_LOG)
TFLM_UNARY_OP(sqrt, TFLM_BUILTIN_SQRT)
TFLM_UNARY_OP(rsqrt, TFLM_BUILTIN_RSQRT)
TFLM_UNARY_OP(square, TFLM_BUILTIN_SQUARE)
TFLM_UNARY_OP(sin, TFLM_BUILTIN_SIN)
TFLM_UNARY_OP(cos, TFLM_BUILTIN_COS)
TFLM_UNARY_OP(floor, TFLM_BUILTIN_FLOOR)
TFLM_UNARY_OP(ceil, TFLM_BUILTIN_CEIL)
