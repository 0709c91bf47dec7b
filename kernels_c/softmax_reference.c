/* SOFTMAX over the innermost dimension, bit-exact with TFLM's reference kernels.
 *   float32 -> float32: exp((x - max) * beta) / sum, in float with expf, in TFLM's order.
 *   int8 -> int8 (scale 1/256, zero point -128) and int8 -> int16 (scale 1/65536, zero
 *   point -32768): gemmlowp-style fixed point, input differences scaled to Q5.26, exps
 *   accumulated in Q12.19 (see tflm_fixedpoint.h).
 *   int16 -> int16 (scale 1/32768, zero point 0): TFLM's table path, exp and 1/(1+x) from
 *   interpolated 513-entry tables built in prepare (see tflm_lut.h). */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "softmax_reference.h"
#include "tflm_fixedpoint.h"
#include "tflm_kernel.h"
#include "tflm_lut.h"
#include "tflm_quant.h"

/* Float softmax of one row, in the order of TFLM's reference: max, exps and their sum, divide. */
static void tflm_softmax_row_float(const float *in, float *out, int32_t depth, float beta) {
  float max = -FLT_MAX; /* std::numeric_limits<float>::lowest() */
  float sum = 0.0f;
  int32_t c;
  for (c = 0; c < depth; ++c) {
    max = (max < in[c]) ? in[c] : max; /* std::max(max, x) keeps max when x is NaN */
  }
  for (c = 0; c < depth; ++c) {
    out[c] = expf((in[c] - max) * beta);
    sum += out[c];
  }
  for (c = 0; c < depth; ++c) {
    out[c] = out[c] / sum;
  }
}

void tflm_softmax_float(const tflm_softmax_params_t *p, const float *in, float *out) {
  int32_t i;
  for (i = 0; i < p->outer_size; ++i) {
    tflm_softmax_row_float(in + i * p->depth, out + i * p->depth, p->depth, p->beta);
  }
}

/* exp(diff * beta * scale) in Q0.31 for a non-positive difference diff >= diff_min. */
int32_t tflm_softmax_exp(const tflm_softmax_params_t *p, int32_t diff) {
  int32_t scaled = tflm_multiply_by_quantized_multiplier(diff, p->input_multiplier,
                                                         p->input_left_shift); /* Q5.26 */
  return tflm_fp_exp_on_negative_values(scaled, TFLM_SOFTMAX_DIFF_INTEGER_BITS);
}

/* Row maximum and 1/sum(exp): returns the reciprocal (Q0.31) and the shift that turns
 * exp * reciprocal into the output's 2^output_bits steps. */
static int32_t tflm_softmax_row_scale(const tflm_softmax_params_t *p, const int8_t *in,
                                      int32_t max, int32_t output_bits, int32_t *shift) {
  int32_t sum = 0; /* Q12.19 */
  int32_t bits_over_unit;
  int32_t reciprocal;
  int32_t c;
  for (c = 0; c < p->depth; ++c) {
    int32_t diff = (int32_t)in[c] - max;
    if (diff >= p->diff_min) {
      int32_t term = tflm_rounding_divide_by_pot(tflm_softmax_exp(p, diff),
                                                TFLM_SOFTMAX_ACCUM_INTEGER_BITS);
      sum = (int32_t)((uint32_t)sum + (uint32_t)term); /* wraps like TFLM past 4096 */
    }
  }
  reciprocal = tflm_fp_reciprocal(sum, TFLM_SOFTMAX_ACCUM_INTEGER_BITS, &bits_over_unit);
  *shift = bits_over_unit + 31 - output_bits;
  return reciprocal;
}

/* int8 input, int8 or int16 output (out_min = -128 or -32768, out_bits = 8 or 16).
 * Returns 0 when the row's sum of exps is too large for the output format (TFLM aborts). */
static int32_t tflm_softmax_row_int8(const tflm_softmax_params_t *p, const int8_t *in,
                                     int8_t *out8, int16_t *out16) {
  const int32_t out_bits = out8 != NULL ? 8 : 16;
  const int32_t out_min = out8 != NULL ? -128 : -32768;
  int32_t max = -128, reciprocal, shift, c;
  for (c = 0; c < p->depth; ++c) {
    max = in[c] > max ? in[c] : max;
  }
  reciprocal = tflm_softmax_row_scale(p, in, max, out_bits, &shift);
  if (shift < 0 || shift > 31) {
    return 0;
  }
  for (c = 0; c < p->depth; ++c) {
    int32_t diff = (int32_t)in[c] - max;
    int32_t value = out_min;
    if (diff >= p->diff_min) {
      int32_t exp_q31 = tflm_softmax_exp(p, diff);
      int32_t prob = tflm_saturating_rounding_doubling_high_mul(reciprocal, exp_q31);
      value = tflm_rounding_divide_by_pot(prob, shift) + out_min;
    }
    tflm_softmax_store(out8, out16, c, value);
  }
  return 1;
}

tflm_status_t tflm_softmax_int8(const tflm_softmax_params_t *p, const int8_t *in, void *out) {
  int32_t i, ok = 1;
  for (i = 0; i < p->outer_size && ok; ++i) {
    int32_t offset = i * p->depth;
    if (p->output_type == TFLM_TYPE_INT8) {
      ok = tflm_softmax_row_int8(p, in + offset, (int8_t *)out + offset, NULL);
    } else {
      ok = tflm_softmax_row_int8(p, in + offset, NULL, (int16_t *)out + offset);
    }
  }
  return ok ? TFLM_OK : TFLM_ERROR;
}

/* exp(in - max) from the table: the difference rescaled to [-65535, 0] ~ [-10, 0], then
 * re-centred on the table's symmetric int16 input range. */
static int32_t tflm_softmax_exp_int16(const tflm_softmax_int16_data_t *d, int32_t diff) {
  int32_t scaled = tflm_multiply_by_quantized_multiplier(diff, d->params.input_multiplier,
                                                         d->params.input_left_shift);
  int32_t centred = scaled + 32767;
  centred = centred < -32768 ? -32768 : (centred > 32767 ? 32767 : centred);
  return tflm_lut_lookup_int16((int16_t)centred, d->exp_lut);
}

/* 1 / sum in Q0.15 from the table, with the shift that undoes the sum's normalisation. */
static int32_t tflm_softmax_reciprocal_int16(const tflm_softmax_int16_data_t *d, int32_t sum,
                                             int32_t *right_shift) {
  const int32_t headroom_plus_one = tflm_fp_count_leading_zeros((uint32_t)sum);
  /* The sum normalised to [1, 2) in Q1.15 ... */
  int32_t shifted = (int32_t)((((int64_t)sum << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
  /* ... minus one, re-centred from [0, 65535] to the table's [-32768, 32767]. */
  int32_t centred = shifted - (INT32_C(32768) + INT32_C(65536));
  centred = centred < -32768 ? -32768 : (centred > 32767 ? 32767 : centred);
  *right_shift = 31 - headroom_plus_one;
  return tflm_lut_lookup_int16((int16_t)centred, d->reciprocal_lut);
}

/* One row; the exps are cached in the output row, as TFLM does. */
static void tflm_softmax_row_int16(const tflm_softmax_int16_data_t *d, const int16_t *in,
                                   int16_t *out) {
  int32_t max = -32768, sum = 0, reciprocal, shift, c;
  for (c = 0; c < d->params.depth; ++c) {
    max = in[c] > max ? in[c] : max;
  }
  for (c = 0; c < d->params.depth; ++c) {
    out[c] = (int16_t)tflm_softmax_exp_int16(d, (int32_t)in[c] - max);
    sum += out[c]; /* Q16.15 */
  }
  reciprocal = tflm_softmax_reciprocal_int16(d, sum, &shift);
  for (c = 0; c < d->params.depth; ++c) {
    int64_t product = (int64_t)out[c] * (int64_t)reciprocal + ((int64_t)1 << (shift - 1));
    int32_t value = (int32_t)(product >> shift);
    out[c] = (int16_t)(value < 0 ? 0 : (value > 32767 ? 32767 : value));
  }
}

void tflm_softmax_int16(const tflm_softmax_int16_data_t *d, const int16_t *in,
                        int16_t *out) {
  int32_t i;
  for (i = 0; i < d->params.outer_size; ++i) {
    tflm_softmax_row_int16(d, in + i * d->params.depth, out + i * d->params.depth);
  }
}

