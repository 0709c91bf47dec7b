/* tflm-op: MIRROR_PAD tflm_op_mirror_pad types: float32,int8 */
/* MIRROR_PAD: the input padded by mirror images of itself.  paddings is a constant
 * [rank, 2] int32/int64 tensor (before, after per axis, up to six axes).  Output index o
 * of an axis of size n reads input index i = o - before, reflected when outside [0, n):
 * REFLECT (mode 0) excludes the edge (-1 -> 1, n -> n - 2), SYMMETRIC (mode 1) repeats it
 * (-1 -> 0, n -> n - 1).  Whole elements move; TFLM runs float32 and int8 only. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t element_size;                /* bytes per element */
  int32_t symmetric;                   /* 1: SYMMETRIC, 0: REFLECT */
  int32_t in_dims[TFLM_MAX_DIMS];      /* input shape, right-aligned with leading 1s */
  int32_t out_dims[TFLM_MAX_DIMS];     /* output shape, right-aligned */
  int32_t before[TFLM_MAX_DIMS];       /* padding before each axis */
  int32_t in_strides[TFLM_MAX_DIMS];   /* input element strides */
  int32_t out_elements;
} tflm_mirror_pad_params_t;

static tflm_status_t mirror_pad_fill(tflm_context_t *ctx, tflm_node_t *node,
                                     const tflm_tensor_t *in, const tflm_tensor_t *paddings,
                                     const tflm_tensor_t *out, tflm_mirror_pad_params_t *p) {
  const int32_t shift = TFLM_MAX_DIMS - in->ndims;
  int32_t k;
  for (k = 0; k < TFLM_MAX_DIMS; ++k) {
    p->in_dims[k] = p->out_dims[k] = 1;
    p->before[k] = 0;
  }
  for (k = 0; k < in->ndims; ++k) {
    const int32_t before = tflm_layout_read_index(paddings, 2 * k);
    const int32_t after = tflm_layout_read_index(paddings, 2 * k + 1);
    const int32_t limit = in->dims[k] - (p->symmetric ? 0 : 1);
    TFLM_KERNEL_CHECK(ctx, node, before >= 0 && after >= 0 && before <= limit && after <= limit,
                      TFLM_ERR_BAD_PARAMS);
    TFLM_KERNEL_CHECK(ctx, node,
                      (int64_t)out->dims[k] == (int64_t)before + in->dims[k] + after,
                      TFLM_ERR_BAD_SHAPE);
    p->in_dims[k + shift] = in->dims[k];
    p->out_dims[k + shift] = out->dims[k];
    p->before[k + shift] = before;
  }
  tflm_layout_strides(p->in_dims, TFLM_MAX_DIMS, p->in_strides);
  p->out_elements = tflm_tensor_elements(out);
  return TFLM_OK;
}

static tflm_status_t mirror_pad_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, paddings, out;
  tflm_mirror_pad_params_t *p;
  tflm_status_t status;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8),
                                     TFLM_IO_ANY_SHAPE, &in, &out));
  TFLM_KERNEL_TRY(tflm_node_constant_input(ctx, node, 1, TFLM_TYPE_BIT(INT32) | TFLM_TYPE_BIT(INT64), &paddings));
  TFLM_KERNEL_CHECK(ctx, node,
                    in.ndims == out.ndims && tflm_tensor_elements(&paddings) == 2 * in.ndims,
                    TFLM_ERR_BAD_SHAPE);
  p = (tflm_mirror_pad_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->element_size = tflm_type_size(in.type);
  p->symmetric = tflm_opt_int(node, TFLM_OPT_MIRROR_PAD_MODE, 0) == 1;
  status = mirror_pad_fill(ctx, node, &in, &paddings, &out, p);
  if (status != TFLM_OK) return status;
  node->user_data = p;
  return TFLM_OK;
}

/* Input index along one axis for output index o. */
static int32_t mirror_pad_source(const tflm_mirror_pad_params_t *p, int32_t k, int32_t o) {
  const int32_t i = o - p->before[k], n = p->in_dims[k];
  if (i < 0) return p->symmetric ? -i - 1 : -i;
  if (i >= n) return p->symmetric ? 2 * n - 1 - i : 2 * n - 2 - i;
  return i;
}

static tflm_status_t mirror_pad_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_mirror_pad_params_t *p = (const tflm_mirror_pad_params_t *)node->user_data;
  const uint8_t *in = (const uint8_t *)tflm_node_input_data(ctx, node, 0);
  uint8_t *out = (uint8_t *)tflm_node_output_data(ctx, node, 0);
  int32_t idx[TFLM_MAX_DIMS] = {0, 0, 0, 0, 0, 0};
  int32_t i, k, b;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  for (i = 0; i < p->out_elements; ++i) {
    int32_t at = 0;
    for (k = 0; k < TFLM_MAX_DIMS; ++k) at += mirror_pad_source(p, k, idx[k]) * p->in_strides[k];
    for (b = 0; b < p->element_size; ++b) {
      out[(ptrdiff_t)i * p->element_size + b] = in[(ptrdiff_t)at * p->element_size + b];
    }
    for (k = TFLM_MAX_DIMS - 1; k >= 0; --k) {
      if (++idx[k] < p->out_dims[k]) break;
      idx[k] = 0;
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_mirror_pad = {
    NULL, TFLM_BUILTIN_MIRROR_PAD, NULL, mirror_pad_prepare, mirror_pad_eval,
    NULL, NULL};
