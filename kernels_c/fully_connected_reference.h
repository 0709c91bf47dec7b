/* The reference FULLY_CONNECTED kernels of every type (defined in fully_connected_reference.c, declared in
 * fully_connected_common.h).  They live apart from the registration in fully_connected.c so that a tag replacing
 * fully_connected.c (e.g. cmsis) still has them for the types and shapes it does not speed up;
 * including this header brings fully_connected_reference.c into a project. */
#ifndef TFLM_FULLY_CONNECTED_REFERENCE_H
#define TFLM_FULLY_CONNECTED_REFERENCE_H

#include "fully_connected_common.h"

#endif /* TFLM_FULLY_CONNECTED_REFERENCE_H */
