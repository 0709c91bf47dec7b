/* Prepare logic shared by CONV_2D and DEPTHWISE_CONV_2D; see conv_common.h. */
#include "conv_common.h"

#include "conv_hybrid.h"
#include "conv_sparse.h"
#include "tflm_quant.h"
#include "weighted_common.h"

typedef tflm_weighted_views_t conv_views_t;

/* Option slots differ between Conv2DOptions and DepthwiseConv2DOptions. */
typedef struct {
  int32_t padding;
  int32_t stride_w;
  int32_t stride_h;
  int32_t activation;
  int32_t dilation_w;
  int32_t dilation_h;
} conv_option_slots_t;

static const conv_option_slots_t conv_slots = {
    TFLM_OPT_CONV_2D_PADDING, TFLM_OPT_CONV_2D_STRIDE_W,
    TFLM_OPT_CONV_2D_STRIDE_H, TFLM_OPT_CONV_2D_FUSED_ACTIVATION_FUNCTION,
    TFLM_OPT_CONV_2D_DILATION_WFACTOR, TFLM_OPT_CONV_2D_DILATION_HFACTOR};

static const conv_option_slots_t depthwise_slots = {
    TFLM_OPT_DEPTHWISE_CONV_2D_PADDING, TFLM_OPT_DEPTHWISE_CONV_2D_STRIDE_W,
    TFLM_OPT_DEPTHWISE_CONV_2D_STRIDE_H, TFLM_OPT_DEPTHWISE_CONV_2D_FUSED_ACTIVATION_FUNCTION,
    TFLM_OPT_DEPTHWISE_CONV_2D_DILATION_WFACTOR, TFLM_OPT_DEPTHWISE_CONV_2D_DILATION_HFACTOR};

void tflm_conv_requant(tflm_context_t *ctx, const tflm_node_t *node, const void *params,
                       tflm_requant_t *requant) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)params;
  tflm_weighted_requant(ctx, node, p->requant_in_model, (const int32_t *)(const void *)(p + 1),
                        p->channels, requant);
}

void tflm_conv_padding(int32_t padding, int32_t stride, int32_t dilation, int32_t in_size,
                       int32_t filter_size, int32_t *out_size, int32_t *pad_before) {
  /* In 64 bits: corrupt strides or dilations near 2^31 would overflow int32 here. */
  const int64_t effective_filter = (int64_t)(filter_size - 1) * dilation + 1;
  int64_t out, total;
  if (padding == TFLM_PADDING_SAME) {
    out = ((int64_t)in_size + stride - 1) / stride;
  } else {
    out = ((int64_t)in_size + stride - effective_filter) / stride;
  }
  /* Kernels compute window positions up to (out - 1) * stride + effective_filter in int32:
   * a span beyond that (never from a valid model) gets an impossible output size. */
  if (out < 0 || (out - 1) * stride + effective_filter > INT32_MAX) {
    *out_size = -1;
    *pad_before = 0;
    return;
  }
  *out_size = (int32_t)out;
  /* SAME pads the odd extra row/column after the input, so only half goes before it. */
  total = (out - 1) * stride + effective_filter - in_size;
  *pad_before = total > 0 ? (int32_t)(total / 2) : 0;
}

/* The shared type rule (or the hybrid one), 4-D tensors, one bias per output channel. */
static tflm_status_t check_types(tflm_context_t *ctx, tflm_node_t *node, const conv_views_t *v,
                                 int32_t quantized_dimension) {
  tflm_status_t status;
  TFLM_KERNEL_CHECK(ctx, node, v->output.ndims == 4, TFLM_ERR_BAD_SHAPE);
  status = tflm_hybrid_views(v) ? tflm_hybrid_check(ctx, node, v, v->output.dims[3],
                                                    quantized_dimension)
                                : tflm_weighted_types(ctx, node, v);
  if (status != TFLM_OK) return status;
  TFLM_KERNEL_CHECK(ctx, node, v->input.ndims == 4, TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, v->filter.ndims == 4, TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, v->bias.data == NULL ||
                                   tflm_tensor_elements(&v->bias) == v->output.dims[3],
                    TFLM_ERR_BAD_SHAPE);
  return TFLM_OK;
}

/* One block: header plus the per-channel arrays (none for float). */
static tflm_conv_params_t *alloc_params(tflm_context_t *ctx, const tflm_node_t *node,
                                        const conv_views_t *v) {
  const int32_t channels = v->input.type == TFLM_TYPE_FLOAT32 ? 0 : v->output.dims[3];
  /* Arrays the generator precomputed into the model stay in flash, out of the arena. */
  const int32_t in_model = tflm_weighted_requant_in_model(ctx, node, channels);
  const uint32_t arrays = tflm_hybrid_views(v) ? tflm_hybrid_bytes(v->output.dims[3])
                          : in_model ? 0u : (uint32_t)channels * 2u * (uint32_t)sizeof(int32_t);
  tflm_conv_params_t *p =
      (tflm_conv_params_t *)tflm_alloc_persistent(ctx, (uint32_t)sizeof(tflm_conv_params_t) + arrays);
  if (p != NULL) {
    p->channels = channels;
    p->type = v->input.type;
    p->requant_in_model = (int16_t)in_model;
    p->decode_scratch = -1;
  }
  return p;
}

/* Sizes, strides, dilation and padding; the output tensor must have TFLM's output size. */
static tflm_status_t fill_geometry(tflm_context_t *ctx, tflm_node_t *node, const conv_views_t *v,
                                   const conv_option_slots_t *slots, tflm_conv_params_t *p) {
  const int32_t padding = tflm_opt_int(node, slots->padding, TFLM_PADDING_SAME);
  int32_t out_h;
  int32_t out_w;
  p->batches = v->input.dims[0];
  p->input_h = v->input.dims[1];
  p->input_w = v->input.dims[2];
  p->input_c = v->input.dims[3];
  p->filter_h = v->filter.dims[1];
  p->filter_w = v->filter.dims[2];
  p->filter_c = v->filter.dims[3];
  p->output_h = v->output.dims[1];
  p->output_w = v->output.dims[2];
  p->output_c = v->output.dims[3];
  p->stride_w = tflm_opt_int(node, slots->stride_w, 1);
  p->stride_h = tflm_opt_int(node, slots->stride_h, 1);
  p->dilation_w = tflm_opt_int(node, slots->dilation_w, 1);
  p->dilation_h = tflm_opt_int(node, slots->dilation_h, 1);
  TFLM_KERNEL_CHECK(ctx, node, padding == TFLM_PADDING_SAME || padding == TFLM_PADDING_VALID,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, p->stride_w >= 1 && p->stride_h >= 1, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, p->dilation_w >= 1 && p->dilation_h >= 1, TFLM_ERR_BAD_PARAMS);
  tflm_conv_padding(padding, p->stride_h, p->dilation_h, p->input_h, p->filter_h, &out_h,
                    &p->pad_h);
  tflm_conv_padding(padding, p->stride_w, p->dilation_w, p->input_w, p->filter_w, &out_w,
                    &p->pad_w);
  /* A band of a patch stage: its rows and top padding come from the stage. */
  if (tflm_node_band_pad(ctx, node, &p->pad_h)) out_h = p->output_h;
  TFLM_KERNEL_CHECK(ctx, node, out_h == p->output_h && out_w == p->output_w, TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, v->output.dims[0] == p->batches, TFLM_ERR_BAD_SHAPE);
  return TFLM_OK;
}

/* Per-channel multipliers exactly as TFLM: double(in) * double(filter[c]) / double(out). */
static tflm_status_t fill_quantization(tflm_context_t *ctx, tflm_node_t *node,
                                       const conv_views_t *v, int32_t quantized_dimension,
                                       int32_t activation, tflm_conv_params_t *p) {
  int32_t *multipliers = (int32_t *)(void *)(p + 1);
  int32_t *shifts = multipliers + p->channels;
  const int32_t qmin = p->type == TFLM_TYPE_INT16 ? -32768 : -128;
  const int32_t qmax = p->type == TFLM_TYPE_INT16 ? 32767 : 127;
  const int32_t nscales = v->filter.nscales;
  int32_t c;
  TFLM_KERNEL_CHECK(ctx, node, nscales == 1 || (nscales == p->channels &&
                                                v->filter.quantized_dimension ==
                                                    quantized_dimension),
                    TFLM_ERR_BAD_PARAMS);
  for (c = 0; c < p->channels && !p->requant_in_model; ++c) {
    const double real = (double)v->input.scale * (double)tflm_tensor_scale(&v->filter, c) /
                        (double)v->output.scale;
    tflm_quantize_multiplier(real, &multipliers[c], &shifts[c]);
  }
  p->input_offset = -v->input.zero_point;
  p->output_offset = v->output.zero_point;
  tflm_activation_range_quantized(activation, v->output.scale, v->output.zero_point, qmin, qmax,
                                  &p->act_min, &p->act_max);
  return TFLM_OK;
}

/* Everything both ops share; *out receives the block (already node->user_data). */
static tflm_status_t prepare_common(tflm_context_t *ctx, tflm_node_t *node,
                                    const conv_option_slots_t *slots, int32_t quantized_dimension,
                                    conv_views_t *v, tflm_conv_params_t **out) {
  int32_t activation = tflm_opt_int(node, slots->activation, TFLM_ACT_NONE);
  tflm_conv_params_t *p;
  tflm_status_t status = tflm_weighted_views(ctx, node, v);
  if (status == TFLM_OK) status = check_types(ctx, node, v, quantized_dimension);
  if (status != TFLM_OK) return status;
  /* TFLM silently ignores fused TANH / SIGN_BIT here; refusing beats a wrong answer. */
  TFLM_KERNEL_CHECK(ctx, node, activation >= TFLM_ACT_NONE && activation <= TFLM_ACT_RELU6,
                    TFLM_ERR_BAD_PARAMS);
  p = alloc_params(ctx, node, v);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  status = fill_geometry(ctx, node, v, slots, p);
  if (status != TFLM_OK) return status;
  tflm_activation_range_float(activation, &p->float_min, &p->float_max);
  p->input_offset = 0;
  p->output_offset = 0;
  p->act_min = 0;
  p->act_max = 0;
  if (p->type != TFLM_TYPE_FLOAT32) {
    status = fill_quantization(ctx, node, v, quantized_dimension, activation, p);
  }
  node->user_data = p;
  *out = p;
  return status;
}

tflm_status_t tflm_conv_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  conv_views_t v;
  tflm_conv_params_t *p = NULL;
  int32_t groups;
  tflm_status_t status = prepare_common(ctx, node, &conv_slots, 0, &v, &p);
  if (status != TFLM_OK) return status;
  TFLM_KERNEL_CHECK(ctx, node, v.filter.dims[0] == p->output_c, TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, p->filter_c > 0 && p->input_c % p->filter_c == 0,
                    TFLM_ERR_BAD_SHAPE);
  /* Grouped convolution: Cin / filter_c groups, each with its own slice of the filters. */
  groups = p->input_c / p->filter_c;
  TFLM_KERNEL_CHECK(ctx, node, groups > 0 && p->output_c % groups == 0, TFLM_ERR_BAD_SHAPE);
  p->filters_per_group = p->output_c / groups;
  p->depth_multiplier = 1;
  status = tflm_conv_sparse_prepare(ctx, node, p);
  if (status == TFLM_OK && !TFLM_CONV_IS_SPARSE(p)) {
    status = tflm_weighted_decode_prepare(ctx, node, p->type, p->output_c,
                                          p->filter_h * p->filter_w * p->filter_c, 0,
                                          &p->decode_scratch);
  }
  if (status != TFLM_OK) return status;
  return tflm_hybrid_views(&v) ? tflm_conv_hybrid_setup(ctx, node, &v, 0, p) : TFLM_OK;
}

tflm_status_t tflm_depthwise_conv_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  conv_views_t v;
  tflm_conv_params_t *p = NULL;
  tflm_status_t status = prepare_common(ctx, node, &depthwise_slots, 3, &v, &p);
  if (status != TFLM_OK) return status;
  TFLM_KERNEL_CHECK(ctx, node, v.filter.dims[0] == 1 && p->filter_c == p->output_c,
                    TFLM_ERR_BAD_SHAPE);
  /* The multiplier follows from the shapes; the option field is redundant (and 0 in some
   * models), so it is not trusted. */
  TFLM_KERNEL_CHECK(ctx, node, p->input_c > 0 && p->output_c % p->input_c == 0,
                    TFLM_ERR_BAD_SHAPE);
  p->depth_multiplier = p->output_c / p->input_c;
  p->filters_per_group = p->output_c;
  status = tflm_weighted_decode_prepare(ctx, node, p->type, p->output_c,
                                        p->filter_h * p->filter_w, 1, &p->decode_scratch);
  if (status != TFLM_OK) return status;
  return tflm_hybrid_views(&v) ? tflm_conv_hybrid_setup(ctx, node, &v, 1, p) : TFLM_OK;
}

void tflm_conv_dead_int8(const tflm_weighted_call_t *call, int32_t first, int32_t count) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  const int32_t *bias = (const int32_t *)call->data.bias;
  const int32_t pixels = p->batches * p->output_h * p->output_w;
  int8_t *out = (int8_t *)call->data.output + first;
  int32_t c, pixel;
  for (c = 0; c < count; ++c) {
    const int8_t value = (int8_t)tflm_requantize(
        bias != NULL ? bias[first + c] : 0, call->requant.multipliers[first + c],
        call->requant.shifts[first + c], p->output_offset, p->act_min, p->act_max);
    for (pixel = 0; pixel < pixels; ++pixel) out[pixel * p->output_c + c] = value;
  }
}
