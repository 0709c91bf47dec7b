/* tflm-op: EQUAL tflm_op_equal types: float32,int8,int32,int64,bool */
/* tflm-op: NOT_EQUAL tflm_op_not_equal types: float32,int8,int32,int64,bool */
/* tflm-op: LESS tflm_op_less types: float32,int8,int32,int64 */
/* tflm-op: LESS_EQUAL tflm_op_less_equal types: float32,int8,int32,int64 */
/* tflm-op: GREATER tflm_op_greater types: float32,int8,int32,int64 */
/* tflm-op: GREATER_EQUAL tflm_op_greater_equal types: float32,int8,int32,int64 */
/* Comparisons with numpy-style broadcasting and a bool output, bit-exact with TFLM's
 * reference kernels.  Stored values are compared as they are, except int8: both inputs are
 * moved to a common scale first, (x - zp) * 2^8 times each input's scale as a Q31
 * multiplier (TFLM's ComparisonWithScaling), so inputs of different quantisation compare
 * by real value, rounded alike. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_elementwise.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

enum { TFLM_CMP_EQ, TFLM_CMP_NE, TFLM_CMP_LT, TFLM_CMP_LE, TFLM_CMP_GT, TFLM_CMP_GE };

/* Persistent op data (fixed-width fields only). */
typedef struct {
  tflm_binary_t binary;             /* shape and the inputs' type (the output is bool) */
  int32_t relation;                 /* TFLM_CMP_* */
  int32_t input1_offset, input2_offset; /* -zp (int8) */
  int32_t input1_multiplier, input1_shift; /* int8: scale1 as Q31 and shift */
  int32_t input2_multiplier, input2_shift;
} tflm_cmp_params_t;

/* The relation on values already brought to one type and scale. */
#define TFLM_CMP_APPLY(relation, a, b)                                                    \
  ((relation) == TFLM_CMP_EQ   ? (a) == (b)                                               \
   : (relation) == TFLM_CMP_NE ? (a) != (b)                                               \
   : (relation) == TFLM_CMP_LT ? (a) < (b)                                                \
   : (relation) == TFLM_CMP_LE ? (a) <= (b)                                               \
   : (relation) == TFLM_CMP_GT ? (a) > (b)                                                \
                               : (a) >= (b))

/* The element function of the stored types compared as they are. */
#define TFLM_CMP_VALUE(p, a, b) TFLM_CMP_APPLY((p)->relation, a, b)

/* int8: both inputs moved to a common scale first (TFLM's ComparisonWithScaling). */
static int32_t tflm_cmp_int8_value(const tflm_cmp_params_t *p, int32_t a, int32_t b) {
  const int32_t x = tflm_multiply_by_quantized_multiplier((a + p->input1_offset) * (1 << 8),
                                                          p->input1_multiplier, p->input1_shift);
  const int32_t y = tflm_multiply_by_quantized_multiplier((b + p->input2_offset) * (1 << 8),
                                                          p->input2_multiplier, p->input2_shift);
  return TFLM_CMP_APPLY(p->relation, x, y);
}

static TFLM_BINARY_ROW_TO(tflm_cmp_float, tflm_cmp_params_t, float, float, uint8_t,
                          TFLM_CMP_VALUE)
static TFLM_BINARY_ROW_TO(tflm_cmp_int8, tflm_cmp_params_t, int8_t, int8_t, uint8_t,
                          tflm_cmp_int8_value)
static TFLM_BINARY_ROW_TO(tflm_cmp_int32, tflm_cmp_params_t, int32_t, int32_t, uint8_t,
                          TFLM_CMP_VALUE)
static TFLM_BINARY_ROW_TO(tflm_cmp_int64, tflm_cmp_params_t, int64_t, int64_t, uint8_t,
                          TFLM_CMP_VALUE)
static TFLM_BINARY_ROW_TO(tflm_cmp_bool, tflm_cmp_params_t, uint8_t, uint8_t, uint8_t,
                          TFLM_CMP_VALUE)

/* TFLM has no int16 comparisons, and orders no bools: EQUAL and NOT_EQUAL take them. */
static const tflm_binary_rows_t tflm_cmp_order_rows = {
    tflm_cmp_float, tflm_cmp_int8, NULL, tflm_cmp_int32, tflm_cmp_int64, NULL, 1};
static const tflm_binary_rows_t tflm_cmp_equality_rows = {
    tflm_cmp_float, tflm_cmp_int8, NULL, tflm_cmp_int32, tflm_cmp_int64, tflm_cmp_bool, 1};

static tflm_status_t tflm_cmp_prepare(tflm_context_t *ctx, tflm_node_t *node,
                                      const tflm_binary_rows_t *rows, int32_t relation) {
  tflm_tensor_t in[2], out;
  void *data;
  tflm_cmp_params_t *p;
  TFLM_KERNEL_TRY(tflm_binary_prepare(ctx, node, sizeof(*p), rows, 0, 1, in, &out, &data));
  p = (tflm_cmp_params_t *)data;
  p->relation = relation;
  if (p->binary.type == TFLM_TYPE_INT8) {
    /* QuantizeMultiplierSmallerThanOneExp: the scales themselves must be below one. */
    TFLM_KERNEL_CHECK(ctx, node, in[0].scale < 1.0f && in[1].scale < 1.0f, TFLM_ERR_BAD_PARAMS);
    p->input1_offset = -in[0].zero_point;
    p->input2_offset = -in[1].zero_point;
    tflm_quantize_multiplier((double)in[0].scale, &p->input1_multiplier, &p->input1_shift);
    tflm_quantize_multiplier((double)in[1].scale, &p->input2_multiplier, &p->input2_shift);
  }
  return TFLM_OK;
}

/* One prepare and eval per op (the registration carries no argument). */
#define TFLM_CMP_OP(name, code, rows, relation)                                        \
  static tflm_status_t tflm_##name##_prepare(tflm_context_t *ctx, tflm_node_t *node) { \
    return tflm_cmp_prepare(ctx, node, &rows, relation);                               \
  }                                                                                    \
  static tflm_status_t tflm_##name##_eval(tflm_context_t *ctx, tflm_node_t *node) {    \
    return tflm_binary_eval(ctx, node, &rows);                                         \
  }                                                                                    \
  const tflm_registration_t tflm_op_##name = {                                         \
      NULL, code, NULL, tflm_##name##_prepare, tflm_##name##_eval, NULL, NULL};

TFLM_CMP_OP(equal, TFLM_BUILTIN_EQUAL, tflm_cmp_equality_rows, TFLM_CMP_EQ)
TFLM_CMP_OP(not_equal, TFLM_BUILTIN_NOT_EQUAL, tflm_cmp_equality_rows, TFLM_CMP_NE)
TFLM_CMP_OP(less, TFLM_BUILTIN_LESS, tflm_cmp_order_rows, TFLM_CMP_LT)
TFLM_CMP_OP(less_equal, TFLM_BUILTIN_LESS_EQUAL, tflm_cmp_order_rows, TFLM_CMP_LE)
TFLM_CMP_OP(greater, TFLM_BUILTIN_GREATER, tflm_cmp_order_rows, TFLM_CMP_GT)
TFLM_CMP_OP(greater_equal, TFLM_BUILTIN_GREATER_EQUAL, tflm_cmp_order_rows, TFLM_CMP_GE)
