/* tflm-op: MUL tflm_op_mul types: float32,int8,int16,int32 */
/* MUL for the cmsis tag: int8 inputs of the same shape in one flat loop, 4 outputs at a
 * time.  With the DSP extension the offset inputs are formed two per SXTAB16 and multiplied
 * with 16-bit multiplies (|x + offset| <= 255 fits a halfword); the 4 products are
 * requantised together (cmsis_simd.h, SSUB8 + SEL for the clamp) when the output shift is
 * a right shift of at most 23, else one by one with cmsis_requantize.  Broadcast int8 muls and
 * the other types run the reference loops (mul_reference.c).  Every value is the reference's.
 * No scratch memory. */
#include <stddef.h>
#include <stdint.h>

#include "cmsis_simd.h"
#include "mul_reference.h"
#include "tflm_elementwise.h"
#include "tflm_kernel.h"

/* The 4 products (a[j] + o1) * (b[j] + o2) of the int8 inputs at a and b. */
static inline void products4(const int8_t *a, const int8_t *b, int32_t o1, int32_t o2,
                             int32_t prod[4]) {
#ifdef CMSIS_DSP
  const int32_t o1s = (int32_t)(((uint32_t)o1 & 0xffffu) * 0x10001u);
  const int32_t o2s = (int32_t)(((uint32_t)o2 & 0xffffu) * 0x10001u);
  const int32_t wa = cmsis_read4(a), wb = cmsis_read4(b);
  const int32_t ae = __sxtab16(o1s, wa), ao = cmsis_sxtab16_ror8(o1s, wa);
  const int32_t be = __sxtab16(o2s, wb), bo = cmsis_sxtab16_ror8(o2s, wb);
  /* Bottom halves multiply as SMULBB, top halves (arithmetic >> 16) as SMULTT. */
  prod[0] = (int32_t)(int16_t)(uint16_t)((uint32_t)ae & 0xffffu) *
            (int32_t)(int16_t)(uint16_t)((uint32_t)be & 0xffffu);
  prod[1] = (int32_t)(int16_t)(uint16_t)((uint32_t)ao & 0xffffu) *
            (int32_t)(int16_t)(uint16_t)((uint32_t)bo & 0xffffu);
  prod[2] = (ae >> 16) * (be >> 16);
  prod[3] = (ao >> 16) * (bo >> 16);
#else
  int32_t j;
  for (j = 0; j < 4; ++j) prod[j] = ((int32_t)a[j] + o1) * ((int32_t)b[j] + o2);
#endif
}

static void mul_int8_flat(const tflm_mul_params_t *p, const int8_t *a, const int8_t *b,
                          int8_t *out, int32_t n) {
  const int32_t m = p->output_multiplier, s = p->output_shift, offset = p->output_offset;
  const int32_t o1 = p->input1_offset, o2 = p->input2_offset;
  const int32_t lo = p->binary.act_min, hi = p->binary.act_max;
  int32_t prod[4], i = 0, j;
  if (cmsis_requant_is_fast(&s, 1)) {
    const int32_t multipliers[4] = {m, m, m, m}, shifts[4] = {s, s, s, s};
    for (; i + 4 <= n; i += 4) {
      products4(a + i, b + i, o1, o2, prod);
      cmsis_requantize4_fast(prod, multipliers, shifts, offset, lo, hi, out + i);
    }
  } else {
    for (; i + 4 <= n; i += 4) {
      products4(a + i, b + i, o1, o2, prod);
      for (j = 0; j < 4; ++j) out[i + j] = (int8_t)cmsis_requantize(prod[j], m, s, offset, lo, hi);
    }
  }
  for (; i < n; ++i) {
    out[i] = (int8_t)cmsis_requantize(((int32_t)a[i] + o1) * ((int32_t)b[i] + o2), m, s, offset,
                                      lo, hi);
  }
}

static tflm_status_t cmsis_mul_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_mul_params_t *p = (const tflm_mul_params_t *)node->user_data;
  const void *a = tflm_node_input_data(ctx, node, 0);
  const void *b = tflm_node_input_data(ctx, node, 1);
  void *out = tflm_node_output_data(ctx, node, 0);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && a != NULL && b != NULL && out != NULL,
                    TFLM_ERR_NOT_READY);
  if (p->binary.type == TFLM_TYPE_INT8 && p->binary.shape.flat) {
    mul_int8_flat(p, (const int8_t *)a, (const int8_t *)b, (int8_t *)out,
                  p->binary.shape.count);
    return TFLM_OK;
  }
  return tflm_binary_eval(ctx, node, &tflm_mul_rows);
}

const tflm_registration_t tflm_op_mul = {
    NULL, TFLM_BUILTIN_MUL, NULL, tflm_mul_prepare, cmsis_mul_eval, NULL, NULL};
