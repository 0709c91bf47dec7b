/* tflm-op: ADD tflm_op_add types: float32,int8,int16,int32 */
/* ADD for the cmsis tag: int8 inputs of the same shape through two lookup tables.
 *
 * TFLM's int8 add rescales each input on its own before summing: scaled = MBQM((x + offset)
 * << 20, multiplier, shift) depends only on the stored byte x, so the 256 values of each
 * input are computed once per invoke with the reference arithmetic into the scratch buffer;
 * per element only the sum's requantisation remains (cmsis_simd.h, 4 outputs per word with
 * the DSP extension; with the strict requantisation's constants hoisted when the output
 * shift suits it).  Smaller or broadcast int8 adds and the other types run the reference
 * rows (add_reference.c).  Every value is the reference's.
 *
 * Scratch: 2 KB (two tables of 256 int32) for every int8 add of CMSIS_ADD_TABLE_MIN or more
 * elements whose inputs are not broadcast, whatever the instruction set. */
#include <stddef.h>
#include <stdint.h>

#include "add_reference.h"
#include "cmsis_simd.h"
#include "tflm_elementwise.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Below this many elements filling the tables costs more than it saves. */
#define CMSIS_ADD_TABLE_MIN 512

/* Persistent block of the tag, in node->user_data (16 bytes on every target). */
typedef struct {
  uint64_t shared;  /* address of the tflm_add_params_t made by tflm_add_prepare */
  int32_t scratch;  /* scratch handle; -1 when the reference loops run */
  int32_t unused;
} cmsis_add_node_t;

/* table[u] = the rescaled value of the stored byte (int8_t)u, as tflm_add_quantized. */
static void fill_table(const tflm_binary_rescale_t *r, int32_t offset, int32_t multiplier,
                       int32_t shift, int32_t *table) {
  int32_t u;
  for (u = 0; u < 256; ++u) {
    const int32_t value = (int32_t)(int8_t)(uint8_t)u;
    table[u] = tflm_multiply_by_quantized_multiplier(
        (value + offset) * ((int32_t)1 << r->left_shift), multiplier, shift);
  }
}

/* The first n & ~3 outputs when the output shift suits the strict requantisation: its
 * constants hoisted (cmsis_strict_t), 4 sums gathered in registers per step.  Returns the
 * outputs done. */
static int32_t add_int8_strict(const tflm_add_params_t *p, const int32_t *t1,
                               const int32_t *t2, const uint8_t *a, const uint8_t *b,
                               int8_t *out) {
  const int32_t n = p->binary.shape.count & ~3;
  cmsis_strict_t q;
  int32_t i;
  if (!cmsis_requant_is_strict(&p->rescale.output_shift, 1)) return 0;
  cmsis_strict_init(p->rescale.output_multiplier, p->rescale.output_shift,
                    p->rescale.output_offset, p->binary.act_min, p->binary.act_max, &q);
  for (i = 0; i < n; i += 4) {
    cmsis_strict4(&q, t1[a[i]] + t2[b[i]], t1[a[i + 1]] + t2[b[i + 1]],
                  t1[a[i + 2]] + t2[b[i + 2]], t1[a[i + 3]] + t2[b[i + 3]], out + i);
  }
  return n;
}

static void add_int8_tables(const tflm_add_params_t *p, const int32_t *t1, const int32_t *t2,
                            const uint8_t *a, const uint8_t *b, int8_t *out) {
  const int32_t m = p->rescale.output_multiplier, s = p->rescale.output_shift;
  const int32_t offset = p->rescale.output_offset;
  const int32_t lo = p->binary.act_min, hi = p->binary.act_max, n = p->binary.shape.count;
  int32_t i = add_int8_strict(p, t1, t2, a, b, out);
  if (i == 0 && cmsis_requant_is_fast(&s, 1)) {
    const int32_t multipliers[4] = {m, m, m, m}, shifts[4] = {s, s, s, s};
    int32_t sums[4], j;
    for (; i + 4 <= n; i += 4) {
      for (j = 0; j < 4; ++j) sums[j] = t1[a[i + j]] + t2[b[i + j]];
      cmsis_requantize4_fast(sums, multipliers, shifts, offset, lo, hi, out + i);
    }
  }
  for (; i < n; ++i) out[i] = (int8_t)cmsis_requantize(t1[a[i]] + t2[b[i]], m, s, offset, lo, hi);
}

static tflm_status_t cmsis_add_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  cmsis_add_node_t *mine;
  const tflm_add_params_t *p;
  tflm_status_t status = tflm_add_prepare(ctx, node);
  if (status != TFLM_OK) return status;
  p = (const tflm_add_params_t *)node->user_data;
  mine = (cmsis_add_node_t *)tflm_alloc_persistent(ctx, (uint32_t)sizeof(cmsis_add_node_t));
  TFLM_KERNEL_CHECK(ctx, node, mine != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  mine->shared = (uint64_t)(uintptr_t)p;
  mine->scratch = -1;
  mine->unused = 0;
  if (p->binary.type == TFLM_TYPE_INT8 && p->binary.shape.flat &&
      p->binary.shape.count >= CMSIS_ADD_TABLE_MIN) {
    status = tflm_request_scratch(ctx, 2u * 256u * (uint32_t)sizeof(int32_t), &mine->scratch);
    if (status != TFLM_OK) return status;
  }
  node->user_data = mine;
  return TFLM_OK;
}

static tflm_status_t cmsis_add_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const cmsis_add_node_t *mine = (const cmsis_add_node_t *)node->user_data;
  const tflm_add_params_t *p =
      mine != NULL ? (const tflm_add_params_t *)(uintptr_t)mine->shared : NULL;
  const void *a = tflm_node_input_data(ctx, node, 0);
  const void *b = tflm_node_input_data(ctx, node, 1);
  void *out = tflm_node_output_data(ctx, node, 0);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && a != NULL && b != NULL && out != NULL,
                    TFLM_ERR_NOT_READY);
  if (mine->scratch >= 0) {
    int32_t *tables = (int32_t *)tflm_get_scratch(ctx, mine->scratch);
    const tflm_binary_rescale_t *r = &p->rescale;
    fill_table(r, r->input1_offset, r->input1_multiplier, r->input1_shift, tables);
    fill_table(r, r->input2_offset, r->input2_multiplier, r->input2_shift, tables + 256);
    add_int8_tables(p, tables, tables + 256, (const uint8_t *)a, (const uint8_t *)b,
                    (int8_t *)out);
    return TFLM_OK;
  }
  return tflm_binary_run(ctx, node, &p->binary, &tflm_add_rows);
}

const tflm_registration_t tflm_op_add = {
    NULL, TFLM_BUILTIN_ADD, NULL, cmsis_add_prepare, cmsis_add_eval, NULL, NULL};
