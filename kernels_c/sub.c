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

/* Persistent op data: the same record as ADD's. */
typedef tflm_binary_sum_t tflm_sub_params_t;

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
  return tflm_binary_rescaled(&p->rescale, -1, a, b, p->binary.act_min, p->binary.act_max);
}

TFLM_BINARY_ARITHMETIC_ROWS(static, tflm_sub_rows, tflm_sub_params_t, tflm_sub_float_value,
                            tflm_sub_quantized, tflm_sub_int32_value);

TFLM_BINARY_OP(tflm_op_sub, TFLM_BUILTIN_SUB, tflm_sub_rows, tflm_sub_params_t,
               TFLM_OPT_SUB_FUSED_ACTIVATION_FUNCTION, 1, tflm_binary_sum_finish);
