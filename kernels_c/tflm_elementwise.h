/* Shared plumbing of the elementwise kernels (SUB, MUL, MAXIMUM, comparisons, SELECT_V2 ...):
 * numpy-style broadcasting of up to three inputs to the output shape (up to 6-D), element
 * sizes, and the integer activation range.
 *
 * Broadcasting: every input is right-aligned against the output shape; a dimension of an
 * input is either the output's or 1 (then the input is repeated along it).  The walk calls
 * a row function once per index of the five outer dimensions with the innermost run of
 * outputs; each input's step in that run is 1, or 0 when it is broadcast there. */
#ifndef TFLM_ELEMENTWISE_H
#define TFLM_ELEMENTWISE_H

#include <stdint.h>

#include "tflm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFLM_ELEMENTWISE_MAX_INPUTS 3

/* Broadcast layout, kept in persistent op data (fixed-width fields only). */
typedef struct {
  int32_t count;                   /* output elements */
  int32_t flat;                    /* 1: no input is broadcast, one row of `count` values */
  int32_t out_dims[TFLM_MAX_DIMS]; /* output shape, leading 1s added */
  int32_t strides[TFLM_ELEMENTWISE_MAX_INPUTS][TFLM_MAX_DIMS]; /* element step of each
                                    * input per output index; 0 where it is broadcast */
} tflm_broadcast_t;

/* One run of n outputs: in[i] advances by step[i] elements (1, or 0 when broadcast). */
typedef void (*tflm_elementwise_row_fn)(const void *params, const void *const *in,
                                        const int32_t *step, void *out, int32_t n);

/* Bytes per element of a TFLM_TYPE_*; 0 for types the elementwise kernels do not handle. */
int32_t tflm_elementwise_type_size(int32_t type);

/* Fills *b for `count` inputs broadcast to the output shape; returns 0 when an input does
 * not broadcast to it. */
int32_t tflm_broadcast_init(tflm_broadcast_t *b, const tflm_tensor_t *inputs, int32_t count,
                            const tflm_tensor_t *output);

/* Fetches the node's first `count` inputs and output 0 into the views and fills *b,
 * checking the node has exactly `count` inputs and one output. */
tflm_status_t tflm_elementwise_prepare(tflm_context_t *ctx, tflm_node_t *node, int32_t count,
                                       tflm_tensor_t *inputs, tflm_tensor_t *output,
                                       tflm_broadcast_t *b);

/* Runs `row` over the whole output.  in[i] has elements of in_size[i] bytes, the output of
 * out_size bytes; `count` inputs (1..3). */
void tflm_broadcast_run(const tflm_broadcast_t *b, const void *params, int32_t count,
                        const void *const *in, const int32_t *in_size, void *out,
                        int32_t out_size, tflm_elementwise_row_fn row);

/* Fused activation range for int32 outputs (TFLM's CalculateActivationRange<int32_t>). */
void tflm_activation_range_int32(int32_t activation, int32_t *lo, int32_t *hi);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_ELEMENTWISE_H */
