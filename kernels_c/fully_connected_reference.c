/* FULLY_CONNECTED reference kernels: float32, int8 (per-tensor or per-channel int8 filter,
 * int32 bias) and int16 activations with a per-tensor int8 filter and int64 bias.
 *
 * Each output is the dot product over accum_depth in order, then the bias, then the
 * activation clamp: TFLM's order, so float results are bit-identical.  Layouts and the
 * persistent block: fully_connected_common.h; prepare: fully_connected_common.c. */
#include <stddef.h>
#include <stdint.h>

#include "fully_connected_hybrid.h"
#include "fully_connected_reference.h"
#include "fully_connected_sparse.h"
#include "tflm_compiler.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Dot product of one weight row with one input row.  Offsets are passed by value so the
 * compiler keeps them in registers (int8 stores could alias the parameter block). */
static int32_t dot_int8(const int8_t *weights, const int8_t *row, int32_t depth,
                        int32_t filter_offset, int32_t input_offset) {
  int32_t acc = 0, d;
  if (filter_offset == 0) { /* symmetric weights, the common case: one add less per step */
    for (d = 0; d < depth; ++d) {
      acc = tflm_mac_wrap(acc, weights[d], (int32_t)row[d] + input_offset);
    }
    return acc;
  }
  for (d = 0; d < depth; ++d) {
    acc = tflm_mac_wrap(acc, (int32_t)weights[d] + filter_offset, (int32_t)row[d] + input_offset);
  }
  return acc;
}

void tflm_fully_connected_int8(const tflm_fc_params_t *p, const tflm_requant_t *requant,
                               const int8_t *input,
                               const int8_t *filter, const int32_t *bias, int8_t *output) {
  const int32_t depth = p->accum_depth, outputs = p->output_depth, step = p->channel_step;
  const int32_t filter_offset = p->filter_offset, input_offset = p->input_offset;
  const int32_t output_offset = p->output_offset, lo = p->act_min, hi = p->act_max;
  /* Per-tensor weights share one multiplier: split its shift once, not per output. */
  int32_t multiplier = requant->multipliers[0];
  int32_t left = requant->shifts[0] > 0 ? requant->shifts[0] : 0;
  int32_t right = requant->shifts[0] > 0 ? 0 : -requant->shifts[0];
  int32_t b, oc;
  for (b = 0; b < p->batches; ++b) {
    const int8_t *row = input + b * depth;
    for (oc = 0; oc < outputs; ++oc) {
      int32_t acc = dot_int8(filter + oc * depth, row, depth, filter_offset, input_offset);
      if (bias != NULL) acc = tflm_add_wrap(acc, bias[oc]);
      if (step != 0) {
        multiplier = requant->multipliers[oc];
        left = requant->shifts[oc] > 0 ? requant->shifts[oc] : 0;
        right = requant->shifts[oc] > 0 ? 0 : -requant->shifts[oc];
      }
      /* tflm_multiply_by_quantized_multiplier with the shift already split. */
      acc = tflm_rounding_divide_by_pot(
                tflm_saturating_rounding_doubling_high_mul((int32_t)((uint32_t)acc << left),
                                                           multiplier),
                right);
      acc = tflm_add_wrap(acc, output_offset);
      acc = acc > lo ? acc : lo;
      *output++ = (int8_t)(acc < hi ? acc : hi);
    }
  }
}

/* 16x8: no input or output zero point (int16 is symmetric), 64-bit accumulator and bias. */
void tflm_fully_connected_int16(const tflm_fc_params_t *p, const tflm_requant_t *requant,
                               const int16_t *input,
                                const int8_t *filter, const int64_t *bias, int16_t *output) {
  const int32_t *multipliers = requant->multipliers;
  const int32_t *shifts = requant->shifts;
  int32_t b, oc, d;
  for (b = 0; b < p->batches; ++b) {
    const int16_t *row = input + b * p->accum_depth;
    for (oc = 0; oc < p->output_depth; ++oc) {
      const int8_t *weights = filter + oc * p->accum_depth;
      const int32_t q = oc * p->channel_step;
      int64_t acc = 0;
      int32_t scaled;
      for (d = 0; d < p->accum_depth; ++d) {
        acc += (int64_t)(((int32_t)weights[d] + p->filter_offset) * (int32_t)row[d]);
      }
      if (bias != NULL) acc = tflm_add_wrap64(acc, bias[oc]);
      scaled = tflm_multiply_by_quantized_multiplier_64(acc, multipliers[q], shifts[q]);
      scaled = scaled > p->act_min ? scaled : p->act_min;
      *output++ = (int16_t)(scaled < p->act_max ? scaled : p->act_max);
    }
  }
}

void tflm_fully_connected_float32(const tflm_fc_params_t *p, const float *input,
                                  const float *filter, const float *bias, float *output) {
  int32_t b, oc, d;
  for (b = 0; b < p->batches; ++b) {
    const float *row = input + b * p->accum_depth;
    for (oc = 0; oc < p->output_depth; ++oc) {
      const float *weights = filter + oc * p->accum_depth;
      float acc = 0.0f;
      for (d = 0; d < p->accum_depth; ++d) {
        acc += row[d] * weights[d];
      }
      /* TFLM adds a bias of 0.0f when there is none; -0.0f + 0.0f is +0.0f. */
      acc += bias != NULL ? bias[oc] : 0.0f;
      *output++ = tflm_clamp_float(acc, p->float_min, p->float_max);
    }
  }
}

static TFLM_WEIGHTED_RUN_FLOAT(fc_run_float32, tflm_fully_connected_float32)
static TFLM_WEIGHTED_RUN_QUANT(fc_run_int8, tflm_fully_connected_int8)
static TFLM_WEIGHTED_RUN_QUANT(fc_run_int16, tflm_fully_connected_int16)

static void fc_block(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                     const int8_t *rows, int8_t *room, int32_t first, int32_t count) {
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)call->params;
  (void)room;
  tflm_fully_connected_block(ctx, call, rows, first, count,
                             p->type == TFLM_TYPE_INT8 ? fc_run_int8 : fc_run_int16);
}

/* The plain loops of the node's type, per decoded block when the filter is compressed, or
 * over its rows in place when they are row-sparse (int8 / int16 only). */
static TFLM_ALWAYS_INLINE tflm_status_t fc_run(tflm_context_t *ctx,
                                               const tflm_weighted_call_t *call, int32_t type) {
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)call->params;
  tflm_status_t banded;
  if (tflm_fully_connected_band(ctx, call, &banded)) return banded; /* a stage's reduction */
  if (p->decode_scratch == TFLM_FC_SPARSE_ROWS) { /* int8 only: prepare refuses others */
    return tflm_fully_connected_sparse_int8(ctx, call);
  }
  if (p->decode_scratch >= 0) {
    return tflm_weighted_decoded(ctx, call, p->decode_scratch, p->output_depth,
                                 p->accum_depth, fc_block);
  }
  if (type == TFLM_TYPE_FLOAT32) return fc_run_float32(ctx, call);
  return type == TFLM_TYPE_INT8 ? fc_run_int8(ctx, call) : fc_run_int16(ctx, call);
}

TFLM_WEIGHTED_REFERENCE_DEFINE(fully_connected, tflm_fully_connected_requant,
                               tflm_fully_connected_hybrid_eval, fc_run);
