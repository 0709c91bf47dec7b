/* tflm-op: SQUEEZE tflm_op_squeeze types: float32,int8,int16,int32,int64,uint8,uint32,bool */
/* tflm-op: EXPAND_DIMS tflm_op_expand_dims types: float32,int8,int16 */
/* tflm-op: SHAPE tflm_op_shape types: float32,int8,int16,int32,int64,uint8,uint32,bool */
/* SQUEEZE and EXPAND_DIMS change only the shape: the bytes are copied (or left alone when
 * the runtime aliased output and input), the output tensor's shape is taken as given.
 * SHAPE writes the input's dimensions as int32 or int64 (the output tensor's type). */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t bytes;                /* SQUEEZE / EXPAND_DIMS: bytes to copy */
  int32_t out_type;             /* SHAPE: TFLM_TYPE_INT32 or TFLM_TYPE_INT64 */
  int32_t ndims;                /* SHAPE: number of dims written */
  int32_t dims[TFLM_MAX_DIMS];  /* SHAPE: the input's dims */
} tflm_shape_params_t;

static tflm_shape_params_t *shape_alloc(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_shape_params_t *p = (tflm_shape_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  int32_t i;
  if (p != NULL) {
    p->bytes = 0;
    p->out_type = 0;
    p->ndims = 0;
    for (i = 0; i < TFLM_MAX_DIMS; ++i) p->dims[i] = 0;
    node->user_data = p;
  }
  return p;
}

/* SQUEEZE has one input; EXPAND_DIMS a second (the axis), which the output shape reflects. */
static tflm_status_t same_bytes_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_shape_params_t *p;
  TFLM_KERNEL_CHECK(ctx, node, node->inputs_count >= 1 && node->outputs_count == 1,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 0, &in) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, &out) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, in.type == out.type, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, in.bytes == out.bytes, TFLM_ERR_BAD_SHAPE);
  p = shape_alloc(ctx, node);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->bytes = in.bytes;
  return TFLM_OK;
}

static tflm_status_t same_bytes_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_shape_params_t *p = (const tflm_shape_params_t *)node->user_data;
  const uint8_t *in = (const uint8_t *)tflm_node_input_data(ctx, node, 0);
  uint8_t *out = (uint8_t *)tflm_node_output_data(ctx, node, 0);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  tflm_layout_move(out, in, p->bytes);
  return TFLM_OK;
}

static tflm_status_t shape_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_shape_params_t *p;
  int32_t i;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 1, 0, TFLM_IO_ANY_SHAPE, &in, &out));
  TFLM_KERNEL_CHECK(ctx, node, out.type == TFLM_TYPE_INT32 || out.type == TFLM_TYPE_INT64,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(&out) == in.ndims, TFLM_ERR_BAD_SHAPE);
  p = shape_alloc(ctx, node);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->out_type = out.type;
  p->ndims = in.ndims;
  for (i = 0; i < in.ndims; ++i) p->dims[i] = in.dims[i];
  return TFLM_OK;
}

static tflm_status_t shape_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_shape_params_t *p = (const tflm_shape_params_t *)node->user_data;
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t i;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && (out != NULL || p->ndims == 0), TFLM_ERR_NOT_READY);
  for (i = 0; i < p->ndims; ++i) {
    if (p->out_type == TFLM_TYPE_INT64) {
      ((int64_t *)out)[i] = p->dims[i];
    } else {
      ((int32_t *)out)[i] = p->dims[i];
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_squeeze = {
    NULL, TFLM_BUILTIN_SQUEEZE, NULL, same_bytes_prepare, same_bytes_eval, NULL,
    NULL};

const tflm_registration_t tflm_op_expand_dims = {
    NULL, TFLM_BUILTIN_EXPAND_DIMS, NULL, same_bytes_prepare, same_bytes_eval, NULL,
    NULL};

const tflm_registration_t tflm_op_shape = {
    NULL, TFLM_BUILTIN_SHAPE, NULL, shape_prepare, shape_eval, NULL, NULL};
