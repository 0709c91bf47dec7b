/* FULLY_CONNECTED over a row-sparse filter; see fully_connected_sparse.h. */
#include "fully_connected_sparse.h"

#include <stddef.h>

#include "tflm_quant.h"

/* Output oc of a batch from its row's sum: the bias and TFLM's requantisation. */
static int8_t sparse_output(const tflm_weighted_call_t *call, int32_t acc, int32_t oc) {
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)call->params;
  const int32_t *bias = (const int32_t *)call->data.bias;
  const int32_t q = oc * p->channel_step;
  if (bias != NULL) acc = tflm_add_wrap(acc, bias[oc]);
  return (int8_t)tflm_requantize(acc, call->requant.multipliers[q], call->requant.shifts[q],
                                 p->output_offset, p->act_min, p->act_max);
}

/* One walk per coding, each in its own loop: a walk that one branch sets and the other
 * reads would be "maybe uninitialised" to some compilers (avr-gcc). */
static void sparse_groups_rows(const tflm_weighted_call_t *call, const int8_t *input,
                               int8_t *output) {
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)call->params;
  int32_t b, oc;
  tflm_sparse_groups_t walk;
  for (b = 0; b < p->batches; ++b, input += p->accum_depth) {
    tflm_sparse_groups_start(call->data.filter, &walk);
    for (oc = 0; oc < p->output_depth; ++oc) {
      *output++ = sparse_output(call, tflm_sparse_groups_dot(&walk, input, p->input_offset),
                                oc);
    }
  }
}

static void sparse_narrow_rows(const tflm_weighted_call_t *call, const int8_t *input,
                               int8_t *output) {
  const tflm_fc_params_t *p = (const tflm_fc_params_t *)call->params;
  int32_t b, oc;
  tflm_sparse_narrow_t walk;
  for (b = 0; b < p->batches; ++b, input += p->accum_depth) {
    tflm_sparse_narrow_start(call->data.filter, &walk);
    for (oc = 0; oc < p->output_depth; ++oc) {
      *output++ = sparse_output(call, tflm_sparse_narrow_dot(&walk, input, p->input_offset),
                                oc);
    }
  }
}

tflm_status_t tflm_fully_connected_sparse_int8(tflm_context_t *ctx,
                                               const tflm_weighted_call_t *call) {
  const int8_t *input = (const int8_t *)call->data.input;
  int8_t *output = (int8_t *)call->data.output;
  (void)ctx; /* the filter's data is the stream prepare checked (no model look-up) */
  if (((const uint8_t *)call->data.filter)[0] == TFLM_SPARSE_NARROW) {
    sparse_narrow_rows(call, input, output);
  } else {
    sparse_groups_rows(call, input, output);
  }
  return TFLM_OK;
}
