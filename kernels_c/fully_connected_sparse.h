/* FULLY_CONNECTED over a row-sparse filter (tflm_sparse_rows.h, prepared by
 * fully_connected_common.c with decode_scratch == TFLM_FC_SPARSE_ROWS): int8 activations,
 * symmetric int8 weights; each output's sum from its row's tokens, then the bias and TFLM's
 * requantisation.  The reference and cmsis kernels share it; including this header brings
 * fully_connected_sparse.c into a project. */
#ifndef TFLM_FULLY_CONNECTED_SPARSE_H
#define TFLM_FULLY_CONNECTED_SPARSE_H

#include "fully_connected_common.h"
#include "tflm_sparse_rows.h"
#include "weighted_common.h"

#ifdef __cplusplus
extern "C" {
#endif

tflm_status_t tflm_fully_connected_sparse_int8(tflm_context_t *ctx,
                                               const tflm_weighted_call_t *call);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_FULLY_CONNECTED_SPARSE_H */
