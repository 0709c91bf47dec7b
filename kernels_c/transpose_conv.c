/* tflm-op: TRANSPOSE_CONV tflm_op_transpose_conv types: float32,int8,int16 */
/* TRANSPOSE_CONV on NHWC tensors.  Inputs: 0 output_shape (ignored, as in TFLM: the output
 * tensor's shape is used), 1 filter [Cout, FH, FW, Cin], 2 input [N, H, W, Cin], 3 bias
 * [Cout] (optional).  Types: float32 (float filter and bias), int8 (int8 filter, per-channel
 * or per-tensor, int32 bias) and 16x8 (int16 activations, int8 filter, int64 or int16 bias).
 *
 * TFLM scatters every input value into the outputs it touches; here each output gathers the
 * same products instead, visiting (in_y, in_x, in_channel) in increasing order, which is
 * the order in which TFLM's scatter reaches any one output, so float sums are bit-identical
 * and no scratch buffer is needed.  Then bias, requantisation (per output channel, as
 * conv) and the activation clamp. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "weighted_common.h"

/* Persistent op data (fixed-width fields only), followed by `channels` int32 multipliers
 * and `channels` int32 shifts for the quantised types unless the generator precomputed
 * them into the model (tflm_node_requant). */
typedef struct {
  int32_t type;                 /* activation type */
  int32_t bias_type;            /* TFLM_TYPE_* of the bias, -1 when absent */
  int32_t batches;              /* N */
  int32_t in_h, in_w, in_c;     /* input H, W, Cin */
  int32_t filter_h, filter_w;   /* FH, FW */
  int32_t out_h, out_w, out_c;  /* output H, W, Cout */
  int32_t stride_h, stride_w;
  int32_t pad_h, pad_w;         /* output rows / columns cut off before the first */
  int32_t input_offset;         /* minus the input zero point (int8) */
  int32_t output_offset;        /* output zero point (int8) */
  int32_t act_min, act_max;     /* quantised clamp */
  float float_min, float_max;   /* float clamp */
  int32_t channels;             /* entries of each per-channel array (0 for float) */
  int32_t requant_in_model;     /* 1: the arrays are in the model's flash */
} tflm_transpose_conv_params_t;

/* What one invoke reads: the tensors' data and the requantisation arrays. */
typedef struct {
  const void *image;  /* the current batch's input */
  const void *filter;
  const void *bias;   /* NULL when absent */
  tflm_requant_t requant;
} tc_data_t;

/* TFLM's padding: the conv that maps the output back onto the input, SAME or VALID. */
static int32_t transpose_conv_padding(int32_t padding, int32_t stride, int32_t out_size,
                                      int32_t filter) {
  const int32_t in_size = padding == TFLM_PADDING_SAME ? (out_size + stride - 1) / stride
                                                       : (out_size + stride - filter) / stride;
  const int32_t total = (in_size - 1) * stride + filter - out_size;
  return total > 0 ? total / 2 : 0;
}

typedef struct {
  tflm_tensor_t filter, input, bias, output;
} tc_views_t;

static tflm_status_t tc_views(tflm_context_t *ctx, tflm_node_t *node, tc_views_t *v) {
  TFLM_KERNEL_CHECK(ctx, node, (node->inputs_count == 3 || node->inputs_count == 4) &&
                                   node->outputs_count == 1,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 1, &v->filter) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 2, &v->input) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, &v->output) == TFLM_OK, TFLM_ERROR);
  v->bias.data = NULL;
  if (node->inputs_count == 4) {
    TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 3, &v->bias) == TFLM_OK, TFLM_ERROR);
  }
  TFLM_KERNEL_CHECK(ctx, node, v->input.ndims == 4 && v->filter.ndims == 4 &&
                                   v->output.ndims == 4,
                    TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, v->input.type == v->output.type, TFLM_ERR_UNSUPPORTED_TYPE);
  return TFLM_OK;
}

/* Filter and bias types that go with the activation type. */
static tflm_status_t tc_types(tflm_context_t *ctx, tflm_node_t *node, const tc_views_t *v) {
  const int32_t type = v->input.type;
  const int32_t bias = v->bias.data != NULL ? v->bias.type : -1;
  if (type == TFLM_TYPE_FLOAT32) {
    TFLM_KERNEL_CHECK(ctx, node, v->filter.type == TFLM_TYPE_FLOAT32, TFLM_ERR_UNSUPPORTED_TYPE);
    TFLM_KERNEL_CHECK(ctx, node, bias == -1 || bias == TFLM_TYPE_FLOAT32,
                      TFLM_ERR_UNSUPPORTED_TYPE);
    return TFLM_OK;
  }
  TFLM_KERNEL_CHECK(ctx, node, type == TFLM_TYPE_INT8 || type == TFLM_TYPE_INT16,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, v->filter.type == TFLM_TYPE_INT8, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node,
                    bias == -1 || (type == TFLM_TYPE_INT8 && bias == TFLM_TYPE_INT32) ||
                        (type == TFLM_TYPE_INT16 &&
                         (bias == TFLM_TYPE_INT64 || bias == TFLM_TYPE_INT16)),
                    TFLM_ERR_UNSUPPORTED_TYPE);
  return TFLM_OK;
}

static tflm_status_t tc_geometry(tflm_context_t *ctx, tflm_node_t *node, const tc_views_t *v,
                                 tflm_transpose_conv_params_t *p) {
  const int32_t padding = tflm_opt_int(node, TFLM_OPT_TRANSPOSE_CONV_PADDING, TFLM_PADDING_SAME);
  p->batches = v->input.dims[0];
  p->in_h = v->input.dims[1];
  p->in_w = v->input.dims[2];
  p->in_c = v->input.dims[3];
  p->filter_h = v->filter.dims[1];
  p->filter_w = v->filter.dims[2];
  p->out_h = v->output.dims[1];
  p->out_w = v->output.dims[2];
  p->out_c = v->output.dims[3];
  p->stride_h = tflm_opt_int(node, TFLM_OPT_TRANSPOSE_CONV_STRIDE_H, 1);
  p->stride_w = tflm_opt_int(node, TFLM_OPT_TRANSPOSE_CONV_STRIDE_W, 1);
  TFLM_KERNEL_CHECK(ctx, node, p->stride_h >= 1 && p->stride_w >= 1, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, padding == TFLM_PADDING_SAME || padding == TFLM_PADDING_VALID,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, v->filter.dims[0] == p->out_c && v->filter.dims[3] == p->in_c &&
                                   v->output.dims[0] == p->batches,
                    TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, v->bias.data == NULL || tflm_tensor_elements(&v->bias) == p->out_c,
                    TFLM_ERR_BAD_SHAPE);
  p->pad_h = transpose_conv_padding(padding, p->stride_h, p->out_h, p->filter_h);
  p->pad_w = transpose_conv_padding(padding, p->stride_w, p->out_w, p->filter_w);
  return TFLM_OK;
}

static int32_t *tc_multipliers(const tflm_transpose_conv_params_t *p) {
  return (int32_t *)(void *)((tflm_transpose_conv_params_t *)(uintptr_t)p + 1);
}

/* Per-channel multipliers as TFLM: double(in) * double(filter[c]) / double(out). */
static tflm_status_t tc_quantization(tflm_context_t *ctx, tflm_node_t *node,
                                     const tc_views_t *v, int32_t activation,
                                     tflm_transpose_conv_params_t *p) {
  int32_t *multipliers = tc_multipliers(p);
  int32_t *shifts = multipliers + p->channels;
  const int32_t is8 = p->type == TFLM_TYPE_INT8;
  int32_t c;
  TFLM_KERNEL_CHECK(ctx, node, v->filter.nscales == 1 || v->filter.nscales == p->channels,
                    TFLM_ERR_BAD_PARAMS);
  for (c = 0; c < p->channels && !p->requant_in_model; ++c) {
    const double real = (double)v->input.scale * (double)tflm_tensor_scale(&v->filter, c) /
                        (double)v->output.scale;
    tflm_quantize_multiplier(real, &multipliers[c], &shifts[c]);
  }
  p->input_offset = is8 ? -v->input.zero_point : 0;
  p->output_offset = is8 ? v->output.zero_point : 0;
  tflm_activation_range_quantized(activation, v->output.scale, v->output.zero_point,
                                  is8 ? -128 : -32768, is8 ? 127 : 32767, &p->act_min,
                                  &p->act_max);
  return TFLM_OK;
}

static tflm_status_t tc_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  const int32_t activation =
      tflm_opt_int(node, TFLM_OPT_TRANSPOSE_CONV_FUSED_ACTIVATION_FUNCTION, TFLM_ACT_NONE);
  tc_views_t v;
  tflm_transpose_conv_params_t *p;
  int32_t channels, in_model;
  tflm_status_t status = tc_views(ctx, node, &v);
  if (status == TFLM_OK) status = tc_types(ctx, node, &v);
  if (status != TFLM_OK) return status;
  TFLM_KERNEL_CHECK(ctx, node, activation >= TFLM_ACT_NONE && activation <= TFLM_ACT_RELU6,
                    TFLM_ERR_BAD_PARAMS);
  channels = v.input.type == TFLM_TYPE_FLOAT32 ? 0 : v.output.dims[3];
  /* Arrays the generator precomputed into the model stay in flash, out of the arena. */
  in_model = tflm_weighted_requant_in_model(ctx, node, channels);
  p = (tflm_transpose_conv_params_t *)tflm_alloc_persistent(
      ctx, (uint32_t)sizeof(*p) + (in_model ? 0u : (uint32_t)channels * 8u));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->requant_in_model = in_model;
  p->type = v.input.type;
  p->bias_type = v.bias.data != NULL ? v.bias.type : -1;
  p->channels = channels;
  p->input_offset = 0;
  p->output_offset = 0;
  p->act_min = 0;
  p->act_max = 0;
  tflm_activation_range_float(activation, &p->float_min, &p->float_max);
  status = tc_geometry(ctx, node, &v, p);
  if (status == TFLM_OK && channels > 0) status = tc_quantization(ctx, node, &v, activation, p);
  node->user_data = p;
  return status;
}

/* The input rows (or columns) whose filter taps reach output index o: first and end. */
static void tc_span(int32_t o, int32_t pad, int32_t stride, int32_t filter, int32_t in_size,
                    int32_t *first, int32_t *end) {
  const int32_t hi = o + pad;            /* in * stride <= hi */
  const int32_t lo = hi - filter + 1;    /* in * stride >= lo */
  *first = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  *end = hi < 0 ? 0 : hi / stride + 1;
  if (*end > in_size) *end = in_size;
}

/* Where one output's taps are: spans of input rows / columns. */
typedef struct {
  int32_t y0, y1, x0, x1, oy, ox;
} tc_window_t;

static void tc_window(const tflm_transpose_conv_params_t *p, int32_t oy, int32_t ox,
                      tc_window_t *w) {
  tc_span(oy, p->pad_h, p->stride_h, p->filter_h, p->in_h, &w->y0, &w->y1);
  tc_span(ox, p->pad_w, p->stride_w, p->filter_w, p->in_w, &w->x0, &w->x1);
  w->oy = oy;
  w->ox = ox;
}

/* Offset of filter tap (fy, fx) of output channel oc for input (iy, ix). */
static int32_t tc_filter_at(const tflm_transpose_conv_params_t *p, const tc_window_t *w,
                            int32_t oc, int32_t iy, int32_t ix) {
  const int32_t fy = w->oy + p->pad_h - iy * p->stride_h;
  const int32_t fx = w->ox + p->pad_w - ix * p->stride_w;
  return ((oc * p->filter_h + fy) * p->filter_w + fx) * p->in_c;
}

static float tc_dot_float(const tflm_transpose_conv_params_t *p, const tc_window_t *w,
                          const float *image, const float *filter, int32_t oc) {
  float acc = 0.0f;
  int32_t iy, ix, c;
  for (iy = w->y0; iy < w->y1; ++iy) {
    for (ix = w->x0; ix < w->x1; ++ix) {
      const float *in = image + (iy * p->in_w + ix) * p->in_c;
      const float *f = filter + tc_filter_at(p, w, oc, iy, ix);
      for (c = 0; c < p->in_c; ++c) acc += in[c] * f[c];
    }
  }
  return acc;
}

static int32_t tc_dot_int8(const tflm_transpose_conv_params_t *p, const tc_window_t *w,
                           const int8_t *image, const int8_t *filter, int32_t oc) {
  int32_t acc = 0, iy, ix, c;
  for (iy = w->y0; iy < w->y1; ++iy) {
    for (ix = w->x0; ix < w->x1; ++ix) {
      const int8_t *in = image + (iy * p->in_w + ix) * p->in_c;
      const int8_t *f = filter + tc_filter_at(p, w, oc, iy, ix);
      for (c = 0; c < p->in_c; ++c) {
        acc = tflm_mac_wrap(acc, (int32_t)in[c] + p->input_offset, f[c]);
      }
    }
  }
  return acc;
}

static int64_t tc_dot_int16(const tflm_transpose_conv_params_t *p, const tc_window_t *w,
                            const int16_t *image, const int8_t *filter, int32_t oc) {
  int64_t acc = 0;
  int32_t iy, ix, c;
  for (iy = w->y0; iy < w->y1; ++iy) {
    for (ix = w->x0; ix < w->x1; ++ix) {
      const int16_t *in = image + (iy * p->in_w + ix) * p->in_c;
      const int8_t *f = filter + tc_filter_at(p, w, oc, iy, ix);
      for (c = 0; c < p->in_c; ++c) acc += (int64_t)((int32_t)in[c] * (int32_t)f[c]);
    }
  }
  return acc;
}

/* One output value of channel oc at window w; `out` indexes the output element. */
static void tc_output(const tflm_transpose_conv_params_t *p, const tc_window_t *w,
                      const tc_data_t *d, int32_t oc, void *out, int32_t index) {
  const void *image = d->image, *filter = d->filter, *bias = d->bias;
  const int32_t *multipliers = d->requant.multipliers;
  const int32_t *shifts = d->requant.shifts;
  if (p->type == TFLM_TYPE_FLOAT32) {
    float acc = tc_dot_float(p, w, (const float *)image, (const float *)filter, oc);
    if (bias != NULL) acc += ((const float *)bias)[oc];
    ((float *)out)[index] = tflm_clamp_float(acc, p->float_min, p->float_max);
  } else if (p->type == TFLM_TYPE_INT8) {
    int32_t acc = tc_dot_int8(p, w, (const int8_t *)image, (const int8_t *)filter, oc);
    if (bias != NULL) acc = tflm_add_wrap(acc, ((const int32_t *)bias)[oc]);
    ((int8_t *)out)[index] = (int8_t)tflm_requantize(acc, multipliers[oc], shifts[oc],
                                                     p->output_offset, p->act_min, p->act_max);
  } else {
    int64_t acc = tc_dot_int16(p, w, (const int16_t *)image, (const int8_t *)filter, oc);
    int32_t v;
    if (bias != NULL) {
      acc = tflm_add_wrap64(acc, p->bias_type == TFLM_TYPE_INT16
                                     ? (int64_t)((const int16_t *)bias)[oc]
                                     : ((const int64_t *)bias)[oc]);
    }
    v = tflm_multiply_by_quantized_multiplier_64(acc, multipliers[oc], shifts[oc]);
    v = v > p->act_min ? v : p->act_min;
    ((int16_t *)out)[index] = (int16_t)(v < p->act_max ? v : p->act_max);
  }
}

static tflm_status_t tc_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_transpose_conv_params_t *p = (const tflm_transpose_conv_params_t *)node->user_data;
  const uint8_t *input = (const uint8_t *)tflm_node_input_data(ctx, node, 2);
  const void *filter = tflm_node_input_data(ctx, node, 1);
  const void *bias = node->inputs_count == 4 ? tflm_node_input_data(ctx, node, 3) : NULL;
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t b, oy, ox, oc, index = 0;
  tc_window_t w;
  tc_data_t d;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && input != NULL && filter != NULL && out != NULL,
                    TFLM_ERR_NOT_READY);
  d.filter = filter;
  d.bias = bias;
  tflm_weighted_requant(ctx, node, p->requant_in_model, tc_multipliers(p), p->channels,
                        &d.requant);
  for (b = 0; b < p->batches; ++b) {
    d.image = input + (ptrdiff_t)b * p->in_h * p->in_w * p->in_c * tflm_type_size(p->type);
    for (oy = 0; oy < p->out_h; ++oy) {
      for (ox = 0; ox < p->out_w; ++ox) {
        tc_window(p, oy, ox, &w);
        for (oc = 0; oc < p->out_c; ++oc, ++index) {
          tc_output(p, &w, &d, oc, out, index);
        }
      }
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_transpose_conv = {
    NULL, TFLM_BUILTIN_TRANSPOSE_CONV, NULL, tc_prepare, tc_eval, NULL, NULL};
