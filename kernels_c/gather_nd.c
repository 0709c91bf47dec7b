/* tflm-op: GATHER_ND tflm_op_gather_nd types: float32,int8 */
/* GATHER_ND: output = indices.shape[:-1] + params.shape[depth:], depth = indices.shape[-1];
 * each row of `depth` int32 indices selects one slice of params, copied whole.  An index
 * outside its axis makes eval fail, as in TFLM.  TFLM takes float32 and int8 params only. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t depth;                        /* indices per slice (indices' last dim) */
  int32_t slices;                       /* rows of indices */
  int32_t slice_bytes;                  /* bytes of one gathered slice */
  int32_t dims[TFLM_MAX_DIMS];          /* params dims[0 .. depth-1] */
  int32_t strides[TFLM_MAX_DIMS];       /* params strides (in slices) of those axes */
} tflm_gather_nd_params_t;

static tflm_status_t gather_nd_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t params, indices, out;
  tflm_gather_nd_params_t *p;
  int32_t k, stride = 1;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8),
                                     TFLM_IO_ANY_SHAPE, &params, &out));
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 1, &indices) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, indices.type == TFLM_TYPE_INT32, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, indices.ndims >= 1, TFLM_ERR_BAD_SHAPE);
  p = (tflm_gather_nd_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->depth = indices.dims[indices.ndims - 1];
  TFLM_KERNEL_CHECK(ctx, node, p->depth >= 1 && p->depth <= params.ndims, TFLM_ERR_BAD_SHAPE);
  p->slices = tflm_layout_product(indices.dims, 0, indices.ndims - 1);
  p->slice_bytes = tflm_layout_product(params.dims, p->depth, params.ndims) *
                   tflm_type_size(params.type);
  for (k = p->depth - 1; k >= 0; --k) {
    p->dims[k] = params.dims[k];
    p->strides[k] = stride;
    stride *= params.dims[k];
  }
  TFLM_KERNEL_CHECK(ctx, node, p->slices * p->slice_bytes == out.bytes, TFLM_ERR_BAD_SHAPE);
  node->user_data = p;
  return TFLM_OK;
}

static tflm_status_t gather_nd_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_gather_nd_params_t *p = (const tflm_gather_nd_params_t *)node->user_data;
  const uint8_t *params = (const uint8_t *)tflm_node_input_data(ctx, node, 0);
  const int32_t *indices = (const int32_t *)tflm_node_input_data(ctx, node, 1);
  uint8_t *out = (uint8_t *)tflm_node_output_data(ctx, node, 0);
  int32_t s, k, b;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && params != NULL && indices != NULL && out != NULL,
                    TFLM_ERR_NOT_READY);
  for (s = 0; s < p->slices; ++s, out += p->slice_bytes) {
    int32_t from = 0;
    for (k = 0; k < p->depth; ++k) {
      const int32_t index = indices[s * p->depth + k];
      TFLM_KERNEL_CHECK(ctx, node, index >= 0 && index < p->dims[k], TFLM_ERROR);
      from += index * p->strides[k];
    }
    for (b = 0; b < p->slice_bytes; ++b) out[b] = params[(ptrdiff_t)from * p->slice_bytes + b];
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_gather_nd = {
    NULL, TFLM_BUILTIN_GATHER_ND, NULL, gather_nd_prepare, gather_nd_eval, NULL,
    NULL};
