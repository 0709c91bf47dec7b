/* Hybrid CONV_2D and DEPTHWISE_CONV_2D; see conv_hybrid.h. */
#include "conv_hybrid.h"

#include <stddef.h>

/* The tail after a hybrid block (which has no requantisation arrays). */
static tflm_hybrid_t *tflm_conv_hybrid_tail(const tflm_conv_params_t *p) {
  return (tflm_hybrid_t *)(uintptr_t)(const void *)(p + 1);
}

/* True when the filter has several scales that are not all equal. */
static int32_t tflm_conv_hybrid_scales_differ(const tflm_tensor_t *filter) {
  int32_t c;
  for (c = 1; c < filter->nscales; ++c) {
    if (tflm_tensor_scale(filter, c) != tflm_tensor_scale(filter, 0)) return 1;
  }
  return 0;
}

tflm_status_t tflm_conv_hybrid_setup(tflm_context_t *ctx, tflm_node_t *node,
                                     const tflm_weighted_views_t *v, int32_t depthwise,
                                     tflm_conv_params_t *params) {
  tflm_hybrid_t *h = tflm_conv_hybrid_tail(params);
  const int32_t grouped = !depthwise && params->filter_c != params->input_c;
  h->per_channel = depthwise || grouped || tflm_conv_hybrid_scales_differ(&v->filter);
  h->asymmetric = h->per_channel;
  /* LiteRT's hybrid convolutions require a bias (and read one scale per output channel on
   * the per-channel paths). */
  TFLM_KERNEL_CHECK(ctx, node, v->bias.data != NULL, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, !h->per_channel || v->filter.nscales == params->output_c,
                    TFLM_ERR_BAD_PARAMS);
  h->batches = params->batches;
  h->batch_size = params->input_h * params->input_w * params->input_c;
  h->channels = params->output_c;
  h->depthwise = depthwise;
  h->activation = TFLM_ACT_NONE; /* folded into float_min / float_max */
  params->type = TFLM_TYPE_HYBRID;
  return tflm_hybrid_setup(ctx, node, v, h);
}

/* The integer sum of one output value: taps inside the input, w * (q - zero_point). */
static int32_t tflm_conv_hybrid_acc(const tflm_conv_params_t *p, const int8_t *image,
                                    const int8_t *filter, int32_t zero_point, int32_t y0,
                                    int32_t x0, int32_t oc, int32_t depthwise) {
  const int32_t group = oc / p->filters_per_group;
  const int32_t depth = depthwise ? 1 : p->filter_c;
  int32_t acc = 0, fy, fx, ic;
  for (fy = 0; fy < p->filter_h; ++fy) {
    const int32_t y = y0 + fy * p->dilation_h;
    for (fx = 0; fx < p->filter_w; ++fx) {
      const int32_t x = x0 + fx * p->dilation_w;
      const int8_t *pixel;
      if (y < 0 || y >= p->input_h || x < 0 || x >= p->input_w) continue;
      pixel = image + (y * p->input_w + x) * p->input_c;
      for (ic = 0; ic < depth; ++ic) {
        const int32_t channel = depthwise ? oc / p->depth_multiplier : group * depth + ic;
        const int32_t w = depthwise ? filter[(fy * p->filter_w + fx) * p->output_c + oc]
                                    : filter[((oc * p->filter_h + fy) * p->filter_w + fx) *
                                                 depth + ic];
        acc += w * ((int32_t)pixel[channel] - zero_point);
      }
    }
  }
  return acc;
}

/* min(max(x, lo), hi) with std::max / std::min's comparisons. */
static float tflm_conv_hybrid_clamp(float x, float lo, float hi) {
  const float low = x < lo ? lo : x;
  return hi < low ? hi : low;
}

/* One output value from its sum, in LiteRT's order of float operations (conv_hybrid.h). */
static float tflm_conv_hybrid_value(const tflm_conv_params_t *p, const tflm_hybrid_t *h,
                                    int32_t acc, float factor, int32_t oc, int32_t depthwise,
                                    const float *bias) {
  const float *scales = tflm_hybrid_scales(h);
  float out;
  if (!h->per_channel) {
    out = 0.0f + (float)acc * factor;
    return tflm_conv_hybrid_clamp(out + bias[oc], p->float_min, p->float_max);
  }
  out = depthwise ? (float)acc * (scales[oc] * factor) : (float)acc * scales[oc] * factor;
  return tflm_conv_hybrid_clamp(out + bias[oc], p->float_min, p->float_max);
}

tflm_status_t tflm_conv_hybrid_eval(tflm_context_t *ctx, const tflm_weighted_call_t *call) {
  const tflm_conv_params_t *p = (const tflm_conv_params_t *)call->params;
  const tflm_weighted_data_t *d = &call->data;
  const tflm_hybrid_t *h = tflm_conv_hybrid_tail(p);
  const int32_t depthwise = h->depthwise;
  float *output = (float *)d->output;
  tflm_hybrid_buffers_t buffers = {NULL, NULL, NULL}; /* set when the input is not all zero */
  int32_t b, oy, ox, oc;
  tflm_hybrid_quantize(ctx, h, (const float *)d->input, &buffers);
  for (b = 0; b < p->batches; ++b) {
    const int8_t *image = buffers.input + b * h->batch_size;
    const float factor = h->per_channel ? buffers.factors[b]
                                        : buffers.factors[b] * tflm_hybrid_scales(h)[0];
    for (oy = 0; oy < p->output_h; ++oy) {
      for (ox = 0; ox < p->output_w; ++ox) {
        for (oc = 0; oc < p->output_c; ++oc) {
          const int32_t acc = tflm_conv_hybrid_acc(
              p, image, (const int8_t *)d->filter, buffers.offsets[b],
              oy * p->stride_h - p->pad_h, ox * p->stride_w - p->pad_w, oc, depthwise);
          *output++ = tflm_conv_hybrid_value(p, h, acc, factor, oc, depthwise,
                                             (const float *)d->bias);
        }
      }
    }
  }
  return TFLM_OK;
}
