/* Shared prepare logic of ADD (no tag replaces add_common.c, so a tag's add.c only carries
 * the hot loops); the reference loops are in add_reference.c. */
#ifndef TFLM_ADD_COMMON_H
#define TFLM_ADD_COMMON_H

#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Persistent op data (fixed-width fields only).  Shapes are right-aligned into 6-D. */
typedef struct {
  int32_t type;                     /* TFLM_TYPE_* of inputs and output */
  int32_t broadcast;                /* 0: same shapes, one flat loop over `count` values */
  int32_t count;                    /* output elements */
  int32_t out_dims[TFLM_MAX_DIMS];  /* output shape, leading 1s added */
  int32_t strides1[TFLM_MAX_DIMS];  /* element step of input 1 per output index; 0 where
                                     * input 1 is broadcast along that dimension */
  int32_t strides2[TFLM_MAX_DIMS];  /* the same for input 2 */
  int32_t input1_offset, input2_offset, output_offset; /* -zp1, -zp2, +zp_out */
  int32_t left_shift;               /* headroom shift: 20 (int8) or 15 (int16) */
  int32_t input1_multiplier, input1_shift;
  int32_t input2_multiplier, input2_shift;
  int32_t output_multiplier, output_shift;
  int32_t act_min, act_max;         /* quantised activation clamp */
  float act_min_f, act_max_f;       /* float activation clamp */
} tflm_add_params_t;

/* Validates the node, computes shapes, strides and TFLM's quantised parameters, and stores
 * a tflm_add_params_t in node->user_data. */
tflm_status_t tflm_add_prepare(tflm_context_t *ctx, tflm_node_t *node);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_ADD_COMMON_H */
