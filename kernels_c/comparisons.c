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
  tflm_broadcast_t shape;
  int32_t type;                     /* TFLM_TYPE_* of the inputs */
  int32_t relation;                 /* TFLM_CMP_* */
  int32_t input1_offset, input2_offset; /* -zp (int8) */
  int32_t input1_multiplier, input1_shift; /* int8: scale1 as Q31 and shift */
  int32_t input2_multiplier, input2_shift;
} tflm_cmp_params_t;

static int32_t tflm_cmp_type_ok(int32_t relation, int32_t type) {
  if (type == TFLM_TYPE_BOOL) {
    return relation == TFLM_CMP_EQ || relation == TFLM_CMP_NE;
  }
  /* TFLM has no int16 comparisons. */
  return type == TFLM_TYPE_FLOAT32 || type == TFLM_TYPE_INT8 || type == TFLM_TYPE_INT32 ||
         type == TFLM_TYPE_INT64;
}

static tflm_status_t tflm_cmp_prepare(tflm_context_t *ctx, tflm_node_t *node,
                                      int32_t relation) {
  tflm_tensor_t in[2], out;
  tflm_cmp_params_t *p;
  tflm_status_t status;
  p = (tflm_cmp_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  status = tflm_elementwise_prepare(ctx, node, 2, in, &out, &p->shape);
  if (status != TFLM_OK) {
    return status;
  }
  TFLM_KERNEL_CHECK(ctx, node, in[0].type == in[1].type && out.type == TFLM_TYPE_BOOL,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_cmp_type_ok(relation, in[0].type),
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p->type = in[0].type;
  p->relation = relation;
  node->user_data = p;
  if (p->type == TFLM_TYPE_INT8) {
    /* QuantizeMultiplierSmallerThanOneExp: the scales themselves must be below one. */
    TFLM_KERNEL_CHECK(ctx, node, in[0].scale < 1.0f && in[1].scale < 1.0f, TFLM_ERR_BAD_PARAMS);
    p->input1_offset = -in[0].zero_point;
    p->input2_offset = -in[1].zero_point;
    tflm_quantize_multiplier((double)in[0].scale, &p->input1_multiplier, &p->input1_shift);
    tflm_quantize_multiplier((double)in[1].scale, &p->input2_multiplier, &p->input2_shift);
  }
  return TFLM_OK;
}

/* The relation on values already brought to one type and scale. */
#define TFLM_CMP_APPLY(relation, a, b)                                                    \
  ((relation) == TFLM_CMP_EQ   ? (a) == (b)                                               \
   : (relation) == TFLM_CMP_NE ? (a) != (b)                                               \
   : (relation) == TFLM_CMP_LT ? (a) < (b)                                                \
   : (relation) == TFLM_CMP_LE ? (a) <= (b)                                               \
   : (relation) == TFLM_CMP_GT ? (a) > (b)                                                \
                               : (a) >= (b))

/* One row function per stored type. */
#define TFLM_CMP_ROW(name, type)                                                          \
  static void name(const void *params, const void *const *in, const int32_t *step,        \
                   void *out, int32_t n) {                                                \
    const int32_t relation = ((const tflm_cmp_params_t *)params)->relation;              \
    const type *x = (const type *)in[0];                                                  \
    const type *y = (const type *)in[1];                                                  \
    uint8_t *z = (uint8_t *)out;                                                          \
    int32_t i;                                                                            \
    for (i = 0; i < n; ++i) {                                                             \
      z[i] = (uint8_t)TFLM_CMP_APPLY(relation, x[i * step[0]], y[i * step[1]]);           \
    }                                                                                     \
  }

TFLM_CMP_ROW(tflm_cmp_float, float)
TFLM_CMP_ROW(tflm_cmp_int32, int32_t)
TFLM_CMP_ROW(tflm_cmp_int64, int64_t)
TFLM_CMP_ROW(tflm_cmp_bool, uint8_t)

static void tflm_cmp_int8(const void *params, const void *const *in, const int32_t *step,
                          void *out, int32_t n) {
  const tflm_cmp_params_t *p = (const tflm_cmp_params_t *)params;
  const int8_t *x = (const int8_t *)in[0];
  const int8_t *y = (const int8_t *)in[1];
  uint8_t *z = (uint8_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    const int32_t a = tflm_multiply_by_quantized_multiplier(
        (x[i * step[0]] + p->input1_offset) * (1 << 8), p->input1_multiplier, p->input1_shift);
    const int32_t b = tflm_multiply_by_quantized_multiplier(
        (y[i * step[1]] + p->input2_offset) * (1 << 8), p->input2_multiplier, p->input2_shift);
    z[i] = (uint8_t)TFLM_CMP_APPLY(p->relation, a, b);
  }
}

static tflm_status_t tflm_cmp_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_cmp_params_t *p = (const tflm_cmp_params_t *)node->user_data;
  const void *in[2];
  int32_t sizes[2];
  tflm_elementwise_row_fn row = tflm_cmp_float;
  in[0] = tflm_node_input_data(ctx, node, 0);
  in[1] = tflm_node_input_data(ctx, node, 1);
  sizes[0] = sizes[1] = tflm_type_size(p->type);
  switch (p->type) {
    case TFLM_TYPE_INT8: row = tflm_cmp_int8; break;
    case TFLM_TYPE_INT32: row = tflm_cmp_int32; break;
    case TFLM_TYPE_INT64: row = tflm_cmp_int64; break;
    case TFLM_TYPE_BOOL: row = tflm_cmp_bool; break;
    default: break;
  }
  tflm_broadcast_run(&p->shape, p, 2, in, sizes, tflm_node_output_data(ctx, node, 0), 1, row);
  return TFLM_OK;
}

/* One prepare per op (the registration carries no argument). */
#define TFLM_CMP_OP(name, code, relation)                                             \
  static tflm_status_t tflm_##name##_prepare(tflm_context_t *ctx, tflm_node_t *node) { \
    return tflm_cmp_prepare(ctx, node, relation);                                     \
  }                                                                                   \
  const tflm_registration_t tflm_op_##name = {                                        \
      NULL, code, NULL, tflm_##name##_prepare, tflm_cmp_eval, NULL, NULL};

TFLM_CMP_OP(equal, TFLM_BUILTIN_EQUAL, TFLM_CMP_EQ)
TFLM_CMP_OP(not_equal, TFLM_BUILTIN_NOT_EQUAL, TFLM_CMP_NE)
TFLM_CMP_OP(less, TFLM_BUILTIN_LESS, TFLM_CMP_LT)
TFLM_CMP_OP(less_equal, TFLM_BUILTIN_LESS_EQUAL, TFLM_CMP_LE)
TFLM_CMP_OP(greater, TFLM_BUILTIN_GREATER, TFLM_CMP_GT)
TFLM_CMP_OP(greater_equal, TFLM_BUILTIN_GREATER_EQUAL, TFLM_CMP_GE)
