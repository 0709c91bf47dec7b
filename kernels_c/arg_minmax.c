/* tflm-op: ARG_MAX tflm_op_arg_max types: float32,int8 */
/* tflm-op: ARG_MIN tflm_op_arg_min types: float32,int8 */
/* ARG_MAX and ARG_MIN along one axis (a constant int32/int64 scalar or one-element tensor),
 * written as int32 or int64 (the output's type).  As in TFLM's reference, the first extreme
 * wins ties, and a NaN never replaces the running value (comparisons with NaN are false). */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;       /* TFLM_TYPE_* of the input */
  int32_t out_type;   /* TFLM_TYPE_INT32 or TFLM_TYPE_INT64 */
  int32_t outer;      /* product of dims before the axis */
  int32_t axis_size;  /* dims[axis] */
  int32_t inner;      /* product of dims after the axis */
  int32_t is_max;     /* 1 ARG_MAX, 0 ARG_MIN */
} tflm_arg_params_t;

static tflm_status_t arg_prepare(tflm_context_t *ctx, tflm_node_t *node, int32_t is_max) {
  tflm_tensor_t in, axis, out;
  tflm_arg_params_t *p;
  int32_t a;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, 0, TFLM_IO_ANY_SHAPE, &in, &out));
  TFLM_KERNEL_TRY(tflm_node_constant_input(ctx, node, 1, 0, &axis));
  TFLM_KERNEL_CHECK(ctx, node,
                    in.type == TFLM_TYPE_FLOAT32 || in.type == TFLM_TYPE_INT8 ||
                        in.type == TFLM_TYPE_INT16 || in.type == TFLM_TYPE_INT32,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, out.type == TFLM_TYPE_INT32 || out.type == TFLM_TYPE_INT64,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(&axis) == 1, TFLM_ERR_BAD_PARAMS);
  a = tflm_layout_read_index(&axis, 0);
  if (a < 0) a += in.ndims;
  TFLM_KERNEL_CHECK(ctx, node, a >= 0 && a < in.ndims && in.dims[a] > 0, TFLM_ERR_BAD_PARAMS);
  p = (tflm_arg_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in.type;
  p->out_type = out.type;
  p->outer = tflm_layout_product(in.dims, 0, a);
  p->axis_size = in.dims[a];
  p->inner = tflm_layout_product(in.dims, a + 1, in.ndims);
  p->is_max = is_max;
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(&out) == p->outer * p->inner,
                    TFLM_ERR_BAD_SHAPE);
  node->user_data = p;
  return TFLM_OK;
}

/* Integer inputs are compared as int32 (exact for int8, int16 and int32). */
static int32_t arg_better_int(int32_t value, int32_t best, int32_t is_max) {
  return is_max ? value > best : value < best;
}

static int32_t arg_int_at(const tflm_arg_params_t *p, const void *in, int32_t i) {
  if (p->type == TFLM_TYPE_INT8) return ((const int8_t *)in)[i];
  if (p->type == TFLM_TYPE_INT16) return ((const int16_t *)in)[i];
  return ((const int32_t *)in)[i];
}

/* Index of the extreme of the run starting at `start` with step `inner`. */
static int32_t arg_search(const tflm_arg_params_t *p, const void *in, int32_t start) {
  int32_t k, best_index = 0;
  if (p->type == TFLM_TYPE_FLOAT32) {
    const float *data = (const float *)in;
    float best = data[start];
    for (k = 1; k < p->axis_size; ++k) {
      const float value = data[start + k * p->inner];
      if (p->is_max ? value > best : value < best) {
        best = value;
        best_index = k;
      }
    }
  } else {
    int32_t best = arg_int_at(p, in, start);
    for (k = 1; k < p->axis_size; ++k) {
      const int32_t value = arg_int_at(p, in, start + k * p->inner);
      if (arg_better_int(value, best, p->is_max)) {
        best = value;
        best_index = k;
      }
    }
  }
  return best_index;
}

static tflm_status_t arg_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_arg_params_t *p = (const tflm_arg_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t o, i;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  for (o = 0; o < p->outer; ++o) {
    for (i = 0; i < p->inner; ++i) {
      const int32_t index = arg_search(p, in, o * p->axis_size * p->inner + i);
      if (p->out_type == TFLM_TYPE_INT64) {
        ((int64_t *)out)[o * p->inner + i] = index;
      } else {
        ((int32_t *)out)[o * p->inner + i] = index;
      }
    }
  }
  return TFLM_OK;
}

static tflm_status_t arg_max_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return arg_prepare(ctx, node, 1);
}

static tflm_status_t arg_min_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return arg_prepare(ctx, node, 0);
}

const tflm_registration_t tflm_op_arg_max = {
    NULL, TFLM_BUILTIN_ARG_MAX, NULL, arg_max_prepare, arg_eval, NULL, NULL};

const tflm_registration_t tflm_op_arg_min = {
    NULL, TFLM_BUILTIN_ARG_MIN, NULL, arg_min_prepare, arg_eval, NULL, NULL};
