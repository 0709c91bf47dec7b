/* tflm-op: QUANTIZE tflm_op_quantize types: float32,int8,int16,int32,uint8 */
/* QUANTIZE, bit-exact with TFLM's reference kernels, per-tensor only.
 *   float32 -> int8 / int16: q = round(x / scale) + zero_point, clamped to the type.  The
 *   division is in float (x / (float)scale) and rounds half away from zero, as TFLM.
 *   Integer -> integer (requantise): q_out = zp_out + (q_in - zp_in) * scale_in / scale_out
 *   with the ratio as a Q31 multiplier and shift computed in prepare, then clamped.  The
 *   pairs TFLM accepts: int8 -> int8/uint8/int16/int32, int16 -> int8/int16/int32,
 *   int32 -> int8/int16, uint8 -> int8. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t input_type, output_type; /* TFLM_TYPE_* */
  int32_t count;                   /* elements */
  int32_t input_zero_point, output_zero_point;
  int32_t multiplier, shift;       /* requantise: scale_in / scale_out as Q31 and shift */
  int32_t qmin, qmax;              /* range of the output type */
  float output_scale;              /* float input: the divisor */
} tflm_quantize_params_t;

/* Range of an integer output type; returns 0 for a type QUANTIZE cannot produce. */
static int32_t tflm_quantize_range(int32_t type, int32_t *qmin, int32_t *qmax) {
  switch (type) {
    case TFLM_TYPE_INT8: *qmin = -128; *qmax = 127; return 1;
    case TFLM_TYPE_UINT8: *qmin = 0; *qmax = 255; return 1;
    case TFLM_TYPE_INT16: *qmin = -32768; *qmax = 32767; return 1;
    case TFLM_TYPE_INT32: *qmin = INT32_MIN; *qmax = INT32_MAX; return 1;
    default: return 0;
  }
}

/* The (input, output) type pairs of TFLM's reference QUANTIZE. */
static int32_t tflm_quantize_supported(int32_t in, int32_t out) {
  switch (in) {
    case TFLM_TYPE_FLOAT32: return out == TFLM_TYPE_INT8 || out == TFLM_TYPE_INT16;
    case TFLM_TYPE_INT8: return out != TFLM_TYPE_FLOAT32;
    case TFLM_TYPE_INT16:
      return out == TFLM_TYPE_INT8 || out == TFLM_TYPE_INT16 || out == TFLM_TYPE_INT32;
    case TFLM_TYPE_INT32: return out == TFLM_TYPE_INT8 || out == TFLM_TYPE_INT16;
    case TFLM_TYPE_UINT8: return out == TFLM_TYPE_INT8;
    default: return 0;
  }
}

static tflm_status_t tflm_quantize_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_quantize_params_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 1, 0, TFLM_IO_SAME_COUNT, &in, &out));
  TFLM_KERNEL_CHECK(ctx, node, tflm_quantize_supported(in.type, out.type),
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, out.nscales == 1 && out.scale > 0.0f, TFLM_ERR_BAD_PARAMS);
  p = (tflm_quantize_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->input_type = in.type;
  p->output_type = out.type;
  p->count = tflm_tensor_elements(&in);
  p->input_zero_point = in.zero_point;
  p->output_zero_point = out.zero_point;
  p->output_scale = out.scale;
  (void)tflm_quantize_range(out.type, &p->qmin, &p->qmax);
  p->multiplier = 0;
  p->shift = 0;
  if (in.type != TFLM_TYPE_FLOAT32) {
    tflm_quantize_multiplier((double)in.scale / (double)out.scale, &p->multiplier, &p->shift);
  }
  node->user_data = p;
  return TFLM_OK;
}

/* zero_point + round(x / scale) clamped to [qmin, qmax].  The clamp happens in float before
 * the conversion, so huge values and NaN (which goes to qmin) never overflow int32. */
static int32_t tflm_quantize_value(const tflm_quantize_params_t *p, float x) {
  const float rounded = roundf(x / p->output_scale);
  const float lowest = (float)(p->qmin - p->output_zero_point);
  const float highest = (float)(p->qmax - p->output_zero_point);
  if (!(rounded >= lowest)) {
    return p->qmin;
  }
  if (rounded > highest) {
    return p->qmax;
  }
  return (int32_t)rounded + p->output_zero_point;
}

static void tflm_quantize_float(const tflm_quantize_params_t *p, const float *in, void *out) {
  int32_t i;
  if (p->output_type == TFLM_TYPE_INT8) {
    int8_t *q = (int8_t *)out;
    for (i = 0; i < p->count; ++i) {
      q[i] = (int8_t)tflm_quantize_value(p, in[i]);
    }
  } else {
    int16_t *q = (int16_t *)out;
    for (i = 0; i < p->count; ++i) {
      q[i] = (int16_t)tflm_quantize_value(p, in[i]);
    }
  }
}

/* Element i of an integer tensor of the given type, widened to int32. */
static int32_t tflm_quantize_load(int32_t type, const void *data, int32_t i) {
  switch (type) {
    case TFLM_TYPE_INT8: return ((const int8_t *)data)[i];
    case TFLM_TYPE_UINT8: return ((const uint8_t *)data)[i];
    case TFLM_TYPE_INT16: return ((const int16_t *)data)[i];
    default: return ((const int32_t *)data)[i];
  }
}

static void tflm_quantize_store(int32_t type, void *data, int32_t i, int32_t value) {
  switch (type) {
    case TFLM_TYPE_INT8: ((int8_t *)data)[i] = (int8_t)value; break;
    case TFLM_TYPE_UINT8: ((uint8_t *)data)[i] = (uint8_t)value; break;
    case TFLM_TYPE_INT16: ((int16_t *)data)[i] = (int16_t)value; break;
    default: ((int32_t *)data)[i] = value; break;
  }
}

/* Integer -> integer: TFLM's Requantize (the same arithmetic for every type pair). */
static void tflm_quantize_requantize(const tflm_quantize_params_t *p, const void *in,
                                     void *out) {
  int32_t i;
  for (i = 0; i < p->count; ++i) {
    /* Sums wrap like TFLM's int32 arithmetic (only reachable with int32 tensors). */
    const int32_t centred = (int32_t)((uint32_t)tflm_quantize_load(p->input_type, in, i) -
                                      (uint32_t)p->input_zero_point);
    const int32_t scaled = tflm_multiply_by_quantized_multiplier(centred, p->multiplier, p->shift);
    int32_t value = (int32_t)((uint32_t)scaled + (uint32_t)p->output_zero_point);
    value = value < p->qmax ? value : p->qmax;
    value = value > p->qmin ? value : p->qmin;
    tflm_quantize_store(p->output_type, out, i, value);
  }
}

static tflm_status_t tflm_quantize_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_quantize_params_t *p = (const tflm_quantize_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  if (p->input_type == TFLM_TYPE_FLOAT32) {
    tflm_quantize_float(p, (const float *)in, out);
  } else {
    tflm_quantize_requantize(p, in, out);
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_quantize = {
    NULL, TFLM_BUILTIN_QUANTIZE, NULL, tflm_quantize_prepare, tflm_quantize_eval,
    NULL, NULL};
