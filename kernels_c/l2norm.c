/* tflm-op: L2_NORMALIZATION tflm_op_l2_normalization types: float32,int8 */
/* L2_NORMALIZATION along the last axis, as TFLM's reference kernels:
 *   float: x / max(sqrt(sum of squares), 1e-6f), the sum taken in order;
 *   int8:  the output is fixed at scale 1/128, zero point 0; the sum of squared
 *     (x - zero_point) gives an inverse square root as a Q31 multiplier and shift
 *     (gemmlowp's Newton-Raphson, five iterations), applied with one more 7-bit shift. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_fixedpoint.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;        /* TFLM_TYPE_FLOAT32 or TFLM_TYPE_INT8 */
  int32_t outer;       /* rows normalised independently */
  int32_t depth;       /* last dimension */
  int32_t zero_point;  /* input zero point (int8) */
} tflm_l2norm_params_t;

static tflm_status_t l2norm_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_l2norm_params_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 1, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8),
                                     TFLM_IO_ANY_SHAPE, &in, &out));
  TFLM_KERNEL_CHECK(ctx, node, in.ndims >= 1 && in.bytes == out.bytes, TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node,
                    tflm_opt_int(node, TFLM_OPT_L2NORM_FUSED_ACTIVATION_FUNCTION, 0) ==
                        TFLM_ACT_NONE,
                    TFLM_ERR_BAD_PARAMS);
  if (in.type == TFLM_TYPE_INT8) {
    TFLM_KERNEL_CHECK(ctx, node, out.scale == 1.0f / 128.0f && out.zero_point == 0,
                      TFLM_ERR_BAD_PARAMS);
  }
  p = (tflm_l2norm_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in.type;
  p->depth = in.dims[in.ndims - 1];
  p->outer = p->depth > 0 ? tflm_tensor_elements(&in) / p->depth : 0;
  p->zero_point = in.zero_point;
  node->user_data = p;
  return TFLM_OK;
}

static void l2norm_float(const tflm_l2norm_params_t *p, const float *in, float *out) {
  int32_t i, c;
  for (i = 0; i < p->outer; ++i) {
    const float *row = in + i * p->depth;
    float squares = 0.0f;
    float norm;
    for (c = 0; c < p->depth; ++c) squares += row[c] * row[c];
    norm = sqrtf(squares);
    norm = norm < 1e-6f ? 1e-6f : norm; /* std::max(norm, epsilon) */
    for (c = 0; c < p->depth; ++c) out[i * p->depth + c] = row[c] / norm;
  }
}

/* 1/sqrt(input) as a Q31 multiplier and a left shift (TFLM's
 * GetInvSqrtQuantizedMultiplierExp with reverse_shift -1). */
static void inv_sqrt(int32_t input, int32_t *multiplier, int32_t *shift) {
  const int32_t three_halves = (1 << 28) + (1 << 27); /* 1.5 in Q3.28 */
  int32_t pairs, half_input, x, i;
  if (input <= 1) {
    *multiplier = INT32_MAX;
    *shift = 0;
    return;
  }
  *shift = 11;
  while (input >= (1 << 29)) {
    input /= 4;
    ++*shift;
  }
  pairs = (tflm_fp_count_leading_zeros((uint32_t)input) - 1) / 2 - 1;
  *shift -= pairs;
  input <<= 2 * pairs;
  half_input = tflm_fp_saturating_mul_by_pot(input >> 1, -1);
  x = 1 << 28; /* 1.0 in Q3.28 */
  for (i = 0; i < 5; ++i) {
    const int32_t x3 = tflm_fp_saturating_mul_by_pot(
        tflm_saturating_rounding_doubling_high_mul(
            tflm_saturating_rounding_doubling_high_mul(x, x), x),
        6);
    x = tflm_fp_saturating_mul_by_pot(
        (int32_t)((uint32_t)tflm_saturating_rounding_doubling_high_mul(three_halves, x) -
                  (uint32_t)tflm_saturating_rounding_doubling_high_mul(half_input, x3)),
        3);
  }
  *multiplier = tflm_saturating_rounding_doubling_high_mul(x, 1518500250); /* sqrt(2)/2 */
  if (*shift < 0) {
    *multiplier = (int32_t)((uint32_t)*multiplier << -*shift);
    *shift = 0;
  }
  *shift = -*shift;
}

static void l2norm_int8(const tflm_l2norm_params_t *p, const int8_t *in, int8_t *out) {
  int32_t i, c, multiplier, shift;
  for (i = 0; i < p->outer; ++i) {
    const int8_t *row = in + i * p->depth;
    int32_t squares = 0;
    for (c = 0; c < p->depth; ++c) {
      const int32_t v = row[c] - p->zero_point;
      squares += v * v;
    }
    inv_sqrt(squares, &multiplier, &shift);
    for (c = 0; c < p->depth; ++c) {
      int32_t v = tflm_multiply_by_quantized_multiplier(row[c] - p->zero_point, multiplier,
                                                        shift + 7);
      v = v < -128 ? -128 : (v > 127 ? 127 : v);
      out[i * p->depth + c] = (int8_t)v;
    }
  }
}

static tflm_status_t l2norm_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_l2norm_params_t *p = (const tflm_l2norm_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  if (p->type == TFLM_TYPE_FLOAT32) {
    l2norm_float(p, (const float *)in, (float *)out);
  } else {
    l2norm_int8(p, (const int8_t *)in, (int8_t *)out);
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_l2_normalization = {
    NULL, TFLM_BUILTIN_L2_NORMALIZATION, NULL, l2norm_prepare, l2norm_eval, NULL,
    NULL};
