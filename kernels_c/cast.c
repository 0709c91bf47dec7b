/* tflm-op: CAST tflm_op_cast types: float32,int8,int16,int32,uint32,bool */
/* CAST between float32, int8, int16, int32, uint32 and bool (the pairs TFLM runs), bit-exact
 * with TFLM's static_cast: float to integer truncates toward zero (out-of-range values are
 * undefined in TFLM; here they go through int32), integer to integer wraps modulo 2^bits,
 * anything to bool is x != 0, bool is 0 or 1. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t input_type, output_type; /* TFLM_TYPE_* */
  int32_t count;                   /* elements */
} tflm_cast_params_t;

static int32_t tflm_cast_type_ok(int32_t type) {
  return type == TFLM_TYPE_FLOAT32 || type == TFLM_TYPE_INT8 || type == TFLM_TYPE_INT16 ||
         type == TFLM_TYPE_INT32 || type == TFLM_TYPE_UINT32 || type == TFLM_TYPE_BOOL;
}

static tflm_status_t tflm_cast_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_cast_params_t *p;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 1, 0, TFLM_IO_SAME_COUNT, &in, &out));
  TFLM_KERNEL_CHECK(ctx, node, tflm_cast_type_ok(in.type) && tflm_cast_type_ok(out.type),
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p = (tflm_cast_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->input_type = in.type;
  p->output_type = out.type;
  p->count = tflm_tensor_elements(&in);
  node->user_data = p;
  return TFLM_OK;
}

/* Element i of an integer or bool tensor, widened exactly. */
static int64_t tflm_cast_read_int(const void *data, int32_t type, int32_t i) {
  switch (type) {
    case TFLM_TYPE_INT8: return ((const int8_t *)data)[i];
    case TFLM_TYPE_INT16: return ((const int16_t *)data)[i];
    case TFLM_TYPE_INT32: return ((const int32_t *)data)[i];
    case TFLM_TYPE_UINT32: return ((const uint32_t *)data)[i];
    default: return ((const uint8_t *)data)[i] != 0u; /* bool */
  }
}

/* Stores an integer: wraps modulo 2^bits (through uint32, avoiding implementation-defined
 * narrowing of negative values except the final two's-complement reinterpretation). */
static void tflm_cast_write_int(void *data, int32_t type, int32_t i, int64_t v) {
  const uint32_t bits = (uint32_t)(uint64_t)v;
  switch (type) {
    case TFLM_TYPE_INT8: ((int8_t *)data)[i] = (int8_t)(uint8_t)bits; break;
    case TFLM_TYPE_INT16: ((int16_t *)data)[i] = (int16_t)(uint16_t)bits; break;
    case TFLM_TYPE_INT32: ((int32_t *)data)[i] = (int32_t)bits; break;
    case TFLM_TYPE_UINT32: ((uint32_t *)data)[i] = bits; break;
    case TFLM_TYPE_FLOAT32: ((float *)data)[i] = (float)v; break;
    default: ((uint8_t *)data)[i] = (uint8_t)(v != 0); break; /* bool */
  }
}

/* C leaves float-to-integer conversion of out-of-range values (and NaN) undefined; these
 * give the bits x86's truncating conversion gives, which is what TFLM computes on the host:
 * the "integer indefinite" INT_MIN of the width converted to, and for uint32 the low 32
 * bits of the int64 conversion. */
static int64_t tflm_cast_float_to_int64(float v) {
  if (!(v >= -9223372036854775808.0f && v < 9223372036854775808.0f)) return INT64_MIN;
  return (int64_t)v;
}

static int64_t tflm_cast_float_to_int32(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return INT32_MIN;
  return (int64_t)(int32_t)v;
}

static void tflm_cast_from_float(void *data, int32_t type, int32_t i, float v) {
  if (type == TFLM_TYPE_BOOL) {
    ((uint8_t *)data)[i] = (uint8_t)(v != 0.0f);
  } else if (type == TFLM_TYPE_UINT32) {
    ((uint32_t *)data)[i] = (uint32_t)(uint64_t)tflm_cast_float_to_int64(v);
  } else {
    tflm_cast_write_int(data, type, i, tflm_cast_float_to_int32(v));
  }
}

static tflm_status_t tflm_cast_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_cast_params_t *p = (const tflm_cast_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t i;
  for (i = 0; i < p->count; ++i) {
    if (p->input_type == TFLM_TYPE_FLOAT32) {
      const float v = ((const float *)in)[i];
      if (p->output_type == TFLM_TYPE_FLOAT32) {
        ((float *)out)[i] = v;
      } else {
        tflm_cast_from_float(out, p->output_type, i, v);
      }
    } else {
      tflm_cast_write_int(out, p->output_type, i, tflm_cast_read_int(in, p->input_type, i));
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_cast = {
    NULL, TFLM_BUILTIN_CAST, NULL, tflm_cast_prepare, tflm_cast_eval, NULL, NULL};
