/* tflm-op: RESHAPE tflm_op_reshape types: float32,int8,int16,int32,int64,uint8,uint32,bool */
/* RESHAPE: the output holds the input's bytes unchanged; only the shape differs, and the
 * output tensor's shape is taken as given (the optional shape input is not read).  When the
 * runtime aliases output to input there is nothing to do; otherwise the bytes are copied
 * with a loop that is safe even for overlapping buffers. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t bytes; /* size of input and output data */
} tflm_reshape_params_t;

static tflm_status_t tflm_reshape_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_reshape_params_t *p;
  TFLM_KERNEL_CHECK(ctx, node, node->inputs_count >= 1 && node->outputs_count == 1,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 0, &in) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, &out) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, in.type == out.type, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(&in) == tflm_tensor_elements(&out),
                    TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, in.bytes == out.bytes, TFLM_ERR_BAD_SHAPE);
  p = (tflm_reshape_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->bytes = in.bytes;
  node->user_data = p;
  return TFLM_OK;
}

/* memmove without libc: copies forward when the destination lies before the source. */
static void tflm_reshape_move(uint8_t *dst, const uint8_t *src, int32_t bytes) {
  int32_t i;
  if (dst < src) {
    for (i = 0; i < bytes; ++i) {
      dst[i] = src[i];
    }
  } else {
    for (i = bytes; i > 0; --i) {
      dst[i - 1] = src[i - 1];
    }
  }
}

static tflm_status_t tflm_reshape_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_reshape_params_t *p = (const tflm_reshape_params_t *)node->user_data;
  const uint8_t *in = (const uint8_t *)tflm_node_input_data(ctx, node, 0);
  uint8_t *out = (uint8_t *)tflm_node_output_data(ctx, node, 0);
  if (in != out) {
    tflm_reshape_move(out, in, p->bytes);
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_reshape = {
    NULL, TFLM_BUILTIN_RESHAPE, NULL, tflm_reshape_prepare, tflm_reshape_eval,
    NULL, NULL};
