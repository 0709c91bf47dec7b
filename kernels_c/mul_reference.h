/* The reference MUL loops of every type (defined in mul_reference.c), apart from the
 * registration in mul.c so that a tag replacing mul.c (e.g. cmsis) still has them for the
 * types and shapes it does not speed up; including this header brings mul_reference.c into a
 * project.  Each is a tflm_elementwise_row_fn over a tflm_mul_params_t. */
#ifndef TFLM_MUL_REFERENCE_H
#define TFLM_MUL_REFERENCE_H

#include <stdint.h>

#include "mul_common.h"

#ifdef __cplusplus
extern "C" {
#endif

void tflm_mul_float(const void *params, const void *const *in, const int32_t *step,
                    void *out, int32_t n);
void tflm_mul_int32(const void *params, const void *const *in, const int32_t *step,
                    void *out, int32_t n);
void tflm_mul_int8(const void *params, const void *const *in, const int32_t *step,
                   void *out, int32_t n);
void tflm_mul_int16(const void *params, const void *const *in, const int32_t *step,
                    void *out, int32_t n);

/* The rows above by output type, for tflm_binary_prepare / tflm_binary_eval. */
extern const tflm_binary_rows_t tflm_mul_rows;

/* One int8 / int16 product rescaled, offset and clamped, as TFLM. */
int32_t tflm_mul_quantized(const tflm_mul_params_t *p, int32_t a, int32_t b);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_MUL_REFERENCE_H */
