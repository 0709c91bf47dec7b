/* tflm-op: AVERAGE_POOL_2D tflm_op_average_pool_2d types: float32,int8,int16 */
/* tflm-op: MAX_POOL_2D tflm_op_max_pool_2d types: float32,int8,int16 */
/* AVERAGE_POOL_2D and MAX_POOL_2D on NHWC tensors, bit-exact with TFLM's reference kernels.
 * Windows are clipped to the input (padding never contributes a value), so an average
 * divides by the number of input values actually covered.  Integer averages round half
 * away from zero; results are clamped to the fused activation's range. */
#include <float.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;                /* TFLM_TYPE_* of input and output */
  int32_t batches;             /* N */
  int32_t in_h, in_w;          /* input H, W */
  int32_t depth;               /* C, the same for input and output */
  int32_t out_h, out_w;        /* output H, W */
  int32_t stride_h, stride_w;  /* window step in input pixels */
  int32_t filter_h, filter_w;  /* window size */
  int32_t pad_h, pad_w;        /* padding before the first row / column */
  int32_t act_min, act_max;    /* quantised activation clamp */
  float act_min_f, act_max_f;  /* float activation clamp */
} tflm_pool_params_t;

/* The part of one output's window that lies inside the input: rows y0..y1-1, columns
 * x0..x1-1, in input coordinates. */
typedef struct {
  int32_t y0, y1, x0, x1;
} tflm_pool_window_t;

/* Output size and leading padding of one spatial dimension, as TFLM computes them. */
static int32_t tflm_pool_out_size(int32_t padding, int32_t in, int32_t filter, int32_t stride) {
  if (padding == TFLM_PADDING_SAME) {
    return (in + stride - 1) / stride;
  }
  return (in + stride - filter) / stride;
}

static int32_t tflm_pool_padding(int32_t in, int32_t filter, int32_t stride, int32_t out) {
  int32_t total = (out - 1) * stride + filter - in;
  /* An odd total puts the extra padding row/column after the input, not before. */
  return total > 0 ? total / 2 : 0;
}

/* Reads options, shapes and padding into p; returns a status for the caller to check. */
static tflm_status_t tflm_pool_shapes(tflm_context_t *ctx, tflm_node_t *node,
                                      const tflm_tensor_t *in, const tflm_tensor_t *out,
                                      tflm_pool_params_t *p) {
  const int32_t padding = tflm_opt_int(node, TFLM_OPT_POOL_2D_PADDING, TFLM_PADDING_SAME);
  p->stride_w = tflm_opt_int(node, TFLM_OPT_POOL_2D_STRIDE_W, 0);
  p->stride_h = tflm_opt_int(node, TFLM_OPT_POOL_2D_STRIDE_H, 0);
  p->filter_w = tflm_opt_int(node, TFLM_OPT_POOL_2D_FILTER_WIDTH, 0);
  p->filter_h = tflm_opt_int(node, TFLM_OPT_POOL_2D_FILTER_HEIGHT, 0);
  TFLM_KERNEL_CHECK(ctx, node, p->stride_w > 0 && p->stride_h > 0, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, p->filter_w > 0 && p->filter_h > 0, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, in->ndims == 4 && out->ndims == 4, TFLM_ERR_BAD_SHAPE);
  p->batches = in->dims[0];
  p->in_h = in->dims[1];
  p->in_w = in->dims[2];
  p->depth = in->dims[3];
  p->out_h = out->dims[1];
  p->out_w = out->dims[2];
  TFLM_KERNEL_CHECK(ctx, node, out->dims[0] == p->batches && out->dims[3] == p->depth,
                    TFLM_ERR_BAD_SHAPE);
  /* TFLM derives the padding from the computed output size; insisting that the output
   * tensor agrees also guarantees every window covers at least one input value. */
  TFLM_KERNEL_CHECK(ctx, node,
                    p->out_h == tflm_pool_out_size(padding, p->in_h, p->filter_h, p->stride_h) &&
                        p->out_w == tflm_pool_out_size(padding, p->in_w, p->filter_w, p->stride_w),
                    TFLM_ERR_BAD_SHAPE);
  p->pad_h = tflm_pool_padding(p->in_h, p->filter_h, p->stride_h, p->out_h);
  p->pad_w = tflm_pool_padding(p->in_w, p->filter_w, p->stride_w, p->out_w);
  return TFLM_OK;
}

static tflm_status_t tflm_pool_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_pool_params_t *p;
  tflm_status_t status;
  int32_t activation = tflm_opt_int(node, TFLM_OPT_POOL_2D_FUSED_ACTIVATION_FUNCTION, 0);
  TFLM_KERNEL_CHECK(ctx, node, node->inputs_count == 1 && node->outputs_count == 1,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 0, &in) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, &out) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, in.type == out.type, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node,
                    in.type == TFLM_TYPE_FLOAT32 || in.type == TFLM_TYPE_INT8 ||
                        in.type == TFLM_TYPE_INT16,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p = (tflm_pool_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in.type;
  status = tflm_pool_shapes(ctx, node, &in, &out, p);
  if (status != TFLM_OK) {
    return status;
  }
  tflm_activation_range_float(activation, &p->act_min_f, &p->act_max_f);
  if (in.type == TFLM_TYPE_INT8) {
    tflm_activation_range_quantized(activation, out.scale, out.zero_point, -128, 127,
                                    &p->act_min, &p->act_max);
  } else {
    tflm_activation_range_quantized(activation, out.scale, out.zero_point, -32768, 32767,
                                    &p->act_min, &p->act_max);
  }
  node->user_data = p;
  return TFLM_OK;
}

/* The window of output (out_y, out_x) clipped to the input. */
static void tflm_pool_window(const tflm_pool_params_t *p, int32_t out_y, int32_t out_x,
                             tflm_pool_window_t *w) {
  const int32_t origin_y = out_y * p->stride_h - p->pad_h;
  const int32_t origin_x = out_x * p->stride_w - p->pad_w;
  w->y0 = origin_y > 0 ? origin_y : 0;
  w->x0 = origin_x > 0 ? origin_x : 0;
  w->y1 = origin_y + p->filter_h < p->in_h ? origin_y + p->filter_h : p->in_h;
  w->x1 = origin_x + p->filter_w < p->in_w ? origin_x + p->filter_w : p->in_w;
}

/* Integer mean rounded half away from zero (C division truncates toward zero). */
static int32_t tflm_pool_round_mean(int32_t sum, int32_t count) {
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

static int32_t tflm_pool_clamp(const tflm_pool_params_t *p, int32_t value) {
  value = value > p->act_min ? value : p->act_min;
  return value < p->act_max ? value : p->act_max;
}

/* max(x, lo) then min(., hi) with std::max/std::min's comparisons (NaN passes through). */
static float tflm_pool_clamp_float(const tflm_pool_params_t *p, float value) {
  value = value < p->act_min_f ? p->act_min_f : value;
  return p->act_max_f < value ? p->act_max_f : value;
}

/* One output value.  `in` points at channel c of image n; pixel (y, x) is at
 * in[(y * in_w + x) * depth]. */
typedef void (*tflm_pool_value_fn)(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                                   const void *in, void *out);

static void tflm_avg_pool_float(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
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

static void tflm_avg_pool_int8(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                               const void *in, void *out) {
  const int8_t *data = (const int8_t *)in;
  int32_t total = 0, count = 0, y, x;
  for (y = w->y0; y < w->y1; ++y) {
    for (x = w->x0; x < w->x1; ++x) {
      total += data[(y * p->in_w + x) * p->depth];
      ++count;
    }
  }
  *(int8_t *)out = (int8_t)tflm_pool_clamp(p, tflm_pool_round_mean(total, count));
}

static void tflm_avg_pool_int16(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                                const void *in, void *out) {
  const int16_t *data = (const int16_t *)in;
  int32_t total = 0, count = 0, y, x;
  for (y = w->y0; y < w->y1; ++y) {
    for (x = w->x0; x < w->x1; ++x) {
      total += data[(y * p->in_w + x) * p->depth];
      ++count;
    }
  }
  *(int16_t *)out = (int16_t)tflm_pool_clamp(p, tflm_pool_round_mean(total, count));
}

static void tflm_max_pool_float(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
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

static void tflm_max_pool_int8(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                               const void *in, void *out) {
  const int8_t *data = (const int8_t *)in;
  int32_t max = -128, y, x;
  for (y = w->y0; y < w->y1; ++y) {
    for (x = w->x0; x < w->x1; ++x) {
      const int32_t value = data[(y * p->in_w + x) * p->depth];
      max = value > max ? value : max;
    }
  }
  *(int8_t *)out = (int8_t)tflm_pool_clamp(p, max);
}

static void tflm_max_pool_int16(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                                const void *in, void *out) {
  const int16_t *data = (const int16_t *)in;
  int32_t max = -32768, y, x;
  for (y = w->y0; y < w->y1; ++y) {
    for (x = w->x0; x < w->x1; ++x) {
      const int32_t value = data[(y * p->in_w + x) * p->depth];
      max = value > max ? value : max;
    }
  }
  *(int16_t *)out = (int16_t)tflm_pool_clamp(p, max);
}

/* Walks every output (n, y, x, c) and computes it with value_fn. */
static void tflm_pool_run(const tflm_pool_params_t *p, const uint8_t *in, uint8_t *out,
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

static int32_t tflm_pool_element_size(int32_t type) {
  return type == TFLM_TYPE_FLOAT32 ? 4 : (type == TFLM_TYPE_INT16 ? 2 : 1);
}

static tflm_status_t tflm_avg_pool_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_pool_params_t *p = (const tflm_pool_params_t *)node->user_data;
  tflm_pool_value_fn fn = p->type == TFLM_TYPE_FLOAT32 ? tflm_avg_pool_float
                          : p->type == TFLM_TYPE_INT8  ? tflm_avg_pool_int8
                                                       : tflm_avg_pool_int16;
  tflm_pool_run(p, (const uint8_t *)tflm_node_input_data(ctx, node, 0),
                (uint8_t *)tflm_node_output_data(ctx, node, 0), tflm_pool_element_size(p->type),
                fn);
  return TFLM_OK;
}

static tflm_status_t tflm_max_pool_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_pool_params_t *p = (const tflm_pool_params_t *)node->user_data;
  tflm_pool_value_fn fn = p->type == TFLM_TYPE_FLOAT32 ? tflm_max_pool_float
                          : p->type == TFLM_TYPE_INT8  ? tflm_max_pool_int8
                                                       : tflm_max_pool_int16;
  tflm_pool_run(p, (const uint8_t *)tflm_node_input_data(ctx, node, 0),
                (uint8_t *)tflm_node_output_data(ctx, node, 0), tflm_pool_element_size(p->type),
                fn);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_average_pool_2d = {
    NULL, 1 /* BuiltinOperator AVERAGE_POOL_2D */, NULL, tflm_pool_prepare, tflm_avg_pool_eval,
    NULL, NULL};

const tflm_registration_t tflm_op_max_pool_2d = {
    NULL, 17 /* BuiltinOperator MAX_POOL_2D */, NULL, tflm_pool_prepare, tflm_max_pool_eval,
    NULL, NULL};
