/* tflm-op: HARD_SWISH tflm_op_hard_swish types: float32,int8 */
/* HARD_SWISH, bit-exact with TFLM's reference kernels.
 *   float32: x * min(6, max(0, x + 3)) / 6, in float in that order.
 *   int8: TFLM's 16-bit fixed-point path.  x - zp is moved to a "hires" scale (times 2^7);
 *   one Q15 multiplier takes it to the output scale (before a final right shift), another
 *   to the "reluish" scale where 3.0 is 32768, giving relu6(x + 3) / 6 in [0, 1] as Q15;
 *   their product (a truncating doubling high multiply) is shifted to the output scale.
 *   Both Q15 multipliers are Q31 ones computed in prepare, rounded down to 16 bits. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;                 /* TFLM_TYPE_* of input and output */
  int32_t count;                /* elements */
  int32_t input_zero_point, output_zero_point;
  int32_t output_multiplier;    /* Q15: hires input scale / output scale ... */
  int32_t output_exponent;      /* ... and its power of two (<= 0) */
  int32_t reluish_multiplier;   /* Q15: hires input scale / (3 / 32768) ... */
  int32_t reluish_exponent;     /* ... and its power of two */
} tflm_hard_swish_params_t;

/* TFLM's DownScaleInt32ToInt16Multiplier: round a Q31 multiplier to Q15, saturating. */
static int32_t tflm_hard_swish_q15(int32_t multiplier) {
  if (multiplier >= INT32_MAX - (1 << 15)) {
    return 32767;
  }
  return (multiplier + (1 << 15)) >> 16;
}

static tflm_status_t tflm_hard_swish_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_hard_swish_params_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 1, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8),
                                     TFLM_IO_SAME_COUNT, &in, &out));
  p = (tflm_hard_swish_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in.type;
  p->count = tflm_tensor_elements(&in);
  p->input_zero_point = in.zero_point;
  p->output_zero_point = out.zero_point;
  node->user_data = p;
  if (in.type == TFLM_TYPE_INT8) {
    /* Scales in float, widened to double for QuantizeMultiplier, as TFLM does. */
    const float hires_input_scale = (1.0f / 128.0f) * in.scale;
    const float reluish_scale = 3.0f / 32768.0f;
    int32_t multiplier;
    TFLM_KERNEL_CHECK(ctx, node, out.scale > 0.0f, TFLM_ERR_BAD_PARAMS);
    tflm_quantize_multiplier((double)(hires_input_scale / out.scale), &multiplier,
                             &p->output_exponent);
    p->output_multiplier = tflm_hard_swish_q15(multiplier);
    TFLM_KERNEL_CHECK(ctx, node, p->output_exponent <= 0, TFLM_ERR_BAD_PARAMS);
    tflm_quantize_multiplier((double)(hires_input_scale / reluish_scale), &multiplier,
                             &p->reluish_exponent);
    p->reluish_multiplier = tflm_hard_swish_q15(multiplier);
  }
  return TFLM_OK;
}

/* gemmlowp's 16-bit SaturatingRoundingDoublingHighMul. */
static int32_t tflm_srdhm16(int32_t a, int32_t b) {
  const int32_t ab = a * b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  if (a == -32768 && b == -32768) {
    return 32767;
  }
  return (ab + nudge) / (1 << 15); /* C division truncates toward zero, as in gemmlowp */
}

/* The same without rounding (ARM's SQDMULH): truncates toward zero. */
static int32_t tflm_sdhm16(int32_t a, int32_t b) {
  if (a == -32768 && b == -32768) {
    return 32767;
  }
  return (int32_t)(int16_t)((a * b) / (1 << 15));
}

static int32_t tflm_saturating_left_shift16(int32_t value, int32_t amount) {
  const int64_t r = (int64_t)value * ((int64_t)1 << amount);
  return (int32_t)(r > 32767 ? 32767 : (r < -32768 ? -32768 : r));
}

/* relu6(x + 3) / 6 in Q15 ([0, 32767]) from x on the hires scale. */
static int32_t tflm_hard_swish_reluish(const tflm_hard_swish_params_t *p, int32_t hires) {
  int32_t v = hires;
  if (p->reluish_exponent > 0) {
    v = tflm_saturating_left_shift16(v, p->reluish_exponent - 1);
  }
  v = tflm_srdhm16(v, p->reluish_multiplier);
  if (p->reluish_exponent > 0) {
    v = tflm_saturating_left_shift16(v, 1);
  }
  if (p->reluish_exponent < 0) {
    v = tflm_rounding_divide_by_pot(v, -p->reluish_exponent);
  }
  return (v + (1 << 15)) >> 1; /* [-1, 1] -> [0, 1] */
}

static int8_t tflm_hard_swish_int8(const tflm_hard_swish_params_t *p, int8_t x) {
  /* x - zp fits int16; times 2^7 too (|x - zp| <= 255). */
  const int32_t hires = ((int32_t)x - p->input_zero_point) * (1 << 7);
  const int32_t preshift_output = tflm_srdhm16(hires, p->output_multiplier);
  const int32_t product = tflm_sdhm16(tflm_hard_swish_reluish(p, hires), preshift_output);
  int32_t v = (int16_t)(tflm_rounding_divide_by_pot(product, -p->output_exponent) +
                        p->output_zero_point);
  v = v > 127 ? 127 : v;
  return (int8_t)(v < -128 ? -128 : v);
}

static tflm_status_t tflm_hard_swish_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_hard_swish_params_t *p = (const tflm_hard_swish_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t i;
  if (p->type == TFLM_TYPE_FLOAT32) {
    for (i = 0; i < p->count; ++i) {
      const float x = ((const float *)in)[i];
      const float relu = 0.0f < x + 3.0f ? x + 3.0f : 0.0f; /* std::max(0, x + 3) */
      ((float *)out)[i] = x * (relu < 6.0f ? relu : 6.0f) / 6.0f; /* std::min(6, .) */
    }
  } else {
    for (i = 0; i < p->count; ++i) {
      ((int8_t *)out)[i] = tflm_hard_swish_int8(p, ((const int8_t *)in)[i]);
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_hard_swish = {
    NULL, TFLM_BUILTIN_HARD_SWISH, NULL, tflm_hard_swish_prepare,
    tflm_hard_swish_eval, NULL, NULL};
