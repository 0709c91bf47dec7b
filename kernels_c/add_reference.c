/* ADD with numpy-style broadcasting up to 6-D, bit-exact with TFLM's reference kernels.
 *   float32: a + b clamped to the fused activation's range.
 *   int8 / int16: TFLM's general quantised add.  Both inputs are shifted left (20 bits for
 *   int8, 15 for int16) for headroom, rescaled to a common scale of twice the larger input
 *   scale, summed, then rescaled to the output scale; all multipliers are computed in
 *   prepare in double exactly as TFLM does.  (TFLM ignores AddOptions.pot_scale_int16 and
 *   always takes this general path for int16.)
 *   int32: plain a + b without quantisation, the activation ignored (as TFLM). */
#include <stddef.h>
#include <stdint.h>

#include "add_reference.h"
#include "tflm_elementwise.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

static float tflm_add_float_value(const tflm_add_params_t *p, float a, float b) {
  return tflm_clamp_float(a + b, p->binary.act_min_f, p->binary.act_max_f);
}

static int32_t tflm_add_int32_value(const tflm_add_params_t *p, int32_t a, int32_t b) {
  (void)p;
  /* Wraps on overflow like TFLM's int32 add, without signed-overflow UB. */
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int32_t tflm_add_quantized(const tflm_add_params_t *p, int32_t a, int32_t b) {
  return tflm_binary_rescaled(&p->rescale, 1, a, b, p->binary.act_min, p->binary.act_max);
}

TFLM_BINARY_ARITHMETIC_ROWS(, tflm_add_rows, tflm_add_params_t, tflm_add_float_value,
                            tflm_add_quantized, tflm_add_int32_value);
