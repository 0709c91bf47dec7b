/* The reference DEPTHWISE_CONV_2D kernels of every type (defined in depthwise_reference.c),
 * apart from the registration in depthwise_conv.c so that a tag replacing depthwise_conv.c
 * (e.g. cmsis) still has them for the types and shapes it does not speed up; including this
 * header brings depthwise_reference.c into a project. */
#ifndef TFLM_DEPTHWISE_REFERENCE_H
#define TFLM_DEPTHWISE_REFERENCE_H

#include "conv_common.h"
#include "weighted_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The per-type functions (a tag's kernel table reuses those it does not replace) and the
 * reference kernel table. */
TFLM_WEIGHTED_REFERENCE_DECLARE(depthwise_conv);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_DEPTHWISE_REFERENCE_H */
