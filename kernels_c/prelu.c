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
  tflm_binary_t binary; /* shape, types; int8/int16: act_min/max hold the type's range */
  int32_t input_offset, alpha_offset, output_offset; /* -zp_in, -zp_alpha, +zp_out */
  int32_t multiplier1, shift1;     /* scale_in / scale_out */
  int32_t multiplier2, shift2;     /* scale_in * scale_alpha / scale_out */
} tflm_prelu_params_t;

static float tflm_prelu_float_value(const tflm_prelu_params_t *p, float x, float alpha) {
  (void)p;
  return x >= 0.0f ? x : x * alpha;
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
  return tflm_clamp_int32(r + p->output_offset, p->binary.act_min, p->binary.act_max);
}

/* alpha is int8 for both quantised input types (checked in tflm_prelu_finish). */
static TFLM_BINARY_ROW(tflm_prelu_float, tflm_prelu_params_t, float, float,
                       tflm_prelu_float_value)
static TFLM_BINARY_ROW(tflm_prelu_int8, tflm_prelu_params_t, int8_t, int8_t,
                       tflm_prelu_quantized)
static TFLM_BINARY_ROW(tflm_prelu_int16, tflm_prelu_params_t, int16_t, int8_t,
                       tflm_prelu_quantized)

static const tflm_binary_rows_t tflm_prelu_rows = {
    tflm_prelu_float, tflm_prelu_int8, tflm_prelu_int16,
    NULL, NULL, NULL, 0};

/* alpha is int8 for both quantised input types, else the input's type. */
static TFLM_BINARY_FINISH(tflm_prelu_finish) {
  tflm_prelu_params_t *p = (tflm_prelu_params_t *)data;
  (void)activation;
  if (out->type != TFLM_TYPE_INT8 && out->type != TFLM_TYPE_INT16) {
    TFLM_KERNEL_CHECK(ctx, node, in[1].type == out->type, TFLM_ERR_UNSUPPORTED_TYPE);
    return TFLM_OK;
  }
  TFLM_KERNEL_CHECK(ctx, node, in[1].type == TFLM_TYPE_INT8, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, out->scale > 0.0f, TFLM_ERR_BAD_PARAMS);
  tflm_quantize_multiplier((double)in[0].scale / (double)out->scale, &p->multiplier1,
                           &p->shift1);
  tflm_quantize_multiplier((double)in[0].scale * (double)in[1].scale / (double)out->scale,
                           &p->multiplier2, &p->shift2);
  p->input_offset = -in[0].zero_point;
  p->alpha_offset = -in[1].zero_point;
  p->output_offset = out->zero_point;
  tflm_binary_type_range(out->type, &p->binary.act_min, &p->binary.act_max);
  return TFLM_OK;
}

/* alpha's type differs from the input's for int16 (checked in tflm_prelu_finish). */
TFLM_BINARY_OP(tflm_op_prelu, TFLM_BUILTIN_PRELU, tflm_prelu_rows, tflm_prelu_params_t, 0, 0,
               tflm_prelu_finish);
