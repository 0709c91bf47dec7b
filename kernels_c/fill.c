/* tflm-op: FILL tflm_op_fill types: float32,int8,int32 */
/* tflm-op: ZEROS_LIKE tflm_op_zeros_like types: float32,int8,int32,int64 */
/* FILL and ZEROS_LIKE, bit-exact with TFLM's reference kernels.
 *   FILL(dims, value): every output element is a copy of the scalar value (the output shape
 *   comes from the model; a constant dims tensor must agree with it, as TFLM checks).
 *   ZEROS_LIKE(x): all-zero bytes of x's shape (0.0f, 0). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tflm_elementwise.h"
#include "tflm_kernel.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t count;     /* output elements */
  int32_t elem_size; /* bytes per element */
} tflm_fill_params_t;

/* A constant dims tensor (int32 or int64) must list the output's shape. */
static int32_t tflm_fill_dims_match(const tflm_tensor_t *dims, const tflm_tensor_t *out) {
  int32_t k;
  if (dims->data == NULL || !dims->is_constant) {
    return 1;
  }
  if (dims->ndims != 1 || dims->dims[0] != out->ndims) {
    return 0;
  }
  for (k = 0; k < out->ndims; ++k) {
    int64_t d;
    if (dims->type == TFLM_TYPE_INT32) {
      d = ((const int32_t *)dims->data)[k];
    } else if (dims->type == TFLM_TYPE_INT64) {
      d = ((const int64_t *)dims->data)[k];
    } else {
      return 0;
    }
    if (d != out->dims[k]) {
      return 0;
    }
  }
  return 1;
}

static tflm_status_t tflm_fill_begin(tflm_context_t *ctx, tflm_node_t *node, int32_t inputs,
                                     tflm_tensor_t *in, tflm_tensor_t *out) {
  tflm_fill_params_t *p;
  int32_t i;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, inputs, 0, TFLM_IO_ANY_SHAPE, in, out));
  for (i = 1; i < inputs; ++i) {
    TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, i, &in[i]) == TFLM_OK, TFLM_ERROR);
  }
  TFLM_KERNEL_CHECK(ctx, node, in[inputs - 1].type == out->type, TFLM_ERR_UNSUPPORTED_TYPE);
  p = (tflm_fill_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->count = tflm_tensor_elements(out);
  p->elem_size = tflm_type_size(out->type);
  TFLM_KERNEL_CHECK(ctx, node, p->elem_size > 0, TFLM_ERR_UNSUPPORTED_TYPE);
  node->user_data = p;
  return TFLM_OK;
}

static tflm_status_t tflm_fill_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in[2], out;
  tflm_status_t status = tflm_fill_begin(ctx, node, 2, in, &out);
  if (status != TFLM_OK) {
    return status;
  }
  TFLM_KERNEL_CHECK(ctx, node, in[1].ndims == 0, TFLM_ERR_BAD_SHAPE); /* scalar value */
  /* The value types TFLM's FILL accepts. */
  TFLM_KERNEL_CHECK(ctx, node,
                    out.type == TFLM_TYPE_FLOAT32 || out.type == TFLM_TYPE_INT8 ||
                        out.type == TFLM_TYPE_INT32,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_fill_dims_match(&in[0], &out), TFLM_ERR_BAD_SHAPE);
  return TFLM_OK;
}

static tflm_status_t tflm_fill_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_fill_params_t *p = (const tflm_fill_params_t *)node->user_data;
  const uint8_t *value = (const uint8_t *)tflm_node_input_data(ctx, node, 1);
  uint8_t *out = (uint8_t *)tflm_node_output_data(ctx, node, 0);
  int32_t i;
  for (i = 0; i < p->count; ++i) {
    memcpy(out + (size_t)i * (size_t)p->elem_size, value, (size_t)p->elem_size);
  }
  return TFLM_OK;
}

static tflm_status_t tflm_zeros_like_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_status_t status = tflm_fill_begin(ctx, node, 1, &in, &out);
  if (status != TFLM_OK) {
    return status;
  }
  TFLM_KERNEL_CHECK(ctx, node,
                    out.type == TFLM_TYPE_FLOAT32 || out.type == TFLM_TYPE_INT8 ||
                        out.type == TFLM_TYPE_INT32 || out.type == TFLM_TYPE_INT64,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(&in) == tflm_tensor_elements(&out),
                    TFLM_ERR_BAD_SHAPE);
  return TFLM_OK;
}

static tflm_status_t tflm_zeros_like_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_fill_params_t *p = (const tflm_fill_params_t *)node->user_data;
  memset(tflm_node_output_data(ctx, node, 0), 0, (size_t)p->count * (size_t)p->elem_size);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_fill = {
    NULL, TFLM_BUILTIN_FILL, NULL, tflm_fill_prepare, tflm_fill_eval, NULL, NULL};
const tflm_registration_t tflm_op_zeros_like = {
    NULL, TFLM_BUILTIN_ZEROS_LIKE, NULL, tflm_zeros_like_prepare,
    tflm_zeros_like_eval, NULL, NULL};
