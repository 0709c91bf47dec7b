/* The reference CONV_2D kernels inside the cmsis tag (their definitions live in conv_reference.c,
 * a copy of kernels_c/conv.c, which the tag's conv.c replaces).  The functions are the ones
 * declared in conv_common.h; including this header brings conv_reference.c into the project. */
#ifndef TFLM_CMSIS_CONV_REFERENCE_H
#define TFLM_CMSIS_CONV_REFERENCE_H

#include "conv_common.h"

#endif /* TFLM_CMSIS_CONV_REFERENCE_H */
