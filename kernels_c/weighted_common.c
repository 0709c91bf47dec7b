/* Prepare and eval pieces shared by the ops with weights; see weighted_common.h. */
#include "weighted_common.h"

#include <stddef.h>

#include "tflm_decode.h"

tflm_status_t tflm_weighted_views(tflm_context_t *ctx, tflm_node_t *node,
                                  tflm_weighted_views_t *v) {
  tflm_status_t status;
  TFLM_KERNEL_CHECK(ctx, node, node->inputs_count == 2 || node->inputs_count == 3,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, node->outputs_count == 1, TFLM_ERR_BAD_PARAMS);
  status = tflm_node_input(ctx, node, 0, &v->input);
  if (status == TFLM_OK) status = tflm_node_input(ctx, node, 1, &v->filter);
  if (status == TFLM_OK) status = tflm_node_output(ctx, node, 0, &v->output);
  if (status != TFLM_OK) return status;
  v->bias.data = NULL;
  v->bias.ndims = 0;
  if (node->inputs_count == 3) status = tflm_node_input(ctx, node, 2, &v->bias);
  return status;
}

tflm_status_t tflm_weighted_types(tflm_context_t *ctx, tflm_node_t *node,
                                  const tflm_weighted_views_t *v) {
  const int32_t type = v->input.type;
  int32_t filter_type = TFLM_TYPE_INT8;
  int32_t bias_type = TFLM_TYPE_INT32;
  TFLM_KERNEL_CHECK(ctx, node, v->output.type == type, TFLM_ERR_UNSUPPORTED_TYPE);
  if (type == TFLM_TYPE_FLOAT32) {
    filter_type = TFLM_TYPE_FLOAT32;
    bias_type = TFLM_TYPE_FLOAT32;
  } else if (type == TFLM_TYPE_INT16) {
    bias_type = TFLM_TYPE_INT64;
  } else {
    TFLM_KERNEL_CHECK(ctx, node, type == TFLM_TYPE_INT8, TFLM_ERR_UNSUPPORTED_TYPE);
  }
  TFLM_KERNEL_CHECK(ctx, node, v->filter.type == filter_type, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, v->bias.data == NULL || v->bias.type == bias_type,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  return TFLM_OK;
}

void tflm_weighted_requant(tflm_context_t *ctx, const tflm_node_t *node, int32_t in_model,
                           const int32_t *own, int32_t channels, tflm_requant_t *requant) {
  int32_t count = 0;
  const int32_t *arrays = in_model ? tflm_node_requant(ctx, node, &count) : own;
  requant->multipliers = arrays;
  requant->shifts = arrays + channels;
}

int32_t tflm_weighted_requant_in_model(tflm_context_t *ctx, const tflm_node_t *node,
                                       int32_t channels) {
  int32_t precomputed = 0;
  return channels > 0 && tflm_node_requant(ctx, node, &precomputed) != NULL &&
         precomputed == channels;
}

int32_t tflm_weighted_data(tflm_context_t *ctx, const tflm_node_t *node,
                           tflm_weighted_data_t *d) {
  d->input = tflm_node_input_data(ctx, node, 0);
  d->filter = tflm_node_input_data(ctx, node, 1);
  d->bias = node->inputs_count > 2 ? tflm_node_input_data(ctx, node, 2) : NULL;
  d->output = tflm_node_output_data(ctx, node, 0);
  return d->input != NULL && d->filter != NULL && d->output != NULL;
}

tflm_status_t tflm_weighted_decode_prepare(tflm_context_t *ctx, const tflm_node_t *node,
                                           int32_t type, int32_t channels, int32_t row,
                                           int32_t copy, int16_t *handle) {
  tflm_coded_t coded;
  tflm_decode_t d;
  int32_t requested = -1;
  tflm_status_t status;
  *handle = -1;
  if (!tflm_node_coded_input(ctx, node, 1, &coded)) return TFLM_OK;
  TFLM_KERNEL_CHECK(ctx, node, type == TFLM_TYPE_INT8 || type == TFLM_TYPE_INT16,
                    TFLM_ERR_MODEL);
  TFLM_KERNEL_CHECK(ctx, node,
                    tflm_decode_open(&d, coded.data, coded.bytes, coded.table,
                                     coded.table_bytes, channels, row) == TFLM_OK,
                    TFLM_ERR_MODEL);
  status = tflm_request_scratch(
      ctx, tflm_decode_scratch_bytes(&d) + (uint32_t)copy * (uint32_t)channels * (uint32_t)row,
      &requested);
  /* The handle lives in an int16 field of the op's record, which keeps its released size. */
  TFLM_KERNEL_CHECK(ctx, node, status != TFLM_OK || requested < 0x8000, TFLM_ERR_TOO_MANY);
  *handle = (int16_t)requested;
  return status;
}

void tflm_weighted_transpose(const int8_t *rows, int32_t count, int32_t taps, int32_t stride,
                             int8_t *taps_major) {
  int32_t c, t;
  for (c = 0; c < count; ++c) {
    for (t = 0; t < taps; ++t) taps_major[t * stride + c] = rows[c * taps + t];
  }
}

/* The block's channels first .. end - 1 by runs: live ones to `run`, decoded once, dead
 * ones to `dead`. */
static void decoded_runs(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                         const tflm_decode_t *d, void *scratch, int32_t b,
                         tflm_weighted_block_fn run, tflm_weighted_dead_fn dead) {
  const int32_t first = b * d->group;
  const int32_t end = d->channels - first < d->group ? d->channels : first + d->group;
  int8_t *room = (int8_t *)scratch + tflm_decode_scratch_bytes(d);
  const int8_t *rows = NULL;
  int32_t c, next, live, count;
  for (c = first; c < end; c = next) {
    next = tflm_decode_run(d, c, end, &live);
    if (!live) {
      dead(call, c, next - c);
      continue;
    }
    if (rows == NULL) rows = tflm_decode_block(d, scratch, b, &count);
    run(ctx, call, rows + (size_t)(c - first) * (size_t)d->row, room, c, next - c);
  }
}

tflm_status_t tflm_weighted_decoded_live(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                                         int32_t handle, int32_t channels, int32_t row,
                                         tflm_weighted_block_fn run, tflm_weighted_dead_fn dead) {
  tflm_coded_t coded;
  tflm_decode_t d;
  void *scratch = tflm_get_scratch(ctx, handle);
  const int8_t *rows;
  int32_t b, count;
  if (!tflm_node_coded_input(ctx, call->node, 1, &coded) || scratch == NULL ||
      tflm_decode_reopen(&d, coded.data, coded.bytes, coded.table, coded.table_bytes, channels,
                         row) != TFLM_OK) {
    return TFLM_ERR_NOT_READY;
  }
  tflm_decode_start(&d, scratch);
  for (b = 0; b < d.blocks; ++b) {
    if (dead != NULL && d.live != NULL) {
      decoded_runs(ctx, call, &d, scratch, b, run, dead);
      continue;
    }
    rows = tflm_decode_block(&d, scratch, b, &count);
    run(ctx, call, rows, (int8_t *)scratch + tflm_decode_scratch_bytes(&d), b * d.group, count);
  }
  return TFLM_OK;
}

tflm_status_t tflm_weighted_decoded(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                                    int32_t handle, int32_t channels, int32_t row,
                                    tflm_weighted_block_fn run) {
  return tflm_weighted_decoded_live(ctx, call, handle, channels, row, run, NULL);
}
