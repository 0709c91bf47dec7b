/* tflm-op: FULLY_CONNECTED tflm_op_fully_connected types: float32,int8,int16 litert: hybrid */
/* FULLY_CONNECTED for the cmsis tag: int8 with symmetric weights (filter zero point 0, the
 * int8 schema's rule) as dot products of several weight rows at once (cmsis_simd.h):
 *   MVE  4 weight rows per pass over the input row, 16 MACs per VMLADAVA;
 *   DSP  the input rows widened to int16 (offset added) once, then 2 rows x 2 weight rows
 *        (a single or last odd row: 1 row x 4 weight rows, the input held in registers);
 *   C    one dot product at a time.
 * Integer sums are exact, so the result is the reference's.  float32, int16 and weights
 * with a zero point run the reference kernels (fully_connected_reference.c).
 *
 * Scratch: 4 * round4(accum_depth) bytes for every int8 node, whatever the instruction set
 * (DSP: two widened input rows). */
#include <stddef.h>
#include <stdint.h>

#include "cmsis_simd.h"
#include "fully_connected_common.h"
#include "fully_connected_hybrid.h"
#include "fully_connected_reference.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "weighted_common.h"

/* Persistent block of the tag, in node->user_data (16 bytes on every target). */
typedef struct {
  uint64_t shared;  /* address of the tflm_fc_params_t made by the shared prepare */
  int32_t scratch;  /* scratch handle; -1 when the reference kernels run */
  int32_t unused;
} cmsis_fc_node_t;

typedef struct {
  const tflm_fc_params_t *p;
  tflm_requant_t requant;
  const int8_t *filter;
  const int32_t *bias; /* NULL when absent */
  int8_t *scratch;
  int32_t fast;        /* CMSIS_REQUANT_STRICT, _FAST or 0 (cmsis_requant_mode) */
} cmsis_fc_job_t;

static int8_t finish(const cmsis_fc_job_t *job, int32_t acc, int32_t oc) {
  const tflm_fc_params_t *p = job->p;
  const int32_t q = oc * p->channel_step;
  if (job->bias != NULL) acc = tflm_add_wrap(acc, job->bias[oc]);
  if (job->fast == CMSIS_REQUANT_STRICT) {
    const int32_t value = cmsis_requantize_strict(acc, job->requant.multipliers[q],
                                                  job->requant.shifts[q], p->output_offset);
    return (int8_t)(value > p->act_min ? (value < p->act_max ? value : p->act_max)
                                       : p->act_min);
  }
  if (job->fast == CMSIS_REQUANT_FAST) {
    return (int8_t)cmsis_requantize_fast(acc, job->requant.multipliers[q],
                                         -job->requant.shifts[q], p->output_offset,
                                         p->act_min, p->act_max);
  }
  return (int8_t)cmsis_requantize(acc, job->requant.multipliers[q], job->requant.shifts[q],
                                  p->output_offset, p->act_min, p->act_max);
}

#if defined(CMSIS_MVE)
static void fc_rows(const cmsis_fc_job_t *job, const int8_t *input, int8_t *output) {
  const int32_t depth = job->p->accum_depth, outputs = job->p->output_depth;
  const int32_t offset = job->p->input_offset;
  const int8_t *rows[4];
  int32_t b, oc, j, dot[4], sums[4];
  for (b = 0; b < job->p->batches; ++b, input += depth, output += outputs) {
    for (oc = 0; oc < outputs; oc += 4) {
      const int32_t count = outputs - oc < 4 ? outputs - oc : 4;
      for (j = 0; j < 4; ++j) rows[j] = job->filter + (oc + (j < count ? j : 0)) * depth;
      cmsis_mve_dot4_sum_a(rows, input, depth, dot, sums);
      for (j = 0; j < count; ++j) {
        const int32_t acc = (int32_t)((uint32_t)dot[j] + (uint32_t)offset * (uint32_t)sums[j]);
        output[oc + j] = finish(job, acc, oc + j);
      }
    }
  }
}
#elif defined(CMSIS_DSP)
/* One input row (the last of an odd count) against four weight rows at a time
 * (cmsis_dot_1x4_held), the output_depth % 4 last ones two at a time. */
static void fc_one_row(const cmsis_fc_job_t *job, const int8_t *input, int8_t *output) {
  const int32_t depth = job->p->accum_depth, outputs = job->p->output_depth;
  int16_t *row = (int16_t *)(void *)job->scratch;
  int32_t oc;
  cmsis_widen_row(input, row, depth, job->p->input_offset);
  for (oc = 0; oc + 4 <= outputs && depth >= 4; oc += 4) {
    const int8_t *w0 = job->filter + oc * depth;
    int32_t acc[4] = {0, 0, 0, 0}, i, j;
    cmsis_dot_1x4_held(row, w0, depth, depth >> 2, acc);
    for (i = depth & ~3; i < depth; ++i) { /* the depth % 4 tail, in order after the groups */
      for (j = 0; j < 4; ++j) acc[j] = tflm_mac_wrap(acc[j], w0[j * depth + i], row[i]);
    }
    for (j = 0; j < 4; ++j) output[oc + j] = finish(job, acc[j], oc + j);
  }
  for (; oc < outputs; oc += 2) {
    const int8_t *w0 = job->filter + oc * depth;
    int32_t acc[2] = {0, 0};
    cmsis_dot_1x2(row, w0, oc + 1 < outputs ? w0 + depth : w0, depth, acc);
    output[oc] = finish(job, acc[0], oc);
    if (oc + 1 < outputs) output[oc + 1] = finish(job, acc[1], oc + 1);
  }
}

/* Pairs of input rows x pairs of weight rows; a missing second weight row repeats the first. */
static void fc_rows(const cmsis_fc_job_t *job, const int8_t *input, int8_t *output) {
  const int32_t depth = job->p->accum_depth, outputs = job->p->output_depth;
  int16_t *pair = (int16_t *)(void *)job->scratch;
  int32_t b, oc;
  for (b = 0; b + 1 < job->p->batches; b += 2) {
    int8_t *out0 = output + b * outputs;
    int8_t *out1 = out0 + outputs;
    cmsis_widen_pair(input + b * depth, input + (b + 1) * depth, pair, depth,
                     job->p->input_offset);
    for (oc = 0; oc < outputs; oc += 2) {
      const int8_t *w0 = job->filter + oc * depth;
      const int8_t *w1 = oc + 1 < outputs ? w0 + depth : w0;
      int32_t acc[4] = {0, 0, 0, 0};
      cmsis_dot_2x2(pair, w0, w1, depth, acc);
      out0[oc] = finish(job, acc[0], oc);
      out1[oc] = finish(job, acc[2], oc);
      if (oc + 1 < outputs) {
        out0[oc + 1] = finish(job, acc[1], oc + 1);
        out1[oc + 1] = finish(job, acc[3], oc + 1);
      }
    }
  }
  if (b < job->p->batches) fc_one_row(job, input + b * depth, output + b * outputs);
}
#else
static void fc_rows(const cmsis_fc_job_t *job, const int8_t *input, int8_t *output) {
  const int32_t depth = job->p->accum_depth, outputs = job->p->output_depth;
  int32_t b, oc;
  for (b = 0; b < job->p->batches; ++b, input += depth) {
    for (oc = 0; oc < outputs; ++oc) {
      const int32_t acc =
          cmsis_dot_offset(input, job->filter + oc * depth, depth, job->p->input_offset);
      *output++ = finish(job, acc, oc);
    }
  }
}
#endif

static tflm_status_t cmsis_fc_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  cmsis_fc_node_t *mine;
  const tflm_fc_params_t *p;
  tflm_status_t status = tflm_fully_connected_prepare(ctx, node);
  if (status != TFLM_OK) return status;
  p = (const tflm_fc_params_t *)node->user_data;
  mine = (cmsis_fc_node_t *)tflm_alloc_persistent(ctx, (uint32_t)sizeof(cmsis_fc_node_t));
  TFLM_KERNEL_CHECK(ctx, node, mine != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  mine->shared = (uint64_t)(uintptr_t)p;
  mine->scratch = -1;
  mine->unused = 0;
  if (p->type == TFLM_TYPE_INT8 && p->filter_offset == 0) {
    status = tflm_request_scratch(ctx, 4u * (uint32_t)CMSIS_ROUND4(p->accum_depth),
                                  &mine->scratch);
    if (status != TFLM_OK) return status;
  }
  node->user_data = mine;
  return TFLM_OK;
}

static void fc_int8(tflm_context_t *ctx, const cmsis_fc_node_t *mine,
                    const tflm_fc_params_t *p, const tflm_requant_t *requant,
                    const int8_t *input, const int8_t *filter, const int32_t *bias,
                    int8_t *output) {
  cmsis_fc_job_t job;
  if (mine->scratch < 0) { /* weights with a zero point */
    tflm_fully_connected_int8(p, requant, input, filter, bias, output);
    return;
  }
  job.p = p;
  job.requant = *requant;
  job.filter = filter;
  job.bias = bias;
  job.scratch = (int8_t *)tflm_get_scratch(ctx, mine->scratch);
  job.fast = cmsis_requant_is_strict(requant->shifts, p->channels)  ? CMSIS_REQUANT_STRICT
             : cmsis_requant_is_fast(requant->shifts, p->channels) ? CMSIS_REQUANT_FAST
                                                                    : 0;
  fc_rows(&job, input, output);
}

static tflm_status_t cmsis_fc_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const cmsis_fc_node_t *mine = (const cmsis_fc_node_t *)node->user_data;
  const tflm_fc_params_t *p =
      mine != NULL ? (const tflm_fc_params_t *)(uintptr_t)mine->shared : NULL;
  tflm_weighted_data_t d;
  tflm_requant_t requant;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && tflm_weighted_data(ctx, node, &d),
                    TFLM_ERR_NOT_READY);
  tflm_fully_connected_requant(ctx, node, p, &requant);
  switch (p->type) {
    case TFLM_TYPE_HYBRID: /* float32 activations, int8 weights: LiteRT only */
      return tflm_fully_connected_hybrid_eval(ctx, p, &d);
    case TFLM_TYPE_FLOAT32:
      tflm_fully_connected_float32(p, (const float *)d.input, (const float *)d.filter,
                                   (const float *)d.bias, (float *)d.output);
      return TFLM_OK;
    case TFLM_TYPE_INT8:
      fc_int8(ctx, mine, p, &requant, (const int8_t *)d.input, (const int8_t *)d.filter,
              (const int32_t *)d.bias, (int8_t *)d.output);
      return TFLM_OK;
    case TFLM_TYPE_INT16:
      tflm_fully_connected_int16(p, &requant, (const int16_t *)d.input, (const int8_t *)d.filter,
                                 (const int64_t *)d.bias, (int16_t *)d.output);
      return TFLM_OK;
    default:
      return TFLM_ERR_UNSUPPORTED_TYPE;
  }
}

const tflm_registration_t tflm_op_fully_connected = {
    NULL, 9 /* BuiltinOperator FULLY_CONNECTED */, NULL, cmsis_fc_prepare, cmsis_fc_eval,
    NULL, NULL};
