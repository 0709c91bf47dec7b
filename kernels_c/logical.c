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

/* Any nonzero byte is true; the output is 0 or 1. */
#define TFLM_LOGICAL_NOT(x) ((x) == 0)

TFLM_MAP_OP(tflm_op_logical_not, TFLM_BUILTIN_LOGICAL_NOT, BOOL, uint8_t, uint8_t,
            TFLM_LOGICAL_NOT);
