/* tflm-op: RESIZE_NEAREST_NEIGHBOR tflm_op_resize_nearest_neighbor types: float32,int8,int16 */
/* tflm-op: RESIZE_BILINEAR tflm_op_resize_bilinear types: float32,int8 */
/* RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR on NHWC tensors; the output size is the output
 * tensor's H and W (the size input is not read).  Source coordinates as TFLM computes them:
 *   nearest: float scale in/out (or (in-1)/(out-1) with align_corners), source index
 *     floor((x + offset) * scale) or round() with align_corners, offset 0.5 with
 *     half_pixel_centers, clamped to the input;
 *   bilinear float: the same scale, four weighted taps summed in TFLM's order, then + 0.0f;
 *   bilinear int8/int16: TFLM's integer path with 10 fractional bits, rounded half away
 *     from zero. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;                  /* TFLM_TYPE_* of input and output */
  int32_t batches, depth;        /* N, C */
  int32_t in_h, in_w;            /* input H, W */
  int32_t out_h, out_w;          /* output H, W */
  int32_t align_corners;         /* option */
  int32_t half_pixel_centers;    /* option */
  float scale_h, scale_w;        /* float scales (nearest, bilinear float) */
  int32_t scale_h_10, scale_w_10;/* integer scales with 10 fractional bits (bilinear int) */
} tflm_resize_params_t;

static float resize_scale(int32_t in, int32_t out, int32_t align_corners) {
  if (align_corners && out > 1) return (float)(in - 1) / (float)(out - 1);
  return (float)in / (float)out;
}

static int32_t resize_scale_10(int32_t in, int32_t out, int32_t align_corners) {
  if (align_corners && out > 1) return ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
  return ((1 << 10) * in + out / 2) / out;
}

static tflm_status_t resize_prepare(tflm_context_t *ctx, tflm_node_t *node, int32_t align_field,
                                    int32_t half_field) {
  tflm_tensor_t in, out;
  tflm_resize_params_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(
      ctx, node, 2, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8) | TFLM_TYPE_BIT(INT16),
      TFLM_IO_ANY_SHAPE, &in, &out));
  TFLM_KERNEL_CHECK(ctx, node, in.ndims == 4 && out.ndims == 4, TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, in.dims[0] == out.dims[0] && in.dims[3] == out.dims[3],
                    TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, out.dims[1] > 0 && out.dims[2] > 0, TFLM_ERR_BAD_SHAPE);
  p = (tflm_resize_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in.type;
  p->batches = in.dims[0];
  p->in_h = in.dims[1];
  p->in_w = in.dims[2];
  p->depth = in.dims[3];
  p->out_h = out.dims[1];
  p->out_w = out.dims[2];
  p->align_corners = tflm_opt_int(node, align_field, 0) != 0;
  p->half_pixel_centers = tflm_opt_int(node, half_field, 0) != 0;
  p->scale_h = resize_scale(p->in_h, p->out_h, p->align_corners);
  p->scale_w = resize_scale(p->in_w, p->out_w, p->align_corners);
  p->scale_h_10 = resize_scale_10(p->in_h, p->out_h, p->align_corners);
  p->scale_w_10 = resize_scale_10(p->in_w, p->out_w, p->align_corners);
  node->user_data = p;
  return TFLM_OK;
}

/* Source index of output index x along an axis of `size` input values. */
static int32_t nearest_source(const tflm_resize_params_t *p, int32_t x, float scale,
                              int32_t size) {
  const float offset = p->half_pixel_centers ? 0.5f : 0.0f;
  const float at = ((float)x + offset) * scale;
  int32_t v = p->align_corners ? (int32_t)roundf(at) : (int32_t)floorf(at);
  v = v < size - 1 ? v : size - 1;
  if (p->half_pixel_centers && v < 0) v = 0;
  return v;
}

static tflm_status_t nearest_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_resize_params_t *p = (const tflm_resize_params_t *)node->user_data;
  const uint8_t *in = (const uint8_t *)tflm_node_input_data(ctx, node, 0);
  uint8_t *out = (uint8_t *)tflm_node_output_data(ctx, node, 0);
  int32_t b, y, x, k, size;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  size = p->depth * tflm_type_size(p->type); /* one pixel's bytes */
  for (b = 0; b < p->batches; ++b) {
    for (y = 0; y < p->out_h; ++y) {
      const int32_t in_y = nearest_source(p, y, p->scale_h, p->in_h);
      for (x = 0; x < p->out_w; ++x) {
        const int32_t in_x = nearest_source(p, x, p->scale_w, p->in_w);
        const uint8_t *src = in + ((ptrdiff_t)(b * p->in_h + in_y) * p->in_w + in_x) * size;
        for (k = 0; k < size; ++k) *out++ = src[k];
      }
    }
  }
  return TFLM_OK;
}

/* One axis of TFLM's float bilinear: source position and the two taps around it. */
static void bilinear_taps(float value, float scale, int32_t half, int32_t size, float *at,
                          int32_t *lo, int32_t *hi) {
  int32_t floor_at, ceil_at;
  *at = half ? (value + 0.5f) * scale - 0.5f : value * scale;
  floor_at = (int32_t)floorf(*at);
  ceil_at = (int32_t)ceilf(*at);
  *lo = floor_at > 0 ? floor_at : 0;
  *hi = ceil_at < size - 1 ? ceil_at : size - 1;
}

/* Offset (in elements) of pixel (y, x) of image b. */
static int32_t pixel(const tflm_resize_params_t *p, int32_t b, int32_t y, int32_t x) {
  return ((b * p->in_h + y) * p->in_w + x) * p->depth;
}

static void bilinear_float(const tflm_resize_params_t *p, const float *in, float *out) {
  int32_t b, y, x, c, y0, y1, x0, x1;
  float in_y, in_x;
  for (b = 0; b < p->batches; ++b) {
    for (y = 0; y < p->out_h; ++y) {
      bilinear_taps((float)y, p->scale_h, p->half_pixel_centers, p->in_h, &in_y, &y0, &y1);
      for (x = 0; x < p->out_w; ++x) {
        const float *p00, *p10, *p01, *p11;
        float dy, dx;
        bilinear_taps((float)x, p->scale_w, p->half_pixel_centers, p->in_w, &in_x, &x0, &x1);
        dy = in_y - (float)y0;
        dx = in_x - (float)x0;
        p00 = in + pixel(p, b, y0, x0);
        p10 = in + pixel(p, b, y1, x0);
        p01 = in + pixel(p, b, y0, x1);
        p11 = in + pixel(p, b, y1, x1);
        for (c = 0; c < p->depth; ++c) {
          *out++ = p00[c] * (1.0f - dy) * (1.0f - dx) + p10[c] * dy * (1.0f - dx) +
                   p01[c] * (1.0f - dy) * dx + p11[c] * dy * dx + 0.0f;
        }
      }
    }
  }
}

/* One axis of TFLM's integer bilinear (10 fractional bits). */
static void bilinear_taps_10(int32_t value, int32_t scale_10, int32_t half, int32_t size,
                             int32_t *at, int32_t *lo, int32_t *hi) {
  int32_t up;
  *at = half ? value * scale_10 + scale_10 / 2 - (1 << 9) : value * scale_10;
  *lo = *at / (1 << 10) > 0 ? *at / (1 << 10) : 0;
  up = (*at + (1 << 10) - 1) / (1 << 10);
  *hi = up < size - 1 ? up : size - 1;
}

static int32_t load(const tflm_resize_params_t *p, const void *in, int32_t i) {
  return p->type == TFLM_TYPE_INT8 ? ((const int8_t *)in)[i] : ((const int16_t *)in)[i];
}

/* Weighted sum of the four taps in Q20, rounded half away from zero to an integer. */
static int32_t bilinear_value(const tflm_resize_params_t *p, const void *in, const int32_t *at,
                              const int32_t *taps, int32_t c) {
  const int64_t fy = at[0] - (1 << 10) * taps[0]; /* taps: y0, y1, x0, x1 */
  const int64_t fx = at[1] - (1 << 10) * taps[2];
  const int64_t sum =
      (int64_t)load(p, in, taps[4] + c) * ((1 << 10) - fy) * ((1 << 10) - fx) +
      (int64_t)load(p, in, taps[5] + c) * fy * ((1 << 10) - fx) +
      (int64_t)load(p, in, taps[6] + c) * ((1 << 10) - fy) * fx +
      (int64_t)load(p, in, taps[7] + c) * fy * fx;
  const int64_t round = sum > 0 ? (INT64_C(1) << 19) : -(INT64_C(1) << 19);
  return (int32_t)((sum + round) / (INT64_C(1) << 20));
}

static void bilinear_int(const tflm_resize_params_t *p, const void *in, void *out) {
  int32_t b, y, x, c, at[2], taps[8], index = 0;
  for (b = 0; b < p->batches; ++b) {
    for (y = 0; y < p->out_h; ++y) {
      bilinear_taps_10(y, p->scale_h_10, p->half_pixel_centers, p->in_h, &at[0], &taps[0],
                       &taps[1]);
      for (x = 0; x < p->out_w; ++x) {
        bilinear_taps_10(x, p->scale_w_10, p->half_pixel_centers, p->in_w, &at[1], &taps[2],
                         &taps[3]);
        taps[4] = pixel(p, b, taps[0], taps[2]);
        taps[5] = pixel(p, b, taps[1], taps[2]);
        taps[6] = pixel(p, b, taps[0], taps[3]);
        taps[7] = pixel(p, b, taps[1], taps[3]);
        for (c = 0; c < p->depth; ++c, ++index) {
          const int32_t v = bilinear_value(p, in, at, taps, c);
          if (p->type == TFLM_TYPE_INT8) {
            ((int8_t *)out)[index] = (int8_t)v;
          } else {
            ((int16_t *)out)[index] = (int16_t)v;
          }
        }
      }
    }
  }
}

static tflm_status_t bilinear_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_resize_params_t *p = (const tflm_resize_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  if (p->type == TFLM_TYPE_FLOAT32) {
    bilinear_float(p, (const float *)in, (float *)out);
  } else {
    bilinear_int(p, in, out);
  }
  return TFLM_OK;
}

static tflm_status_t nearest_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return resize_prepare(ctx, node, TFLM_OPT_RESIZE_NEAREST_NEIGHBOR_ALIGN_CORNERS,
                        TFLM_OPT_RESIZE_NEAREST_NEIGHBOR_HALF_PIXEL_CENTERS);
}

static tflm_status_t bilinear_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return resize_prepare(ctx, node, TFLM_OPT_RESIZE_BILINEAR_ALIGN_CORNERS,
                        TFLM_OPT_RESIZE_BILINEAR_HALF_PIXEL_CENTERS);
}

const tflm_registration_t tflm_op_resize_nearest_neighbor = {
    NULL, TFLM_BUILTIN_RESIZE_NEAREST_NEIGHBOR, NULL, nearest_prepare, nearest_eval,
    NULL, NULL};

const tflm_registration_t tflm_op_resize_bilinear = {
    NULL, TFLM_BUILTIN_RESIZE_BILINEAR, NULL, bilinear_prepare, bilinear_eval, NULL,
    NULL};
