/* tflm-op: LOG_SOFTMAX tflm_op_log_softmax types: float32,int8 */
/* LOG_SOFTMAX over the innermost dimension, bit-exact with TFLM's reference kernels.
 *   float32: x - max - logf(sum of expf(x - max)), in TFLM's order.
 *   int8 (output scale 16/256, zero point 127, as TFLM requires): differences from the row
 *   maximum are scaled to Q5.26 (multiplier from input_scale * 2^26, capped at 2^31 - 1),
 *   their exps summed in Q12.19, the log of the sum taken in gemmlowp-style fixed point
 *   (Q5.26 result), and (scaled diff - log sum) rounded to the output's 1/16 steps.  Too
 *   small differences (below a bound derived from the log sum) give -128. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_fixedpoint.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

#define TFLM_LOG_SOFTMAX_DIFF_BITS 5   /* scaled differences: Q5.26 */
#define TFLM_LOG_SOFTMAX_ACCUM_BITS 12 /* sum of exps: Q12.19 */
#define TFLM_LOG_SOFTMAX_OUTPUT_BITS 4 /* output: 16 / 256 steps */

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;             /* TFLM_TYPE_* of input and output */
  int32_t outer;            /* rows: product of all dimensions but the last */
  int32_t depth;            /* last dimension */
  int32_t input_multiplier; /* input_scale * 2^26 as Q31 significand ... */
  int32_t input_shift;      /* ... and left shift */
  int32_t reverse_multiplier; /* the inverse of that scaling ... */
  int32_t reverse_shift;      /* ... (shift <= 0) */
  int32_t diff_min;         /* differences below this are left out of the sum */
} tflm_log_softmax_params_t;

static int32_t tflm_ls_add(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static int32_t tflm_ls_sub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }
static int32_t tflm_ls_mul(int32_t a, int32_t b) {
  return tflm_saturating_rounding_doubling_high_mul(a, b);
}
static int32_t tflm_ls_saturate(int64_t v) {
  return v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : (int32_t)v);
}

/* z_pow_2_adj and r of the log: the power of two of x (as Q6.25, adjusted by a quarter)
 * and the mantissa in Q0.31, taking whichever of x and x * sqrt(1/2) normalises better. */
static int32_t tflm_ls_log_split(int32_t x, int32_t *r) {
  const int32_t sqrt_half = 1518500250;                  /* sqrt(1/2) */
  const int32_t accum_bits = TFLM_LOG_SOFTMAX_DIFF_BITS + 1;
  const int32_t quarter = tflm_fp_saturating_mul_by_pot(536870912, -accum_bits); /* 1/4 */
  const int32_t headroom_a = tflm_fp_count_leading_zeros((uint32_t)x);
  const int32_t xb = tflm_ls_mul(x, sqrt_half);
  const int32_t headroom_b = tflm_fp_count_leading_zeros((uint32_t)xb) - 1;
  int32_t r_a = tflm_fp_saturating_mul_by_pot(x, headroom_a - 1);
  int32_t r_b, pow_a, pow_b;
  r_a = tflm_fp_saturating_mul_by_pot(tflm_ls_mul(r_a, sqrt_half), 1);
  r_b = tflm_fp_saturating_mul_by_pot(x, headroom_b);
  pow_a = tflm_ls_saturate(
      (int64_t)tflm_fp_saturating_mul_by_pot(TFLM_LOG_SOFTMAX_ACCUM_BITS - headroom_a,
                                             31 - accum_bits) + quarter);
  pow_b = tflm_ls_saturate(
      (int64_t)tflm_fp_saturating_mul_by_pot(TFLM_LOG_SOFTMAX_ACCUM_BITS - headroom_b,
                                             31 - accum_bits) - quarter);
  *r = r_a < r_b ? r_a : r_b;
  return pow_a > pow_b ? pow_a : pow_b;
}

/* log(x) for x >= 1 given in Q12.19; the result is Q5.26.  A rational approximation of
 * log(r) around sqrt(sqrt(1/2)) plus the power of two times log(2). */
static int32_t tflm_ls_log(int32_t x) {
  const int32_t ln2 = 1488522236;             /* log(2) */
  const int32_t sqrt_sqrt_half = 1805811301;  /* (1/2)^(1/4) */
  const int32_t alpha_n = 117049297;          /* 11/240 * 2^(1/4) */
  const int32_t alpha_d = 127690142;          /* 1/20 * 2^(1/4) */
  const int32_t alpha_i = 1057819769;         /* 2 / 2^(1/4) - 2^(1/4) */
  const int32_t alpha_f = 638450708;          /* 1/4 * 2^(1/4) */
  int32_t r, q, p, q2, num, denom, reciprocal, sum;
  const int32_t pow2 = tflm_ls_log_split(x, &r);
  p = tflm_fp_rounding_half_sum(r, sqrt_sqrt_half);
  q = tflm_ls_sub(r, sqrt_sqrt_half);
  q = tflm_ls_add(q, q);
  q2 = tflm_ls_mul(q, q);
  num = tflm_ls_add(tflm_ls_mul(q, r), tflm_ls_mul(tflm_ls_mul(q, q2), alpha_n));
  denom = tflm_ls_add(
      tflm_ls_mul(p, tflm_ls_add(tflm_ls_add(alpha_i, q), tflm_ls_mul(alpha_d, q2))),
      tflm_ls_mul(alpha_f, q));
  reciprocal = tflm_fp_one_over_one_plus_x(denom);
  num = tflm_fp_saturating_mul_by_pot(num, -(TFLM_LOG_SOFTMAX_DIFF_BITS + 1));
  sum = tflm_ls_add(tflm_ls_mul(pow2, ln2), tflm_ls_mul(num, reciprocal));
  return tflm_fp_saturating_mul_by_pot(sum, 1); /* Q6.25 -> Q5.26 */
}

/* TFLM's PreprocessLogSoftmaxScalingExp and CalculateInputRadius (double, prepare only). */
static int32_t tflm_ls_quant_params(float input_scale, tflm_log_softmax_params_t *p) {
  double real = (double)input_scale * (double)((int32_t)1 << (31 - TFLM_LOG_SOFTMAX_DIFF_BITS));
  double radius;
  if (real > 2147483647.0) real = 2147483647.0;
  if (!(real > 1.0)) return 0; /* QuantizeMultiplierGreaterThanOne */
  tflm_quantize_multiplier(real, &p->input_multiplier, &p->input_shift);
  if (p->input_shift < 1 || p->input_shift > 30) return 0;
  tflm_quantize_multiplier((double)((int64_t)1 << (31 - p->input_shift)) /
                               (double)p->input_multiplier,
                           &p->reverse_multiplier, &p->reverse_shift);
  radius = 31.0 * (double)((int64_t)1 << (31 - TFLM_LOG_SOFTMAX_DIFF_BITS)) /
           (double)((int64_t)1 << p->input_shift);
  p->diff_min = -(int32_t)floor(radius);
  return p->reverse_shift <= 0;
}

static tflm_status_t tflm_log_softmax_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_log_softmax_params_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 1, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8),
                                     TFLM_IO_ANY_SHAPE, &in, &out));
  TFLM_KERNEL_CHECK(ctx, node, in.ndims >= 1 && in.bytes == out.bytes, TFLM_ERR_BAD_SHAPE);
  p = (tflm_log_softmax_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in.type;
  p->depth = in.dims[in.ndims - 1];
  p->outer = p->depth > 0 ? tflm_tensor_elements(&in) / p->depth : 0;
  node->user_data = p;
  if (in.type == TFLM_TYPE_INT8) {
    TFLM_KERNEL_CHECK(ctx, node, out.scale == 16.0f / 256.0f && out.zero_point == 127,
                      TFLM_ERR_BAD_PARAMS);
    TFLM_KERNEL_CHECK(ctx, node, tflm_ls_quant_params(in.scale, p), TFLM_ERR_BAD_PARAMS);
  }
  return TFLM_OK;
}

static void tflm_log_softmax_float(const tflm_log_softmax_params_t *p, const float *in,
                                   float *out) {
  int32_t i, c;
  for (i = 0; i < p->outer; ++i, in += p->depth, out += p->depth) {
    float max = -FLT_MAX, sum = 0.0f, log_sum;
    for (c = 0; c < p->depth; ++c) max = max < in[c] ? in[c] : max;
    for (c = 0; c < p->depth; ++c) sum += expf(in[c] - max);
    log_sum = logf(sum);
    for (c = 0; c < p->depth; ++c) out[c] = in[c] - max - log_sum;
  }
}

/* One row of int8 values. */
static void tflm_log_softmax_row(const tflm_log_softmax_params_t *p, const int8_t *in,
                                 int8_t *out) {
  int32_t c, max = -128, sum = 0, log_sum, bound;
  for (c = 0; c < p->depth; ++c) max = in[c] > max ? in[c] : max;
  for (c = 0; c < p->depth; ++c) {
    const int32_t diff = in[c] - max;
    if (diff >= p->diff_min) {
      const int32_t scaled =
          tflm_multiply_by_quantized_multiplier(diff, p->input_multiplier, p->input_shift);
      sum = tflm_ls_add(sum, tflm_rounding_divide_by_pot(
                                 tflm_fp_exp_on_negative_values(scaled, 5), 12));
    }
  }
  log_sum = tflm_ls_log(sum);
  bound = tflm_multiply_by_quantized_multiplier(tflm_ls_add(log_sum, INT32_MIN),
                                                p->reverse_multiplier, p->reverse_shift);
  bound = bound > p->diff_min - 1 ? bound : p->diff_min - 1;
  for (c = 0; c < p->depth; ++c) {
    const int32_t diff = in[c] - max;
    int32_t v = -128;
    if (diff > bound) {
      const int32_t scaled =
          tflm_multiply_by_quantized_multiplier(diff, p->input_multiplier, p->input_shift);
      v = tflm_rounding_divide_by_pot(tflm_ls_sub(scaled, log_sum),
                                      31 - TFLM_LOG_SOFTMAX_DIFF_BITS -
                                          TFLM_LOG_SOFTMAX_OUTPUT_BITS) + 127;
      v = v < -128 ? -128 : (v > 127 ? 127 : v);
    }
    out[c] = (int8_t)v;
  }
}

static tflm_status_t tflm_log_softmax_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_log_softmax_params_t *p = (const tflm_log_softmax_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t i;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  if (p->type == TFLM_TYPE_FLOAT32) {
    tflm_log_softmax_float(p, (const float *)in, (float *)out);
  } else {
    for (i = 0; i < p->outer; ++i) {
      tflm_log_softmax_row(p, (const int8_t *)in + (ptrdiff_t)i * p->depth,
                           (int8_t *)out + (ptrdiff_t)i * p->depth);
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_log_softmax = {
    NULL, TFLM_BUILTIN_LOG_SOFTMAX, NULL, tflm_log_softmax_prepare,
    tflm_log_softmax_eval, NULL, NULL};
