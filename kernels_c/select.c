/* tflm-op: SELECT_V2 tflm_op_select_v2 types: float32,int8,int16 */
/* SELECT_V2(condition, x, y): condition ? x : y elementwise, all three broadcast to the
 * output shape (numpy-style, up to 6-D), as TFLM's reference kernel.  Values are copied as
 * stored bytes (float32, int8 and int16, the types TFLM accepts; the marker's types are
 * those of x, tflm_gen.support.DATA_INPUT). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tflm_elementwise.h"
#include "tflm_kernel.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  tflm_broadcast_t shape;
  int32_t elem_size; /* bytes per element of x, y and the output */
} tflm_select_params_t;

static tflm_status_t tflm_select_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in[3], out;
  tflm_select_params_t *p;
  void *data;
  TFLM_KERNEL_TRY(tflm_elementwise_alloc(ctx, node, sizeof(*p), 3, in, &out, &data));
  p = (tflm_select_params_t *)data;
  TFLM_KERNEL_CHECK(ctx, node, in[0].type == TFLM_TYPE_BOOL, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, in[1].type == out.type && in[2].type == out.type,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node,
                    out.type == TFLM_TYPE_FLOAT32 || out.type == TFLM_TYPE_INT8 ||
                        out.type == TFLM_TYPE_INT16, /* TFLM's SELECT_V2 types */
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p->elem_size = tflm_type_size(out.type);
  return TFLM_OK;
}

static void tflm_select_row(const void *params, const void *const *in, const int32_t *step,
                            void *out, int32_t n) {
  const size_t size = (size_t)((const tflm_select_params_t *)params)->elem_size;
  const uint8_t *condition = (const uint8_t *)in[0];
  const uint8_t *x = (const uint8_t *)in[1];
  const uint8_t *y = (const uint8_t *)in[2];
  uint8_t *z = (uint8_t *)out;
  int32_t i;
  for (i = 0; i < n; ++i) {
    const uint8_t *chosen = condition[i * step[0]] ? x + (size_t)(i * step[1]) * size
                                                   : y + (size_t)(i * step[2]) * size;
    memcpy(z + (size_t)i * size, chosen, size);
  }
}

static tflm_status_t tflm_select_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_select_params_t *p = (const tflm_select_params_t *)node->user_data;
  const void *in[3];
  int32_t sizes[3];
  in[0] = tflm_node_input_data(ctx, node, 0);
  in[1] = tflm_node_input_data(ctx, node, 1);
  in[2] = tflm_node_input_data(ctx, node, 2);
  sizes[0] = 1;
  sizes[1] = sizes[2] = p->elem_size;
  tflm_broadcast_run(&p->shape, p, 3, in, sizes, tflm_node_output_data(ctx, node, 0),
                     p->elem_size, tflm_select_row);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_select_v2 = {
    NULL, TFLM_BUILTIN_SELECT_V2, NULL, tflm_select_prepare, tflm_select_eval,
    NULL, NULL};
