/* The reference DEPTHWISE_CONV_2D kernels inside the cmsis tag (their definitions live in depthwise_reference.c,
 * a copy of kernels_c/depthwise_conv.c, which the tag's depthwise_conv.c replaces).  The functions are the ones
 * declared in conv_common.h; including this header brings depthwise_reference.c into the project. */
#ifndef TFLM_CMSIS_DEPTHWISE_REFERENCE_H
#define TFLM_CMSIS_DEPTHWISE_REFERENCE_H

#include "conv_common.h"

#endif /* TFLM_CMSIS_DEPTHWISE_REFERENCE_H */
