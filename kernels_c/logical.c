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

/* Any nonzero input byte counts as true; the output is 0 or 1. */
#define TFLM_LOGICAL_AND(p, a, b) ((void)(p), (a) != 0 && (b) != 0)
#define TFLM_LOGICAL_OR(p, a, b) ((void)(p), (a) != 0 || (b) != 0)

static TFLM_BINARY_ROW(tflm_logical_and_row, tflm_binary_t, uint8_t, uint8_t, TFLM_LOGICAL_AND)
static TFLM_BINARY_ROW(tflm_logical_or_row, tflm_binary_t, uint8_t, uint8_t, TFLM_LOGICAL_OR)

static const tflm_binary_rows_t tflm_logical_and_rows = {
    NULL, NULL, NULL, NULL, NULL, tflm_logical_and_row, 1};
static const tflm_binary_rows_t tflm_logical_or_rows = {
    NULL, NULL, NULL, NULL, NULL, tflm_logical_or_row, 1};
TFLM_BINARY_OP(tflm_op_logical_and, TFLM_BUILTIN_LOGICAL_AND, tflm_logical_and_rows,
               tflm_binary_t, 0, 1, NULL);
TFLM_BINARY_OP(tflm_op_logical_or, TFLM_BUILTIN_LOGICAL_OR, tflm_logical_or_rows,
               tflm_binary_t, 0, 1, NULL);

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

const tflm_registration_t tflm_op_logical_not = {
    NULL, TFLM_BUILTIN_LOGICAL_NOT, NULL, tflm_logical_not_prepare,
    tflm_logical_not_eval, NULL, NULL};
