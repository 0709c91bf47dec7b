/* The reference ADD loops of every type (defined in add_reference.c), apart from the
 * registration in add.c so that a tag replacing add.c (e.g. cmsis) still has them for the
 * types and shapes it does not speed up; including this header brings add_reference.c into a
 * project. */
#ifndef TFLM_ADD_REFERENCE_H
#define TFLM_ADD_REFERENCE_H

#include <stdint.h>

#include "add_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ADD's rows by type, for tflm_binary_prepare / tflm_binary_eval / tflm_binary_run. */
extern const tflm_binary_rows_t tflm_add_rows;

#ifdef __cplusplus
}
#endif

#endif /* TFLM_ADD_REFERENCE_H */
