/* AVERAGE_POOL_2D and MAX_POOL_2D on NHWC tensors, bit-exact with TFLM's reference kernels.
 * Windows are clipped to the input (padding never contributes a value), so an average
 * divides by the number of input values actually covered.  Integer averages round half
 * away from zero; results are clamped to the fused activation's range. */
#include <float.h>
#include <stddef.h>
#include <stdint.h>

#include "pooling_reference.h"
#include "tflm_compiler.h"
#include "tflm_kernel.h"

static int32_t tflm_pool_clamp(const tflm_pool_params_t *p, int32_t value) {
  value = value > p->act_min ? value : p->act_min;
  return value < p->act_max ? value : p->act_max;
}

/* max(x, lo) then min(., hi) with std::max/std::min's comparisons (NaN passes through). */
static float tflm_pool_clamp_float(const tflm_pool_params_t *p, float value) {
  value = value < p->act_min_f ? p->act_min_f : value;
  return p->act_max_f < value ? p->act_max_f : value;
}

void tflm_avg_pool_float(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                         const void *in, void *out) {
  const float *data = (const float *)in;
  float total = 0.0f;
  int32_t count = 0, y, x;
  for (y = w->y0; y < w->y1; ++y) {
    for (x = w->x0; x < w->x1; ++x) {
      total += data[(y * p->in_w + x) * p->depth];
      ++count;
    }
  }
  *(float *)out = tflm_pool_clamp_float(p, total / (float)count);
}

/* Stored value i of an int8 (`bytes` 1) or int16 window. */
static TFLM_ALWAYS_INLINE int32_t pool_value(const void *in, int32_t i, int32_t bytes) {
  return bytes == 1 ? ((const int8_t *)in)[i] : ((const int16_t *)in)[i];
}

/* The sum and count of an int8 or int16 window (always inlined: `bytes` is constant). */
static TFLM_ALWAYS_INLINE int32_t pool_sum(const tflm_pool_params_t *p,
                                           const tflm_pool_window_t *w, const void *in,
                                           int32_t bytes, int32_t *count) {
  int32_t total = 0, y, x;
  *count = 0;
  for (y = w->y0; y < w->y1; ++y) {
    for (x = w->x0; x < w->x1; ++x) {
      total += pool_value(in, (y * p->in_w + x) * p->depth, bytes);
      ++*count;
    }
  }
  return total;
}

/* The largest value of an int8 or int16 window, from `lowest` (the type's minimum, as TFLM). */
static TFLM_ALWAYS_INLINE int32_t pool_max(const tflm_pool_params_t *p,
                                           const tflm_pool_window_t *w, const void *in,
                                           int32_t bytes, int32_t lowest) {
  int32_t max = lowest, y, x;
  for (y = w->y0; y < w->y1; ++y) {
    for (x = w->x0; x < w->x1; ++x) {
      const int32_t value = pool_value(in, (y * p->in_w + x) * p->depth, bytes);
      max = value > max ? value : max;
    }
  }
  return max;
}

void tflm_avg_pool_int8(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                        const void *in, void *out) {
  int32_t count;
  const int32_t total = pool_sum(p, w, in, 1, &count);
  *(int8_t *)out = (int8_t)tflm_pool_clamp(p, tflm_pool_round_mean(total, count));
}

void tflm_avg_pool_int16(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                         const void *in, void *out) {
  int32_t count;
  const int32_t total = pool_sum(p, w, in, 2, &count);
  *(int16_t *)out = (int16_t)tflm_pool_clamp(p, tflm_pool_round_mean(total, count));
}

void tflm_max_pool_float(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                         const void *in, void *out) {
  const float *data = (const float *)in;
  float max = -FLT_MAX; /* lowest float, where TFLM starts */
  int32_t y, x;
  for (y = w->y0; y < w->y1; ++y) {
    for (x = w->x0; x < w->x1; ++x) {
      const float value = data[(y * p->in_w + x) * p->depth];
      max = max < value ? value : max; /* std::max: a NaN input is skipped */
    }
  }
  *(float *)out = tflm_pool_clamp_float(p, max);
}

void tflm_max_pool_int8(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                        const void *in, void *out) {
  *(int8_t *)out = (int8_t)tflm_pool_clamp(p, pool_max(p, w, in, 1, -128));
}

void tflm_max_pool_int16(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                         const void *in, void *out) {
  *(int16_t *)out = (int16_t)tflm_pool_clamp(p, pool_max(p, w, in, 2, -32768));
}

/* Walks every output (n, y, x, c) and computes it with value_fn. */
void tflm_pool_run(const tflm_pool_params_t *p, const uint8_t *in, uint8_t *out,
                   int32_t element_size, tflm_pool_value_fn value_fn) {
  const int32_t image = p->in_h * p->in_w * p->depth;
  int32_t n, y, x, c, out_index = 0;
  tflm_pool_window_t w;
  for (n = 0; n < p->batches; ++n) {
    for (y = 0; y < p->out_h; ++y) {
      for (x = 0; x < p->out_w; ++x) {
        tflm_pool_window(p, y, x, &w);
        for (c = 0; c < p->depth; ++c, ++out_index) {
          value_fn(p, &w, in + (size_t)(n * image + c) * (size_t)element_size,
                   out + (size_t)out_index * (size_t)element_size);
        }
      }
    }
  }
}

const tflm_pool_values_t tflm_avg_pool_values = {tflm_avg_pool_float, tflm_avg_pool_int8,
                                                 tflm_avg_pool_int16};
const tflm_pool_values_t tflm_max_pool_values = {tflm_max_pool_float, tflm_max_pool_int8,
                                                 tflm_max_pool_int16};

tflm_status_t tflm_pool_eval(tflm_context_t *ctx, tflm_node_t *node,
                             const tflm_pool_values_t *values) {
  const tflm_pool_params_t *p = (const tflm_pool_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  tflm_pool_run(p, (const uint8_t *)in, (uint8_t *)out, tflm_type_size(p->type),
                p->type == TFLM_TYPE_FLOAT32 ? values->float32
                : p->type == TFLM_TYPE_INT8  ? values->int8
                                             : values->int16);
  return TFLM_OK;
}
