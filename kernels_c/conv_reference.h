/* The reference CONV_2D kernels of every type (defined in conv_reference.c), apart from the
 * registration in conv.c so that a tag replacing conv.c (e.g. cmsis) still has them
 * for the types and shapes it does not speed up; including this header brings
 * conv_reference.c into a project. */
#ifndef TFLM_CONV_REFERENCE_H
#define TFLM_CONV_REFERENCE_H

#include "conv_common.h"
#include "weighted_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The per-type functions (a tag's kernel table reuses those it does not replace) and the
 * reference kernel table. */
TFLM_WEIGHTED_REFERENCE_DECLARE(conv);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_CONV_REFERENCE_H */
