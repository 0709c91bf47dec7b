/* Hybrid operators (float32 activations, int8 weights), which TFLM refuses and LiteRT runs:
 * the pieces CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED share, bit-exact with LiteRT's
 * reference kernels (the oracle for these nodes).
 *
 * At every invoke each batch of the float input is quantised to int8 with its own scale
 * (symmetric: zero point 0, values in [-127, 127]; asymmetric: a zero point, [-128, 127]);
 * integer dot products with the weights are then scaled back to float.  A hybrid node's
 * parameter block (tflm_conv_params_t / tflm_fc_params_t) has type TFLM_TYPE_HYBRID, no
 * requantisation arrays, and is followed by a tflm_hybrid_t and one float filter scale per
 * output channel.  One scratch buffer holds the quantised input, then per batch its scaling
 * factor (float) and zero point (int32). */
#ifndef TFLM_HYBRID_COMMON_H
#define TFLM_HYBRID_COMMON_H

#include <stdint.h>

#include "tflm_kernel.h"
#include "weighted_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* TFLM_TYPE_HYBRID, the `type` of a hybrid node's parameter block, is in weighted_common.h
 * (tflm_weighted_eval dispatches on it). */

/* What follows the parameter block of a hybrid node (fixed-width fields only). */
typedef struct {
  int32_t per_channel; /* 1: LiteRT's per-channel formula (scales[c]), 0: per-tensor */
  int32_t asymmetric;  /* 1: inputs quantised with a zero point */
  int32_t batches;     /* input rows quantised separately */
  int32_t batch_size;  /* float input elements per batch */
  int32_t scratch;     /* scratch handle: see the file comment */
  int32_t channels;    /* output channels: entries of the scale array after this struct */
  int32_t depthwise;   /* 1: DEPTHWISE_CONV_2D (its own formula), else 0 */
  int32_t activation;  /* FULLY_CONNECTED: TFLM_ACT_*, applied as LiteRT's vector functions */
} tflm_hybrid_t;

/* The scratch buffer of a hybrid node, cut into its three arrays. */
typedef struct {
  int8_t *input;   /* batches * batch_size quantised inputs */
  float *factors;  /* per batch: input scale (times the filter scale where LiteRT does) */
  int32_t *offsets; /* per batch: input zero point */
} tflm_hybrid_buffers_t;

/* True when the views describe a hybrid node: float32 input, int8 weights. */
int32_t tflm_hybrid_views(const tflm_weighted_views_t *v);
/* Types and quantisation of a hybrid node: float32 output and bias (or none), an int8
 * filter with one scale, or `channels` scales (quantized_dimension `dimension`). */
tflm_status_t tflm_hybrid_check(tflm_context_t *ctx, tflm_node_t *node,
                                const tflm_weighted_views_t *v, int32_t channels,
                                int32_t dimension);
/* Bytes a hybrid node adds after its parameter block. */
uint32_t tflm_hybrid_bytes(int32_t channels);
/* Fills the tail `h` (fields set by the caller: per_channel, asymmetric, batches,
 * batch_size, channels, depthwise, activation), copies the filter scales and requests the scratch buffer. */
tflm_status_t tflm_hybrid_setup(tflm_context_t *ctx, tflm_node_t *node,
                                const tflm_weighted_views_t *v, tflm_hybrid_t *h);
/* The per-channel filter scales stored after `h`. */
const float *tflm_hybrid_scales(const tflm_hybrid_t *h);
/* Quantises every batch of `input` into the node's scratch buffer (eval only). */
void tflm_hybrid_quantize(tflm_context_t *ctx, const tflm_hybrid_t *h, const float *input,
                          tflm_hybrid_buffers_t *buffers);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_HYBRID_COMMON_H */
