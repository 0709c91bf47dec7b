/* tflm-op: MAXIMUM tflm_op_maximum types: float32,int8,int16,int32,int64 */
/* tflm-op: MINIMUM tflm_op_minimum types: float32,int8,int16,int32,int64 */
/* MAXIMUM and MINIMUM with numpy-style broadcasting, bit-exact with TFLM's reference
 * kernels: a > b ? a : b (a < b ? a : b), comparing stored values as they are.  TFLM does
 * not requantise, so quantised inputs are assumed to share the output's parameters; a NaN
 * in a yields b, as in TFLM. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_elementwise.h"
#include "tflm_kernel.h"

/* Each value function takes the op data the row functions pass, unused here. */
#define TFLM_MINMAX_VALUES(type, suffix)                                               \
  static type tflm_maximum_##suffix##_value(const tflm_binary_t *p, type a, type b) { \
    (void)p;                                                                           \
    return a > b ? a : b;                                                              \
  }                                                                                    \
  static type tflm_minimum_##suffix##_value(const tflm_binary_t *p, type a, type b) { \
    (void)p;                                                                           \
    return a < b ? a : b;                                                              \
  }                                                                                    \
  static TFLM_BINARY_ROW(tflm_maximum_##suffix, tflm_binary_t, type, type,             \
                         tflm_maximum_##suffix##_value)                                \
  static TFLM_BINARY_ROW(tflm_minimum_##suffix, tflm_binary_t, type, type,             \
                         tflm_minimum_##suffix##_value)

TFLM_MINMAX_VALUES(float, float)
TFLM_MINMAX_VALUES(int8_t, int8)
TFLM_MINMAX_VALUES(int16_t, int16)
TFLM_MINMAX_VALUES(int32_t, int32)
TFLM_MINMAX_VALUES(int64_t, int64)

static const tflm_binary_rows_t tflm_maximum_rows = {
    tflm_maximum_float, tflm_maximum_int8, tflm_maximum_int16,
    tflm_maximum_int32, tflm_maximum_int64, NULL, 0};
static const tflm_binary_rows_t tflm_minimum_rows = {
    tflm_minimum_float, tflm_minimum_int8, tflm_minimum_int16,
    tflm_minimum_int32, tflm_minimum_int64, NULL, 0};

/* The op data is the bare tflm_binary_t: each op's eval knows its rows. */
TFLM_BINARY_OP(tflm_op_maximum, TFLM_BUILTIN_MAXIMUM, tflm_maximum_rows, tflm_binary_t, 0, 1,
               NULL);
TFLM_BINARY_OP(tflm_op_minimum, TFLM_BUILTIN_MINIMUM, tflm_minimum_rows, tflm_binary_t, 0, 1,
               NULL);
