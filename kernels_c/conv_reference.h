/* The reference CONV_2D kernels of every type (defined in conv_reference.c, declared in
 * conv_common.h).  They live apart from the registration in conv.c so that a tag replacing
 * conv.c (e.g. cmsis) still has them for the types and shapes it does not speed up;
 * including this header brings conv_reference.c into a project. */
#ifndef TFLM_CONV_REFERENCE_H
#define TFLM_CONV_REFERENCE_H

#include "conv_common.h"

#endif /* TFLM_CONV_REFERENCE_H */
