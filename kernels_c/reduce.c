/* tflm-op: MEAN tflm_op_mean types: float32,int8,int16 */
/* tflm-op: SUM tflm_op_sum types: float32,int8,int16 */
/* tflm-op: REDUCE_MAX tflm_op_reduce_max types: float32,int8 */
/* MEAN, SUM and REDUCE_MAX over the axes of a constant int32 axis tensor (negative axes
 * count from the end, duplicates are ignored), keep_dims or not (the output layout is the
 * same).  Arithmetic as TFLM's reference kernels:
 *   float: each output accumulates its inputs in row-major input order (MEAN then divides
 *     by the element count as float; REDUCE_MAX starts from -FLT_MAX and skips NaN);
 *   int8/int16 MEAN and SUM: int32 sum minus zero_point * count, rescaled by
 *     in_scale / out_scale (for MEAN with 1/count folded into the multiplier), plus the
 *     output zero point, saturated.  TFLM takes this path for MEAN with equal input and
 *     output quantisation too, so there is no plain integer division (which truncates
 *     where the multiplier rounds: off by one on global average pooling);
 *   int8 REDUCE_MAX: requires equal quantisation and takes the maximum.
 * Quantised MEAN and SUM need an int32 scratch buffer of one sum per output. */
#include <float.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"
#include "tflm_quant.h"

enum { REDUCE_MEAN = 0, REDUCE_SUM = 1, REDUCE_MAX = 2 };

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;                      /* TFLM_TYPE_* of input and output */
  int32_t kind;                      /* REDUCE_MEAN, REDUCE_SUM or REDUCE_MAX */
  tflm_layout_reduction_t shape;     /* the reduced axes and the input walk */
  int32_t multiplier, shift;         /* requantisation (MEAN: 1/count folded in) */
  int32_t input_zero_point;
  int32_t output_zero_point;
  int32_t qmin, qmax;                /* range of the integer type */
  int32_t scratch;                   /* handle of the int32 sums (quantised MEAN/SUM) */
} tflm_reduce_params_t;

/* TFLM folds 1/count into the multiplier at eval; the same integer steps, done once. */
static void reduce_fold_count(tflm_reduce_params_t *p) {
  int32_t bits = 0;
  while (bits < 62 && ((int64_t)p->shape.count >> (bits + 1)) != 0) ++bits; /* floor(log2) */
  if (bits > 32) bits = 32;
  if (bits > 31 + p->shift) bits = 31 + p->shift;
  p->multiplier = (int32_t)(((int64_t)p->multiplier << bits) / p->shape.count);
  p->shift -= bits;
}

static tflm_status_t reduce_quantization(tflm_context_t *ctx, tflm_node_t *node,
                                         const tflm_tensor_t *in, const tflm_tensor_t *out,
                                         tflm_reduce_params_t *p) {
  p->qmin = in->type == TFLM_TYPE_INT8 ? -128 : -32768;
  p->qmax = in->type == TFLM_TYPE_INT8 ? 127 : 32767;
  p->input_zero_point = in->zero_point;
  p->output_zero_point = out->zero_point;
  if (p->kind == REDUCE_MAX) {
    TFLM_KERNEL_CHECK(ctx, node, in->type == TFLM_TYPE_INT8, TFLM_ERR_UNSUPPORTED_TYPE);
    TFLM_KERNEL_CHECK(ctx, node, in->scale == out->scale && in->zero_point == out->zero_point,
                      TFLM_ERR_BAD_PARAMS);
    return TFLM_OK;
  }
  tflm_quantize_multiplier((double)in->scale / (double)out->scale, &p->multiplier, &p->shift);
  if (p->kind == REDUCE_MEAN && p->shape.count > 0) reduce_fold_count(p);
  return tflm_request_scratch(ctx, (uint32_t)p->shape.out_elements * 4u, &p->scratch);
}

static tflm_status_t reduce_prepare(tflm_context_t *ctx, tflm_node_t *node, int32_t kind) {
  tflm_tensor_t in, out;
  tflm_reduce_params_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(
      ctx, node, 2, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8) | TFLM_TYPE_BIT(INT16),
      TFLM_IO_ANY_SHAPE, &in, &out));
  p = (tflm_reduce_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in.type;
  p->kind = kind;
  p->scratch = -1;
  p->multiplier = 0;
  p->shift = 0;
  TFLM_KERNEL_TRY(tflm_layout_reduction_init(ctx, node, &in, &out, &p->shape));
  node->user_data = p;
  if (in.type == TFLM_TYPE_FLOAT32) return TFLM_OK;
  return reduce_quantization(ctx, node, &in, &out, p);
}

static void reduce_float(const tflm_reduce_params_t *p, const float *in, float *out) {
  tflm_layout_reduction_walk_t w;
  const int32_t n = tflm_layout_reduction_start(&p->shape, &w);
  int32_t i;
  const float init = p->kind == REDUCE_MAX ? -FLT_MAX : 0.0f;
  for (i = 0; i < p->shape.out_elements; ++i) out[i] = init;
  for (i = 0; i < n; ++i, tflm_layout_reduction_next(&p->shape, &w)) {
    if (p->kind == REDUCE_MAX) {
      out[w.at] = in[i] > out[w.at] ? in[i] : out[w.at];
    } else {
      out[w.at] = out[w.at] + in[i];
    }
  }
  if (p->kind == REDUCE_MEAN && p->shape.count > 0) {
    for (i = 0; i < p->shape.out_elements; ++i) out[i] = out[i] / (float)p->shape.count;
  }
}

static int32_t reduce_load(const tflm_reduce_params_t *p, const void *in, int32_t i) {
  return p->type == TFLM_TYPE_INT8 ? ((const int8_t *)in)[i] : ((const int16_t *)in)[i];
}

static void reduce_store(const tflm_reduce_params_t *p, void *out, int32_t i, int32_t v) {
  if (p->type == TFLM_TYPE_INT8) {
    ((int8_t *)out)[i] = (int8_t)v;
  } else {
    ((int16_t *)out)[i] = (int16_t)v;
  }
}

static void reduce_int_max(const tflm_reduce_params_t *p, const void *in, void *out) {
  tflm_layout_reduction_walk_t w;
  const int32_t n = tflm_layout_reduction_start(&p->shape, &w);
  int32_t i;
  for (i = 0; i < p->shape.out_elements; ++i) reduce_store(p, out, i, p->qmin);
  for (i = 0; i < n; ++i, tflm_layout_reduction_next(&p->shape, &w)) {
    const int32_t value = reduce_load(p, in, i);
    if (value > reduce_load(p, out, w.at)) reduce_store(p, out, w.at, value);
  }
}

/* Integer sums (wrapping like TFLM's int32 accumulator), then the final step. */
static void reduce_int_sum(const tflm_reduce_params_t *p, const void *in, void *out,
                           int32_t *sums) {
  tflm_layout_reduction_walk_t w;
  const int32_t n = tflm_layout_reduction_start(&p->shape, &w);
  int32_t i;
  for (i = 0; i < p->shape.out_elements; ++i) sums[i] = 0;
  for (i = 0; i < n; ++i, tflm_layout_reduction_next(&p->shape, &w)) {
    sums[w.at] = (int32_t)((uint32_t)sums[w.at] + (uint32_t)reduce_load(p, in, i));
  }
  for (i = 0; i < p->shape.out_elements; ++i) {
    const int32_t shifted =
        (int32_t)((int64_t)sums[i] - (int64_t)p->input_zero_point * p->shape.count);
    /* Wrapping add: the same bits as TFLM's int32 add on every valid model, and defined
     * on crafted zero points. */
    int32_t v = tflm_add_wrap(
        tflm_multiply_by_quantized_multiplier(shifted, p->multiplier, p->shift),
        p->output_zero_point);
    v = v < p->qmin ? p->qmin : (v > p->qmax ? p->qmax : v);
    reduce_store(p, out, i, v);
  }
}

static tflm_status_t reduce_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_reduce_params_t *p = (const tflm_reduce_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t *sums;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  if (p->type == TFLM_TYPE_FLOAT32) {
    reduce_float(p, (const float *)in, (float *)out);
  } else if (p->kind == REDUCE_MAX) {
    reduce_int_max(p, in, out);
  } else {
    sums = (int32_t *)tflm_get_scratch(ctx, p->scratch);
    TFLM_KERNEL_CHECK(ctx, node, sums != NULL, TFLM_ERR_NOT_READY);
    reduce_int_sum(p, in, out, sums);
  }
  return TFLM_OK;
}

static tflm_status_t mean_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return reduce_prepare(ctx, node, REDUCE_MEAN);
}

static tflm_status_t sum_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return reduce_prepare(ctx, node, REDUCE_SUM);
}

static tflm_status_t max_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return reduce_prepare(ctx, node, REDUCE_MAX);
}

const tflm_registration_t tflm_op_mean = {
    NULL, TFLM_BUILTIN_MEAN, NULL, mean_prepare, reduce_eval, NULL, NULL};

const tflm_registration_t tflm_op_sum = {
    NULL, TFLM_BUILTIN_SUM, NULL, sum_prepare, reduce_eval, NULL, NULL};

const tflm_registration_t tflm_op_reduce_max = {
    NULL, TFLM_BUILTIN_REDUCE_MAX, NULL, max_prepare, reduce_eval, NULL, NULL};
