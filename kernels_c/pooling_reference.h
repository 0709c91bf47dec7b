/* The reference AVERAGE_POOL_2D / MAX_POOL_2D loops of every type (defined in
 * pooling_reference.c), apart from the registrations in pooling.c so that a tag replacing
 * pooling.c (e.g. cmsis) still has them for what it does not speed up; including this
 * header brings pooling_reference.c into a project. */
#ifndef TFLM_POOLING_REFERENCE_H
#define TFLM_POOLING_REFERENCE_H

#include <stdint.h>

#include "pooling_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One output value.  `in` points at channel c of image n; pixel (y, x) is at
 * in[(y * in_w + x) * depth]. */
typedef void (*tflm_pool_value_fn)(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                                   const void *in, void *out);

void tflm_avg_pool_float(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                         const void *in, void *out);
void tflm_avg_pool_int8(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                        const void *in, void *out);
void tflm_avg_pool_int16(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                         const void *in, void *out);
void tflm_max_pool_float(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                         const void *in, void *out);
void tflm_max_pool_int8(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                        const void *in, void *out);
void tflm_max_pool_int16(const tflm_pool_params_t *p, const tflm_pool_window_t *w,
                         const void *in, void *out);

/* Walks every output (n, y, x, c) and computes it with value_fn. */
void tflm_pool_run(const tflm_pool_params_t *p, const uint8_t *in, uint8_t *out,
                   int32_t element_size, tflm_pool_value_fn value_fn);

/* One pool's value functions by type. */
typedef struct {
  tflm_pool_value_fn float32, int8, int16;
} tflm_pool_values_t;

extern const tflm_pool_values_t tflm_avg_pool_values, tflm_max_pool_values;

/* The reference eval: tflm_pool_run with the value function of the node's type. */
tflm_status_t tflm_pool_eval(tflm_context_t *ctx, tflm_node_t *node,
                             const tflm_pool_values_t *values);

/* Defines the registration `symbol` (builtin `code`) of a reference pool over `values`. */
#define TFLM_POOL_OP(symbol, code, values)                                                 \
  static tflm_status_t symbol##_eval(tflm_context_t *ctx, tflm_node_t *node) {             \
    return tflm_pool_eval(ctx, node, &(values));                                           \
  }                                                                                        \
  const tflm_registration_t symbol = {NULL, code, NULL, tflm_pool_prepare, symbol##_eval,  \
                                      NULL, NULL}

#ifdef __cplusplus
}
#endif

#endif /* TFLM_POOLING_REFERENCE_H */
