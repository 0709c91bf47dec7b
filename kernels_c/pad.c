/* tflm-op: PAD tflm_op_pad types: float32,int8,int16,int32 */
/* tflm-op: PADV2 tflm_op_padv2 types: float32,int8,int16,int32 */
/* PAD and PADV2: the output is the input surrounded by a constant.  paddings is a constant
 * [rank, 2] int32/int64 tensor (before, after per axis; up to six axes).  The constant is,
 * as in TFLM: PADV2's scalar constant_values input when given; otherwise the output zero
 * point for int8 and zero for every other type (int16 is symmetric). */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  tflm_layout_view_t view;  /* where the input lands in the output */
  int32_t out_elements;     /* elements of the output */
  int32_t has_constant;     /* 1: read the pad value from input 2 at eval */
  uint8_t value[8];         /* pad value bytes (element_size of them) when has_constant 0 */
} tflm_pad_params_t;

static tflm_status_t pad_views(tflm_context_t *ctx, tflm_node_t *node, tflm_tensor_t *in,
                               tflm_tensor_t *paddings, tflm_tensor_t *out) {
  TFLM_KERNEL_CHECK(ctx, node, node->inputs_count >= 2 && node->inputs_count <= 3 &&
                                   node->outputs_count == 1,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 0, in) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_TRY(tflm_node_constant_input(ctx, node, 1, TFLM_TYPE_BIT(INT32) | TFLM_TYPE_BIT(INT64), paddings));
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, out) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, in->type == out->type && tflm_type_size(in->type) > 0,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(paddings) == 2 * in->ndims &&
                                   out->ndims == in->ndims,
                    TFLM_ERR_BAD_SHAPE);
  return TFLM_OK;
}

/* The default pad value: the int8 output zero point, else all-zero bytes. */
static void pad_default_value(const tflm_tensor_t *out, tflm_pad_params_t *p) {
  int32_t i;
  for (i = 0; i < 8; ++i) p->value[i] = 0;
  if (out->type == TFLM_TYPE_INT8) p->value[0] = (uint8_t)(int8_t)out->zero_point;
}

static tflm_status_t pad_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, paddings, out;
  tflm_pad_params_t *p;
  int32_t in_strides[TFLM_MAX_DIMS];
  int32_t k;
  tflm_status_t status = pad_views(ctx, node, &in, &paddings, &out);
  if (status != TFLM_OK) return status;
  p = (tflm_pad_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  tflm_layout_view_init(&p->view, tflm_type_size(in.type));
  tflm_layout_strides(in.dims, in.ndims, in_strides);
  tflm_layout_strides(out.dims, out.ndims, p->view.out_strides);
  for (k = 0; k < in.ndims; ++k) {
    const int32_t before = tflm_layout_read_index(&paddings, 2 * k);
    const int32_t after = tflm_layout_read_index(&paddings, 2 * k + 1);
    TFLM_KERNEL_CHECK(ctx, node, before >= 0 && after >= 0, TFLM_ERR_BAD_PARAMS);
    /* In 64 bits: crafted paddings near 2^31 would overflow the int32 sum. */
    TFLM_KERNEL_CHECK(ctx, node, (int64_t)out.dims[k] == (int64_t)before + in.dims[k] + after,
                      TFLM_ERR_BAD_SHAPE);
    p->view.dims[k] = in.dims[k];
    p->view.in_strides[k] = in_strides[k];
    p->view.out_base += before * p->view.out_strides[k];
  }
  tflm_layout_view_align(&p->view, in.ndims);
  p->out_elements = tflm_tensor_elements(&out);
  p->has_constant = 0;
  pad_default_value(&out, p);
  if (node->inputs_count == 3 && tflm_node_input_data(ctx, node, 2) != NULL) {
    tflm_tensor_t constant;
    TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 2, &constant) == TFLM_OK, TFLM_ERROR);
    TFLM_KERNEL_CHECK(ctx, node, constant.type == in.type && tflm_tensor_elements(&constant) == 1,
                      TFLM_ERR_BAD_PARAMS);
    p->has_constant = 1;
  }
  node->user_data = p;
  return TFLM_OK;
}

static tflm_status_t pad_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_pad_params_t *p = (const tflm_pad_params_t *)node->user_data;
  const uint8_t *in = (const uint8_t *)tflm_node_input_data(ctx, node, 0);
  uint8_t *out = (uint8_t *)tflm_node_output_data(ctx, node, 0);
  const uint8_t *value = p != NULL ? p->value : NULL;
  const int32_t size = p != NULL ? p->view.element_size : 0;
  int32_t i, b;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  if (p->has_constant) value = (const uint8_t *)tflm_node_input_data(ctx, node, 2);
  for (i = 0; i < p->out_elements; ++i) {
    for (b = 0; b < size; ++b) out[(ptrdiff_t)i * size + b] = value[b];
  }
  tflm_layout_view_copy(&p->view, in, out);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_pad = {
    NULL, TFLM_BUILTIN_PAD, NULL, pad_prepare, pad_eval, NULL, NULL};

const tflm_registration_t tflm_op_padv2 = {
    NULL, TFLM_BUILTIN_PADV2, NULL, pad_prepare, pad_eval, NULL, NULL};
