/* Shared prepare logic of CONV_2D and DEPTHWISE_CONV_2D (no tag replaces conv_common.c, so a
 * tag's conv.c / depthwise_conv.c only carries the hot loops).
 *
 * Tensor layouts (TFLite): input [N, H, W, Cin], output [N, OH, OW, Cout], both NHWC.
 *   CONV_2D filter           [Cout, FH, FW, Cin / groups], bias [Cout] (optional)
 *   DEPTHWISE_CONV_2D filter [1, FH, FW, Cout] with Cout = Cin * depth_multiplier
 * Bias is float32 for float32 activations, int32 for int8, int64 for int16 ("16x8").
 *
 * prepare stores one persistent block in node->user_data: a tflm_conv_params_t followed by
 * `channels` int32 multipliers and `channels` int32 shifts (per output channel; a
 * per-tensor filter scale is broadcast, as TFLM does).  The arrays are found from the
 * header's address, so the block holds no pointer and has the same size on every target. */
#ifndef TFLM_CONV_COMMON_H
#define TFLM_CONV_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int32_t type; /* TFLM_TYPE_* of the activations: picks the kernel (first: read by
                   tflm_weighted_node_eval) */
  int32_t batches;           /* N */
  int32_t input_h;           /* H */
  int32_t input_w;           /* W */
  int32_t input_c;           /* Cin */
  int32_t filter_h;          /* FH */
  int32_t filter_w;          /* FW */
  int32_t filter_c;          /* innermost filter dim: Cin/groups (conv), Cout (depthwise) */
  int32_t output_h;          /* OH */
  int32_t output_w;          /* OW */
  int32_t output_c;          /* Cout */
  int32_t filters_per_group; /* conv: output channels per group (Cout when ungrouped) */
  int32_t depth_multiplier;  /* depthwise: Cout / Cin */
  int32_t stride_h;
  int32_t stride_w;
  int32_t dilation_h;
  int32_t dilation_w;
  int32_t pad_h;             /* implicit zero rows above the input */
  int32_t pad_w;             /* implicit zero columns left of the input */
  int32_t input_offset;      /* minus the input zero point (int8; int16 ignores it) */
  int32_t output_offset;     /* output zero point (int8; int16 ignores it) */
  int32_t act_min;           /* quantised clamp of the fused activation */
  int32_t act_max;
  float float_min;           /* float clamp of the fused activation */
  float float_max;
  int32_t channels;          /* entries in each per-channel array */
  int16_t requant_in_model;  /* 1: the arrays are in the model (tflm_node_requant), else after
                                this struct */
  int16_t decode_scratch;    /* scratch handle decoding a compressed filter (tflm_decode.h),
                                -1 when the filter is plain, TFLM_CONV_SPARSE_SCRATCH of the
                                inputs' scratch when it is sparse (conv_sparse.h) */
} tflm_conv_params_t;

/* Whether `output` starts inside the `bytes` of `input`.  The planner puts a depthwise
 * output there (over the input's consumed end) only because its kernels then write the
 * pixels last first (tflm_gen.overlap.backward_start); anywhere else they walk forwards. */
static inline int tflm_starts_inside(const void *input, size_t bytes, const void *output) {
  const uintptr_t in = (uintptr_t)input, out = (uintptr_t)output;
  return out > in && out - in < bytes;
}

/* Prepare functions of the two registrations: validate, compute padding and requantisation,
 * allocate and fill the persistent block, set node->user_data. */
tflm_status_t tflm_conv_prepare(tflm_context_t *ctx, tflm_node_t *node);
tflm_status_t tflm_depthwise_conv_prepare(tflm_context_t *ctx, tflm_node_t *node);

/* Per-output-channel Q31 multipliers and shifts (shift > 0 shifts left) of a prepared node;
 * params is its tflm_conv_params_t (void: the shape of tflm_weighted_kernels_t.requant). */
void tflm_conv_requant(tflm_context_t *ctx, const tflm_node_t *node, const void *params,
                       tflm_requant_t *requant);

struct tflm_weighted_call;
/* int8 CONV_2D output channels first .. first + count - 1 whose weights are all 0 (a
 * compressed filter's live map, tflm_weighted_decoded_live): the accumulator is the bias
 * alone, so every pixel holds the channel's requantised bias. */
void tflm_conv_dead_int8(const struct tflm_weighted_call *call, int32_t first, int32_t count);

/* TFLM's padding rule: output size and leading padding of one spatial dimension.
 * padding is TFLM_PADDING_SAME or TFLM_PADDING_VALID. */
void tflm_conv_padding(int32_t padding, int32_t stride, int32_t dilation, int32_t in_size,
                       int32_t filter_size, int32_t *out_size, int32_t *pad_before);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_CONV_COMMON_H */
