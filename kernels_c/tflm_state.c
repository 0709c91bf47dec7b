/* Variable-tensor helpers; see tflm_state.h. */
#include "tflm_state.h"

#include <stddef.h>

void tflm_state_reset_int8(tflm_context_t *ctx, const tflm_node_t *node, int32_t input) {
  tflm_tensor_t view;
  int32_t i;
  if (tflm_node_input(ctx, node, input, &view) != TFLM_OK || view.data == NULL ||
      !view.is_variable || view.type != TFLM_TYPE_INT8) {
    return;
  }
  for (i = 0; i < view.bytes; ++i) ((int8_t *)view.data)[i] = (int8_t)view.zero_point;
}
