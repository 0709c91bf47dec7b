/* The reference FULLY_CONNECTED kernels inside the cmsis tag (their definitions live in fully_connected_reference.c,
 * a copy of kernels_c/fully_connected.c, which the tag's fully_connected.c replaces).  The functions are the ones
 * declared in fully_connected_common.h; including this header brings fully_connected_reference.c into the project. */
#ifndef TFLM_CMSIS_FULLY_CONNECTED_REFERENCE_H
#define TFLM_CMSIS_FULLY_CONNECTED_REFERENCE_H

#include "fully_connected_common.h"

#endif /* TFLM_CMSIS_FULLY_CONNECTED_REFERENCE_H */
