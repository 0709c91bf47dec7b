/* tflm-op: POW tflm_op_pow types: float32 litert: float32 */
/* POW (TFLite has it, TFLM lacks it) with numpy-style broadcasting: powf(x, y) per element,
 * as LiteRT's reference kernel (std::pow on floats). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_elementwise.h"
#include "tflm_kernel.h"

static float tflm_pow_value(const tflm_binary_t *p, float x, float y) {
  (void)p;
  return powf(x, y);
}

static TFLM_BINARY_ROW(tflm_pow_float, tflm_binary_t, float, float, tflm_pow_value)

static const tflm_binary_rows_t tflm_pow_rows = {tflm_pow_float, NULL, NULL, NULL, NULL, NULL, 0};

TFLM_BINARY_OP(tflm_op_pow, TFLM_BUILTIN_POW, tflm_pow_rows, tflm_binary_t, 0, 1, NULL);
