/* tflm-op: LOGISTIC tflm_op_logistic types: float32,int8,int16 */
/* tflm-op: TANH tflm_op_tanh types: float32,int8,int16 */
/* LOGISTIC and TANH, bit-exact with TFLM's reference kernels.
 *   float32: LOGISTIC is 1 for x > 16.619047, exp(x) for x < -9, else 1 / (1 + exp(-x));
 *   TANH is tanhf(x).
 *   int8: x - zp_in is rescaled to Q4.27 (a Q31 multiplier and left shift from
 *   scale_in * 2^27, computed with frexp as TFLM does), then gemmlowp-style fixed-point
 *   logistic / tanh (tflm_sigmoid.h) gives Q0.31, rounded to the output's 2^-8 (LOGISTIC,
 *   output zero point -128) or 2^-7 (TANH, output zero point 0) steps.  Inputs beyond the
 *   radius where Q4.27 would overflow saturate to the type's limits.
 *   int16: zero points 0 and output scale 2^-15.  When the input scale is 2^-12 (or, for
 *   TANH, 2^-11) the 256-entry table of tflm_sigmoid_lut.h is indexed directly; otherwise
 *   the input is first rescaled to 1 / (3 * 4096) by an integer multiplier below 2^15 and a
 *   right shift, found in prepare by doubling scale * 3 * 4096 as TFLM does. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "tflm_sigmoid.h"
#include "tflm_sigmoid_lut.h"

#define TFLM_SIGMOID_INPUT_INTEGER_BITS 4

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;             /* TFLM_TYPE_* of input and output */
  int32_t count;            /* elements */
  int32_t input_zero_point;
  int32_t input_multiplier; /* scale_in * 2^27 as Q31 significand ... */
  int32_t input_left_shift; /* ... and left shift */
  int32_t input_range_radius; /* |x - zp| at or beyond this saturates */
} tflm_sigmoid_params_t;

/* TFLM's CheckedLog2 (float arithmetic): rounded log2 of x, and whether x is a power of two
 * to within 1e-3 in the exponent. */
static int32_t tflm_sigmoid_log2(float x, int32_t *log2_rounded) {
  float log2, rounded;
  *log2_rounded = 0;
  /* A tensor without quantization reads as scale 0, whose log is -infinity. */
  if (!(x > 0.0f && x <= FLT_MAX)) return 0;
  log2 = logf(x) * (1.0f / logf(2.0f));
  rounded = roundf(log2);
  *log2_rounded = (int32_t)rounded; /* |log2| < 150 for positive finite floats */
  return fabsf(log2 - rounded) < 1e-3f;
}

/* int16 input rescaling (multiplier 0: the power-of-two case of the table). */
static tflm_status_t tflm_sigmoid_int16_params(tflm_context_t *ctx, tflm_node_t *node,
                                               const tflm_tensor_t *in,
                                               const tflm_tensor_t *out, int32_t is_logistic,
                                               tflm_sigmoid_params_t *p) {
  int32_t log2_in, log2_out, pot;
  TFLM_KERNEL_CHECK(ctx, node, in->zero_point == 0 && out->zero_point == 0,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_sigmoid_log2(out->scale, &log2_out) && log2_out == -15,
                    TFLM_ERR_BAD_PARAMS);
  pot = tflm_sigmoid_log2(in->scale, &log2_in);
  p->input_left_shift = 12 + log2_in; /* 15 - 3 input integer bits */
  pot = pot && (p->input_left_shift == 0 || (!is_logistic && p->input_left_shift == 1));
  if (pot) {
    p->input_multiplier = 0;
  } else {
    double multiplier = (double)in->scale * 4096.0 * 3.0;
    p->input_left_shift = 0;
    while (multiplier <= 32767.0 / 2.0 && p->input_left_shift <= 30) {
      ++p->input_left_shift;
      multiplier *= 2.0;
    }
    /* Only a scale above 2^31 / 12288 gets here: no int32 multiplier exists for it. */
    TFLM_KERNEL_CHECK(ctx, node, multiplier < 2147483648.0, TFLM_ERR_BAD_PARAMS);
    p->input_multiplier = (int32_t)multiplier;
  }
  return TFLM_OK;
}

/* TFLM's frexp-based multiplier and CalculateInputRadius (double, prepare only). */
static int32_t tflm_sigmoid_quant_params(float input_scale, tflm_sigmoid_params_t *p) {
  const int32_t bits = TFLM_SIGMOID_INPUT_INTEGER_BITS;
  const double real = (double)input_scale * (double)((int32_t)1 << (31 - bits));
  int exponent = 0;
  const double q = frexp(real, &exponent);
  double radius;
  p->input_multiplier = 0;
  p->input_left_shift = 0;
  /* Checked before converting: rounding up to 2^31 would not fit an int32_t. */
  if (exponent < 0 || exponent > 31 || q * 2147483648.0 >= 2147483647.5) {
    return 0; /* TFLM would shift by a negative amount or overflow here */
  }
  p->input_multiplier = (int32_t)round(q * 2147483648.0);
  p->input_left_shift = (int32_t)exponent;
  radius = 1.0 * (double)(((int32_t)1 << bits) - 1) * (double)((int64_t)1 << (31 - bits)) /
           (double)((int64_t)1 << exponent);
  p->input_range_radius = (int32_t)floor(radius);
  return 1;
}

static tflm_status_t tflm_sigmoid_prepare(tflm_context_t *ctx, tflm_node_t *node,
                                          int32_t is_logistic) {
  tflm_tensor_t in, out;
  tflm_sigmoid_params_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(
      ctx, node, 1, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8) | TFLM_TYPE_BIT(INT16),
      TFLM_IO_SAME_COUNT, &in, &out));
  p = (tflm_sigmoid_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in.type;
  p->count = tflm_tensor_elements(&in);
  p->input_zero_point = in.zero_point;
  node->user_data = p;
  if (in.type == TFLM_TYPE_INT8) {
    if (is_logistic) {
      TFLM_KERNEL_CHECK(ctx, node, out.zero_point == -128, TFLM_ERR_BAD_PARAMS);
    }
    TFLM_KERNEL_CHECK(ctx, node, tflm_sigmoid_quant_params(in.scale, p), TFLM_ERR_BAD_PARAMS);
  } else if (in.type == TFLM_TYPE_INT16) {
    return tflm_sigmoid_int16_params(ctx, node, &in, &out, is_logistic, p);
  }
  return TFLM_OK;
}

static tflm_status_t tflm_logistic_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_sigmoid_prepare(ctx, node, 1);
}

static tflm_status_t tflm_tanh_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_sigmoid_prepare(ctx, node, 0);
}

static float tflm_logistic_float(float x) {
  if (x > 16.619047164916992188f) {
    return 1.0f;
  }
  if (x < -9.0f) {
    return expf(x);
  }
  return 1.0f / (1.0f + expf(-x));
}

/* One int8 value: output steps of 2^-8 from -128 (LOGISTIC) or 2^-7 around 0 (TANH). */
static int8_t tflm_sigmoid_int8(const tflm_sigmoid_params_t *p, int32_t is_logistic,
                                int8_t x) {
  const int32_t v = (int32_t)x - p->input_zero_point;
  int32_t q31, r;
  if (v <= -p->input_range_radius) {
    return -128;
  }
  if (v >= p->input_range_radius) {
    return 127;
  }
  r = tflm_multiply_by_quantized_multiplier(v, p->input_multiplier, p->input_left_shift);
  if (is_logistic) {
    q31 = tflm_fp_logistic(r, TFLM_SIGMOID_INPUT_INTEGER_BITS);
    r = tflm_rounding_divide_by_pot(q31, 23) - 128;
  } else {
    q31 = tflm_fp_tanh(r, TFLM_SIGMOID_INPUT_INTEGER_BITS);
    r = tflm_rounding_divide_by_pot(q31, 24);
  }
  return (int8_t)(r < -128 ? -128 : (r > 127 ? 127 : r));
}

static tflm_status_t tflm_sigmoid_eval(tflm_context_t *ctx, tflm_node_t *node,
                                       int32_t is_logistic) {
  const tflm_sigmoid_params_t *p = (const tflm_sigmoid_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t i;
  if (p->type == TFLM_TYPE_FLOAT32) {
    for (i = 0; i < p->count; ++i) {
      const float x = ((const float *)in)[i];
      ((float *)out)[i] = is_logistic ? tflm_logistic_float(x) : tanhf(x);
    }
  } else if (p->type == TFLM_TYPE_INT16) {
    if (is_logistic) {
      tflm_logistic_int16(p->input_multiplier, p->input_left_shift, p->count,
                          (const int16_t *)in, (int16_t *)out);
    } else {
      tflm_tanh_int16(p->input_multiplier, p->input_left_shift, p->count, (const int16_t *)in,
                      (int16_t *)out);
    }
  } else {
    for (i = 0; i < p->count; ++i) {
      ((int8_t *)out)[i] = tflm_sigmoid_int8(p, is_logistic, ((const int8_t *)in)[i]);
    }
  }
  return TFLM_OK;
}

static tflm_status_t tflm_logistic_eval(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_sigmoid_eval(ctx, node, 1);
}

static tflm_status_t tflm_tanh_eval(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_sigmoid_eval(ctx, node, 0);
}

const tflm_registration_t tflm_op_logistic = {
    NULL, TFLM_BUILTIN_LOGISTIC, NULL, tflm_logistic_prepare, tflm_logistic_eval,
    NULL, NULL};
const tflm_registration_t tflm_op_tanh = {
    NULL, TFLM_BUILTIN_TANH, NULL, tflm_tanh_prepare, tflm_tanh_eval, NULL, NULL};
