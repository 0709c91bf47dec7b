/* tflm-op: EMBEDDING_LOOKUP tflm_op_embedding_lookup types: float32,int8 */
/* (The marker's type is the ids' dtype: the generator's support check takes the first
 * non-constant input as the activation.  The tables are checked in prepare.) */
/* EMBEDDING_LOOKUP: input 0 is a 1-D int32 list of row ids, input 1 the table `value`
 * (rows x ...); output row i is table row ids[i].  An id outside the table fails eval, as
 * in TFLM.  Types as TFLM takes them:
 *   float32 table -> float32 output: rows copied;
 *   int8 table -> int8 output: stored values copied (no requantisation, like TFLM);
 *   int8 table -> float32 output (hybrid): value * scale in float.  TFLM requires a zero
 *   zero point and uses the table's first scale for every row, even when the table
 *   carries one scale per row; so does this kernel. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t rows;      /* table rows */
  int32_t row_size;  /* elements per row */
  int32_t lookups;   /* ids */
  int32_t hybrid;    /* int8 table, float32 output */
  int32_t element_size;
  float scale;       /* hybrid: the table's first scale */
} tflm_embedding_lookup_params_t;

static tflm_status_t embedding_lookup_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t ids, value, out;
  tflm_embedding_lookup_params_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, 0, TFLM_IO_ANY_SHAPE, &ids, &out));
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 1, &value) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, ids.type == TFLM_TYPE_INT32, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node,
                    (value.type == TFLM_TYPE_FLOAT32 && out.type == TFLM_TYPE_FLOAT32) ||
                        (value.type == TFLM_TYPE_INT8 &&
                         (out.type == TFLM_TYPE_INT8 || out.type == TFLM_TYPE_FLOAT32)),
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, ids.ndims == 1 && value.ndims >= 2, TFLM_ERR_BAD_SHAPE);
  p = (tflm_embedding_lookup_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->rows = value.dims[0];
  p->row_size = tflm_layout_product(value.dims, 1, value.ndims);
  p->lookups = ids.dims[0];
  p->hybrid = value.type == TFLM_TYPE_INT8 && out.type == TFLM_TYPE_FLOAT32;
  p->element_size = tflm_type_size(value.type);
  p->scale = 0.0f;
  if (p->hybrid) {
    TFLM_KERNEL_CHECK(ctx, node, value.nscales >= 1 && tflm_tensor_zero_point(&value, 0) == 0,
                      TFLM_ERR_BAD_PARAMS);
    p->scale = tflm_tensor_scale(&value, 0);
  }
  TFLM_KERNEL_CHECK(ctx, node,
                    tflm_tensor_elements(&out) == p->lookups * p->row_size,
                    TFLM_ERR_BAD_SHAPE);
  node->user_data = p;
  return TFLM_OK;
}

static tflm_status_t embedding_lookup_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_embedding_lookup_params_t *p =
      (const tflm_embedding_lookup_params_t *)node->user_data;
  const int32_t *ids = (const int32_t *)tflm_node_input_data(ctx, node, 0);
  const uint8_t *value = (const uint8_t *)tflm_node_input_data(ctx, node, 1);
  uint8_t *out = (uint8_t *)tflm_node_output_data(ctx, node, 0);
  int32_t i, j;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && ids != NULL && value != NULL && out != NULL,
                    TFLM_ERR_NOT_READY);
  for (i = 0; i < p->lookups; ++i) {
    const int32_t row = ids[i];
    TFLM_KERNEL_CHECK(ctx, node, row >= 0 && row < p->rows, TFLM_ERROR);
    if (p->hybrid) {
      const int8_t *from = (const int8_t *)value + (ptrdiff_t)row * p->row_size;
      float *to = (float *)out + (ptrdiff_t)i * p->row_size;
      for (j = 0; j < p->row_size; ++j) to[j] = (float)from[j] * p->scale;
    } else {
      const int32_t bytes = p->row_size * p->element_size;
      tflm_layout_move(out + (ptrdiff_t)i * bytes, value + (ptrdiff_t)row * bytes, bytes);
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_embedding_lookup = {
    NULL, TFLM_BUILTIN_EMBEDDING_LOOKUP, NULL, embedding_lookup_prepare,
    embedding_lookup_eval, NULL, NULL};
