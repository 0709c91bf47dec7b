/* tflm-op: FULLY_CONNECTED tflm_op_fully_connected types: float32,int8,int16 litert: hybrid */
/* FULLY_CONNECTED for the cmsis tag: int8 with symmetric weights (filter zero point 0, the
 * int8 schema's rule) as dot products of several weight rows at once (cmsis_simd.h).
 *
 * With the offline layout the generator writes into the model (tflm_gen/layout.py,
 * FC_INT16_QUADS, read through tflm_node_layout) every sum starts at a folded constant
 * bias + input_offset * sum(w), so the input is read raw, and the weights are int16 in
 * quads of rows:
 *   DSP  each input word widened once (2 SXTB16) for 4 rows, whose weights come 4 words
 *        per LDM: 16 MACs in 13 instructions (fc_quad_dot);
 *   C    the same stream, one row of the quad at a time (the host build's path).
 * The 4 sums of a quad are requantised at once (cmsis_requantize4, TFLM's arithmetic).
 * A project for a DSP core carries the stream in the filter's buffer instead of its int8
 * bytes (FC_QUADS_IN_FILTER, the record then holds the folded constants only): the DSP and
 * C builds read it; an MVE build, or a record that disagrees with the node, fails the node
 * (no int8 weights to fall back on).
 * Without a record (a compressed filter, an old model), and on MVE, whose int8 loops need
 * no layout:
 *   MVE  4 weight rows per pass over the input row, 16 MACs per VMLADAVA;
 *   DSP  3 weight rows per pass over the input row, widened to int16 on the fly;
 *   C    one dot product at a time.
 * A row-sparse filter (`--compress`, tflm_sparse_rows.h) with its FC_SPARSE_FOLDED record
 * runs CMSIS_GROUPS_CHUNK on DSP (SPARSE_GROUPS: 2 instructions per token to find and load
 * its input, 32 per 8 tokens) or CMSIS_NARROW_CHUNK (SPARSE_NARROW: 5 per token, one loop
 * per code width and count width); without the record, or elsewhere, the portable reader.
 * Integer sums are exact, so the result is the reference's.  float32, int16 and weights
 * with a zero point run the reference kernels (fully_connected_reference.c).
 *
 * No scratch on any instruction set: a widened copy of the input (4 * accum_depth bytes) made
 * the arena of micro_speech 3x TFLM+CMSIS-NN's. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cmsis_simd.h"
#include "fully_connected_common.h"
#include "fully_connected_hybrid.h"
#include "fully_connected_reference.h"
#include "fully_connected_sparse.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "weighted_common.h"

/* The kind of FULLY_CONNECTED layout record this kernel reads (tflm_gen/layout.py). */
#define CMSIS_FC_INT16_QUADS 10
#define CMSIS_FC_QUADS_IN_FILTER 40
#define CMSIS_FC_SPARSE_FOLDED 26 /* a row-sparse filter's folded constants */

/* Persistent block of the tag, in node->user_data (16 bytes on every target). */
typedef struct {
  uint64_t shared;  /* address of the tflm_fc_params_t made by the shared prepare */
  int32_t fast_path; /* 1: int8 with symmetric weights runs the loops above */
  int32_t requant_mode; /* cmsis_requant_mode of the node's arrays (0 when not fast_path) */
} cmsis_fc_node_t;

typedef struct {
  const tflm_fc_params_t *p;
  tflm_requant_t requant;
  const int8_t *filter;
  const int32_t *bias;   /* NULL when absent (and with a layout: folded into `folded`) */
  int32_t fast;          /* cmsis_requant_mode of the node (0: cmsis_requantize) */
  const int32_t *folded; /* FC_INT16_QUADS record, NULL when absent: round4(rows) constants */
  const int16_t *quads;  /* its int16 weights, quads of rows (tflm_gen/layout.py) */
  int32_t quad_stride;   /* int16 values per quad: 16 * ceil(accum_depth / 4) */
  const int32_t *multipliers; /* per quad: 4 consecutive entries from oc * step on */
  const int32_t *shifts;
  int32_t step;          /* 1 per-channel; 0 per-tensor (the arrays below, 4 copies) */
  int32_t tensor_multipliers[4];
  int32_t tensor_shifts[4];
} cmsis_fc_job_t;

/* The output byte of a sum that already holds the bias. */
static int8_t finish(const cmsis_fc_job_t *job, int32_t acc, int32_t oc) {
  const tflm_fc_params_t *p = job->p;
  const int32_t q = oc * p->channel_step;
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

/* finish with the bias of output oc added first (the loops without a layout). */
static int8_t finish_biased(const cmsis_fc_job_t *job, int32_t acc, int32_t oc) {
  if (job->bias != NULL) acc = tflm_add_wrap(acc, job->bias[oc]);
  return finish(job, acc, oc);
}

#if defined(CMSIS_MVE)
/* MVE's int8 loops (16 MACs per VMLADAVA) need no int16 layout: no record is read. */
static int32_t reads_layout(void) { return 0; }
#else
static int32_t reads_layout(void) { return 1; }
#endif

/* The kind of the node's layout record, 0 when it has none. */
static int32_t record_kind(tflm_context_t *ctx, const tflm_node_t *node) {
  int32_t words;
  const int32_t *record = tflm_node_layout(ctx, node, &words);
  return record != NULL && words >= 1 ? record[0] : 0;
}

/* Points job->folded and job->quads at the node's layout record when it is one this
 * kernel reads and agrees with the node's shapes; leaves them NULL otherwise.  Returns 0
 * when the record is FC_QUADS_IN_FILTER and disagrees (or the stream is not word aligned):
 * job->filter then holds no int8 weights. */
static int32_t find_layout(tflm_context_t *ctx, const tflm_node_t *node, cmsis_fc_job_t *job) {
  const int32_t rows = job->p->output_depth, depth = job->p->accum_depth;
  const int32_t padded = (rows + 3) & ~3, groups = (depth + 3) >> 2;
  const int64_t head = 3 + (int64_t)padded;
  int32_t words;
  const int32_t *record = tflm_node_layout(ctx, node, &words);
  job->folded = NULL;
  job->quads = NULL;
  job->quad_stride = 16 * groups;
  if (record == NULL || words < 3) return 1;
  if (record[0] == CMSIS_FC_QUADS_IN_FILTER) {
    if (record[1] != rows || record[2] != depth || (int64_t)words != head ||
        ((uintptr_t)job->filter & 3u) != 0) {
      return 0;
    }
    job->quads = (const int16_t *)(const void *)job->filter;
  } else if (record[0] != CMSIS_FC_INT16_QUADS || record[1] != rows ||
             record[2] != depth || (int64_t)words != head + (int64_t)padded * 2 * groups) {
    return 1;
  } else {
    job->quads = (const int16_t *)(const void *)(record + head);
  }
  job->folded = record + 3;
  return 1;
}

/* acc[r] += the tail inputs x[0 .. tail) times row r's weights in the last, zero-padded
 * group of a quad stream w (per row (w0, w2, w1, w3)). */
static void quad_tail(const int8_t *x, const int16_t *w, int32_t tail, int32_t acc[4]) {
  static const int8_t slot[4] = {0, 2, 1, 3};
  int32_t r, i;
  for (r = 0; r < 4; ++r) {
    for (i = 0; i < tail; ++i) acc[r] = tflm_mac_wrap(acc[r], w[4 * r + slot[i]], x[i]);
  }
}

#if defined(CMSIS_DSP) && !defined(CMSIS_MVE)
/* One group of 4 inputs of fc_quad_dot: the input word widened into r12 (x0, x2) and lr
 * (x1, x3), the quad's 8 weight words in two LDMs, one SMLAD each. */
#define CMSIS_FC_QUAD_GROUP                                                                \
  "ldr lr, [r0], #4\n\t"                                                                 \
  "sxtb16 r12, lr\n\t"                                                                   \
  "sxtb16 lr, lr, ror #8\n\t"                                                            \
  "ldm r1!, {r8-r11}\n\t"                                                                \
  "smlad r4, r8, r12, r4\n\t"                                                            \
  "smlad r4, r9, lr, r4\n\t"                                                             \
  "smlad r5, r10, r12, r5\n\t"                                                           \
  "smlad r5, r11, lr, r5\n\t"                                                            \
  "ldm r1!, {r8-r11}\n\t"                                                                \
  "smlad r6, r8, r12, r6\n\t"                                                            \
  "smlad r6, r9, lr, r6\n\t"                                                             \
  "smlad r7, r10, r12, r7\n\t"                                                           \
  "smlad r7, r11, lr, r7\n\t"

/* acc[r] += dot(x, row r) over groups * 4 inputs (groups >= 1) for the 4 rows of a quad
 * stream w (4-byte aligned).  Arguments: r0 x, r1 w, r2 groups, r3 acc.  16 MACs in 13
 * instructions, unrolled twice; 14 registers, so the whole function is assembly. */
__attribute__((naked, noinline)) static void fc_quad_dot(const int8_t *x CMSIS_IN_ASM,
                                                         const int16_t *w CMSIS_IN_ASM,
                                                         int32_t groups CMSIS_IN_ASM,
                                                         int32_t *acc CMSIS_IN_ASM) {
  __asm__ volatile(
      "push {r4-r11, lr}\n\t"
      "ldm r3, {r4-r7}\n\t"
      "tst r2, #1\n\t"
      "beq 2f\n\t"
      CMSIS_FC_QUAD_GROUP
      "2:\n\t"
      "lsrs r2, r2, #1\n\t"
      "beq 3f\n\t"
      "1:\n\t"
      CMSIS_FC_QUAD_GROUP
      CMSIS_FC_QUAD_GROUP
      "subs r2, r2, #1\n\t"
      "bne 1b\n\t"
      "3:\n\t"
      "stm r3, {r4-r7}\n\t"
      "pop {r4-r11, pc}\n\t");
}
#else
/* acc[r] += dot(x, row r) over groups * 4 inputs, row by row over the quad stream w. */
static void fc_quad_dot(const int8_t *x, const int16_t *w, int32_t groups, int32_t *acc) {
  int32_t g, r;
  for (g = 0; g < groups; ++g, x += 4, w += 16) {
    for (r = 0; r < 4; ++r) {
      const int16_t *v = w + 4 * r;
      acc[r] = tflm_mac_wrap(acc[r], v[0], x[0]);
      acc[r] = tflm_mac_wrap(acc[r], v[2], x[1]);
      acc[r] = tflm_mac_wrap(acc[r], v[1], x[2]);
      acc[r] = tflm_mac_wrap(acc[r], v[3], x[3]);
    }
  }
}
#endif

/* The 4 (or `count` < 4) outputs of the quad at output oc, any requantisation. */
static void finish_quad(const cmsis_fc_job_t *job, const int32_t acc[4], int32_t oc,
                        int32_t count, int8_t *out) {
  const tflm_fc_params_t *p = job->p;
  int32_t j;
  if (count == 4 && job->fast != 0) {
    cmsis_requantize4(job->fast, acc, job->multipliers + oc * job->step,
                      job->shifts + oc * job->step, p->output_offset, p->act_min, p->act_max,
                      out);
    return;
  }
  for (j = 0; j < count; ++j) out[j] = finish(job, acc[j], oc + j);
}

/* The hoisted strict requantisation of a per-tensor node (cmsis_simd.h). */
static void strict_constants(const cmsis_fc_job_t *job, cmsis_strict_t *q) {
  cmsis_strict_init(job->requant.multipliers[0], job->requant.shifts[0],
                    job->p->output_offset, job->p->act_min, job->p->act_max, q);
}

/* The sums of the quad of rows at w for the input row x, from the folded constants. */
static inline void quad_sums(const int8_t *x, const int16_t *w, const int32_t *folded,
                             int32_t depth, int32_t acc[4]) {
  const int32_t groups = depth >> 2;
  memcpy(acc, folded, 4 * sizeof(int32_t));
  if (groups > 0) fc_quad_dot(x, w, groups, acc);
  if ((depth & 3) != 0) quad_tail(x + 4 * groups, w + 16 * groups, depth & 3, acc);
}

/* Whole quads of a per-tensor node whose shift suits cmsis_requantize_strict: its
 * constants in registers, nothing reloaded per quad.  Returns the outputs done. */
static int32_t fc_quads_strict(const cmsis_fc_job_t *job, const int8_t *input, int8_t *output) {
  const tflm_fc_params_t *p = job->p;
  const int32_t depth = p->accum_depth, quads = p->output_depth >> 2;
  const int32_t stride = job->quad_stride;
  const int16_t *w = job->quads;
  const int32_t *folded = job->folded;
  cmsis_strict_t q;
  int32_t k, acc[4];
  strict_constants(job, &q);
  for (k = 0; k < quads; ++k, w += stride, folded += 4, output += 4) {
    quad_sums(input, w, folded, depth, acc);
    cmsis_strict4(&q, acc[0], acc[1], acc[2], acc[3], output);
  }
  return 4 * quads;
}

/* Every input row against the quads of the layout: each sum starts at its folded constant. */
static void fc_quads(const cmsis_fc_job_t *job, const int8_t *input, int8_t *output) {
  const int32_t depth = job->p->accum_depth, outputs = job->p->output_depth;
  const int32_t strict = job->fast == CMSIS_REQUANT_STRICT && job->step == 0;
  int32_t b, oc, acc[4];
  for (b = 0; b < job->p->batches; ++b, input += depth, output += outputs) {
    oc = strict ? fc_quads_strict(job, input, output) : 0;
    for (; oc < outputs; oc += 4) {
      quad_sums(input, job->quads + (oc >> 2) * job->quad_stride, job->folded + oc, depth,
                acc);
      finish_quad(job, acc, oc, outputs - oc < 4 ? outputs - oc : 4, output + oc);
    }
  }
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
        output[oc + j] = finish_biased(job, acc, oc + j);
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
      for (j = 0; j < count; ++j) output[oc + j] = finish_biased(job, acc[j], oc + j);
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
      *output++ = finish_biased(job, acc, oc);
    }
  }
}
#endif

#if defined(CMSIS_DSP) && !defined(CMSIS_MVE)
/* Rows summed per chunk on the stack (no arena), then requantised. */
#define CMSIS_SPARSE_CHUNK 64

/* SPARSE_GROUPS (tflm_sparse_rows.h) on the DSP: the slot code of one token of a group,
 * its gap nibble from r9 (even slots) or r6 (odd slots), byte `rot` / 8 of it, its input
 * raw into x (the input offset is in the row's folded constant). */
#define CMSIS_GROUP_SLOT(half, rot, x)                                                     \
  "uxtab r4, r4, " half ", ror #" rot "\n\t"                                             \
  "ldrsb " x ", [r4], #1\n\t"
/* After a quad's slot 2: (x0, x2) into r10. */
#define CMSIS_GROUP_PAIR "pkhbt r10, r10, r12, lsl #16\n\t"
/* After its slot 3: (x1, x3) into r11, the quad's literals from word v (SXTB16 order),
 * two SMLADs. */
#define CMSIS_GROUP_QUAD(v)                                                                \
  "pkhbt r11, r11, r12, lsl #16\n\t"                                                     \
  "sxtb16 r12, " v "\n\t"                                                                \
  "smlad r5, r10, r12, r5\n\t"                                                           \
  "sxtb16 r12, " v ", ror #8\n\t"                                                        \
  "smlad r5, r11, r12, r5\n\t"
/* r9 = the even slots' gap nibbles as bytes, r6 the odd slots' (gap word r6, lr the mask
 * 0x0f0f0f0f). */
#define CMSIS_GROUP_SPLIT                                                                  \
  "and r9, r6, lr\n\t"                                                                   \
  "and r6, lr, r6, lsr #4\n\t"

/* Four slots of a group: the even slots' gaps from r9, the odd slots' from r6, bytes `rot0`
 * / 8 then `rot1` / 8, the literals from word v; the entry labels of slots 1-3 named by
 * `tag` and s1..s3. */
#define CMSIS_GROUP_HALF(tag, s1, s2, s3, rot0, rot1, v)                                   \
  CMSIS_GROUP_SLOT("r9", rot0, "r10")                                                     \
  ".Lcmsis_groups_" tag "_s" s1 ":\n\t"                                                   \
  CMSIS_GROUP_SLOT("r6", rot0, "r11")                                                     \
  ".Lcmsis_groups_" tag "_s" s2 ":\n\t"                                                   \
  CMSIS_GROUP_SLOT("r9", rot1, "r12")                                                     \
  CMSIS_GROUP_PAIR                                                                        \
  ".Lcmsis_groups_" tag "_s" s3 ":\n\t"                                                   \
  CMSIS_GROUP_SLOT("r6", rot1, "r12")                                                     \
  CMSIS_GROUP_QUAD(v)

/* The end of a row-sparse chunk's group loop (label 4, `step` tokens per pass, r2 the
 * tokens left less those of the pass just done, entered at label 5) and of its row loop
 * (label 1): the row's sum r5 stored at r0, the next row until `at_end` (instructions
 * setting Z when r0 is the end of sums); then r2 = the walk (sp). */
#define CMSIS_ROWS_NEXT_UNTIL(step, at_end)                                                \
  "5:\n\t"                                                                                \
  "subs r2, r2, #" step "\n\t"                                                            \
  "bpl 4b\n\t"                                                                            \
  "str r5, [r0], #4\n\t"                                                                  \
  at_end                                                                                  \
  "bne 1b\n\t"                                                                            \
  "ldr r2, [sp]\n\t"

/* Where a walk over a SPARSE_GROUPS stream stands (tflm_sparse_groups_t's fields) and
 * the batch's input row. */
typedef struct {
  tflm_sparse_groups_t rows; /* groups at byte 0, tails at 4, count width at 8 */
  const int8_t *input;       /* at 12 (the assembly's offsets) */
} cmsis_groups_walk_t;

#define CMSIS_GROUPS_LABEL(tag, s) ".Lcmsis_groups_" tag "_s" s
#define CMSIS_GROUPS_ENTRY(tag, s)                                                         \
  ".byte (" CMSIS_GROUPS_LABEL(tag, s) " - " CMSIS_GROUPS_LABEL(tag, "e") ") / 2\n\t"
/* A group: its LDM, its 8 slots, entered at slot j through label s(base + j). */
#define CMSIS_GROUPS_ONE(tag, s1, s2, s3, s4, s5, s6, s7)                                  \
  "ldm r3!, {r6, r7, r8}\n\t"                                                             \
  CMSIS_GROUP_SPLIT                                                                       \
  CMSIS_GROUP_HALF(tag, s1, s2, s3, "0", "8", "r7")                                       \
  CMSIS_GROUPS_LABEL(tag, s4) ":\n\t"                                                     \
  CMSIS_GROUP_HALF(tag, s5, s6, s7, "16", "24", "r8")

/* sums[r] += the sum of row r's tokens (literal * raw input) for `rows` (>= 1) rows from
 * the walk on, sums[] holding the rows' folded constants; the walk advanced past them.
 * The loop takes two groups per pass (16 tokens, one loop test).  A row of n tokens
 * (tail t = n % 8, then its groups) is entered at slot 16 - n % 16 of a pass: its tail
 * is loaded so that it fills a group's last t slots (the slots before it read x = 0), in
 * the pass's second group when the row has an even number of groups, else in its first;
 * a row without a tail enters at the end of a pass, or at its second group's LDM (n % 16
 * = 8).  One LDM per group: 32 instructions per 8
 * tokens.  Arguments: r0 walk, r1 sums, r2 rows; the groups must be word aligned (the
 * stream is).  `count_load` reads a row's count into r2 and steps r1 past it (u8 or u16
 * counts); `tag` names the function's entry labels. */
#define CMSIS_GROUPS_CHUNK(count_load, tag)                                                \
  "push {r4-r11, lr}\n\t"                                                                  \
  "add r2, r1, r2, lsl #2\n\t" /* the end of sums */                                      \
  "ldr r3, [r0, #12]\n\t"                                                                 \
  "push {r0, r2, r3}\n\t"      /* sp: walk, the end of sums, the input row */             \
  "ldr r3, [r0]\n\t"           /* r3: the groups */                                       \
  "ldr r2, [r0, #4]\n\t"                                                                  \
  "mov r0, r1\n\t"             /* r0: the sums */                                         \
  "mov r1, r2\n\t"             /* r1: the counts and tails */                             \
  "mov lr, #0x0f0f0f0f\n\t"                                                               \
  "1:\n\t"                                                                                \
  "ldr r4, [sp, #8]\n\t"                                                                  \
  "ldr r5, [r0]\n\t"                                                                      \
  count_load                                                                              \
  "ands r10, r2, #7\n\t"       /* the tail's tokens t; r2 - 16 k >= 0 while passes */    \
  "beq 6f\n\t"                 /* remain after k of them */                              \
  "and r12, r2, #15\n\t"       /* r12: the entry n % 16 */                                \
  "add r6, r10, #1\n\t"                                                                   \
  "add r1, r1, r6, lsr #1\n\t" /* past the tail's gap bytes */                            \
  "ldr r6, [r1, #-4]\n\t"                                                                 \
  "add r1, r1, r10\n\t"        /* past its literals: the next count */                    \
  "ldr r7, [r1, #-8]\n\t"                                                                 \
  "ldr r8, [r1, #-4]\n\t"                                                                 \
  CMSIS_GROUP_SPLIT                                                                       \
  "movs r10, #0\n\t"                                                                      \
  "movs r11, #0\n\t"                                                                      \
  "tbb [pc, r12]\n\t"                                                                     \
  CMSIS_GROUPS_LABEL(tag, "e") ":\n\t"                                                    \
  ".byte 0\n\t"                                                                           \
  CMSIS_GROUPS_ENTRY(tag, "15") CMSIS_GROUPS_ENTRY(tag, "14") CMSIS_GROUPS_ENTRY(tag, "13") \
  CMSIS_GROUPS_ENTRY(tag, "12") CMSIS_GROUPS_ENTRY(tag, "11") CMSIS_GROUPS_ENTRY(tag, "10") \
  CMSIS_GROUPS_ENTRY(tag, "9") CMSIS_GROUPS_ENTRY(tag, "8") CMSIS_GROUPS_ENTRY(tag, "7")    \
  CMSIS_GROUPS_ENTRY(tag, "6") CMSIS_GROUPS_ENTRY(tag, "5") CMSIS_GROUPS_ENTRY(tag, "4")    \
  CMSIS_GROUPS_ENTRY(tag, "3") CMSIS_GROUPS_ENTRY(tag, "2") CMSIS_GROUPS_ENTRY(tag, "1")    \
  ".p2align 1\n\t"                                                                        \
  "4:\n\t"                                                                                \
  CMSIS_GROUPS_ONE(tag, "1", "2", "3", "4", "5", "6", "7")                                \
  CMSIS_GROUPS_LABEL(tag, "8") ":\n\t"                                                    \
  CMSIS_GROUPS_ONE(tag, "9", "10", "11", "12", "13", "14", "15")                          \
  CMSIS_ROWS_NEXT_UNTIL("16", "ldr r6, [sp, #4]\n\t"                                      \
                              "cmp r0, r6\n\t")                                           \
  "str r3, [r2]\n\t"                                                                      \
  "str r1, [r2, #4]\n\t"                                                                  \
  "add sp, sp, #12\n\t"                                                                   \
  "pop {r4-r11, pc}\n\t"                                                                  \
  "6:\n\t"                    /* no tail: the pass's end, or its second group's LDM */    \
  "tst r2, #8\n\t"                                                                        \
  "beq 5b\n\t"                                                                            \
  "b " CMSIS_GROUPS_LABEL(tag, "8") "\n\t"

/* A naked function running CMSIS_GROUPS_CHUNK (r0 walk, r1 sums, r2 rows). */
#define CMSIS_GROUPS_CHUNK_FUNCTION(name, count_load, tag)                                 \
  __attribute__((naked, noinline)) static void name(cmsis_groups_walk_t *walk CMSIS_IN_ASM, \
                                                    int32_t *sums CMSIS_IN_ASM,             \
                                                    int32_t rows CMSIS_IN_ASM) {            \
    __asm__ volatile(CMSIS_GROUPS_CHUNK(count_load, tag));                                \
  }

/* A row's count into r2, r1 past it: u8 or u16 (the stream's count width). */
#define CMSIS_COUNT_U8 "ldrb r2, [r1], #1\n\t"
#define CMSIS_COUNT_U16 "ldrh r2, [r1], #2\n\t"

CMSIS_GROUPS_CHUNK_FUNCTION(sparse_groups_chunk16, CMSIS_COUNT_U16, "h")
CMSIS_GROUPS_CHUNK_FUNCTION(sparse_groups_chunk8, CMSIS_COUNT_U8, "b")

/* SPARSE_NARROW (tflm_sparse_rows.h) on the DSP, codes of W bits (a string): slot i of a
 * group, its gap nibble from r9 (even slots) or r6 (odd slots), byte `rot` / 8 of it, added
 * to the input pointer r4 (a token moves on, then reads); its code from r7 (the group's
 * first code word) or, past bit 32, r8 (the code word from byte CMSIS_NARROW_B); its weight
 * from the table r3; input raw (the offset is folded) times weight into r5. */
#define CMSIS_NARROW_B(W) "((32 / " W ") * " W " / 8)"
#define CMSIS_NARROW_SLOT(i, half, rot, W)                                                 \
  "uxtab r4, r4, " half ", ror #" rot "\n\t"                                             \
  "ldrsb r10, [r4]\n\t"                                                                   \
  ".if (" i " + 1) * " W " <= 32\n\t"                                                     \
  "ubfx r11, r7, #(" i " * " W "), #" W "\n\t"                                           \
  ".else\n\t"                                                                             \
  "ubfx r11, r8, #(" i " * " W " - 8 * " CMSIS_NARROW_B(W) "), #" W "\n\t"                \
  ".endif\n\t"                                                                            \
  "ldrsb r11, [r3, r11]\n\t"                                                              \
  "smlabb r5, r10, r11, r5\n\t"
#define CMSIS_NARROW_LABEL(L, s) ".Lcmsis_narrow" L "_s" s
#define CMSIS_NARROW_ENTRY(L, s)                                                           \
  ".byte (" CMSIS_NARROW_LABEL(L, s) " - " CMSIS_NARROW_LABEL(L, "e") ") / 2\n\t"
/* A group's 8 slots, entered at slot s through label s (1 .. 7) of the loop named L. */
#define CMSIS_NARROW_GROUP(W, L)                                                           \
  CMSIS_NARROW_SLOT("0", "r9", "0", W)                                                    \
  CMSIS_NARROW_LABEL(L, "1") ":\n\t" CMSIS_NARROW_SLOT("1", "r6", "0", W)                 \
  CMSIS_NARROW_LABEL(L, "2") ":\n\t" CMSIS_NARROW_SLOT("2", "r9", "8", W)                 \
  CMSIS_NARROW_LABEL(L, "3") ":\n\t" CMSIS_NARROW_SLOT("3", "r6", "8", W)                 \
  CMSIS_NARROW_LABEL(L, "4") ":\n\t" CMSIS_NARROW_SLOT("4", "r9", "16", W)                \
  CMSIS_NARROW_LABEL(L, "5") ":\n\t" CMSIS_NARROW_SLOT("5", "r6", "16", W)                \
  CMSIS_NARROW_LABEL(L, "6") ":\n\t" CMSIS_NARROW_SLOT("6", "r9", "24", W)                \
  CMSIS_NARROW_LABEL(L, "7") ":\n\t" CMSIS_NARROW_SLOT("7", "r6", "24", W)
/* The code words of a group whose codes end at r1 + off + W (r7, and r8 when W > 4). */
#define CMSIS_NARROW_CODES(off, W)                                                         \
  "ldr r7, [r1, #(" off ")]\n\t"                                                          \
  ".if " W " > 4\n\t"                                                                     \
  "ldr r8, [r1, #(" off " + " CMSIS_NARROW_B(W) ")]\n\t"                                  \
  ".endif\n\t"
/* r1 past a tail of t = r10 tokens (r11 = t + 1): its ceil(t / 2) gap bytes, with the gap
 * word into r6, then its ceil(t W / 8) code bytes, by shifts and adds of W's own (a
 * multiply and a rounding in the general case: 4 instructions more per row). */
#define CMSIS_NARROW_PAST_TAIL(W)                                                          \
  "add r1, r1, r11, lsr #1\n\t"                                                           \
  "ldr r6, [r1, #-4]\n\t"                                                                 \
  ".if " W " == 4\n\t"                                                                    \
  "add r1, r1, r11, lsr #1\n\t"                                                           \
  ".elseif " W " == 2\n\t"                                                                \
  "add r7, r10, #3\n\t"                                                                   \
  "add r1, r1, r7, lsr #2\n\t"                                                            \
  ".elseif " W " == 6\n\t"                                                                \
  "add r7, r10, r10, lsl #1\n\t"                                                          \
  "add r7, r7, #3\n\t"                                                                    \
  "add r1, r1, r7, lsr #2\n\t"                                                            \
  ".else\n\t"                                                                             \
  ".if " W " == 7\n\t"                                                                    \
  "rsb r7, r10, r10, lsl #3\n\t"                                                          \
  ".else\n\t"                                                                             \
  "add r7, r10, r10, lsl #(" W " / 2)\n\t" /* 3 t or 5 t */                              \
  ".endif\n\t"                                                                            \
  "add r7, r7, #7\n\t"                                                                    \
  "add r1, r1, r7, lsr #3\n\t"                                                            \
  ".endif\n\t"

/* Where a walk over a SPARSE_NARROW stream stands, for the assembly. */
typedef struct {
  const uint8_t *row;     /* at 0: the next row's count */
  const int8_t *input;    /* at 4: the batch's input row */
  const int8_t *weights;  /* at 8: code -> weight (tflm_sparse_narrow_t's) */
} cmsis_narrow_walk_t;

/* sums[r] += the sum of row r's tokens (weight * raw input) for `rows` (>= 1) rows from
 * the walk on; the walk advanced past them.  As CMSIS_GROUPS_CHUNK: a row's tail (t = n % 8
 * tokens) is read as a group's last t slots and entered through TBB, its groups follow;
 * 5 instructions per token, 6 or 7 per group, 18 to 22 per row (r12 counts the rows down,
 * the slots leave it alone).  Arguments: r0 walk, r1 sums, r2 rows.  `count_load` reads a
 * row's count into r2 and steps r1 past it (u8 or u16 counts); L names the loop's labels. */
#define CMSIS_NARROW_CHUNK(W, count_load, L)                                               \
  "push {r4-r11, lr}\n\t"                                                                  \
  "ldr r3, [r0, #4]\n\t"                                                                  \
  "sub r3, r3, #1\n\t"         /* a row's walk starts at input -1 */                      \
  "push {r0, r3}\n\t"          /* sp: walk, input - 1 */                                  \
  "mov r12, r2\n\t"            /* r12: the rows left */                                   \
  "ldr r3, [r0, #8]\n\t"       /* r3: the weights */                                      \
  "mov r2, r1\n\t"                                                                        \
  "ldr r1, [r0]\n\t"           /* r1: the stream */                                       \
  "mov r0, r2\n\t"             /* r0: the sums */                                         \
  "mov lr, #0x0f0f0f0f\n\t"                                                               \
  "1:\n\t"                                                                                \
  "ldr r4, [sp, #4]\n\t"                                                                  \
  "ldr r5, [r0]\n\t"                                                                      \
  count_load                                                                              \
  "ands r10, r2, #7\n\t"       /* the tail's tokens t */                                  \
  "beq 5f\n\t"                                                                            \
  "add r11, r10, #1\n\t"                                                                  \
  CMSIS_NARROW_PAST_TAIL(W)    /* its codes end at r1: a group's last bytes */            \
  CMSIS_NARROW_CODES("-" W, W)                                                            \
  CMSIS_GROUP_SPLIT                                                                       \
  "tbb [pc, r10]\n\t"                                                                     \
  CMSIS_NARROW_LABEL(L, "e") ":\n\t"                                                      \
  ".byte 0\n\t"                                                                           \
  CMSIS_NARROW_ENTRY(L, "7") CMSIS_NARROW_ENTRY(L, "6") CMSIS_NARROW_ENTRY(L, "5")        \
  CMSIS_NARROW_ENTRY(L, "4") CMSIS_NARROW_ENTRY(L, "3") CMSIS_NARROW_ENTRY(L, "2")        \
  CMSIS_NARROW_ENTRY(L, "1")                                                              \
  ".p2align 1\n\t"                                                                        \
  "4:\n\t"                                                                                \
  CMSIS_NARROW_CODES("4", W)                                                              \
  "ldr r6, [r1], #(4 + " W ")\n\t"                                                        \
  CMSIS_GROUP_SPLIT                                                                       \
  CMSIS_NARROW_GROUP(W, L)                                                                \
  CMSIS_ROWS_NEXT_UNTIL("8", "subs r12, r12, #1\n\t")                                     \
  "str r1, [r2]\n\t"                                                                      \
  "add sp, sp, #8\n\t"                                                                    \
  "pop {r4-r11, pc}\n\t"

#define CMSIS_NARROW_CHUNK_FUNCTION(name, W, count_load, L)                                \
  __attribute__((naked, noinline)) static void name(cmsis_narrow_walk_t *walk CMSIS_IN_ASM, \
                                                    int32_t *sums CMSIS_IN_ASM,             \
                                                    int32_t rows CMSIS_IN_ASM) {            \
    __asm__ volatile(CMSIS_NARROW_CHUNK(W, count_load, L));                               \
  }

/* The loops of W = 2 .. 7 for one count width, named narrow_chunk<W><c>. */
#define CMSIS_NARROW_CHUNK_WIDTHS(c, count_load)                                           \
  CMSIS_NARROW_CHUNK_FUNCTION(narrow_chunk2##c, "2", count_load, "2" #c)                   \
  CMSIS_NARROW_CHUNK_FUNCTION(narrow_chunk3##c, "3", count_load, "3" #c)                   \
  CMSIS_NARROW_CHUNK_FUNCTION(narrow_chunk4##c, "4", count_load, "4" #c)                   \
  CMSIS_NARROW_CHUNK_FUNCTION(narrow_chunk5##c, "5", count_load, "5" #c)                   \
  CMSIS_NARROW_CHUNK_FUNCTION(narrow_chunk6##c, "6", count_load, "6" #c)                   \
  CMSIS_NARROW_CHUNK_FUNCTION(narrow_chunk7##c, "7", count_load, "7" #c)

CMSIS_NARROW_CHUNK_WIDTHS(b, CMSIS_COUNT_U8)
CMSIS_NARROW_CHUNK_WIDTHS(h, CMSIS_COUNT_U16)

/* The loop of each count width (u8, u16) and code width W = 2 .. 7. */
static void (*const narrow_chunks[2][6])(cmsis_narrow_walk_t *, int32_t *, int32_t) = {
    {narrow_chunk2b, narrow_chunk3b, narrow_chunk4b, narrow_chunk5b, narrow_chunk6b,
     narrow_chunk7b},
    {narrow_chunk2h, narrow_chunk3h, narrow_chunk4h, narrow_chunk5h, narrow_chunk6h,
     narrow_chunk7h}};

/* The node's FC_SPARSE_FOLDED constants (one per output), NULL when it has none that
 * agree with its shapes. */
static const int32_t *sparse_folded(tflm_context_t *ctx, const tflm_node_t *node,
                                    const tflm_fc_params_t *p) {
  int32_t words;
  const int32_t *record = tflm_node_layout(ctx, node, &words);
  if (record == NULL || words < 3 || record[0] != CMSIS_FC_SPARSE_FOLDED ||
      record[1] != p->output_depth || record[2] != p->accum_depth ||
      (int64_t)words != 3 + (int64_t)p->output_depth) {
    return NULL;
  }
  return record + 3;
}

static void quad_arrays(cmsis_fc_job_t *job);

/* The outputs oc .. oc + count - 1 of sums that hold their bias, 4 at a time: a per-tensor
 * strict node with its constants hoisted into q, others through finish_quad. */
static void finish_sums(const cmsis_fc_job_t *job, const cmsis_strict_t *q,
                        const int32_t *sums, int32_t oc, int32_t count, int8_t *out) {
  const int32_t strict = job->fast == CMSIS_REQUANT_STRICT && job->step == 0;
  int32_t j;
  for (j = 0; j + 4 <= count && strict; j += 4) {
    cmsis_strict4(q, sums[j], sums[j + 1], sums[j + 2], sums[j + 3], out + j);
  }
  for (; j < count && strict; ++j) out[j] = cmsis_strict_clamped(q, sums[j]);
  for (; j < count; j += 4) {
    finish_quad(job, sums + j, oc + j, count - j < 4 ? count - j : 4, out + j);
  }
}

/* Both row-sparse codings' walks, and the sums of `count` rows from them. */
typedef struct {
  cmsis_groups_walk_t groups;
  cmsis_narrow_walk_t narrow;
  tflm_sparse_narrow_t table; /* SPARSE_NARROW: its weights */
  int32_t is_narrow;
} cmsis_sparse_walk_t;

static void sparse_walk_start(cmsis_sparse_walk_t *walk, const void *filter,
                              const int8_t *input) {
  walk->is_narrow = ((const uint8_t *)filter)[0] == TFLM_SPARSE_NARROW;
  walk->groups.input = walk->narrow.input = input;
  if (walk->is_narrow) {
    tflm_sparse_narrow_start(filter, &walk->table);
    walk->narrow.row = walk->table.row;
    walk->narrow.weights = walk->table.weights;
  } else {
    tflm_sparse_groups_start(filter, &walk->groups.rows);
  }
}

static void sparse_walk_sums(cmsis_sparse_walk_t *walk, int32_t *sums, int32_t count) {
  if (walk->is_narrow) {
    narrow_chunks[walk->table.count_bytes - 1u][walk->table.width - 2u](&walk->narrow, sums, count);
  } else if (walk->groups.rows.count_bytes == 1u) {
    sparse_groups_chunk8(&walk->groups, sums, count);
  } else {
    sparse_groups_chunk16(&walk->groups, sums, count);
  }
}

/* FULLY_CONNECTED over a row-sparse filter with its folded constants: the sums of
 * CMSIS_SPARSE_CHUNK rows per call, requantised without a bias (it is folded in). */
static tflm_status_t groups_int8(const tflm_weighted_call_t *call, const int32_t *folded) {
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)call->params;
  const cmsis_fc_node_t *mine = (const cmsis_fc_node_t *)call->own;
  const int8_t *input = (const int8_t *)call->data.input;
  int8_t *output = (int8_t *)call->data.output;
  cmsis_fc_job_t job;
  cmsis_sparse_walk_t walk;
  cmsis_strict_t q;
  int32_t b, oc, j, count, sums[CMSIS_SPARSE_CHUNK];
  memset(&q, 0, sizeof q); /* read only when strict_constants set it (gcc -O1 cannot tell) */
  job.p = p;
  job.requant = call->requant;
  job.bias = NULL;
  job.fast = mine->requant_mode;
  job.step = p->channel_step;
  if (job.fast == CMSIS_REQUANT_STRICT && job.step == 0) {
    strict_constants(&job, &q);
  } else {
    quad_arrays(&job);
  }
  for (b = 0; b < p->batches; ++b, input += p->accum_depth) {
    sparse_walk_start(&walk, call->data.filter, input);
    for (oc = 0; oc < p->output_depth; oc += count) {
      count = p->output_depth - oc < CMSIS_SPARSE_CHUNK ? p->output_depth - oc
                                                         : CMSIS_SPARSE_CHUNK;
      if (count < 8) { /* a few rows (a classifier's last layer): no call */
        for (j = 0; j < count; ++j) sums[j] = folded[oc + j];
      } else {
        memcpy(sums, folded + oc, (size_t)count * sizeof(int32_t));
      }
      sparse_walk_sums(&walk, sums, count);
      finish_sums(&job, &q, sums, oc, count, output);
      output += count;
    }
  }
  return TFLM_OK;
}

/* A row-sparse filter: the assembly when the node has its folded constants and the
 * stream is word aligned, else the portable reader. */
static tflm_status_t grouped_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call) {
  const int32_t *folded =
      sparse_folded(ctx, call->node, (const tflm_fc_params_t *)call->params);
  if (folded == NULL || ((uintptr_t)call->data.filter & 3u) != 0) {
    return tflm_fully_connected_sparse_int8(ctx, call);
  }
  return groups_int8(call, folded);
}
#else
static tflm_status_t grouped_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call) {
  return tflm_fully_connected_sparse_int8(ctx, call);
}
#endif

static tflm_status_t cmsis_fc_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  cmsis_fc_node_t *mine;
  const tflm_fc_params_t *p;
  tflm_requant_t requant;
  tflm_status_t status = tflm_fully_connected_prepare(ctx, node);
  if (status != TFLM_OK) return status;
  p = (const tflm_fc_params_t *)node->user_data;
  mine = (cmsis_fc_node_t *)tflm_alloc_persistent(ctx, (uint32_t)sizeof(cmsis_fc_node_t));
  TFLM_KERNEL_CHECK(ctx, node, mine != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  mine->shared = (uint64_t)(uintptr_t)p;
  mine->fast_path = p->type == TFLM_TYPE_INT8 && p->filter_offset == 0;
  mine->requant_mode = 0;
  if (mine->fast_path) { /* once here rather than a pass over the arrays every invoke */
    tflm_fully_connected_requant(ctx, node, p, &requant);
    mine->requant_mode = cmsis_requant_mode(requant.multipliers, requant.shifts, p->channels);
  }
  /* A filter holding the int16 stream runs the layout loops only (fc_int8 checks them);
   * a stage's reduction reads the int8 filter, so never such a buffer (the generator
   * plans none: patches.reduces; a model that does is refused, not misread). */
  TFLM_KERNEL_CHECK(ctx, node,
                    record_kind(ctx, node) != CMSIS_FC_QUADS_IN_FILTER ||
                        (reads_layout() && mine->fast_path && p->decode_scratch < 0 &&
                         !tflm_node_reduces(ctx, node)),
                    TFLM_ERR_BAD_PARAMS);
  node->user_data = mine;
  return TFLM_OK;
}

/* The per-tensor or per-channel arrays as 4 consecutive entries per quad. */
static void quad_arrays(cmsis_fc_job_t *job) {
  int32_t j;
  job->step = job->p->channel_step;
  job->multipliers = job->requant.multipliers;
  job->shifts = job->requant.shifts;
  if (job->step != 0) return;
  for (j = 0; j < 4; ++j) {
    job->tensor_multipliers[j] = job->requant.multipliers[0];
    job->tensor_shifts[j] = job->requant.shifts[0];
  }
  job->multipliers = job->tensor_multipliers;
  job->shifts = job->tensor_shifts;
}

/* The fast loops over the filter; `call->node`'s layout when `use_layout` (not for a
 * decoded block, whose call is narrowed to its channels). */
static tflm_status_t fc_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                             int32_t use_layout) {
  const cmsis_fc_node_t *mine = (const cmsis_fc_node_t *)call->own;
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)call->params;
  const tflm_weighted_data_t *d = &call->data;
  cmsis_fc_job_t job;
  if (!mine->fast_path) { /* weights with a zero point */
    tflm_fully_connected_int8(p, &call->requant, (const int8_t *)d->input,
                              (const int8_t *)d->filter, (const int32_t *)d->bias,
                              (int8_t *)d->output);
    return TFLM_OK;
  }
  job.p = p;
  job.requant = call->requant;
  job.filter = (const int8_t *)d->filter;
  job.bias = (const int32_t *)d->bias;
  job.fast = mine->requant_mode;
  job.folded = NULL;
  if (use_layout && reads_layout()) {
    TFLM_KERNEL_CHECK(ctx, call->node, find_layout(ctx, call->node, &job), TFLM_ERR_BAD_PARAMS);
  }
  if (job.folded != NULL) {
    quad_arrays(&job);
    fc_quads(&job, (const int8_t *)d->input, (int8_t *)d->output);
  } else {
    fc_rows(&job, (const int8_t *)d->input, (int8_t *)d->output);
  }
  return TFLM_OK;
}

static tflm_status_t block_part_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call) {
  return fc_int8(ctx, call, 0);
}

static void block_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                       const int8_t *rows, int8_t *room, int32_t first, int32_t count) {
  (void)room;
  tflm_fully_connected_block(ctx, call, rows, first, count, block_part_int8);
}

/* The fast loops over the filter, or over each decoded block of a compressed one. */
static tflm_status_t cmsis_fc_run_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call) {
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)call->params;
  tflm_status_t banded;
  if (tflm_fully_connected_band(ctx, call, &banded)) return banded; /* a stage's reduction */
  if (p->decode_scratch == TFLM_FC_SPARSE_ROWS) return grouped_int8(ctx, call);
  if (p->decode_scratch < 0) return fc_int8(ctx, call, 1);
  return tflm_weighted_decoded(ctx, call, p->decode_scratch, p->output_depth, p->accum_depth,
                               block_int8);
}

static const tflm_weighted_kernels_t cmsis_fc_kernels = {
    tflm_fully_connected_requant, tflm_fully_connected_hybrid_eval,
    tflm_fully_connected_run_float32, cmsis_fc_run_int8, tflm_fully_connected_run_int16};

/* node->user_data is this tag's record, which starts with the shared parameters' address. */
TFLM_WEIGHTED_OP(tflm_op_fully_connected, TFLM_BUILTIN_FULLY_CONNECTED, cmsis_fc_prepare,
                 cmsis_fc_kernels, 1);
