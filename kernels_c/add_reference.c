/* ADD with numpy-style broadcasting up to 6-D, bit-exact with TFLM's reference kernels.
 *   float32: a + b clamped to the fused activation's range.
 *   int8 / int16: TFLM's general quantised add.  Both inputs are shifted left (20 bits for
 *   int8, 15 for int16) for headroom, rescaled to a common scale of twice the larger input
 *   scale, summed, then rescaled to the output scale; all multipliers are computed in
 *   prepare in double exactly as TFLM does.  (TFLM ignores AddOptions.pot_scale_int16 and
 *   always takes this general path for int16.)
 *   int32: plain a + b without quantisation, the activation ignored (as TFLM). */
#include <stddef.h>
#include <stdint.h>

#include "add_reference.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

void tflm_add_float(const tflm_add_params_t *p, const void *a, int32_t a_step,
                    const void *b, int32_t b_step, void *out, int32_t n) {
  const float *x = (const float *)a;
  const float *y = (const float *)b;
  float *z = (float *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    float sum = x[i * a_step] + y[i * b_step];
    sum = sum < p->act_min_f ? p->act_min_f : sum; /* std::max, then std::min */
    z[i] = p->act_max_f < sum ? p->act_max_f : sum;
  }
}

void tflm_add_int32(const tflm_add_params_t *p, const void *a, int32_t a_step,
                    const void *b, int32_t b_step, void *out, int32_t n) {
  const int32_t *x = (const int32_t *)a;
  const int32_t *y = (const int32_t *)b;
  int32_t *z = (int32_t *)out;
  int32_t i;
  (void)p;
  for (i = 0; i < n; ++i) {
    /* Wraps on overflow like TFLM's int32 add, without signed-overflow UB. */
    z[i] = (int32_t)((uint32_t)x[i * a_step] + (uint32_t)y[i * b_step]);
  }
}

/* The quantised sum of one pair of stored values, clamped to the activation range. */
static int32_t tflm_add_quantized(const tflm_add_params_t *p, int32_t a, int32_t b) {
  const int32_t shifted1 = (a + p->input1_offset) * ((int32_t)1 << p->left_shift);
  const int32_t shifted2 = (b + p->input2_offset) * ((int32_t)1 << p->left_shift);
  const int32_t scaled1 =
      tflm_multiply_by_quantized_multiplier(shifted1, p->input1_multiplier, p->input1_shift);
  const int32_t scaled2 =
      tflm_multiply_by_quantized_multiplier(shifted2, p->input2_multiplier, p->input2_shift);
  int32_t sum = tflm_multiply_by_quantized_multiplier(scaled1 + scaled2, p->output_multiplier,
                                                      p->output_shift) +
                p->output_offset;
  sum = sum > p->act_min ? sum : p->act_min;
  return sum < p->act_max ? sum : p->act_max;
}

void tflm_add_int8(const tflm_add_params_t *p, const void *a, int32_t a_step,
                   const void *b, int32_t b_step, void *out, int32_t n) {
  const int8_t *x = (const int8_t *)a;
  const int8_t *y = (const int8_t *)b;
  int8_t *z = (int8_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = (int8_t)tflm_add_quantized(p, x[i * a_step], y[i * b_step]);
  }
}

void tflm_add_int16(const tflm_add_params_t *p, const void *a, int32_t a_step,
                    const void *b, int32_t b_step, void *out, int32_t n) {
  const int16_t *x = (const int16_t *)a;
  const int16_t *y = (const int16_t *)b;
  int16_t *z = (int16_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = (int16_t)tflm_add_quantized(p, x[i * a_step], y[i * b_step]);
  }
}

/* Broadcast walk: one row call per index of the 5 outer dimensions, advancing the input
 * offsets like an odometer (a dimension that wraps rewinds its contribution). */
void tflm_add_broadcast(const tflm_add_params_t *p, const uint8_t *a, const uint8_t *b,
                        uint8_t *out, int32_t size, tflm_add_row_fn row) {
  const int32_t inner = p->out_dims[TFLM_MAX_DIMS - 1];
  int32_t index[TFLM_MAX_DIMS - 1] = {0};
  int32_t offset1 = 0, offset2 = 0, done, k;
  for (done = 0; done < p->count; done += inner) {
    row(p, a + (size_t)offset1 * (size_t)size, p->strides1[TFLM_MAX_DIMS - 1],
        b + (size_t)offset2 * (size_t)size, p->strides2[TFLM_MAX_DIMS - 1],
        out + (size_t)done * (size_t)size, inner);
    for (k = TFLM_MAX_DIMS - 2; k >= 0; --k) {
      offset1 += p->strides1[k];
      offset2 += p->strides2[k];
      if (++index[k] < p->out_dims[k]) {
        break;
      }
      offset1 -= p->strides1[k] * p->out_dims[k];
      offset2 -= p->strides2[k] * p->out_dims[k];
      index[k] = 0;
    }
  }
}

void tflm_add_reference(const tflm_add_params_t *p, const void *a, const void *b, void *out) {
  tflm_add_row_fn row = tflm_add_float;
  int32_t size = 4;
  if (p->type == TFLM_TYPE_INT8) {
    row = tflm_add_int8;
    size = 1;
  } else if (p->type == TFLM_TYPE_INT16) {
    row = tflm_add_int16;
    size = 2;
  } else if (p->type == TFLM_TYPE_INT32) {
    row = tflm_add_int32;
  }
  if (!p->broadcast) {
    row(p, a, 1, b, 1, out, p->count);
  } else if (p->count > 0) {
    tflm_add_broadcast(p, (const uint8_t *)a, (const uint8_t *)b, (uint8_t *)out, size, row);
  }
}
