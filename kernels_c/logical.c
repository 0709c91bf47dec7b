/* tflm-op: LOGICAL_AND tflm_op_logical_and types: bool */
/* tflm-op: LOGICAL_OR tflm_op_logical_or types: bool */
/* tflm-op: LOGICAL_NOT tflm_op_logical_not types: bool */
/* LOGICAL_AND and LOGICAL_OR of two bool tensors with numpy-style broadcasting (up to 6-D),
 * and LOGICAL_NOT of one: outputs are stored as 0 or 1, as TFLM stores bool; any nonzero
 * input byte counts as true. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_elementwise.h"
#include "tflm_kernel.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  tflm_broadcast_t shape;
  int32_t is_or;  /* 1: LOGICAL_OR, 0: LOGICAL_AND */
} tflm_logical_params_t;

static tflm_status_t tflm_logical_prepare(tflm_context_t *ctx, tflm_node_t *node,
                                          int32_t is_or) {
  tflm_tensor_t in[2], out;
  tflm_logical_params_t *p;
  tflm_status_t status;
  p = (tflm_logical_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  status = tflm_elementwise_prepare(ctx, node, 2, in, &out, &p->shape);
  if (status != TFLM_OK) return status;
  TFLM_KERNEL_CHECK(ctx, node,
                    in[0].type == TFLM_TYPE_BOOL && in[1].type == TFLM_TYPE_BOOL &&
                        out.type == TFLM_TYPE_BOOL,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p->is_or = is_or;
  node->user_data = p;
  return TFLM_OK;
}

static void tflm_logical_row(const void *params, const void *const *in, const int32_t *step,
                             void *out, int32_t n) {
  const tflm_logical_params_t *p = (const tflm_logical_params_t *)params;
  const uint8_t *x = (const uint8_t *)in[0];
  const uint8_t *y = (const uint8_t *)in[1];
  uint8_t *z = (uint8_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    const int32_t a = x[i * step[0]] != 0, b = y[i * step[1]] != 0;
    z[i] = (uint8_t)(p->is_or ? (a || b) : (a && b));
  }
}

static tflm_status_t tflm_logical_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_logical_params_t *p = (const tflm_logical_params_t *)node->user_data;
  const void *in[2];
  const int32_t sizes[2] = {1, 1};
  void *out = tflm_node_output_data(ctx, node, 0);
  in[0] = tflm_node_input_data(ctx, node, 0);
  in[1] = tflm_node_input_data(ctx, node, 1);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in[0] != NULL && in[1] != NULL && out != NULL,
                    TFLM_ERR_NOT_READY);
  tflm_broadcast_run(&p->shape, p, 2, in, sizes, out, 1, tflm_logical_row);
  return TFLM_OK;
}

static tflm_status_t tflm_logical_and_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_logical_prepare(ctx, node, 0);
}

static tflm_status_t tflm_logical_or_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return tflm_logical_prepare(ctx, node, 1);
}

static tflm_status_t tflm_logical_not_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 1, TFLM_TYPE_BIT(BOOL), TFLM_IO_SAME_COUNT,
                                     &in, &out));
  return TFLM_OK;
}

static tflm_status_t tflm_logical_not_eval(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t out;
  const uint8_t *x = (const uint8_t *)tflm_node_input_data(ctx, node, 0);
  int32_t i;
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, &out) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, x != NULL && out.data != NULL, TFLM_ERR_NOT_READY);
  for (i = 0; i < out.bytes; ++i) ((uint8_t *)out.data)[i] = (uint8_t)(x[i] == 0);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_logical_and = {
    NULL, TFLM_BUILTIN_LOGICAL_AND, NULL, tflm_logical_and_prepare,
    tflm_logical_eval, NULL, NULL};
const tflm_registration_t tflm_op_logical_or = {
    NULL, TFLM_BUILTIN_LOGICAL_OR, NULL, tflm_logical_or_prepare,
    tflm_logical_eval, NULL, NULL};
const tflm_registration_t tflm_op_logical_not = {
    NULL, TFLM_BUILTIN_LOGICAL_NOT, NULL, tflm_logical_not_prepare,
    tflm_logical_not_eval, NULL, NULL};
