/* tflm-op: CUMSUM tflm_op_cumsum types: float32,int8 */
/* CUMSUM along the axis given by a constant int32 scalar (negative counts from the end),
 * with the exclusive (each output leaves out its own element) and reverse (sums run from
 * the end of the axis) options, bit-exact with TFLM:
 *   float32: a float accumulator starting at 0, elements added in axis order.
 *   int8: as TFLM's quantised path, every input (x - zero_point) is shifted left by 20 and
 *   halved in Q31 (multiplier 0.5), summed in a wrapping int32 accumulator, and the sum is
 *   requantised by 2 * input_scale / (2^20 * output_scale) plus the output zero point,
 *   clamped to int8.  Like TFLM, the accumulator starts at the scaled input offset (one
 *   extra "-zero_point" element), so outputs carry -input_zero_point * input_scale /
 *   output_scale; a zero input zero point gives the plain cumulative sum. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"
#include "tflm_quant.h"

#define TFLM_CUMSUM_LEFT_SHIFT 20

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;        /* TFLM_TYPE_* of input and output */
  int32_t outer;       /* product of the dims before the axis */
  int32_t axis_size;   /* dims[axis] */
  int32_t inner;       /* product of the dims after the axis */
  int32_t exclusive;
  int32_t reverse;
  int32_t input_offset;      /* -input zero point */
  int32_t output_offset;     /* output zero point */
  int32_t input_multiplier;  /* Q31 of 0.5 */
  int32_t input_shift;
  int32_t output_multiplier;
  int32_t output_shift;
} tflm_cumsum_params_t;

static tflm_status_t cumsum_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, axis_view, out;
  tflm_cumsum_params_t *p;
  int32_t axis;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8),
                                     TFLM_IO_ANY_SHAPE, &in, &out));
  TFLM_KERNEL_TRY(tflm_node_constant_input(ctx, node, 1, TFLM_TYPE_BIT(INT32), &axis_view));
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(&axis_view) == 1, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, in.ndims >= 1 && in.bytes == out.bytes, TFLM_ERR_BAD_SHAPE);
  axis = tflm_layout_read_index(&axis_view, 0);
  if (axis < 0) axis += in.ndims;
  TFLM_KERNEL_CHECK(ctx, node, axis >= 0 && axis < in.ndims, TFLM_ERR_BAD_PARAMS);
  p = (tflm_cumsum_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in.type;
  p->outer = tflm_layout_product(in.dims, 0, axis);
  p->axis_size = in.dims[axis];
  p->inner = tflm_layout_product(in.dims, axis + 1, in.ndims);
  p->exclusive = tflm_opt_int(node, TFLM_OPT_CUMSUM_EXCLUSIVE, 0) != 0;
  p->reverse = tflm_opt_int(node, TFLM_OPT_CUMSUM_REVERSE, 0) != 0;
  p->input_offset = 0;
  p->output_offset = 0;
  p->input_multiplier = p->output_multiplier = 0;
  p->input_shift = p->output_shift = 0;
  if (in.type == TFLM_TYPE_INT8) {
    const double twice_scale = 2.0 * (double)in.scale;
    TFLM_KERNEL_CHECK(ctx, node, in.scale > 0.0f && out.scale > 0.0f, TFLM_ERR_BAD_PARAMS);
    p->input_offset = -in.zero_point;
    p->output_offset = out.zero_point;
    tflm_quantize_multiplier((double)in.scale / twice_scale, &p->input_multiplier,
                             &p->input_shift);
    tflm_quantize_multiplier(
        twice_scale / ((double)(INT32_C(1) << TFLM_CUMSUM_LEFT_SHIFT) * (double)out.scale),
        &p->output_multiplier, &p->output_shift);
    /* TFLM's "smaller than one" multipliers: a non-positive shift. */
    TFLM_KERNEL_CHECK(ctx, node, p->input_shift <= 0 && p->output_shift <= 0,
                      TFLM_ERR_BAD_PARAMS);
  }
  node->user_data = p;
  return TFLM_OK;
}

static int8_t cumsum_output_int8(const tflm_cumsum_params_t *p, int32_t acc) {
  int32_t v = tflm_multiply_by_quantized_multiplier(acc, p->output_multiplier,
                                                    p->output_shift) +
              p->output_offset;
  v = v < -128 ? -128 : v;
  return (int8_t)(v > 127 ? 127 : v);
}

static int32_t cumsum_scale_int8(const tflm_cumsum_params_t *p, int32_t value) {
  /* |value| <= 255, so the shift fits in int32. */
  return tflm_multiply_by_quantized_multiplier(value * (1 << TFLM_CUMSUM_LEFT_SHIFT),
                                               p->input_multiplier, p->input_shift);
}

static tflm_status_t cumsum_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_cumsum_params_t *p = (const tflm_cumsum_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t o, k, i;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  for (o = 0; o < p->outer; ++o) {
    for (k = 0; k < p->inner; ++k) {
      const int32_t base = o * p->axis_size * p->inner + k;
      if (p->type == TFLM_TYPE_FLOAT32) {
        const float *x = (const float *)in;
        float *y = (float *)out;
        float acc = 0.0f;
        for (i = 0; i < p->axis_size; ++i) {
          const int32_t at = base + (p->reverse ? p->axis_size - 1 - i : i) * p->inner;
          if (p->exclusive) {
            y[at] = acc;
            acc += x[at];
          } else {
            acc += x[at];
            y[at] = acc;
          }
        }
      } else {
        const int8_t *x = (const int8_t *)in;
        int8_t *y = (int8_t *)out;
        /* Wrapping int32 sum (TFLM's accumulator overflows silently on long axes). */
        uint32_t acc = (uint32_t)cumsum_scale_int8(p, p->input_offset);
        for (i = 0; i < p->axis_size; ++i) {
          const int32_t at = base + (p->reverse ? p->axis_size - 1 - i : i) * p->inner;
          if (p->exclusive) y[at] = cumsum_output_int8(p, (int32_t)acc);
          acc += (uint32_t)cumsum_scale_int8(p, x[at] + p->input_offset);
          if (!p->exclusive) y[at] = cumsum_output_int8(p, (int32_t)acc);
        }
      }
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_cumsum = {
    NULL, TFLM_BUILTIN_CUMSUM, NULL, cumsum_prepare, cumsum_eval, NULL, NULL};
