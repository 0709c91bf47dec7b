/* Prepare logic of FULLY_CONNECTED; see fully_connected_common.h. */
#include "fully_connected_common.h"

#include "fully_connected_hybrid.h"
#include "tflm_quant.h"
#include "tflm_sparse_rows.h"
#include "weighted_common.h"

typedef tflm_weighted_views_t fc_views_t;

void tflm_fully_connected_requant(tflm_context_t *ctx, const tflm_node_t *node,
                                  const void *params, tflm_requant_t *requant) {
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)params;
  tflm_weighted_requant(ctx, node, p->requant_in_model, (const int32_t *)(const void *)(p + 1),
                        p->channels, requant);
}

/* batches x accum_depth input, output_depth x accum_depth filter, batches x output_depth out. */
static tflm_status_t fill_shapes(tflm_context_t *ctx, tflm_node_t *node, const fc_views_t *v,
                                 tflm_fc_params_t *p) {
  const int32_t filter_dims = v->filter.ndims;
  TFLM_KERNEL_CHECK(ctx, node, filter_dims >= 2 && v->output.ndims >= 1, TFLM_ERR_BAD_SHAPE);
  p->accum_depth = v->filter.dims[filter_dims - 1];
  p->output_depth = v->output.dims[v->output.ndims - 1];
  TFLM_KERNEL_CHECK(ctx, node, p->output_depth > 0 && p->accum_depth > 0, TFLM_ERR_BAD_SHAPE);
  /* Products in 64 bits: a corrupt model must fail the check, not overflow it. */
  TFLM_KERNEL_CHECK(ctx, node, (int64_t)tflm_tensor_elements(&v->filter) ==
                                   (int64_t)p->output_depth * p->accum_depth,
                    TFLM_ERR_BAD_SHAPE);
  p->batches = tflm_tensor_elements(&v->output) / p->output_depth;
  TFLM_KERNEL_CHECK(ctx, node, (int64_t)tflm_tensor_elements(&v->input) ==
                                   (int64_t)p->batches * p->accum_depth,
                    TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, v->bias.data == NULL ||
                                   tflm_tensor_elements(&v->bias) == p->output_depth,
                    TFLM_ERR_BAD_SHAPE);
  return TFLM_OK;
}

/* The real multiplier input_scale * filter_scale / output_scale in double, per channel or
 * per tensor.  (TFLM's source rounds the per-tensor product to float first, but the
 * tflite-micro build we are bit-exact with behaves as double: the float product gives int8
 * and int16 outputs one off near rounding ties, tests/test_ops_fully_connected.py.) */
static void fill_multipliers(const fc_views_t *v, tflm_fc_params_t *p) {
  int32_t *multipliers = (int32_t *)(void *)(p + 1);
  int32_t *shifts = multipliers + p->channels;
  int32_t c;
  if (p->requant_in_model) return;
  if (p->channel_step == 0) {
    const double product = (double)v->input.scale * (double)v->filter.scale;
    tflm_quantize_multiplier(product / (double)v->output.scale, multipliers, shifts);
    return;
  }
  for (c = 0; c < p->channels; ++c) {
    const double real = (double)v->input.scale * (double)tflm_tensor_scale(&v->filter, c) /
                        (double)v->output.scale;
    tflm_quantize_multiplier(real, &multipliers[c], &shifts[c]);
  }
}

static tflm_status_t fill_quantization(tflm_context_t *ctx, tflm_node_t *node,
                                       const fc_views_t *v, int32_t activation,
                                       tflm_fc_params_t *p) {
  const int32_t qmin = p->type == TFLM_TYPE_INT16 ? -32768 : -128;
  const int32_t qmax = p->type == TFLM_TYPE_INT16 ? 32767 : 127;
  TFLM_KERNEL_CHECK(ctx, node, v->filter.nscales >= 1, TFLM_ERR_BAD_PARAMS);
  if (p->channel_step == 1) {
    /* TFLM takes per-channel filters with int8 and int16 activations (16x8 converters,
     * e.g. onnx2tf, quantize dense layers per channel); filter offsets are then 0. */
    TFLM_KERNEL_CHECK(ctx, node, p->type == TFLM_TYPE_INT8 || p->type == TFLM_TYPE_INT16,
                      TFLM_ERR_UNSUPPORTED_TYPE);
    TFLM_KERNEL_CHECK(ctx, node, v->filter.nscales == p->output_depth &&
                                     v->filter.quantized_dimension == 0,
                      TFLM_ERR_BAD_PARAMS);
  }
  fill_multipliers(v, p);
  p->input_offset = -v->input.zero_point;
  p->filter_offset = p->channel_step == 1 ? 0 : -v->filter.zero_point;
  p->output_offset = v->output.zero_point;
  tflm_activation_range_quantized(activation, v->output.scale, v->output.zero_point, qmin, qmax,
                                  &p->act_min, &p->act_max);
  return TFLM_OK;
}

/* One block: header plus per-channel arrays (output_depth entries, 1 per-tensor, 0 float). */
static tflm_fc_params_t *alloc_params(tflm_context_t *ctx, const tflm_node_t *node,
                                      const fc_views_t *v) {
  const int32_t type = v->input.type;
  const int32_t per_channel = type != TFLM_TYPE_FLOAT32 && v->filter.nscales > 1;
  const int32_t channels =
      type == TFLM_TYPE_FLOAT32 ? 0 : (per_channel ? v->filter.nscales : 1);
  /* Arrays the generator precomputed into the model stay in flash, out of the arena. */
  const int32_t in_model = tflm_weighted_requant_in_model(ctx, node, channels);
  const uint32_t arrays = in_model ? 0u : (uint32_t)channels * 2u * (uint32_t)sizeof(int32_t);
  const uint32_t bytes = (uint32_t)sizeof(tflm_fc_params_t) +
                         (tflm_hybrid_views(v) ? tflm_hybrid_bytes(v->filter.dims[0]) : arrays);
  tflm_fc_params_t *p = (tflm_fc_params_t *)tflm_alloc_persistent(ctx, bytes);
  if (p != NULL) {
    p->requant_in_model = in_model;
    p->type = type;
    p->channels = channels;
    p->channel_step = (int16_t)(per_channel ? 1 : 0);
    p->decode_scratch = -1;
    p->input_offset = 0;
    p->filter_offset = 0;
    p->output_offset = 0;
    p->act_min = 0;
    p->act_max = 0;
  }
  return p;
}

/* A row-sparse filter (tflm_sparse_rows.h) is checked whole here, then read in place:
 * int8 activations and symmetric weights only (the generator codes no other). */
static tflm_status_t sparse_rows_prepare(tflm_context_t *ctx, const tflm_node_t *node,
                                         tflm_fc_params_t *p) {
  tflm_coded_t coded;
  if (!tflm_node_coded_input(ctx, node, 1, &coded) ||
      !tflm_sparse_rows_is(coded.data, coded.bytes)) {
    return TFLM_OK;
  }
  TFLM_KERNEL_CHECK(ctx, node, p->type == TFLM_TYPE_INT8 && p->filter_offset == 0,
                    TFLM_ERR_MODEL);
  TFLM_KERNEL_CHECK(ctx, node, tflm_sparse_rows_check(coded.data, coded.bytes,
                                                      p->output_depth, p->accum_depth) ==
                                   TFLM_OK,
                    TFLM_ERR_MODEL);
  p->decode_scratch = TFLM_FC_SPARSE_ROWS;
  return TFLM_OK;
}

tflm_status_t tflm_fully_connected_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  const int32_t activation =
      tflm_opt_int(node, TFLM_OPT_FULLY_CONNECTED_FUSED_ACTIVATION_FUNCTION, TFLM_ACT_NONE);
  fc_views_t v;
  tflm_fc_params_t *p;
  tflm_status_t status = tflm_weighted_views(ctx, node, &v);
  if (status != TFLM_OK) return status;
  TFLM_KERNEL_CHECK(ctx, node, v.filter.ndims >= 1, TFLM_ERR_BAD_SHAPE);
  status = tflm_hybrid_views(&v) ? tflm_hybrid_check(ctx, node, &v, v.filter.dims[0], 0)
                                 : tflm_weighted_types(ctx, node, &v);
  if (status != TFLM_OK) return status;
  /* Only the DEFAULT weights format (shuffled int8 weights are a TFLite-only layout). */
  TFLM_KERNEL_CHECK(ctx, node, tflm_opt_int(node, TFLM_OPT_FULLY_CONNECTED_WEIGHTS_FORMAT, 0) == 0,
                    TFLM_ERR_BAD_PARAMS);
  /* TFLM silently ignores fused TANH / SIGN_BIT; refusing beats a wrong answer. */
  TFLM_KERNEL_CHECK(ctx, node, activation >= TFLM_ACT_NONE && activation <= TFLM_ACT_RELU6,
                    TFLM_ERR_BAD_PARAMS);
  p = alloc_params(ctx, node, &v);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  status = fill_shapes(ctx, node, &v, p);
  if (status != TFLM_OK) return status;
  tflm_activation_range_float(activation, &p->float_min, &p->float_max);
  node->user_data = p;
  if (tflm_hybrid_views(&v)) {
    return tflm_fully_connected_hybrid_setup(ctx, node, &v, activation, p);
  }
  if (p->type != TFLM_TYPE_FLOAT32) {
    status = fill_quantization(ctx, node, &v, activation, p);
  }
  if (status != TFLM_OK) return status;
  status = sparse_rows_prepare(ctx, node, p);
  /* A compressed filter: rows of accum_depth weights, one per output. */
  return status == TFLM_OK && p->decode_scratch != TFLM_FC_SPARSE_ROWS
             ? tflm_weighted_decode_prepare(ctx, node, p->type, p->output_depth,
                                            p->accum_depth, 0, &p->decode_scratch)
             : status;
}

void tflm_fully_connected_block(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                                const int8_t *rows, int32_t first, int32_t count,
                                tflm_weighted_type_fn run) {
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)call->params;
  const int32_t in_bytes = p->type == TFLM_TYPE_INT16 ? 2 : 1, q = first * p->channel_step;
  const int32_t bias_bytes = p->type == TFLM_TYPE_INT16 ? 8 : 4;
  tflm_fc_params_t narrow = *p;
  tflm_weighted_call_t part = *call;
  int32_t b;
  narrow.batches = 1;
  narrow.output_depth = count;
  if (p->channel_step != 0) narrow.channels = count; /* the arrays from `first` on */
  part.params = &narrow;
  part.requant.multipliers += q;
  part.requant.shifts += q;
  part.data.filter = rows;
  if (call->data.bias != NULL) {
    part.data.bias = (const uint8_t *)call->data.bias + (size_t)first * (size_t)bias_bytes;
  }
  for (b = 0; b < p->batches; ++b) {
    part.data.input = (const uint8_t *)call->data.input + (size_t)b * p->accum_depth * in_bytes;
    part.data.output = (uint8_t *)call->data.output +
                       ((size_t)b * p->output_depth + (size_t)first) * (size_t)in_bytes;
    (void)run(ctx, &part);
  }
}

int tflm_fully_connected_band(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                              tflm_status_t *status) {
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)call->params;
  const int8_t *input = (const int8_t *)call->data.input;
  const int32_t *bias = (const int32_t *)call->data.bias;
  int8_t *output = (int8_t *)call->data.output;
  int32_t *sums, offset, first, last, count, oc, d;
  tflm_tensor_t view;
  if (!tflm_node_band_sum(ctx, call->node, &sums, &offset, &first, &last)) return 0;
  *status = tflm_node_input(ctx, call->node, 0, &view);
  count = tflm_tensor_elements(&view);
  if (*status != TFLM_OK || p->type != TFLM_TYPE_INT8 || p->decode_scratch != -1 ||
      p->batches != 1 || offset < 0 || count > p->accum_depth - offset) {
    *status = TFLM_ERR_BAD_SHAPE;
    return 1;
  }
  for (oc = 0; oc < p->output_depth; ++oc) {
    const int8_t *weights = (const int8_t *)call->data.filter + oc * p->accum_depth + offset;
    const int32_t q = oc * p->channel_step;
    int32_t acc = first ? 0 : sums[oc];
    for (d = 0; d < count; ++d) {
      acc = tflm_mac_wrap(acc, (int32_t)weights[d] + p->filter_offset,
                          (int32_t)input[d] + p->input_offset);
    }
    sums[oc] = acc;
    if (last) {
      if (bias != NULL) acc = tflm_add_wrap(acc, bias[oc]);
      output[oc] = (int8_t)tflm_requantize(acc, call->requant.multipliers[q],
                                           call->requant.shifts[q], p->output_offset,
                                           p->act_min, p->act_max);
    }
  }
  return 1;
}
