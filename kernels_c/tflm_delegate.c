/* The accelerator custom op of a partitioned model: checks its 8 option bytes (magic
 * "TGP1", subgraph index uint32 little-endian; accelerators/README.md) and hands the
 * subgraph to a delegate (tflm_delegate.h).  Also the reference delegate. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_delegate.h"

/* The subgraph the node's options name (not the main one), or -1. */
static int32_t tflm_partition_subgraph(tflm_context_t *ctx, const tflm_node_t *node) {
  int32_t subgraph = tflm_partition_options_subgraph(node->custom_options,
                                                     node->custom_options_size);
  return subgraph > 0 && subgraph < tflm_subgraph_count(ctx) ? subgraph : -1;
}

tflm_status_t tflm_partition_init(tflm_context_t *ctx, tflm_node_t *node,
                                  const tflm_delegate_t *delegate) {
  int32_t subgraph = tflm_partition_subgraph(ctx, node);
  TFLM_KERNEL_CHECK(ctx, node, subgraph > 0, TFLM_ERR_BAD_PARAMS);
  return delegate->init != NULL ? delegate->init(ctx, node, subgraph) : TFLM_OK;
}

tflm_status_t tflm_partition_prepare(tflm_context_t *ctx, tflm_node_t *node,
                                     const tflm_delegate_t *delegate) {
  int32_t subgraph = tflm_partition_subgraph(ctx, node);
  TFLM_KERNEL_CHECK(ctx, node, subgraph > 0, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_subgraph_inputs_count(ctx, subgraph) == node->inputs_count &&
                    tflm_subgraph_outputs_count(ctx, subgraph) == node->outputs_count,
                    TFLM_ERR_BAD_PARAMS);
  return delegate->prepare != NULL ? delegate->prepare(ctx, node, subgraph) : TFLM_OK;
}

tflm_status_t tflm_partition_eval(tflm_context_t *ctx, tflm_node_t *node,
                                  const tflm_delegate_t *delegate) {
  int32_t subgraph = tflm_partition_subgraph(ctx, node);
  TFLM_KERNEL_CHECK(ctx, node, subgraph > 0, TFLM_ERR_BAD_PARAMS);
  return delegate->eval != NULL ? delegate->eval(ctx, node, subgraph) : TFLM_OK;
}

void tflm_partition_free(tflm_context_t *ctx, tflm_node_t *node, const tflm_delegate_t *delegate) {
  int32_t subgraph = tflm_partition_subgraph(ctx, node);
  if (subgraph > 0 && delegate->free != NULL) delegate->free(ctx, node, subgraph);
}

static tflm_status_t tflm_reference_eval(tflm_context_t *ctx, tflm_node_t *node,
                                         int32_t subgraph) {
  tflm_tensor_t outer, inner;
  tflm_status_t status = TFLM_OK;
  int32_t i;
  for (i = 0; status == TFLM_OK && i < node->inputs_count; ++i) {
    status = tflm_node_input(ctx, node, i, &outer);
    if (status == TFLM_OK) status = tflm_subgraph_input(ctx, subgraph, i, &inner);
    if (status == TFLM_OK) status = tflm_tensor_copy(&inner, &outer);
  }
  if (status == TFLM_OK) status = tflm_subgraph_invoke(ctx, subgraph);
  for (i = 0; status == TFLM_OK && i < node->outputs_count; ++i) {
    status = tflm_node_output(ctx, node, i, &outer);
    if (status == TFLM_OK) status = tflm_subgraph_output(ctx, subgraph, i, &inner);
    if (status == TFLM_OK) status = tflm_tensor_copy(&outer, &inner);
  }
  return status;
}

const tflm_delegate_t tflm_reference_delegate = {NULL, NULL, tflm_reference_eval, NULL};
