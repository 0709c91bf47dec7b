/* The reference FULLY_CONNECTED kernels of every type (defined in fully_connected_reference.c, declared in
 * fully_connected_common.h).  They live apart from the registration in fully_connected.c so that a tag replacing
 * fully_connected.c (e.g. cmsis) still has them for the types and shapes it does not speed up;
 * including this header brings fully_connected_reference.c into a project. */
#ifndef TFLM_FULLY_CONNECTED_REFERENCE_H
#define TFLM_FULLY_CONNECTED_REFERENCE_H

#include "fully_connected_common.h"
#include "weighted_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The per-type functions (a tag's kernel table reuses those it does not replace) and the
 * reference kernel table. */
TFLM_WEIGHTED_REFERENCE_DECLARE(fully_connected);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_FULLY_CONNECTED_REFERENCE_H */
