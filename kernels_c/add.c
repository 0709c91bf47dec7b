/* tflm-op: ADD tflm_op_add types: float32,int8,int16,int32 */
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

#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Persistent op data (fixed-width fields only).  Shapes are right-aligned into 6-D. */
typedef struct {
  int32_t type;                     /* TFLM_TYPE_* of inputs and output */
  int32_t broadcast;                /* 0: same shapes, one flat loop over `count` values */
  int32_t count;                    /* output elements */
  int32_t out_dims[TFLM_MAX_DIMS];  /* output shape, leading 1s added */
  int32_t strides1[TFLM_MAX_DIMS];  /* element step of input 1 per output index; 0 where
                                     * input 1 is broadcast along that dimension */
  int32_t strides2[TFLM_MAX_DIMS];  /* the same for input 2 */
  int32_t input1_offset, input2_offset, output_offset; /* -zp1, -zp2, +zp_out */
  int32_t left_shift;               /* headroom shift: 20 (int8) or 15 (int16) */
  int32_t input1_multiplier, input1_shift;
  int32_t input2_multiplier, input2_shift;
  int32_t output_multiplier, output_shift;
  int32_t act_min, act_max;         /* quantised activation clamp */
  float act_min_f, act_max_f;       /* float activation clamp */
} tflm_add_params_t;

/* Strides of `view` when indexing it with the 6-D output index; 0 on broadcast dimensions.
 * Returns 0 when the shapes do not broadcast. */
static int32_t tflm_add_strides(const tflm_tensor_t *view, const int32_t *out_dims,
                                int32_t *strides) {
  const int32_t lead = TFLM_MAX_DIMS - view->ndims;
  int32_t stride = 1, k;
  for (k = TFLM_MAX_DIMS - 1; k >= 0; --k) {
    const int32_t dim = k >= lead ? view->dims[k - lead] : 1;
    if (dim != out_dims[k] && dim != 1) {
      return 0;
    }
    strides[k] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return 1;
}

static int32_t tflm_add_same_shape(const tflm_tensor_t *a, const tflm_tensor_t *b) {
  int32_t k;
  if (a->ndims != b->ndims) {
    return 0;
  }
  for (k = 0; k < a->ndims; ++k) {
    if (a->dims[k] != b->dims[k]) {
      return 0;
    }
  }
  return 1;
}

/* Quantised parameters, computed in double in TFLM's order (CalculateOpDataAdd). */
static int32_t tflm_add_quant_params(const tflm_tensor_t *in1, const tflm_tensor_t *in2,
                                     const tflm_tensor_t *out, tflm_add_params_t *p) {
  const double max_scale = (double)(in1->scale > in2->scale ? in1->scale : in2->scale);
  const double twice_max_input_scale = 2.0 * max_scale;
  const double headroom = out->type == TFLM_TYPE_INT16 ? 32768.0 : 1048576.0; /* 2^shift */
  double real1, real2, real_out;
  p->left_shift = out->type == TFLM_TYPE_INT16 ? 15 : 20;
  p->input1_offset = -in1->zero_point;
  p->input2_offset = -in2->zero_point;
  p->output_offset = out->zero_point;
  if (!(in1->scale > 0.0f && in2->scale > 0.0f && out->scale > 0.0f)) {
    return 0;
  }
  real1 = (double)in1->scale / twice_max_input_scale;
  real2 = (double)in2->scale / twice_max_input_scale;
  real_out = twice_max_input_scale / (headroom * (double)out->scale);
  tflm_quantize_multiplier(real1, &p->input1_multiplier, &p->input1_shift);
  tflm_quantize_multiplier(real2, &p->input2_multiplier, &p->input2_shift);
  tflm_quantize_multiplier(real_out, &p->output_multiplier, &p->output_shift);
  /* TFLM insists all three are below one (QuantizeMultiplierSmallerThanOneExp). */
  return real_out < 1.0;
}

/* Types and shapes: fills type, broadcast, count, out_dims and the strides. */
static tflm_status_t tflm_add_shapes(tflm_context_t *ctx, tflm_node_t *node,
                                     const tflm_tensor_t *in1, const tflm_tensor_t *in2,
                                     const tflm_tensor_t *out, tflm_add_params_t *p) {
  const int32_t lead = TFLM_MAX_DIMS - out->ndims;
  int32_t k;
  TFLM_KERNEL_CHECK(ctx, node, in1->type == out->type && in2->type == out->type,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node,
                    out->type == TFLM_TYPE_FLOAT32 || out->type == TFLM_TYPE_INT8 ||
                        out->type == TFLM_TYPE_INT16 || out->type == TFLM_TYPE_INT32,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, in1->ndims <= out->ndims && in2->ndims <= out->ndims,
                    TFLM_ERR_BAD_SHAPE);
  p->type = out->type;
  p->broadcast = !tflm_add_same_shape(in1, in2);
  p->count = tflm_tensor_elements(out);
  for (k = 0; k < TFLM_MAX_DIMS; ++k) {
    p->out_dims[k] = k >= lead ? out->dims[k - lead] : 1;
  }
  TFLM_KERNEL_CHECK(ctx, node, tflm_add_strides(in1, p->out_dims, p->strides1),
                    TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_add_strides(in2, p->out_dims, p->strides2),
                    TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, p->broadcast || tflm_tensor_elements(in1) == p->count,
                    TFLM_ERR_BAD_SHAPE);
  return TFLM_OK;
}

static tflm_status_t tflm_add_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in1, in2, out;
  tflm_add_params_t *p;
  tflm_status_t status;
  const int32_t activation = tflm_opt_int(node, TFLM_OPT_ADD_FUSED_ACTIVATION_FUNCTION, 0);
  TFLM_KERNEL_CHECK(ctx, node, node->inputs_count == 2 && node->outputs_count == 1,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 0, &in1) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 1, &in2) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, &out) == TFLM_OK, TFLM_ERROR);
  p = (tflm_add_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  status = tflm_add_shapes(ctx, node, &in1, &in2, &out, p);
  if (status != TFLM_OK) {
    return status;
  }
  tflm_activation_range_float(activation, &p->act_min_f, &p->act_max_f);
  if (out.type == TFLM_TYPE_INT8 || out.type == TFLM_TYPE_INT16) {
    const int32_t qmin = out.type == TFLM_TYPE_INT8 ? -128 : -32768;
    const int32_t qmax = out.type == TFLM_TYPE_INT8 ? 127 : 32767;
    TFLM_KERNEL_CHECK(ctx, node, tflm_add_quant_params(&in1, &in2, &out, p),
                      TFLM_ERR_BAD_PARAMS);
    tflm_activation_range_quantized(activation, out.scale, out.zero_point, qmin, qmax,
                                    &p->act_min, &p->act_max);
  }
  node->user_data = p;
  return TFLM_OK;
}

/* One row of n outputs; a_step / b_step are 1, or 0 for a broadcast value. */
typedef void (*tflm_add_row_fn)(const tflm_add_params_t *p, const void *a, int32_t a_step,
                                const void *b, int32_t b_step, void *out, int32_t n);

static void tflm_add_float(const tflm_add_params_t *p, const void *a, int32_t a_step,
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

static void tflm_add_int32(const tflm_add_params_t *p, const void *a, int32_t a_step,
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

static void tflm_add_int8(const tflm_add_params_t *p, const void *a, int32_t a_step,
                          const void *b, int32_t b_step, void *out, int32_t n) {
  const int8_t *x = (const int8_t *)a;
  const int8_t *y = (const int8_t *)b;
  int8_t *z = (int8_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    z[i] = (int8_t)tflm_add_quantized(p, x[i * a_step], y[i * b_step]);
  }
}

static void tflm_add_int16(const tflm_add_params_t *p, const void *a, int32_t a_step,
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
static void tflm_add_broadcast(const tflm_add_params_t *p, const uint8_t *a, const uint8_t *b,
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

static tflm_status_t tflm_add_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_add_params_t *p = (const tflm_add_params_t *)node->user_data;
  const void *a = tflm_node_input_data(ctx, node, 0);
  const void *b = tflm_node_input_data(ctx, node, 1);
  void *out = tflm_node_output_data(ctx, node, 0);
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
  return TFLM_OK;
}

const tflm_registration_t tflm_op_add = {
    NULL, 0 /* BuiltinOperator ADD */, NULL, tflm_add_prepare, tflm_add_eval, NULL, NULL};
