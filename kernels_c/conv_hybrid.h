/* Hybrid CONV_2D and DEPTHWISE_CONV_2D (float32 activations, int8 weights), bit-exact with
 * LiteRT's reference kernels; see hybrid_common.h.  LiteRT's formulas, per output value
 * with acc the integer sum over the taps inside the input of w * (q - zero point):
 *   CONV_2D, per-tensor (one filter scale, or all equal): inputs quantised symmetrically,
 *     factor = input scale * filter scale; out = 0 + acc * factor, then out + bias[c]
 *     clamped to the activation;
 *   CONV_2D, per-channel (scales differ, or grouped): inputs quantised asymmetrically;
 *     out = acc * scale[c] * input scale (left to right) + bias[c], clamped;
 *   DEPTHWISE_CONV_2D (per-channel scales only): asymmetric;
 *     out = acc * (scale[c] * input scale) + bias[c], clamped.
 * LiteRT refuses these nodes without a bias, and so do we. */
#ifndef TFLM_CONV_HYBRID_H
#define TFLM_CONV_HYBRID_H

#include <stdint.h>

#include "conv_common.h"
#include "hybrid_common.h"
#include "tflm_kernel.h"
#include "weighted_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Prepare of a hybrid node (called by the shared prepare once the geometry is known):
 * picks LiteRT's formula, fills the tail after `params`, requests the scratch buffer, and
 * sets params->type to TFLM_TYPE_HYBRID.  depthwise: 1 for DEPTHWISE_CONV_2D. */
tflm_status_t tflm_conv_hybrid_setup(tflm_context_t *ctx, tflm_node_t *node,
                                     const tflm_weighted_views_t *v, int32_t depthwise,
                                     tflm_conv_params_t *params);
/* Eval of a hybrid node whose block is `params` (type TFLM_TYPE_HYBRID). */
tflm_status_t tflm_conv_hybrid_eval(tflm_context_t *ctx, const tflm_weighted_call_t *call);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_CONV_HYBRID_H */
