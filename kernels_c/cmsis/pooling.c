/* tflm-op: AVERAGE_POOL_2D tflm_op_average_pool_2d types: float32,int8,int16 */
/* tflm-op: MAX_POOL_2D tflm_op_max_pool_2d types: float32,int8,int16 */
/* AVERAGE_POOL_2D and MAX_POOL_2D for the cmsis tag: int8 windows walked once per output
 * pixel for a block of channels at a time (the reference walks the window once per channel).
 *   max: MVE 16 channels per VMAX; DSP 4 channels per word with SSUB8 + SEL; plain C keeps
 *   the running maxima in the output row.  The maxima start at the activation minimum,
 *   which equals the reference's start at -128 followed by the clamp.
 *   average: MVE 8 channels of int16 sums per VADD; DSP 4 channels in two SXTAB16
 *   accumulators; both only for windows of at most 256 values, whose int8 sums fit int16.
 *   Otherwise (and in plain C) 4 int32 sums per channel block.  Each mean is the reference's
 *   rounded division, then the clamp.
 * float32 and int16 run the reference loops (pooling_reference.c).  No scratch memory. */
#include <stddef.h>
#include <stdint.h>

#include "cmsis_simd.h"
#include "pooling_reference.h"
#include "tflm_kernel.h"

/* Windows of at most this many values have int8 sums that fit int16 (|sum| <= 32768). */
#define CMSIS_POOL_INT16_SUM_MAX 256

static int32_t clamp_mean(const tflm_pool_params_t *p, int32_t sum, int32_t count) {
  int32_t value = tflm_pool_round_mean(sum, count);
  value = value > p->act_min ? value : p->act_min;
  return value < p->act_max ? value : p->act_max;
}

/* Maxima of channels [c, depth) of one output pixel; `img` is image n of the input. */
static void max_pixel(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                      const int8_t *img, int8_t *out) {
  const int32_t depth = p->depth, row = p->in_w * depth;
  int32_t c = 0, y, x;
#if defined(CMSIS_MVE)
  const int8x16_t lo = vdupq_n_s8((int8_t)p->act_min), hi = vdupq_n_s8((int8_t)p->act_max);
  for (; c < depth; c += 16) {
    const mve_pred16_t lanes = vctp8q((uint32_t)(depth - c));
    int8x16_t m = lo;
    for (y = w->y0; y < w->y1; ++y) {
      const int8_t *px = img + y * row + w->x0 * depth + c;
      for (x = w->x0; x < w->x1; ++x, px += depth) m = vmaxq_s8(m, vldrbq_z_s8(px, lanes));
    }
    vstrbq_p_s8(out + c, vminq_s8(m, hi), lanes);
  }
#else
#if defined(CMSIS_DSP)
  const int32_t lo4 = (int32_t)(((uint32_t)p->act_min & 0xffu) * 0x01010101u);
  const int32_t hi4 = (int32_t)(((uint32_t)p->act_max & 0xffu) * 0x01010101u);
  for (; c + 4 <= depth; c += 4) {
    int32_t m = lo4, diff;
    for (y = w->y0; y < w->y1; ++y) {
      const int8_t *px = img + y * row + w->x0 * depth + c;
      for (x = w->x0; x < w->x1; ++x, px += depth) {
        const int32_t v = cmsis_read4(px);
        /* Per byte: v >= m sets GE and SEL takes v.  Kept in one statement with its SSUB8. */
        __asm__("ssub8 %[d], %[v], %[m]\n\tsel %[m], %[v], %[m]"
                : [m] "+r"(m), [d] "=&r"(diff)
                : [v] "r"(v)
                : "cc");
      }
    }
    __asm__("ssub8 %[d], %[hi], %[m]\n\tsel %[m], %[m], %[hi]"
            : [m] "+r"(m), [d] "=&r"(diff)
            : [hi] "r"(hi4)
            : "cc");
    cmsis_write4(out + c, m);
  }
#endif
  if (c < depth) {
    int32_t k;
    for (k = c; k < depth; ++k) out[k] = (int8_t)p->act_min;
    for (y = w->y0; y < w->y1; ++y) {
      const int8_t *px = img + y * row + w->x0 * depth;
      for (x = w->x0; x < w->x1; ++x, px += depth) {
        for (k = c; k < depth; ++k) out[k] = px[k] > out[k] ? px[k] : out[k];
      }
    }
    for (k = c; k < depth; ++k) out[k] = (int8_t)(out[k] < p->act_max ? out[k] : p->act_max);
  }
#endif
}

/* Means of all channels of one output pixel. */
static void avg_pixel(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                      const int8_t *img, int8_t *out) {
  const int32_t depth = p->depth, row = p->in_w * depth;
  const int32_t count = (w->y1 - w->y0) * (w->x1 - w->x0);
  int32_t c = 0, y, x;
#if defined(CMSIS_MVE)
  if (count <= CMSIS_POOL_INT16_SUM_MAX) {
    for (; c < depth; c += 8) {
      int32_t k;
      const int32_t n = depth - c < 8 ? depth - c : 8;
      const mve_pred16_t lanes = vctp16q((uint32_t)n);
      int16x8_t s = vdupq_n_s16(0);
      int16_t sums[8];
      for (y = w->y0; y < w->y1; ++y) {
        const int8_t *px = img + y * row + w->x0 * depth + c;
        for (x = w->x0; x < w->x1; ++x, px += depth) s = vaddq_s16(s, vldrbq_z_s16(px, lanes));
      }
      vst1q_s16(sums, s);
      for (k = 0; k < n; ++k) out[c + k] = (int8_t)clamp_mean(p, sums[k], count);
    }
  }
#elif defined(CMSIS_DSP)
  if (count <= CMSIS_POOL_INT16_SUM_MAX) {
    for (; c + 4 <= depth; c += 4) {
      int32_t even = 0, odd = 0; /* int16 sums of channels c, c + 2 and c + 1, c + 3 */
      for (y = w->y0; y < w->y1; ++y) {
        const int8_t *px = img + y * row + w->x0 * depth + c;
        for (x = w->x0; x < w->x1; ++x, px += depth) {
          const int32_t v = cmsis_read4(px);
          even = __sxtab16(even, v);
          odd = cmsis_sxtab16_ror8(odd, v);
        }
      }
      out[c] = (int8_t)clamp_mean(p, (int16_t)(uint16_t)((uint32_t)even & 0xffffu), count);
      out[c + 1] = (int8_t)clamp_mean(p, (int16_t)(uint16_t)((uint32_t)odd & 0xffffu), count);
      out[c + 2] = (int8_t)clamp_mean(p, (int16_t)(uint16_t)((uint32_t)even >> 16), count);
      out[c + 3] = (int8_t)clamp_mean(p, (int16_t)(uint16_t)((uint32_t)odd >> 16), count);
    }
  }
#endif
  for (; c + 4 <= depth; c += 4) {
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (y = w->y0; y < w->y1; ++y) {
      const int8_t *px = img + y * row + w->x0 * depth + c;
      for (x = w->x0; x < w->x1; ++x, px += depth) {
        s0 += px[0];
        s1 += px[1];
        s2 += px[2];
        s3 += px[3];
      }
    }
    out[c] = (int8_t)clamp_mean(p, s0, count);
    out[c + 1] = (int8_t)clamp_mean(p, s1, count);
    out[c + 2] = (int8_t)clamp_mean(p, s2, count);
    out[c + 3] = (int8_t)clamp_mean(p, s3, count);
  }
  for (; c < depth; ++c) {
    int32_t s = 0;
    for (y = w->y0; y < w->y1; ++y) {
      const int8_t *px = img + y * row + w->x0 * depth + c;
      for (x = w->x0; x < w->x1; ++x, px += depth) s += *px;
    }
    out[c] = (int8_t)clamp_mean(p, s, count);
  }
}

typedef void (*cmsis_pool_pixel_fn)(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                                    const int8_t *img, int8_t *out);

static void pool_int8(const tflm_pool_params_t *p, const int8_t *in, int8_t *out,
                      cmsis_pool_pixel_fn pixel) {
  const int32_t image = p->in_h * p->in_w * p->depth;
  int32_t n, y, x;
  tflm_pool_window_t w;
  for (n = 0; n < p->batches; ++n) {
    for (y = 0; y < p->out_h; ++y) {
      for (x = 0; x < p->out_w; ++x, out += p->depth) {
        tflm_pool_window(p, y, x, &w);
        pixel(p, &w, in + (size_t)n * (size_t)image, out);
      }
    }
  }
}

static tflm_status_t cmsis_avg_pool_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_pool_params_t *p = (const tflm_pool_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  if (p->type == TFLM_TYPE_INT8) {
    pool_int8(p, (const int8_t *)in, (int8_t *)out, avg_pixel);
    return TFLM_OK;
  }
  tflm_pool_run(p, (const uint8_t *)in, (uint8_t *)out, tflm_type_size(p->type),
                p->type == TFLM_TYPE_FLOAT32 ? tflm_avg_pool_float : tflm_avg_pool_int16);
  return TFLM_OK;
}

static tflm_status_t cmsis_max_pool_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_pool_params_t *p = (const tflm_pool_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  if (p->type == TFLM_TYPE_INT8) {
    pool_int8(p, (const int8_t *)in, (int8_t *)out, max_pixel);
    return TFLM_OK;
  }
  tflm_pool_run(p, (const uint8_t *)in, (uint8_t *)out, tflm_type_size(p->type),
                p->type == TFLM_TYPE_FLOAT32 ? tflm_max_pool_float : tflm_max_pool_int16);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_average_pool_2d = {
    NULL, TFLM_BUILTIN_AVERAGE_POOL_2D, NULL, tflm_pool_prepare, cmsis_avg_pool_eval,
    NULL, NULL};

const tflm_registration_t tflm_op_max_pool_2d = {
    NULL, TFLM_BUILTIN_MAX_POOL_2D, NULL, tflm_pool_prepare, cmsis_max_pool_eval,
    NULL, NULL};
