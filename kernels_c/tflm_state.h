/* Variable (state) tensors of stateful kernels (SVDF, LSTM).
 *
 * TFLM resets an int8 variable tensor to its zero point (the quantised value of 0.0) at
 * initialisation and on every reset; other types to zero bytes.  The runtime zeroes every
 * variable tensor, so a kernel whose int8 state may have a non-zero zero point calls
 * tflm_state_reset_int8 from prepare (the state already lives in the arena then) and from
 * its reset hook (called after the runtime's zeroing). */
#ifndef TFLM_STATE_H
#define TFLM_STATE_H

#include <stdint.h>

#include "tflm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills node input `input` with its zero point when it is an int8 variable tensor. */
void tflm_state_reset_int8(tflm_context_t *ctx, const tflm_node_t *node, int32_t input);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_STATE_H */
