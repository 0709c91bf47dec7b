/* ADD prepare (see add_common.h and the type notes in add_reference.c). */
#include <stddef.h>
#include <stdint.h>

#include "add_common.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

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

tflm_status_t tflm_add_prepare(tflm_context_t *ctx, tflm_node_t *node) {
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

