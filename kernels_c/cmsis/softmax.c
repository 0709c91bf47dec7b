/* tflm-op: SOFTMAX tflm_op_softmax types: float32,int8,int16 */
/* SOFTMAX for the cmsis tag: int8 input (int8 or int16 output) through an exp table.
 *
 * In TFLM's int8 softmax every exp is exp(beta * scale * (x - row max)), and x - max takes
 * only the 256 values 0, -1, ..., -255: prepare computes table[d] = tflm_softmax_exp(-d) with
 * the reference arithmetic once (0 where -d < diff_min, whose terms the reference skips: a
 * zero exp adds nothing to the sum and gives the output minimum, the reference's value for
 * them), so a row costs a max, one lookup per sum term and one per output instead of two
 * fixed-point exps per element.  The table is made only for an input of at least 256
 * elements: a smaller one (the class scores of every corpus model) saves little time and
 * the 1 KB would grow the arena past TFLM+CMSIS-NN's (micro_speech: 4 scores).  float32,
 * int16 and small int8 inputs run the reference loops (softmax_reference.c).  Every value
 * is the reference's.
 *
 * Persistent memory: 16 bytes per node, plus the table when there is one, whatever the
 * instruction set; no scratch memory. */
#include <stddef.h>
#include <stdint.h>

#include "cmsis_simd.h"
#include "softmax_reference.h"
#include "tflm_fixedpoint.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Persistent block of the tag, in node->user_data. */
typedef struct {
  uint64_t shared;    /* address of the parameters made by tflm_softmax_prepare */
  int32_t has_table;  /* 1: int8 input; then int32_t table[256] follows the block, table[d]
                       * = exp of the difference -d in Q0.31 */
  int32_t unused;
} cmsis_softmax_node_t;

#define CMSIS_SOFTMAX_HEADER_BYTES ((uint32_t)sizeof(cmsis_softmax_node_t))
#define CMSIS_SOFTMAX_TABLE_MIN_ELEMENTS 256

static tflm_status_t cmsis_softmax_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  cmsis_softmax_node_t *mine;
  const tflm_softmax_params_t *p;
  uint32_t bytes = CMSIS_SOFTMAX_HEADER_BYTES;
  int32_t d, has_table;
  tflm_status_t status = tflm_softmax_prepare(ctx, node);
  if (status != TFLM_OK) return status;
  p = (const tflm_softmax_params_t *)node->user_data;
  has_table = p->input_type == TFLM_TYPE_INT8 &&
              (int64_t)p->outer_size * p->depth >= CMSIS_SOFTMAX_TABLE_MIN_ELEMENTS;
  if (has_table) bytes += 256u * (uint32_t)sizeof(int32_t);
  mine = (cmsis_softmax_node_t *)tflm_alloc_persistent(ctx, bytes);
  TFLM_KERNEL_CHECK(ctx, node, mine != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  mine->shared = (uint64_t)(uintptr_t)p;
  mine->has_table = has_table;
  mine->unused = 0;
  if (mine->has_table) {
    int32_t *table = (int32_t *)(void *)(mine + 1);
    for (d = 0; d < 256; ++d) {
      table[d] = -d >= p->diff_min ? tflm_softmax_exp(p, -d) : 0;
    }
  }
  node->user_data = mine;
  return TFLM_OK;
}

static int32_t row_max(const int8_t *in, int32_t depth) {
  int32_t max = -128, c = 0;
#ifdef CMSIS_DSP
  if (depth >= 8) {
    int32_t m = (int32_t)0x80808080u, diff, k;
    for (; c + 4 <= depth; c += 4) {
      const int32_t v = cmsis_read4(in + c);
      __asm__("ssub8 %[d], %[v], %[m]\n\tsel %[m], %[v], %[m]"
              : [m] "+r"(m), [d] "=&r"(diff)
              : [v] "r"(v)
              : "cc");
    }
    for (k = 0; k < 4; ++k) {
      const int32_t b = (int8_t)(uint8_t)((uint32_t)m >> (8 * k));
      max = b > max ? b : max;
    }
  }
#endif
  for (; c < depth; ++c) max = in[c] > max ? in[c] : max;
  return max;
}

/* One row, int8 output when out8 != NULL else int16; 0 when the sum of exps is too large
 * for the output format (as the reference). */
static int32_t softmax_row(const tflm_softmax_params_t *p, const int32_t *table,
                           const int8_t *in, int8_t *out8, int16_t *out16) {
  const int32_t depth = p->depth;
  const int32_t out_bits = out8 != NULL ? 8 : 16;
  const int32_t out_min = out8 != NULL ? -128 : -32768;
  const int32_t max = row_max(in, depth);
  int32_t sum = 0, bits_over_unit, reciprocal, shift, c;
  for (c = 0; c < depth; ++c) {
    const int32_t term = tflm_rounding_divide_by_pot(table[max - in[c]],
                                                     TFLM_SOFTMAX_ACCUM_INTEGER_BITS);
    sum = (int32_t)((uint32_t)sum + (uint32_t)term); /* wraps like the reference */
  }
  reciprocal = tflm_fp_reciprocal(sum, TFLM_SOFTMAX_ACCUM_INTEGER_BITS, &bits_over_unit);
  shift = bits_over_unit + 31 - out_bits;
  if (shift < 0 || shift > 31) return 0;
  for (c = 0; c < depth; ++c) {
    const int32_t prob = tflm_saturating_rounding_doubling_high_mul(reciprocal, table[max - in[c]]);
    tflm_softmax_store(out8, out16, c, tflm_rounding_divide_by_pot(prob, shift) + out_min);
  }
  return 1;
}

static tflm_status_t cmsis_softmax_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const cmsis_softmax_node_t *mine = (const cmsis_softmax_node_t *)node->user_data;
  const tflm_softmax_params_t *p =
      mine != NULL ? (const tflm_softmax_params_t *)(uintptr_t)mine->shared : NULL;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  if (mine->has_table) {
    const int32_t *table = (const int32_t *)(const void *)(mine + 1);
    int32_t i, ok = 1;
    for (i = 0; i < p->outer_size && ok; ++i) {
      const int32_t offset = i * p->depth;
      if (p->output_type == TFLM_TYPE_INT8) {
        ok = softmax_row(p, table, (const int8_t *)in + offset,
                         (int8_t *)out + offset, NULL);
      } else {
        ok = softmax_row(p, table, (const int8_t *)in + offset, NULL,
                         (int16_t *)out + offset);
      }
    }
    return ok ? TFLM_OK : TFLM_ERROR;
  }
  if (p->input_type == TFLM_TYPE_FLOAT32) {
    tflm_softmax_float(p, (const float *)in, (float *)out);
    return TFLM_OK;
  }
  if (p->input_type == TFLM_TYPE_INT8) return tflm_softmax_int8(p, (const int8_t *)in, out);
  tflm_softmax_int16((const tflm_softmax_int16_data_t *)p, (const int16_t *)in, (int16_t *)out);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_softmax = {
    NULL, TFLM_BUILTIN_SOFTMAX, NULL, cmsis_softmax_prepare, cmsis_softmax_eval,
    NULL, NULL};
