/* Shared prepare of SOFTMAX (no tag replaces softmax_common.c, so a tag's softmax.c only
 * carries the hot loops); the reference loops are in softmax_reference.c. */
#ifndef TFLM_SOFTMAX_COMMON_H
#define TFLM_SOFTMAX_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_lut.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Integer bits of the scaled input differences (Q5.26) and of the sum of exps (Q12.19). */
#define TFLM_SOFTMAX_DIFF_INTEGER_BITS 5
#define TFLM_SOFTMAX_ACCUM_INTEGER_BITS 12

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t input_type;       /* TFLM_TYPE_* of the input */
  int32_t output_type;      /* TFLM_TYPE_* of the output */
  int32_t outer_size;       /* product of all dimensions but the last */
  int32_t depth;            /* size of the last dimension: the softmax axis */
  float beta;               /* float path: the exponent's scale */
  int32_t input_multiplier; /* quantised: beta * input scale as Q31 significand ... */
  int32_t input_left_shift; /* ... and left shift, mapping differences to Q5.26 */
  int32_t diff_min;         /* quantised: differences below this give exp ~ 0 */
} tflm_softmax_params_t;

/* int16 softmax keeps its two lookup tables right after the parameters. */
typedef struct {
  tflm_softmax_params_t params;
  int16_t exp_lut[TFLM_LUT_INT16_SIZE];      /* exp(x), x in [-10, 0] -> Q0.15 */
  int16_t reciprocal_lut[TFLM_LUT_INT16_SIZE]; /* 1 / (1 + x), x in [0, 1] -> Q0.15 */
} tflm_softmax_int16_data_t;

/* Validates the node, computes TFLM's parameters (and the int16 tables) and stores a
 * tflm_softmax_params_t (tflm_softmax_int16_data_t for int16 input) in node->user_data. */
tflm_status_t tflm_softmax_prepare(tflm_context_t *ctx, tflm_node_t *node);

/* Stores output c of an int8-input row: into out8 (int8) when it is not NULL, else into
 * out16 (int16), saturated to the type as TFLM. */
static inline void tflm_softmax_store(int8_t *out8, int16_t *out16, int32_t c, int32_t value) {
  if (out8 != NULL) {
    out8[c] = (int8_t)(value > 127 ? 127 : (value < -128 ? -128 : value));
  } else {
    out16[c] = (int16_t)(value > 32767 ? 32767 : (value < -32768 ? -32768 : value));
  }
}

#ifdef __cplusplus
}
#endif

#endif /* TFLM_SOFTMAX_COMMON_H */
