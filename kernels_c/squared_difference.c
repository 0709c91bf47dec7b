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
  tflm_binary_t binary; /* shape, types; int8/int16: act_min/max hold the type's range */
  tflm_binary_rescale_t rescale; /* left shift 7 (int8) or 0 (int16) */
} tflm_sqdiff_params_t;

static float tflm_sqdiff_float_value(const tflm_sqdiff_params_t *p, float a, float b) {
  const float d = a - b;
  (void)p;
  return d * d;
}

static int32_t tflm_sqdiff_int32_value(const tflm_sqdiff_params_t *p, int32_t a, int32_t b) {
  const uint32_t d = (uint32_t)a - (uint32_t)b;
  (void)p;
  return (int32_t)(d * d); /* wraps without signed-overflow UB */
}

static int32_t tflm_sqdiff_quantized(const tflm_sqdiff_params_t *p, int32_t a, int32_t b) {
  const tflm_binary_rescale_t *r = &p->rescale;
  const int32_t shifted1 = (a + r->input1_offset) * ((int32_t)1 << r->left_shift);
  const int32_t shifted2 = (b + r->input2_offset) * ((int32_t)1 << r->left_shift);
  const int32_t diff =
      tflm_multiply_by_quantized_multiplier(shifted1, r->input1_multiplier, r->input1_shift) -
      tflm_multiply_by_quantized_multiplier(shifted2, r->input2_multiplier, r->input2_shift);
  return tflm_clamp_int32(
      tflm_multiply_by_quantized_multiplier(diff * diff, r->output_multiplier, r->output_shift) +
          r->output_offset,
      p->binary.act_min, p->binary.act_max);
}

TFLM_BINARY_ARITHMETIC_ROWS(static, tflm_sqdiff_rows, tflm_sqdiff_params_t,
                            tflm_sqdiff_float_value, tflm_sqdiff_quantized,
                            tflm_sqdiff_int32_value);

static int32_t tflm_sqdiff_quant_params(const tflm_tensor_t *in, const tflm_tensor_t *out,
                                        tflm_sqdiff_params_t *p) {
  tflm_binary_rescale_t *r = &p->rescale;
  const double twice =
      tflm_binary_rescale_inputs(in, out, out->type == TFLM_TYPE_INT8 ? 7 : 0, r);
  tflm_binary_type_range(out->type, &p->binary.act_min, &p->binary.act_max);
  if (twice == 0.0) {
    return 0;
  }
  /* (1 << 2 * shift) * scale is a float product in TFLM (exact: a power of two). */
  tflm_quantize_multiplier(
      twice * twice / (double)((float)((int32_t)1 << (2 * r->left_shift)) * out->scale),
      &r->output_multiplier, &r->output_shift);
  if (out->type == TFLM_TYPE_INT16) {
    return in[0].zero_point == 0 && in[1].zero_point == 0 && out->zero_point == 0;
  }
  return 1;
}

static TFLM_BINARY_FINISH(tflm_sqdiff_finish) {
  (void)activation;
  if (out->type == TFLM_TYPE_INT8 || out->type == TFLM_TYPE_INT16) {
    TFLM_KERNEL_CHECK(ctx, node, tflm_sqdiff_quant_params(in, out, (tflm_sqdiff_params_t *)data),
                      TFLM_ERR_BAD_PARAMS);
  }
  return TFLM_OK;
}

TFLM_BINARY_OP(tflm_op_squared_difference, TFLM_BUILTIN_SQUARED_DIFFERENCE, tflm_sqdiff_rows,
               tflm_sqdiff_params_t, 0, 1, tflm_sqdiff_finish);
