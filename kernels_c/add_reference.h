/* The reference ADD loops of every type (defined in add_reference.c).  They live apart from
 * the registration in add.c so that a tag replacing add.c (e.g. cmsis) still has them for
 * the types and shapes it does not speed up; including this header brings add_reference.c
 * into a project. */
#ifndef TFLM_ADD_REFERENCE_H
#define TFLM_ADD_REFERENCE_H

#include <stdint.h>

#include "add_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One row of n outputs; a_step / b_step are 1, or 0 for a broadcast value. */
typedef void (*tflm_add_row_fn)(const tflm_add_params_t *p, const void *a, int32_t a_step,
                                const void *b, int32_t b_step, void *out, int32_t n);

void tflm_add_float(const tflm_add_params_t *p, const void *a, int32_t a_step, const void *b,
                    int32_t b_step, void *out, int32_t n);
void tflm_add_int32(const tflm_add_params_t *p, const void *a, int32_t a_step, const void *b,
                    int32_t b_step, void *out, int32_t n);
void tflm_add_int8(const tflm_add_params_t *p, const void *a, int32_t a_step, const void *b,
                   int32_t b_step, void *out, int32_t n);
void tflm_add_int16(const tflm_add_params_t *p, const void *a, int32_t a_step, const void *b,
                    int32_t b_step, void *out, int32_t n);

/* Runs `row` over every innermost row of the broadcast output (element size `size` bytes). */
void tflm_add_broadcast(const tflm_add_params_t *p, const uint8_t *a, const uint8_t *b,
                        uint8_t *out, int32_t size, tflm_add_row_fn row);
/* The whole ADD with the reference loops: one flat row, or broadcast by the prepared
 * strides (used by tags for what they do not speed up). */
void tflm_add_reference(const tflm_add_params_t *p, const void *a, const void *b, void *out);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_ADD_REFERENCE_H */
