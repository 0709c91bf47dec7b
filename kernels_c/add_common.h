/* Shared prepare of ADD (no tag replaces add_common.c, so a tag's add.c only carries the hot
 * loops); the reference loops are in add_reference.c. */
#ifndef TFLM_ADD_COMMON_H
#define TFLM_ADD_COMMON_H

#include <stdint.h>

#include "tflm_elementwise.h"
#include "tflm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Persistent op data: the binary helper's shape, types and clamp, and the rescaling of the
 * quantised sum (the same record as SUB's). */
typedef tflm_binary_sum_t tflm_add_params_t;

/* Validates the node, computes the broadcast layout and TFLM's quantised parameters, and
 * stores a tflm_add_params_t in node->user_data. */
tflm_status_t tflm_add_prepare(tflm_context_t *ctx, tflm_node_t *node);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_ADD_COMMON_H */
