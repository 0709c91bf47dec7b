/* Hybrid operators: input quantisation and setup; see hybrid_common.h. */
#include "hybrid_common.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define TFLM_HYBRID_ROUND8(n) (((n) + 7u) & ~7u)

int32_t tflm_hybrid_views(const tflm_weighted_views_t *v) {
  return v->input.type == TFLM_TYPE_FLOAT32 && v->filter.type == TFLM_TYPE_INT8;
}

tflm_status_t tflm_hybrid_check(tflm_context_t *ctx, tflm_node_t *node,
                                const tflm_weighted_views_t *v, int32_t channels,
                                int32_t dimension) {
  const int32_t nscales = v->filter.nscales;
  TFLM_KERNEL_CHECK(ctx, node, v->output.type == TFLM_TYPE_FLOAT32, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, v->bias.data == NULL || v->bias.type == TFLM_TYPE_FLOAT32,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  /* LiteRT multiplies by the scale and ignores a weight zero point; only 0 means that. */
  TFLM_KERNEL_CHECK(ctx, node, nscales == 1 || (nscales == channels &&
                                                v->filter.quantized_dimension == dimension),
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_zero_point(&v->filter, 0) == 0, TFLM_ERR_BAD_PARAMS);
  return TFLM_OK;
}

uint32_t tflm_hybrid_bytes(int32_t channels) {
  return (uint32_t)sizeof(tflm_hybrid_t) + (uint32_t)channels * (uint32_t)sizeof(float);
}

const float *tflm_hybrid_scales(const tflm_hybrid_t *h) {
  return (const float *)(const void *)(h + 1);
}

tflm_status_t tflm_hybrid_setup(tflm_context_t *ctx, tflm_node_t *node,
                                const tflm_weighted_views_t *v, tflm_hybrid_t *h) {
  float *scales = (float *)(void *)(h + 1);
  const uint32_t values = (uint32_t)h->batches * (uint32_t)h->batch_size;
  int32_t c;
  TFLM_KERNEL_CHECK(ctx, node, h->batches > 0 && h->batch_size > 0, TFLM_ERR_BAD_SHAPE);
  for (c = 0; c < h->channels; ++c) {
    scales[c] = tflm_tensor_scale(&v->filter, c); /* the first scale if per-tensor */
  }
  return tflm_request_scratch(ctx, TFLM_HYBRID_ROUND8(values) + 8u * (uint32_t)h->batches,
                              &h->scratch);
}

static float tflm_hybrid_abs(float x) { return x < 0.0f ? -x : x; }

/* Smallest and largest value (first of equals, as std::minmax_element keeps them). */
static void tflm_hybrid_min_max(const float *x, int32_t n, float *lo, float *hi) {
  int32_t i;
  *lo = x[0];
  *hi = x[0];
  for (i = 1; i < n; ++i) {
    if (x[i] < *lo) *lo = x[i];
    if (!(x[i] < *hi)) *hi = x[i];
  }
}

/* roundf(v) clamped to [lo, hi].  A NaN (from a non-finite input) gives 0: converting it
 * to an integer is undefined in C, and TFLM and LiteRT define no value for it either. */
static int8_t tflm_hybrid_to_int8(float v, int32_t lo, int32_t hi) {
  if (!(v == v)) return 0;
  if (v >= (float)hi) return (int8_t)hi;
  if (v <= (float)lo) return (int8_t)lo;
  return (int8_t)roundf(v);
}

/* Zero point 0, scale max|x| / 127; values rounded half away from zero into [-127, 127]. */
static void tflm_hybrid_symmetric(const float *x, int32_t n, int8_t *q, float *factor) {
  float lo, hi, range, inverse;
  int32_t i;
  tflm_hybrid_min_max(x, n, &lo, &hi);
  range = tflm_hybrid_abs(hi) > tflm_hybrid_abs(lo) ? tflm_hybrid_abs(hi) : tflm_hybrid_abs(lo);
  if (range == 0.0f) {
    memset(q, 0, (size_t)n);
    *factor = 1.0f;
    return;
  }
  *factor = range / 127.0f;
  inverse = 127.0f / range;
  for (i = 0; i < n; ++i) q[i] = tflm_hybrid_to_int8(x[i] * inverse, -127, 127);
}

/* The zero point of the range [rmin, rmax] at `scale`: from whichever end loses less. */
static int32_t tflm_hybrid_zero_point(float rmin, float rmax, float scale) {
  const float from_min = -128.0f - rmin / scale;
  const float from_max = 127.0f - rmax / scale;
  const float error_min = 128.0f + tflm_hybrid_abs(rmin / scale);
  const float error_max = 127.0f + tflm_hybrid_abs(rmax / scale);
  const float zero_point = error_min < error_max ? from_min : from_max;
  return tflm_hybrid_to_int8(zero_point, -128, 127);
}

/* The range [min(x, 0), max(x, 0)] over [-128, 127], all in float: the installed LiteRT
 * (ai-edge-litert 2.3.0) computes the scale in float (measured: a double scale is one ulp
 * off for some inputs), though newer sources use double. */
static void tflm_hybrid_asymmetric(const float *x, int32_t n, int8_t *q, float *factor,
                                   int32_t *offset) {
  float lo, hi, rmin, rmax, inverse;
  int32_t i;
  tflm_hybrid_min_max(x, n, &lo, &hi);
  rmin = lo < 0.0f ? lo : 0.0f;
  rmax = 0.0f < hi ? hi : 0.0f;
  if (rmin == rmax) {
    memset(q, 0, (size_t)n);
    *factor = 1.0f;
    *offset = 0;
    return;
  }
  *factor = (rmax - rmin) / 255.0f;
  *offset = tflm_hybrid_zero_point(rmin, rmax, *factor);
  inverse = 1.0f / *factor;
  for (i = 0; i < n; ++i) q[i] = tflm_hybrid_to_int8((float)*offset + x[i] * inverse, -128, 127);
}

void tflm_hybrid_quantize(tflm_context_t *ctx, const tflm_hybrid_t *h, const float *input,
                          tflm_hybrid_buffers_t *buffers) {
  uint8_t *scratch = (uint8_t *)tflm_get_scratch(ctx, h->scratch);
  const uint32_t values = (uint32_t)h->batches * (uint32_t)h->batch_size;
  int32_t b;
  buffers->input = (int8_t *)scratch;
  buffers->factors = (float *)(void *)(scratch + TFLM_HYBRID_ROUND8(values));
  buffers->offsets = (int32_t *)(void *)(buffers->factors + h->batches);
  for (b = 0; b < h->batches; ++b) {
    const float *x = input + b * h->batch_size;
    int8_t *q = buffers->input + b * h->batch_size;
    buffers->offsets[b] = 0;
    if (h->asymmetric) {
      tflm_hybrid_asymmetric(x, h->batch_size, q, &buffers->factors[b], &buffers->offsets[b]);
    } else {
      tflm_hybrid_symmetric(x, h->batch_size, q, &buffers->factors[b]);
    }
  }
}
