/* The reference MUL loops of every type (defined in mul_reference.c), apart from the
 * registration in mul.c so that a tag replacing mul.c (e.g. cmsis) still has them for the
 * types and shapes it does not speed up; including this header brings mul_reference.c into a
 * project. */
#ifndef TFLM_MUL_REFERENCE_H
#define TFLM_MUL_REFERENCE_H

#include <stdint.h>

#include "mul_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* MUL's rows by type, for tflm_binary_op_prepare / tflm_binary_eval. */
extern const tflm_binary_rows_t tflm_mul_rows;

#ifdef __cplusplus
}
#endif

#endif /* TFLM_MUL_REFERENCE_H */
