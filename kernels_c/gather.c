/* tflm-op: GATHER tflm_op_gather types: float32,int8 */
/* GATHER: output = params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis+1:],
 * element by element as TFLM's reference: for each batch, outer index and coordinate, one
 * run of `inner` elements is copied from params row indices[coordinate].  Indices are int32
 * or int64; an index outside [0, axis size) makes eval fail, as in TFLM. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t batches;      /* product of params dims before batch_dims */
  int32_t outer;        /* product of params dims from batch_dims to axis */
  int32_t axis_size;    /* params dims[axis] */
  int32_t coords;       /* indices per batch: product of indices dims from batch_dims */
  int32_t inner_bytes;  /* bytes of params after axis (one gathered run) */
  int32_t index_type;   /* TFLM_TYPE_INT32 or TFLM_TYPE_INT64 */
} tflm_gather_params_t;

static tflm_status_t gather_fill(tflm_context_t *ctx, tflm_node_t *node,
                                 const tflm_tensor_t *params, const tflm_tensor_t *indices,
                                 tflm_gather_params_t *p) {
  int32_t axis = tflm_opt_int(node, TFLM_OPT_GATHER_AXIS, 0);
  int32_t batch_dims = tflm_opt_int(node, TFLM_OPT_GATHER_BATCH_DIMS, 0);
  int32_t k;
  if (axis < 0) axis += params->ndims;
  if (batch_dims < 0) batch_dims += indices->ndims;
  TFLM_KERNEL_CHECK(ctx, node, axis >= 0 && axis < params->ndims, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, batch_dims >= 0 && batch_dims <= axis &&
                                   batch_dims <= indices->ndims,
                    TFLM_ERR_BAD_PARAMS);
  for (k = 0; k < batch_dims; ++k) {
    TFLM_KERNEL_CHECK(ctx, node, params->dims[k] == indices->dims[k], TFLM_ERR_BAD_SHAPE);
  }
  p->batches = tflm_layout_product(params->dims, 0, batch_dims);
  p->outer = tflm_layout_product(params->dims, batch_dims, axis);
  p->axis_size = params->dims[axis];
  p->coords = tflm_layout_product(indices->dims, batch_dims, indices->ndims);
  p->inner_bytes = tflm_layout_product(params->dims, axis + 1, params->ndims) *
                   tflm_type_size(params->type);
  p->index_type = indices->type;
  return TFLM_OK;
}

static tflm_status_t gather_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t params, indices, out;
  tflm_gather_params_t *p;
  tflm_status_t status;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, TFLM_TYPES_SIZED, TFLM_IO_ANY_SHAPE,
                                     &params, &out));
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 1, &indices) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node,
                    indices.type == TFLM_TYPE_INT32 || indices.type == TFLM_TYPE_INT64,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p = (tflm_gather_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  status = gather_fill(ctx, node, &params, &indices, p);
  if (status != TFLM_OK) return status;
  TFLM_KERNEL_CHECK(ctx, node, p->batches * p->outer * p->coords * p->inner_bytes == out.bytes,
                    TFLM_ERR_BAD_SHAPE);
  node->user_data = p;
  return TFLM_OK;
}

static int32_t gather_index(const tflm_gather_params_t *p, const void *indices, int32_t i) {
  if (p->index_type == TFLM_TYPE_INT64) {
    const int64_t v = ((const int64_t *)indices)[i];
    return v < INT32_MIN || v > INT32_MAX ? -1 : (int32_t)v;
  }
  return ((const int32_t *)indices)[i];
}

static tflm_status_t gather_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_gather_params_t *p = (const tflm_gather_params_t *)node->user_data;
  const uint8_t *params = (const uint8_t *)tflm_node_input_data(ctx, node, 0);
  const void *indices = tflm_node_input_data(ctx, node, 1);
  uint8_t *out = (uint8_t *)tflm_node_output_data(ctx, node, 0);
  int32_t b, o, i;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_NOT_READY);
  if (p->inner_bytes == 0 || p->coords == 0) return TFLM_OK;
  TFLM_KERNEL_CHECK(ctx, node, params != NULL && indices != NULL && out != NULL,
                    TFLM_ERR_NOT_READY);
  for (b = 0; b < p->batches; ++b) {
    for (o = 0; o < p->outer; ++o) {
      const int32_t row = b * p->outer + o;
      for (i = 0; i < p->coords; ++i) {
        const int32_t from = gather_index(p, indices, b * p->coords + i);
        TFLM_KERNEL_CHECK(ctx, node, from >= 0 && from < p->axis_size, TFLM_ERR_BAD_INDEX);
        tflm_layout_move(out + ((ptrdiff_t)row * p->coords + i) * p->inner_bytes,
                         params + ((ptrdiff_t)row * p->axis_size + from) * p->inner_bytes,
                         p->inner_bytes);
      }
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_gather = {
    NULL, TFLM_BUILTIN_GATHER, NULL, gather_prepare, gather_eval, NULL, NULL};
