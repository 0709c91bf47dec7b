/* FULLY_CONNECTED over a row-sparse filter; see fully_connected_sparse.h. */
#include "fully_connected_sparse.h"

#include <stddef.h>

#include "tflm_quant.h"

tflm_status_t tflm_fully_connected_sparse_int8(tflm_context_t *ctx,
                                               const tflm_weighted_call_t *call) {
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)call->params;
  const int32_t *bias = (const int32_t *)call->data.bias;
  const int8_t *input = (const int8_t *)call->data.input;
  int8_t *output = (int8_t *)call->data.output;
  int32_t b, oc, acc;
  (void)ctx; /* the filter's data is the stream prepare checked (no model look-up) */
  tflm_sparse_groups_t walk;
  for (b = 0; b < p->batches; ++b, input += p->accum_depth) {
    tflm_sparse_groups_start(call->data.filter, &walk);
    for (oc = 0; oc < p->output_depth; ++oc) {
      const int32_t q = oc * p->channel_step;
      acc = tflm_sparse_groups_dot(&walk, input, p->input_offset);
      if (bias != NULL) acc = tflm_add_wrap(acc, bias[oc]);
      *output++ = (int8_t)tflm_requantize(acc, call->requant.multipliers[q],
                                          call->requant.shifts[q], p->output_offset,
                                          p->act_min, p->act_max);
    }
  }
  return TFLM_OK;
}
