/* The reference SOFTMAX loops of every type (defined in softmax_reference.c), apart from the
 * registration in softmax.c so that a tag replacing softmax.c (e.g. cmsis) still has them for
 * the types it does not speed up; including this header brings softmax_reference.c into a
 * project. */
#ifndef TFLM_SOFTMAX_REFERENCE_H
#define TFLM_SOFTMAX_REFERENCE_H

#include <stdint.h>

#include "softmax_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void tflm_softmax_float(const tflm_softmax_params_t *p, const float *in, float *out);

/* int8 input, int8 or int16 output; TFLM_ERROR when a row's sum of exps is too large for
 * the output format (TFLM aborts). */
tflm_status_t tflm_softmax_int8(const tflm_softmax_params_t *p, const int8_t *in, void *out);

void tflm_softmax_int16(const tflm_softmax_int16_data_t *d, const int16_t *in, int16_t *out);

/* exp(diff * beta * scale) in Q0.31 for a non-positive difference diff >= diff_min. */
int32_t tflm_softmax_exp(const tflm_softmax_params_t *p, int32_t diff);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_SOFTMAX_REFERENCE_H */
