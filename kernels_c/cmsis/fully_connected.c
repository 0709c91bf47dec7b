/* tflm-op: FULLY_CONNECTED tflm_op_fully_connected types: float32,int8,int16 litert: hybrid */
/* FULLY_CONNECTED for the cmsis tag: int8 with symmetric weights (filter zero point 0, the
 * int8 schema's rule) as dot products of several weight rows at once (cmsis_simd.h):
 *   MVE  4 weight rows per pass over the input row, 16 MACs per VMLADAVA;
 *   DSP  3 weight rows per pass over the input row, widened to int16 on the fly;
 *   C    one dot product at a time.
 * Integer sums are exact, so the result is the reference's.  float32, int16 and weights
 * with a zero point run the reference kernels (fully_connected_reference.c).
 *
 * No scratch on any instruction set: a widened copy of the input (4 * accum_depth bytes) made
 * the arena of micro_speech 3x TFLM+CMSIS-NN's. */
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
  int32_t fast_path; /* 1: int8 with symmetric weights runs the loops above */
  int32_t unused;
} cmsis_fc_node_t;

typedef struct {
  const tflm_fc_params_t *p;
  tflm_requant_t requant;
  const int8_t *filter;
  const int32_t *bias; /* NULL when absent */
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
/* acc[c] += dot(x + offset, w_c) for one int8 input row and three int8 weight rows.  The
 * input is widened on the fly (SXTAB16 adds the offset to two bytes at once), so the kernel
 * needs no scratch row: 20 instructions per 12 MACs.  Assembly: compiled from C, gcc spills. */
static __attribute__((noinline)) void fc_dot_1x3(const int8_t *x, const int8_t *const w[3],
                                                  int32_t n, int32_t offset, int32_t acc[3]) {
  const int32_t offsets = (int32_t)(((uint32_t)offset & 0xffffu) * 0x10001u);
  int32_t a0 = 0, a1 = 0, a2 = 0;
  int32_t groups = n >> 2, tail = n & 3, i;
  const int8_t *pa = w[0], *pb = w[1], *pc = w[2], *px = x;
  if (groups > 0) {
    int32_t x0, x1, t, v;
    __asm__ volatile(
        "1:\n\t"
        "ldr %[v], [%[px]], #4\n\t"
        "sxtab16 %[x0], %[off], %[v]\n\t"
        "sxtab16 %[x1], %[off], %[v], ror #8\n\t"
        "ldr %[v], [%[pa]], #4\n\t"
        "sxtb16 %[t], %[v]\n\t"
        "sxtb16 %[v], %[v], ror #8\n\t"
        "smlad %[a0], %[t], %[x0], %[a0]\n\t"
        "smlad %[a0], %[v], %[x1], %[a0]\n\t"
        "ldr %[v], [%[pb]], #4\n\t"
        "sxtb16 %[t], %[v]\n\t"
        "sxtb16 %[v], %[v], ror #8\n\t"
        "smlad %[a1], %[t], %[x0], %[a1]\n\t"
        "smlad %[a1], %[v], %[x1], %[a1]\n\t"
        "ldr %[v], [%[pc]], #4\n\t"
        "sxtb16 %[t], %[v]\n\t"
        "sxtb16 %[v], %[v], ror #8\n\t"
        "smlad %[a2], %[t], %[x0], %[a2]\n\t"
        "smlad %[a2], %[v], %[x1], %[a2]\n\t"
        "subs %[n], %[n], #1\n\t"
        "bne 1b\n\t"
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [pa] "+r"(pa), [pb] "+r"(pb),
          [pc] "+r"(pc), [px] "+r"(px), [n] "+r"(groups), [x0] "=&r"(x0), [x1] "=&r"(x1),
          [t] "=&r"(t), [v] "=&r"(v)
        : [off] "r"(offsets)
        : "cc", "memory");
  }
  for (i = 0; i < tail; ++i) {
    const int32_t value = (int32_t)px[i] + offset;
    a0 = tflm_mac_wrap(a0, pa[i], value);
    a1 = tflm_mac_wrap(a1, pb[i], value);
    a2 = tflm_mac_wrap(a2, pc[i], value);
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
}

/* Each input row against three weight rows at a time; missing rows repeat the first. */
static void fc_rows(const cmsis_fc_job_t *job, const int8_t *input, int8_t *output) {
  const int32_t depth = job->p->accum_depth, outputs = job->p->output_depth;
  int32_t b, oc, j;
  for (b = 0; b < job->p->batches; ++b, input += depth, output += outputs) {
    for (oc = 0; oc < outputs; oc += 3) {
      const int32_t count = outputs - oc < 3 ? outputs - oc : 3;
      const int8_t *rows[3];
      int32_t acc[3];
      for (j = 0; j < 3; ++j) rows[j] = job->filter + (oc + (j < count ? j : 0)) * depth;
      fc_dot_1x3(input, rows, depth, job->p->input_offset, acc);
      for (j = 0; j < count; ++j) output[oc + j] = finish(job, acc[j], oc + j);
    }
  }
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
  mine->fast_path = p->type == TFLM_TYPE_INT8 && p->filter_offset == 0;
  mine->unused = 0;
  node->user_data = mine;
  return TFLM_OK;
}

static void fc_int8(const cmsis_fc_node_t *mine,
                    const tflm_fc_params_t *p, const tflm_requant_t *requant,
                    const int8_t *input, const int8_t *filter, const int32_t *bias,
                    int8_t *output) {
  cmsis_fc_job_t job;
  if (!mine->fast_path) { /* weights with a zero point */
    tflm_fully_connected_int8(p, requant, input, filter, bias, output);
    return;
  }
  job.p = p;
  job.requant = *requant;
  job.filter = filter;
  job.bias = bias;
  job.fast = cmsis_requant_is_strict(requant->shifts, p->channels)  ? CMSIS_REQUANT_STRICT
             : cmsis_requant_is_fast(requant->shifts, p->channels) ? CMSIS_REQUANT_FAST
                                                                    : 0;
  fc_rows(&job, input, output);
}

static tflm_status_t plain_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call) {
  const tflm_weighted_data_t *d = &call->data;
  (void)ctx;
  fc_int8(call->own, call->params, &call->requant, d->input, d->filter, d->bias, d->output);
  return TFLM_OK;
}

static void block_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                       const int8_t *rows, int8_t *room, int32_t first, int32_t count) {
  (void)room;
  tflm_fully_connected_block(ctx, call, rows, first, count, plain_int8);
}

/* The fast loops over the filter, or over each decoded block of a compressed one. */
static tflm_status_t cmsis_fc_run_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call) {
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)call->params;
  if (p->decode_scratch < 0) return plain_int8(ctx, call);
  return tflm_weighted_decoded(ctx, call, p->decode_scratch, p->output_depth, p->accum_depth,
                               block_int8);
}

static const tflm_weighted_kernels_t cmsis_fc_kernels = {
    tflm_fully_connected_requant, tflm_fully_connected_hybrid_eval,
    tflm_fully_connected_run_float32, cmsis_fc_run_int8, tflm_fully_connected_run_int16};

/* node->user_data is this tag's record, which starts with the shared parameters' address. */
TFLM_WEIGHTED_OP(tflm_op_fully_connected, TFLM_BUILTIN_FULLY_CONNECTED, cmsis_fc_prepare,
                 cmsis_fc_kernels, 1);
