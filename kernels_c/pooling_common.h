/* Shared prepare of AVERAGE_POOL_2D and MAX_POOL_2D (no tag replaces pooling_common.c, so a
 * tag's pooling.c only carries the hot loops); the reference loops are in pooling_reference.c. */
#ifndef TFLM_POOLING_COMMON_H
#define TFLM_POOLING_COMMON_H

#include <stdint.h>

#include "tflm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;                /* TFLM_TYPE_* of input and output */
  int32_t batches;             /* N */
  int32_t in_h, in_w;          /* input H, W */
  int32_t depth;               /* C, the same for input and output */
  int32_t out_h, out_w;        /* output H, W */
  int32_t stride_h, stride_w;  /* window step in input pixels */
  int32_t filter_h, filter_w;  /* window size */
  int32_t pad_h, pad_w;        /* padding before the first row / column */
  int32_t act_min, act_max;    /* quantised activation clamp */
  float act_min_f, act_max_f;  /* float activation clamp */
} tflm_pool_params_t;

/* The part of one output's window that lies inside the input: rows y0..y1-1, columns
 * x0..x1-1, in input coordinates. */
typedef struct {
  int32_t y0, y1, x0, x1;
} tflm_pool_window_t;

/* Validates the node, reads options, shapes, padding and the activation clamp, and stores a
 * tflm_pool_params_t in node->user_data. */
tflm_status_t tflm_pool_prepare(tflm_context_t *ctx, tflm_node_t *node);

/* The window of output (out_y, out_x) clipped to the input. */
void tflm_pool_window(const tflm_pool_params_t *p, int32_t out_y, int32_t out_x,
                      tflm_pool_window_t *w);

/* Integer mean rounded half away from zero (C division truncates toward zero). */
static inline int32_t tflm_pool_round_mean(int32_t sum, int32_t count) {
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

#ifdef __cplusplus
}
#endif

#endif /* TFLM_POOLING_COMMON_H */
