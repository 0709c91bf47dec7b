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
  tflm_binary_t binary; /* shape, types and activation clamp; quantised clamp for int8/16 */
  tflm_binary_rescale_t rescale;
} tflm_sub_params_t;

static float tflm_sub_float_value(const tflm_sub_params_t *p, float a, float b) {
  return tflm_clamp_float(a - b, p->binary.act_min_f, p->binary.act_max_f);
}

static int32_t tflm_sub_int32_value(const tflm_sub_params_t *p, int32_t a, int32_t b) {
  /* Wraps on overflow without signed-overflow UB. */
  return tflm_clamp_int32((int32_t)((uint32_t)a - (uint32_t)b), p->binary.act_min,
                          p->binary.act_max);
}

/* The quantised difference of one pair of stored values, clamped to the activation range. */
static int32_t tflm_sub_quantized(const tflm_sub_params_t *p, int32_t a, int32_t b) {
  const tflm_binary_rescale_t *r = &p->rescale;
  const int32_t shifted1 = (a + r->input1_offset) * ((int32_t)1 << r->left_shift);
  const int32_t shifted2 = (b + r->input2_offset) * ((int32_t)1 << r->left_shift);
  const int32_t scaled1 =
      tflm_multiply_by_quantized_multiplier(shifted1, r->input1_multiplier, r->input1_shift);
  const int32_t scaled2 =
      tflm_multiply_by_quantized_multiplier(shifted2, r->input2_multiplier, r->input2_shift);
  return tflm_clamp_int32(tflm_multiply_by_quantized_multiplier(
                              scaled1 - scaled2, r->output_multiplier, r->output_shift) +
                              r->output_offset,
                          p->binary.act_min, p->binary.act_max);
}

static TFLM_BINARY_ROW(tflm_sub_float, tflm_sub_params_t, float, float, tflm_sub_float_value)
static TFLM_BINARY_ROW(tflm_sub_int32, tflm_sub_params_t, int32_t, int32_t, tflm_sub_int32_value)
static TFLM_BINARY_ROW(tflm_sub_int8, tflm_sub_params_t, int8_t, int8_t, tflm_sub_quantized)
static TFLM_BINARY_ROW(tflm_sub_int16, tflm_sub_params_t, int16_t, int16_t, tflm_sub_quantized)

static const tflm_binary_rows_t tflm_sub_rows = {tflm_sub_float, tflm_sub_int8, tflm_sub_int16,
                                                 tflm_sub_int32, NULL};

/* Quantised parameters in double, as TFLM computes them; returns 0 when TFLM would refuse. */
static int32_t tflm_sub_quant_params(const tflm_tensor_t *in, const tflm_tensor_t *out,
                                     tflm_binary_rescale_t *r) {
  const double twice_max_input_scale =
      tflm_binary_rescale_inputs(in, out, out->type == TFLM_TYPE_INT16 ? 15 : 20, r);
  double real_out;
  if (twice_max_input_scale == 0.0) {
    return 0;
  }
  real_out =
      twice_max_input_scale / ((double)((int32_t)1 << r->left_shift) * (double)out->scale);
  tflm_quantize_multiplier(real_out, &r->output_multiplier, &r->output_shift);
  /* QuantizeMultiplierSmallerThanOneExp insists on multipliers below one. */
  return real_out < 1.0;
}

static tflm_status_t tflm_sub_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in[2], out;
  void *data;
  tflm_sub_params_t *p;
  const int32_t activation = tflm_opt_int(node, TFLM_OPT_SUB_FUSED_ACTIVATION_FUNCTION, 0);
  const tflm_status_t status = tflm_binary_prepare(ctx, node, sizeof(*p), &tflm_sub_rows,
                                                   activation, 1, in, &out, &data);
  if (status != TFLM_OK) {
    return status;
  }
  p = (tflm_sub_params_t *)data;
  if (out.type == TFLM_TYPE_INT8 || out.type == TFLM_TYPE_INT16) {
    int32_t qmin, qmax;
    TFLM_KERNEL_CHECK(ctx, node, tflm_sub_quant_params(in, &out, &p->rescale),
                      TFLM_ERR_BAD_PARAMS);
    tflm_binary_type_range(out.type, &qmin, &qmax);
    tflm_activation_range_quantized(activation, out.scale, out.zero_point, qmin, qmax,
                                    &p->binary.act_min, &p->binary.act_max);
  }
  return TFLM_OK;
}

static tflm_status_t tflm_sub_eval(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_binary_eval(ctx, node, &tflm_sub_rows);
}

const tflm_registration_t tflm_op_sub = {
    NULL, TFLM_BUILTIN_SUB, NULL, tflm_sub_prepare, tflm_sub_eval, NULL, NULL};
