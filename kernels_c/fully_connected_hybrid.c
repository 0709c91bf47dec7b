/* Hybrid FULLY_CONNECTED; see fully_connected_hybrid.h. */
#include "fully_connected_hybrid.h"

#include <stddef.h>

static tflm_hybrid_t *tflm_fc_hybrid_tail(const tflm_fc_params_t *p) {
  return (tflm_hybrid_t *)(uintptr_t)(const void *)(p + 1);
}

tflm_status_t tflm_fully_connected_hybrid_setup(tflm_context_t *ctx, tflm_node_t *node,
                                                const tflm_weighted_views_t *v,
                                                int32_t activation, tflm_fc_params_t *params) {
  tflm_hybrid_t *h = tflm_fc_hybrid_tail(params);
  h->per_channel = v->filter.nscales > 1;
  TFLM_KERNEL_CHECK(ctx, node, !h->per_channel || (v->filter.nscales == params->output_depth &&
                                                   v->filter.quantized_dimension == 0),
                    TFLM_ERR_BAD_PARAMS);
  h->asymmetric =
      tflm_opt_int(node, TFLM_OPT_FULLY_CONNECTED_ASYMMETRIC_QUANTIZE_INPUTS, 0) != 0;
  h->batches = params->batches;
  h->batch_size = params->accum_depth;
  h->channels = params->output_depth;
  h->depthwise = 0;
  h->activation = activation;
  params->type = TFLM_TYPE_HYBRID;
  return tflm_hybrid_setup(ctx, node, v, h);
}

/* LiteRT's activation functions over a float vector: std::max(0, x) and friends, whose
 * comparisons decide NaN and -0 (RELU maps both to +0). */
static float tflm_fc_hybrid_activate(int32_t activation, float x) {
  float upper;
  if (activation == TFLM_ACT_RELU) return 0.0f < x ? x : 0.0f;
  if (activation == TFLM_ACT_RELU_N1_TO_1) {
    upper = 1.0f < x ? 1.0f : x;
    return -1.0f < upper ? upper : -1.0f;
  }
  if (activation == TFLM_ACT_RELU6) {
    upper = 6.0f < x ? 6.0f : x;
    return 0.0f < upper ? upper : 0.0f;
  }
  return x;
}

static int32_t tflm_fc_hybrid_all_zero(const float *x, int32_t n) {
  int32_t i;
  for (i = 0; i < n; ++i) {
    if (x[i] != 0.0f) return 0;
  }
  return 1;
}

/* Sum over one row of w * (q - zero_point), in int32 as LiteRT's row sums give it. */
static int32_t tflm_fc_hybrid_dot(const int8_t *w, const int8_t *q, int32_t n,
                                  int32_t zero_point) {
  int32_t dot = 0, row_sum = 0, i;
  for (i = 0; i < n; ++i) {
    dot += (int32_t)w[i] * (int32_t)q[i];
    row_sum += w[i];
  }
  return dot - row_sum * zero_point;
}

tflm_status_t tflm_fully_connected_hybrid_eval(tflm_context_t *ctx,
                                               const tflm_weighted_call_t *call) {
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)call->params;
  const tflm_weighted_data_t *d = &call->data;
  const tflm_hybrid_t *h = tflm_fc_hybrid_tail(p);
  const float *scales = tflm_hybrid_scales(h), *bias = (const float *)d->bias;
  const int8_t *filter = (const int8_t *)d->filter;
  const int32_t units = p->output_depth, depth = p->accum_depth;
  const int32_t zero = tflm_fc_hybrid_all_zero((const float *)d->input, p->batches * depth);
  float *out = (float *)d->output;
  tflm_hybrid_buffers_t buffers = {NULL, NULL, NULL}; /* set when the input is not all zero */
  int32_t b, u;
  if (!zero) tflm_hybrid_quantize(ctx, h, (const float *)d->input, &buffers);
  for (b = 0; b < p->batches; ++b) {
    const float factor = zero ? 0.0f : buffers.factors[b] * (h->per_channel ? 1.0f : scales[0]);
    for (u = 0; u < units; ++u) {
      float value = bias != NULL ? bias[u] : 0.0f;
      if (!zero) {
        const int32_t dot = tflm_fc_hybrid_dot(filter + u * depth, buffers.input + b * depth,
                                               depth, buffers.offsets[b]);
        value += (float)dot * (h->per_channel ? factor * scales[u] : factor);
      }
      out[b * units + u] = tflm_fc_hybrid_activate(h->activation, value);
    }
  }
  return TFLM_OK;
}
