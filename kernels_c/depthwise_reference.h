/* The reference DEPTHWISE_CONV_2D kernels of every type (defined in depthwise_reference.c, declared in
 * conv_common.h).  They live apart from the registration in depthwise_conv.c so that a tag replacing
 * depthwise_conv.c (e.g. cmsis) still has them for the types and shapes it does not speed up;
 * including this header brings depthwise_reference.c into a project. */
#ifndef TFLM_DEPTHWISE_REFERENCE_H
#define TFLM_DEPTHWISE_REFERENCE_H

#include "conv_common.h"
#include "weighted_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The per-type functions of tflm_weighted_eval over the loops above (a tag's kernel table
 * reuses those it does not replace), and the reference kernel table. */
tflm_status_t tflm_depthwise_conv_run_float32(tflm_context_t *ctx, const tflm_weighted_call_t *call);
tflm_status_t tflm_depthwise_conv_run_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call);
tflm_status_t tflm_depthwise_conv_run_int16(tflm_context_t *ctx, const tflm_weighted_call_t *call);
extern const tflm_weighted_kernels_t tflm_depthwise_conv_reference_kernels;

#ifdef __cplusplus
}
#endif

#endif /* TFLM_DEPTHWISE_REFERENCE_H */
