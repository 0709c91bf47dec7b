/* tflm-op: GELU tflm_op_gelu types: float32,int8,int16 litert: float32,int8,int16 */
/* GELU (PyTorch's exact and tanh forms, option `approximate`), bit-exact with LiteRT's
 * reference kernel (TFLM has no GELU, so LiteRT is the oracle):
 *   exact:       0.5 * x * erfc(-x / sqrt(2))  (erfc, not 1 + erf: no cancellation)
 *   approximate: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
 *   float32: Eigen's tanh / erfc approximations, as LiteRT evaluates them (gelu_float.h;
 *   libm's tanhf / erfcf differ from LiteRT on about a third of inputs).
 *   int8: a 256-entry table built in prepare, each stored value dequantised, transformed
 *   with libm's erfcf / tanhf as LiteRT's table does, rescaled, rounded half away from
 *   zero, offset and clamped.
 *   int16: LiteRT's 513-entry interpolated table over the input's whole range
 *   (tflm_lut.h), built from the same transforms.
 * The tables depend on the platform libm's erfcf / tanhf (evaluated 256 or 1537 times in
 * prepare); glibc's match LiteRT's on the host. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "gelu_float.h"
#include "tflm_kernel.h"
#include "tflm_lut.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;                        /* TFLM_TYPE_* of input and output */
  int32_t count;                       /* elements */
  int32_t approximate;                 /* 1: the tanh form */
  int8_t table8[256];                  /* int8: output for stored v at index (uint8_t)v */
  int16_t table16[TFLM_LUT_INT16_SIZE]; /* int16: interpolated table */
} tflm_gelu_params_t;

/* sqrt(2 / pi) as LiteRT computes it: 2/sqrt(pi) times 1/sqrt(2) in double, then float. */
#define TFLM_GELU_SQRT_2_OVER_PI ((float)(1.12837916709551257390 * 0.70710678118654752440))
#define TFLM_GELU_MINUS_SQRT1_2 ((float)-0.70710678118654752440)

/* The scalar transforms LiteRT's tables are built from (libm, float). */
static float tflm_gelu_exact_libm(float x) {
  return 0.5f * x * erfcf(x * TFLM_GELU_MINUS_SQRT1_2);
}

static float tflm_gelu_tanh_libm(float x) {
  return 0.5f * x * (1.0f + tanhf(TFLM_GELU_SQRT_2_OVER_PI * (x + 0.044715f * x * x * x)));
}

static void tflm_gelu_table16(const tflm_tensor_t *in, const tflm_tensor_t *out,
                              float (*transform)(float), int16_t *table) {
  /* The real values of the int16 extremes, in float as LiteRT computes them. */
  const float input_min = in->scale * (float)(-32768 - in->zero_point);
  const float input_max = in->scale * (float)(32767 - in->zero_point);
  const float output_min = out->scale * (float)(-32768 - out->zero_point);
  const float output_max = out->scale * (float)(32767 - out->zero_point);
  tflm_lut_generate_int16(transform, input_min, input_max, output_min, output_max, table);
}

static tflm_status_t tflm_gelu_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out;
  tflm_gelu_params_t *p;
  float (*transform)(float);
  TFLM_KERNEL_TRY(tflm_node_check_io(
      ctx, node, 1, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8) | TFLM_TYPE_BIT(INT16),
      TFLM_IO_SAME_COUNT, &in, &out));
  p = (tflm_gelu_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = in.type;
  p->count = tflm_tensor_elements(&in);
  p->approximate = tflm_opt_int(node, TFLM_OPT_GELU_APPROXIMATE, 0) != 0;
  transform = p->approximate ? tflm_gelu_tanh_libm : tflm_gelu_exact_libm;
  TFLM_KERNEL_CHECK(ctx, node, in.type == TFLM_TYPE_FLOAT32 || out.scale > 0.0f,
                    TFLM_ERR_BAD_PARAMS);
  if (in.type == TFLM_TYPE_INT8) {
    tflm_lut_generate_int8(transform, in.scale, in.zero_point, out.scale, out.zero_point,
                           p->table8);
  } else if (in.type == TFLM_TYPE_INT16) {
    tflm_gelu_table16(&in, &out, transform, p->table16);
  }
  node->user_data = p;
  return TFLM_OK;
}

static tflm_status_t tflm_gelu_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_gelu_params_t *p = (const tflm_gelu_params_t *)node->user_data;
  const void *in = tflm_node_input_data(ctx, node, 0);
  void *out = tflm_node_output_data(ctx, node, 0);
  int32_t i;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  if (p->type == TFLM_TYPE_FLOAT32) {
    tflm_gelu_float(p->approximate, (const float *)in, (float *)out, p->count);
  } else if (p->type == TFLM_TYPE_INT8) {
    tflm_lut_apply_int8(p->table8, (const int8_t *)in, (int8_t *)out, p->count);
  } else {
    for (i = 0; i < p->count; ++i) {
      ((int16_t *)out)[i] = tflm_lut_lookup_int16(((const int16_t *)in)[i], p->table16);
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_gelu = {
    NULL, TFLM_BUILTIN_GELU, NULL, tflm_gelu_prepare, tflm_gelu_eval, NULL, NULL};
