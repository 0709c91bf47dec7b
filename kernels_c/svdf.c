/* tflm-op: SVDF tflm_op_svdf types: float32,int8 */
/* SVDF reference kernels: float32, and int8 activations with an int16 (or int8) state and
 * time-weights tensor, int32 bias.
 *
 * Tensors (TFLite): input [batches, input_size]; weights_feature [filters, input_size];
 * weights_time [filters, memory]; bias [units] (optional); state [batches, memory * filters]
 * (a variable tensor kept across invokes; reset to zero, an int8 state to its zero point as
 * in TFLM); output
 * [batches, units] with units = filters / rank.  The state holds, per batch and filter, the
 * last `memory` feature activations, oldest first.
 *
 * Each invoke, in TFLM's order so results are bit-identical:
 *   1. the whole state buffer moves one element towards its start (one memmove over all
 *      batches, exactly as TFLM does: the newest slot of each filter is overwritten next);
 *   2. feature activations (input . weights_feature row) go to each filter's newest slot;
 *   3. per filter, the dot product of its memory with its weights_time row (scratch);
 *   4. bias plus the sum of each unit's `rank` filters; then requantisation (int8), or the
 *      fused activation (float32; TFLM's int8 path applies none). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"

typedef struct {
  int32_t type;        /* input type TFLM_TYPE_FLOAT32 or TFLM_TYPE_INT8 */
  int32_t state_type;  /* TFLM_TYPE_INT16 or TFLM_TYPE_INT8 (int8 input); FLOAT32 */
  int32_t batches;
  int32_t input_size;
  int32_t filters;     /* rows of weights_feature */
  int32_t units;       /* filters / rank: output columns */
  int32_t rank;
  int32_t memory;      /* columns of weights_time */
  int32_t activation;  /* fused activation TFLM_ACT_* (float32 only) */
  int32_t input_zero_point;
  int32_t output_zero_point;
  int32_t state_zero_point;
  int32_t feature_multiplier; /* input * weights_feature -> state scale */
  int32_t feature_shift;
  int32_t output_multiplier;  /* state * weights_time -> output scale */
  int32_t output_shift;
  int32_t scratch_filters;    /* handle: batches * filters int32 or float */
  int32_t scratch_units;      /* handle: batches * units int32 (int8 only), else -1 */
} tflm_svdf_params_t;

/* Step 1: moves every element of the state one place towards the start. */
static void shift_state(void *state, int32_t count, int32_t element_bytes) {
  uint8_t *bytes = (uint8_t *)state;
  const int32_t total = count * element_bytes;
  int32_t i;
  for (i = element_bytes; i < total; ++i) bytes[i - element_bytes] = bytes[i];
}

/* Step 2 (int8): feature activations requantised to the state's scale. */
static void svdf_features_int8(const tflm_svdf_params_t *p, const int8_t *input,
                               const int8_t *weights, void *state) {
  const int32_t qmin = p->state_type == TFLM_TYPE_INT16 ? -32768 : -128;
  const int32_t qmax = p->state_type == TFLM_TYPE_INT16 ? 32767 : 127;
  int32_t b, f, c;
  for (b = 0; b < p->batches; ++b) {
    const int8_t *row = input + b * p->input_size;
    for (f = 0; f < p->filters; ++f) {
      const int8_t *w = weights + f * p->input_size;
      const int32_t slot = (b * p->filters + f) * p->memory + p->memory - 1;
      int32_t acc = 0;
      for (c = 0; c < p->input_size; ++c) {
        acc = tflm_mac_wrap(acc, w[c], (int32_t)row[c] - p->input_zero_point);
      }
      acc = tflm_multiply_by_quantized_multiplier(acc, p->feature_multiplier,
                                                  p->feature_shift);
      acc = acc < qmin ? qmin : (acc > qmax ? qmax : acc);
      /* The tflite-micro we verify against adds the zero point after the clamp and narrows
       * with wrap-around; the wrap is spelled out (C leaves out-of-range casts open). */
      acc += p->state_zero_point;
      if (p->state_type == TFLM_TYPE_INT16) {
        acc &= INT32_C(0xFFFF);
        ((int16_t *)state)[slot] = (int16_t)(acc > 32767 ? acc - INT32_C(65536) : acc);
      } else {
        acc &= INT32_C(0xFF);
        ((int8_t *)state)[slot] = (int8_t)(acc > 127 ? acc - 256 : acc);
      }
    }
  }
}

/* Step 3 (int8): per-filter dot products of weights_time with the memory. */
static void svdf_time_int8(const tflm_svdf_params_t *p, const void *weights_time,
                           const void *state, int32_t *scratch) {
  const int32_t count = p->batches * p->filters;
  int32_t i, j;
  for (i = 0; i < count; ++i) {
    const int32_t row = (i % p->filters) * p->memory;
    const int32_t base = i * p->memory;
    int32_t acc = 0;
    for (j = 0; j < p->memory; ++j) {
      int32_t w, s;
      if (p->state_type == TFLM_TYPE_INT16) {
        w = ((const int16_t *)weights_time)[row + j];
        s = ((const int16_t *)state)[base + j];
      } else {
        w = ((const int8_t *)weights_time)[row + j];
        s = ((const int8_t *)state)[base + j];
      }
      acc = tflm_mac_wrap(acc, w, s - p->state_zero_point);
    }
    scratch[i] = acc;
  }
}

/* Step 4 (int8): bias, rank reduction, requantisation to the output. */
static void svdf_output_int8(const tflm_svdf_params_t *p, const int32_t *bias,
                             const int32_t *scratch, int32_t *sums, int8_t *output) {
  int32_t b, u, r;
  for (b = 0; b < p->batches; ++b) {
    for (u = 0; u < p->units; ++u) {
      int32_t *sum = &sums[b * p->units + u];
      *sum = bias != NULL ? bias[u] : 0;
      for (r = 0; r < p->rank; ++r) {
        *sum = tflm_add_wrap(*sum, scratch[b * p->filters + u * p->rank + r]);
      }
    }
  }
  for (b = 0; b < p->batches * p->units; ++b) {
    int32_t value = tflm_add_wrap(
        tflm_multiply_by_quantized_multiplier(sums[b], p->output_multiplier, p->output_shift),
        p->output_zero_point);
    value = value < -128 ? -128 : (value > 127 ? 127 : value);
    output[b] = (int8_t)value;
  }
}

/* TFLM's ActivationValFloat: comparisons written the same way, so NaN passes alike. */
static float activation_float(int32_t activation, float a) {
  switch (activation) {
    case TFLM_ACT_RELU: return 0.0f > a ? 0.0f : a;
    case TFLM_ACT_RELU_N1_TO_1: {
      const float upper = a < 1.0f ? a : 1.0f;
      return -1.0f > upper ? -1.0f : upper;
    }
    case TFLM_ACT_RELU6: {
      const float upper = a < 6.0f ? a : 6.0f;
      return 0.0f > upper ? 0.0f : upper;
    }
    case TFLM_ACT_TANH: return tanhf(a);
    case TFLM_ACT_SIGN_BIT: return signbit(a) ? 1.0f : 0.0f;
    default: return a;
  }
}

static void svdf_float32(const tflm_svdf_params_t *p, const float *input, const float *features,
                         const float *weights_time, const float *bias, float *state,
                         float *scratch, float *output) {
  int32_t b, f, c, u;
  for (b = 0; b < p->batches; ++b) {
    for (f = 0; f < p->filters; ++f) {
      float acc = 0.0f;
      for (c = 0; c < p->input_size; ++c) {
        acc += features[f * p->input_size + c] * input[b * p->input_size + c];
      }
      state[(b * p->filters + f) * p->memory + p->memory - 1] = acc;
    }
  }
  for (f = 0; f < p->batches * p->filters; ++f) {
    const float *w = weights_time + (f % p->filters) * p->memory;
    scratch[f] = 0.0f;
    for (c = 0; c < p->memory; ++c) scratch[f] += w[c] * state[f * p->memory + c];
  }
  for (b = 0; b < p->batches; ++b) {
    for (u = 0; u < p->units; ++u) {
      float *sum = &output[b * p->units + u];
      *sum = bias != NULL ? bias[u] : 0.0f;
      for (c = 0; c < p->rank; ++c) *sum += scratch[b * p->filters + u * p->rank + c];
      *sum = activation_float(p->activation, *sum);
    }
  }
}

static tflm_status_t svdf_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_svdf_params_t *p = (const tflm_svdf_params_t *)node->user_data;
  const void *input = tflm_node_input_data(ctx, node, 0);
  const void *features = tflm_node_input_data(ctx, node, 1);
  const void *weights_time = tflm_node_input_data(ctx, node, 2);
  const void *bias = tflm_node_input_data(ctx, node, 3);
  void *state = tflm_node_input_data(ctx, node, 4);
  void *output = tflm_node_output_data(ctx, node, 0);
  void *scratch;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && input != NULL && state != NULL && output != NULL,
                    TFLM_ERR_NOT_READY);
  scratch = tflm_get_scratch(ctx, p->scratch_filters);
  TFLM_KERNEL_CHECK(ctx, node, scratch != NULL, TFLM_ERR_NOT_READY);
  if (p->type == TFLM_TYPE_FLOAT32) {
    shift_state(state, p->batches * p->filters * p->memory, 4);
    svdf_float32(p, (const float *)input, (const float *)features,
                 (const float *)weights_time, (const float *)bias, (float *)state,
                 (float *)scratch, (float *)output);
  } else {
    int32_t *sums = (int32_t *)tflm_get_scratch(ctx, p->scratch_units);
    TFLM_KERNEL_CHECK(ctx, node, sums != NULL, TFLM_ERR_NOT_READY);
    shift_state(state, p->batches * p->filters * p->memory,
                p->state_type == TFLM_TYPE_INT16 ? 2 : 1);
    svdf_features_int8(p, (const int8_t *)input, (const int8_t *)features, state);
    svdf_time_int8(p, weights_time, state, (int32_t *)scratch);
    svdf_output_int8(p, (const int32_t *)bias, (const int32_t *)scratch, sums,
                     (int8_t *)output);
  }
  return TFLM_OK;
}

typedef struct {
  tflm_tensor_t input, features, weights_time, bias, state, output;
} svdf_views_t;

static tflm_status_t fetch_views(tflm_context_t *ctx, tflm_node_t *node, svdf_views_t *v) {
  tflm_status_t status;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 5, 0, TFLM_IO_ANY_SHAPE, &v->input, &v->output));
  status = tflm_node_input(ctx, node, 1, &v->features);
  if (status == TFLM_OK) status = tflm_node_input(ctx, node, 2, &v->weights_time);
  if (status == TFLM_OK) status = tflm_node_input(ctx, node, 3, &v->bias);
  if (status == TFLM_OK) status = tflm_node_input(ctx, node, 4, &v->state);
  return status;
}

/* The shape checks of TFLM's PrepareSvdf. */
static tflm_status_t fill_shapes(tflm_context_t *ctx, tflm_node_t *node, const svdf_views_t *v,
                                 tflm_svdf_params_t *p) {
  p->rank = tflm_opt_int(node, TFLM_OPT_SVDF_RANK, 0);
  TFLM_KERNEL_CHECK(ctx, node, v->input.ndims == 2 && v->features.ndims == 2 &&
                                   v->weights_time.ndims == 2 && v->state.ndims == 2 &&
                                   v->output.ndims == 2,
                    TFLM_ERR_BAD_SHAPE);
  p->batches = v->input.dims[0];
  p->input_size = v->input.dims[1];
  p->filters = v->features.dims[0];
  p->memory = v->weights_time.dims[1];
  TFLM_KERNEL_CHECK(ctx, node, p->rank > 0 && p->filters % p->rank == 0, TFLM_ERR_BAD_PARAMS);
  p->units = p->filters / p->rank;
  TFLM_KERNEL_CHECK(ctx, node, v->features.dims[1] == p->input_size &&
                                   v->weights_time.dims[0] == p->filters &&
                                   v->output.dims[0] == p->batches &&
                                   v->output.dims[1] == p->units &&
                                   v->state.dims[0] == p->batches &&
                                   v->state.dims[1] == p->memory * p->filters,
                    TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, v->bias.data == NULL || tflm_tensor_elements(&v->bias) == p->units,
                    TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, v->state.is_variable, TFLM_ERR_BAD_PARAMS);
  return TFLM_OK;
}

/* TFLM computes both effective scales in float, then widens them to double. */
static tflm_status_t fill_int8(tflm_context_t *ctx, tflm_node_t *node, const svdf_views_t *v,
                               tflm_svdf_params_t *p) {
  const float scale_1 = v->input.scale * v->features.scale / v->state.scale;
  const float scale_2 = v->state.scale * v->weights_time.scale / v->output.scale;
  TFLM_KERNEL_CHECK(ctx, node, v->features.type == TFLM_TYPE_INT8 &&
                                   v->output.type == TFLM_TYPE_INT8,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, (v->state.type == TFLM_TYPE_INT16 ||
                                v->state.type == TFLM_TYPE_INT8) &&
                                   v->weights_time.type == v->state.type,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, v->bias.data == NULL || v->bias.type == TFLM_TYPE_INT32,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, v->state.scale > 0.0f && v->output.scale > 0.0f,
                    TFLM_ERR_BAD_PARAMS);
  p->state_type = v->state.type;
  tflm_quantize_multiplier((double)scale_1, &p->feature_multiplier, &p->feature_shift);
  tflm_quantize_multiplier((double)scale_2, &p->output_multiplier, &p->output_shift);
  p->input_zero_point = v->input.zero_point;
  p->output_zero_point = v->output.zero_point;
  p->state_zero_point = v->state.zero_point;
  return tflm_request_scratch(ctx, (uint32_t)(p->batches * p->units) * 4u, &p->scratch_units);
}

static tflm_status_t fill_float32(tflm_context_t *ctx, tflm_node_t *node, const svdf_views_t *v,
                                  tflm_svdf_params_t *p) {
  TFLM_KERNEL_CHECK(ctx, node, v->features.type == TFLM_TYPE_FLOAT32 &&
                                   v->weights_time.type == TFLM_TYPE_FLOAT32 &&
                                   v->state.type == TFLM_TYPE_FLOAT32 &&
                                   v->output.type == TFLM_TYPE_FLOAT32 &&
                                   (v->bias.data == NULL || v->bias.type == TFLM_TYPE_FLOAT32),
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p->state_type = TFLM_TYPE_FLOAT32;
  p->scratch_units = -1;
  return TFLM_OK;
}

static tflm_status_t svdf_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  svdf_views_t v;
  tflm_svdf_params_t *p;
  tflm_status_t status = fetch_views(ctx, node, &v);
  if (status != TFLM_OK) return status;
  TFLM_KERNEL_CHECK(ctx, node, v.input.type == TFLM_TYPE_FLOAT32 || v.input.type == TFLM_TYPE_INT8,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p = (tflm_svdf_params_t *)tflm_alloc_persistent(ctx, (uint32_t)sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = v.input.type;
  p->activation = tflm_opt_int(node, TFLM_OPT_SVDF_FUSED_ACTIVATION_FUNCTION, TFLM_ACT_NONE);
  status = fill_shapes(ctx, node, &v, p);
  if (status != TFLM_OK) return status;
  status = p->type == TFLM_TYPE_INT8 ? fill_int8(ctx, node, &v, p) : fill_float32(ctx, node, &v, p);
  if (status != TFLM_OK) return status;
  node->user_data = p;
  return tflm_request_scratch(ctx, (uint32_t)(p->batches * p->filters) * 4u, &p->scratch_filters);
}

const tflm_registration_t tflm_op_svdf = {
    NULL, TFLM_BUILTIN_SVDF, NULL, svdf_prepare, svdf_eval, NULL, NULL};
