/* Shared prepare logic of FULLY_CONNECTED (no tag replaces fully_connected_common.c, so a
 * tag's fully_connected.c only carries the hot loops).
 *
 * Tensor layouts (TFLite): filter [output_depth, accum_depth]; bias [output_depth] (optional;
 * float32, int32 for int8 activations, int64 for int16); output [..., output_depth] whose
 * leading dims multiply to `batches` (keep_num_dims only changes the output tensor's shape,
 * which is read from the model); input holds batches * accum_depth elements in row order.
 *
 * prepare stores one persistent block in node->user_data: a tflm_fc_params_t followed by
 * `channels` int32 multipliers and `channels` int32 shifts, found from the header's address
 * so the block holds no pointer and has the same size on every target. */
#ifndef TFLM_FULLY_CONNECTED_COMMON_H
#define TFLM_FULLY_CONNECTED_COMMON_H

#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int32_t type;          /* picks the kernel: first, as tflm_conv_params_t.type */
  int32_t batches;       /* rows of the input and output */
  int32_t accum_depth;   /* filter columns: the length of each dot product */
  int32_t output_depth;  /* filter rows: outputs per batch */
  int32_t input_offset;  /* minus the input zero point (int8; int16 ignores it) */
  int32_t filter_offset; /* minus the filter zero point; 0 per-channel, where TFLM ignores it */
  int32_t output_offset; /* output zero point (int8; int16 ignores it) */
  int32_t act_min;       /* quantised clamp of the fused activation */
  int32_t act_max;
  float float_min;       /* float clamp of the fused activation */
  float float_max;
  int32_t channels;      /* entries in each array: output_depth per-channel, 1 per-tensor */
  int32_t requant_in_model; /* 1: arrays in the model (tflm_node_requant), else after this */
  int16_t channel_step;  /* 1 per-channel, 0 per-tensor: channel oc uses entry oc * step */
  int16_t decode_scratch; /* scratch handle decoding a compressed filter (tflm_decode.h), -1
                             when the filter is plain, TFLM_FC_SPARSE_ROWS when it is
                             row-sparse (fully_connected_sparse.h: no scratch) */
} tflm_fc_params_t;

/* decode_scratch of a row-sparse filter (tflm_sparse_rows.h), read in place. */
#define TFLM_FC_SPARSE_ROWS (-2)

struct tflm_weighted_call;
/* One decoded block of a compressed filter (channels first .. first + count - 1) through
 * `run`, a kernel's function for the plain filter, on a call narrowed to those channels
 * (one batch row at a time, since outputs of a batch row are contiguous). */
void tflm_fully_connected_block(tflm_context_t *ctx, const struct tflm_weighted_call *call,
                                const int8_t *rows, int32_t first, int32_t count,
                                tflm_status_t (*run)(tflm_context_t *ctx,
                                                     const struct tflm_weighted_call *call));

/* A patch stage's reduction band (tflm_node_band_sum): returns 1 when the node runs on one
 * band of its input's rows, after adding the band's products to the running sums (int8,
 * plain filter, one batch: what tflm_gen.patches plans) and, in the last band, writing the
 * output as tflm_fully_connected_int8 would (*status); 0 when it runs whole.  Sums wrap as
 * the whole dot product does, so the bands give its bytes.  Shared by every tag. */
int tflm_fully_connected_band(tflm_context_t *ctx, const struct tflm_weighted_call *call,
                              tflm_status_t *status);

/* Validates the node, computes requantisation, allocates and fills the block. */
tflm_status_t tflm_fully_connected_prepare(tflm_context_t *ctx, tflm_node_t *node);

/* Q31 multipliers and shifts (shift > 0 shifts left) of a prepared node; params is its
 * tflm_fc_params_t (void: the shape of tflm_weighted_kernels_t.requant). */
void tflm_fully_connected_requant(tflm_context_t *ctx, const tflm_node_t *node,
                                  const void *params, tflm_requant_t *requant);

/* The kernels of fully_connected.c.  bias may be NULL; buffers belong to the caller. */
void tflm_fully_connected_float32(const tflm_fc_params_t *params, const float *input,
                                  const float *filter, const float *bias, float *output);
void tflm_fully_connected_int8(const tflm_fc_params_t *params, const tflm_requant_t *requant,
                               const int8_t *input,
                               const int8_t *filter, const int32_t *bias, int8_t *output);
void tflm_fully_connected_int16(const tflm_fc_params_t *params, const tflm_requant_t *requant,
                                const int16_t *input,
                                const int8_t *filter, const int64_t *bias, int16_t *output);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_FULLY_CONNECTED_COMMON_H */
