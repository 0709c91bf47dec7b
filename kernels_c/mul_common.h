/* Shared prepare of MUL (no tag replaces mul_common.c, so a tag's mul.c only carries the hot
 * loops); the reference loops are in mul_reference.c. */
#ifndef TFLM_MUL_COMMON_H
#define TFLM_MUL_COMMON_H

#include <stdint.h>

#include "tflm_elementwise.h"
#include "tflm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Persistent op data (fixed-width fields only). */
typedef struct {
  tflm_binary_t binary; /* shape, types, activation clamp (int8/int16: quantised) */
  int32_t input1_offset, input2_offset, output_offset; /* -zp1, -zp2, +zp_out */
  int32_t output_multiplier, output_shift;             /* scale1 * scale2 / scale_out */
} tflm_mul_params_t;

/* Validates the node, computes the broadcast layout and TFLM's quantised parameters, and
 * stores a tflm_mul_params_t in node->user_data. */
tflm_status_t tflm_mul_prepare(tflm_context_t *ctx, tflm_node_t *node);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_MUL_COMMON_H */
