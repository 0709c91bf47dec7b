/* Hybrid FULLY_CONNECTED (float32 activations, int8 weights), bit-exact with LiteRT's
 * reference kernel; see hybrid_common.h.  Each batch row is quantised symmetrically, or
 * asymmetrically with option asymmetric_quantize_inputs; then, per output unit u,
 *   out = bias[u] (0 without bias) + dot * scale,
 * dot = sum over the row of w * (q - zero point), scale = input scale * filter scale
 * (per-tensor: multiplied once per batch; per-channel: input scale * scale[u]); then the
 * activation as LiteRT's vector functions apply it (no clamp for NONE).  An input that is
 * all zeros gives the bias through the activation, as LiteRT's shortcut does. */
#ifndef TFLM_FULLY_CONNECTED_HYBRID_H
#define TFLM_FULLY_CONNECTED_HYBRID_H

#include <stdint.h>

#include "fully_connected_common.h"
#include "hybrid_common.h"
#include "tflm_kernel.h"
#include "weighted_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Prepare of a hybrid node once the shapes are known: fills the tail after `params`,
 * requests the scratch buffer, sets params->type to TFLM_TYPE_HYBRID. */
tflm_status_t tflm_fully_connected_hybrid_setup(tflm_context_t *ctx, tflm_node_t *node,
                                                const tflm_weighted_views_t *v,
                                                int32_t activation, tflm_fc_params_t *params);
/* Eval of a hybrid node whose block is `params`. */
tflm_status_t tflm_fully_connected_hybrid_eval(tflm_context_t *ctx,
                                               const tflm_weighted_call_t *call);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_FULLY_CONNECTED_HYBRID_H */
