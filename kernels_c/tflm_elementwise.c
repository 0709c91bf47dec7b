/* Broadcasting and helpers shared by the elementwise kernels; see tflm_elementwise.h. */
#include "tflm_elementwise.h"

#include <stddef.h>

#include "tflm_quant.h"

/* Bit k of the result: the input has dim 1 at output axis k; -1 when the input does not
 * broadcast to out_dims. */
static int32_t tflm_broadcast_ones(const tflm_tensor_t *view, const int32_t *out_dims) {
  const int32_t lead = TFLM_MAX_DIMS - view->ndims;
  int32_t ones = 0, k;
  if (lead < 0) {
    return -1;
  }
  for (k = 0; k < TFLM_MAX_DIMS; ++k) {
    const int32_t dim = k >= lead ? view->dims[k - lead] : 1;
    if (dim == 1) {
      ones |= 1 << k;
    } else if (dim != out_dims[k]) {
      return -1;
    }
  }
  return ones;
}

/* Strides of input i indexed with the 6-D output index; 0 on its broadcast axes. */
static void tflm_broadcast_strides(const tflm_broadcast_t *b, int32_t i, int32_t *strides) {
  int32_t stride = 1, k;
  for (k = TFLM_MAX_DIMS - 1; k >= 0; --k) {
    if (b->ones[i] & (1u << k)) {
      strides[k] = 0;
    } else {
      strides[k] = stride;
      stride *= b->out_dims[k];
    }
  }
}

int32_t tflm_broadcast_init(tflm_broadcast_t *b, const tflm_tensor_t *inputs, int32_t count,
                            const tflm_tensor_t *output) {
  const int32_t lead = TFLM_MAX_DIMS - output->ndims;
  int32_t i, k;
  if (lead < 0 || count < 1 || count > TFLM_ELEMENTWISE_MAX_INPUTS) {
    return 0;
  }
  for (k = 0; k < TFLM_MAX_DIMS; ++k) {
    b->out_dims[k] = k >= lead ? output->dims[k - lead] : 1;
  }
  b->count = tflm_tensor_elements(output);
  b->flat = 1;
  for (i = 0; i < TFLM_ELEMENTWISE_MAX_INPUTS; ++i) {
    b->ones[i] = (uint8_t)((1 << TFLM_MAX_DIMS) - 1);
  }
  for (i = 0; i < count; ++i) {
    const int32_t ones = tflm_broadcast_ones(&inputs[i], b->out_dims);
    if (ones < 0) {
      return 0;
    }
    b->ones[i] = (uint8_t)ones;
    /* Every dimension matches or is 1, so equal counts mean no broadcasting. */
    if (tflm_tensor_elements(&inputs[i]) != b->count) {
      b->flat = 0;
    }
  }
  return 1;
}

tflm_status_t tflm_elementwise_prepare(tflm_context_t *ctx, tflm_node_t *node, int32_t count,
                                       tflm_tensor_t *inputs, tflm_tensor_t *output,
                                       tflm_broadcast_t *b) {
  int32_t i;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, count, 0, TFLM_IO_ANY_SHAPE, inputs, output));
  for (i = 1; i < count; ++i) {
    TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, i, &inputs[i]) == TFLM_OK,
                      TFLM_ERROR);
  }
  TFLM_KERNEL_CHECK(ctx, node, tflm_broadcast_init(b, inputs, count, output),
                    TFLM_ERR_BAD_SHAPE);
  return TFLM_OK;
}

tflm_status_t tflm_elementwise_alloc(tflm_context_t *ctx, tflm_node_t *node, uint32_t size,
                                     int32_t count, tflm_tensor_t *inputs,
                                     tflm_tensor_t *output, void **data) {
  tflm_broadcast_t *b = (tflm_broadcast_t *)tflm_alloc_persistent(ctx, size);
  TFLM_KERNEL_CHECK(ctx, node, b != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  TFLM_KERNEL_TRY(tflm_elementwise_prepare(ctx, node, count, inputs, output, b));
  node->user_data = b;
  *data = b;
  return TFLM_OK;
}

/* Odometer over the five outer dimensions: one row per index, input offsets advanced by
 * their strides (a dimension that wraps rewinds its contribution). */
void tflm_broadcast_run(const tflm_broadcast_t *b, const void *params, int32_t count,
                        const void *const *in, const int32_t *in_size, void *out,
                        int32_t out_size, tflm_elementwise_row_fn row) {
  const int32_t inner = b->out_dims[TFLM_MAX_DIMS - 1];
  int32_t index[TFLM_MAX_DIMS - 1] = {0};
  int32_t offset[TFLM_ELEMENTWISE_MAX_INPUTS] = {0};
  int32_t step[TFLM_ELEMENTWISE_MAX_INPUTS] = {1, 1, 1};
  const void *ptr[TFLM_ELEMENTWISE_MAX_INPUTS] = {NULL, NULL, NULL};
  int32_t strides[TFLM_ELEMENTWISE_MAX_INPUTS][TFLM_MAX_DIMS];
  int32_t done, i, k;
  if (b->flat || b->count <= 0) {
    if (b->count > 0) {
      row(params, in, step, out, b->count);
    }
    return;
  }
  for (i = 0; i < count; ++i) {
    tflm_broadcast_strides(b, i, strides[i]);
    step[i] = strides[i][TFLM_MAX_DIMS - 1];
  }
  for (done = 0; done < b->count; done += inner) {
    for (i = 0; i < count; ++i) {
      ptr[i] = (const uint8_t *)in[i] + (size_t)offset[i] * (size_t)in_size[i];
    }
    row(params, ptr, step, (uint8_t *)out + (size_t)done * (size_t)out_size, inner);
    for (k = TFLM_MAX_DIMS - 2; k >= 0; --k) {
      for (i = 0; i < count; ++i) {
        offset[i] += strides[i][k];
      }
      if (++index[k] < b->out_dims[k]) {
        break;
      }
      for (i = 0; i < count; ++i) {
        offset[i] -= strides[i][k] * b->out_dims[k];
      }
      index[k] = 0;
    }
  }
}

void tflm_activation_range_int32(int32_t activation, int32_t *lo, int32_t *hi) {
  *lo = INT32_MIN;
  *hi = INT32_MAX;
  if (activation == TFLM_ACT_RELU) {
    *lo = 0;
  } else if (activation == TFLM_ACT_RELU6) {
    *lo = 0;
    *hi = 6;
  } else if (activation == TFLM_ACT_RELU_N1_TO_1) {
    *lo = -1;
    *hi = 1;
  }
}

/* The op's row for `type`, NULL where it has none. */
static tflm_elementwise_row_fn tflm_binary_row(const tflm_binary_rows_t *rows, int32_t type) {
  switch (type) {
    case TFLM_TYPE_FLOAT32: return rows->float32;
    case TFLM_TYPE_INT8: return rows->int8;
    case TFLM_TYPE_INT16: return rows->int16;
    case TFLM_TYPE_INT32: return rows->int32;
    case TFLM_TYPE_INT64: return rows->int64;
    case TFLM_TYPE_BOOL: return rows->boolean;
    default: return NULL;
  }
}

tflm_status_t tflm_binary_prepare(tflm_context_t *ctx, tflm_node_t *node, size_t size,
                                  const tflm_binary_rows_t *rows, int32_t activation,
                                  int32_t same_types, tflm_tensor_t *in, tflm_tensor_t *out,
                                  void **data) {
  tflm_binary_t *p;
  TFLM_KERNEL_TRY(tflm_elementwise_alloc(ctx, node, (uint32_t)size, 2, in, out, data));
  p = (tflm_binary_t *)*data;
  TFLM_KERNEL_CHECK(ctx, node,
                    out->type == (rows->bool_output ? TFLM_TYPE_BOOL : in[0].type) &&
                        (!same_types || in[1].type == in[0].type),
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_binary_row(rows, in[0].type) != NULL,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p->type = in[0].type;
  p->second_type = in[1].type;
  tflm_activation_range_float(activation, &p->act_min_f, &p->act_max_f);
  tflm_activation_range_int32(activation, &p->act_min, &p->act_max);
  return TFLM_OK;
}

tflm_status_t tflm_binary_run(tflm_context_t *ctx, const tflm_node_t *node,
                              const tflm_binary_t *p, const tflm_binary_rows_t *rows) {
  const void *in[2];
  int32_t sizes[2];
  in[0] = tflm_node_input_data(ctx, node, 0);
  in[1] = tflm_node_input_data(ctx, node, 1);
  sizes[0] = tflm_type_size(p->type);
  sizes[1] = tflm_type_size(p->second_type);
  tflm_broadcast_run(&p->shape, p, 2, in, sizes, tflm_node_output_data(ctx, node, 0),
                     rows->bool_output ? 1 : sizes[0], tflm_binary_row(rows, p->type));
  return TFLM_OK;
}

tflm_status_t tflm_binary_eval(tflm_context_t *ctx, tflm_node_t *node,
                               const tflm_binary_rows_t *rows) {
  return tflm_binary_run(ctx, node, (const tflm_binary_t *)node->user_data, rows);
}

double tflm_binary_rescale_inputs(const tflm_tensor_t *in, const tflm_tensor_t *out,
                                  int32_t left_shift, tflm_binary_rescale_t *r) {
  /* 2 * max in float, as TFLM; exact, so the double quotients below are TFLM's. */
  const float twice_max_input_scale =
      2.0f * (in[0].scale > in[1].scale ? in[0].scale : in[1].scale);
  r->left_shift = left_shift;
  r->input1_offset = -in[0].zero_point;
  r->input2_offset = -in[1].zero_point;
  r->output_offset = out->zero_point;
  if (!(in[0].scale > 0.0f && in[1].scale > 0.0f && out->scale > 0.0f)) {
    return 0.0;
  }
  tflm_quantize_multiplier((double)in[0].scale / (double)twice_max_input_scale,
                           &r->input1_multiplier, &r->input1_shift);
  tflm_quantize_multiplier((double)in[1].scale / (double)twice_max_input_scale,
                           &r->input2_multiplier, &r->input2_shift);
  return (double)twice_max_input_scale;
}

int32_t tflm_binary_rescale_sum(const tflm_tensor_t *in, const tflm_tensor_t *out,
                                tflm_binary_rescale_t *r) {
  const double twice_max_input_scale =
      tflm_binary_rescale_inputs(in, out, out->type == TFLM_TYPE_INT16 ? 15 : 20, r);
  double real_out;
  if (twice_max_input_scale == 0.0) {
    return 0;
  }
  real_out =
      twice_max_input_scale / ((double)((int32_t)1 << r->left_shift) * (double)out->scale);
  tflm_quantize_multiplier(real_out, &r->output_multiplier, &r->output_shift);
  /* QuantizeMultiplierSmallerThanOneExp insists on multipliers below one. */
  return real_out < 1.0;
}

TFLM_BINARY_FINISH(tflm_binary_sum_finish) {
  tflm_binary_sum_t *p = (tflm_binary_sum_t *)data;
  int32_t qmin, qmax;
  if (out->type != TFLM_TYPE_INT8 && out->type != TFLM_TYPE_INT16) {
    return TFLM_OK;
  }
  TFLM_KERNEL_CHECK(ctx, node, tflm_binary_rescale_sum(in, out, &p->rescale),
                    TFLM_ERR_BAD_PARAMS);
  tflm_binary_type_range(out->type, &qmin, &qmax);
  tflm_activation_range_quantized(activation, out->scale, out->zero_point, qmin, qmax,
                                  &p->binary.act_min, &p->binary.act_max);
  return TFLM_OK;
}

tflm_status_t tflm_binary_op_prepare(tflm_context_t *ctx, tflm_node_t *node,
                                     const tflm_binary_op_t *op) {
  tflm_tensor_t in[2], out;
  void *data;
  const int32_t activation =
      op->activation_option != 0 ? tflm_opt_int(node, op->activation_option, 0) : 0;
  TFLM_KERNEL_TRY(tflm_binary_prepare(ctx, node, op->size, op->rows, activation,
                                      op->same_types, in, &out, &data));
  return op->finish != NULL ? op->finish(ctx, node, in, &out, activation, data) : TFLM_OK;
}

void tflm_binary_type_range(int32_t type, int32_t *qmin, int32_t *qmax) {
  *qmin = type == TFLM_TYPE_INT8 ? -128 : -32768;
  *qmax = type == TFLM_TYPE_INT8 ? 127 : 32767;
}
