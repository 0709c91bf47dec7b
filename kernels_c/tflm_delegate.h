/* The delegate interface: what an accelerator's driver implements to run the subgraph a
 * partitioned model's custom op names (accelerators/README.md).
 *
 * The custom op's kernel (tflm_partition.c) checks its options, then calls, per node:
 *   init     once; may allocate persistent memory (tflm_alloc_persistent) and keep it in
 *            node->user_data, which belongs to the delegate;
 *   prepare  once after init; checks the subgraph (tflm_subgraph_inputs_count, ...),
 *            compiles or uploads it;
 *   eval     at every invoke: reads the node's inputs (tflm_node_input), runs the subgraph
 *            on the accelerator, writes the node's outputs (tflm_node_output);
 *   free     when the interpreter is torn down.
 * Any pointer may be NULL.  The node's inputs and outputs are those of the subgraph, in
 * the same order.  tflm_reference_delegate runs the subgraph with the project's kernels. */
#ifndef TFLM_DELEGATE_H
#define TFLM_DELEGATE_H

#include <stdint.h>

#include "tflm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  tflm_status_t (*init)(tflm_context_t *ctx, tflm_node_t *node, int32_t subgraph);
  tflm_status_t (*prepare)(tflm_context_t *ctx, tflm_node_t *node, int32_t subgraph);
  tflm_status_t (*eval)(tflm_context_t *ctx, tflm_node_t *node, int32_t subgraph);
  void (*free)(tflm_context_t *ctx, tflm_node_t *node, int32_t subgraph);
} tflm_delegate_t;

/* Runs the subgraph on the CPU with the project's own kernels (copies the node's inputs
 * into the subgraph's, invokes it, copies its outputs back). */
extern const tflm_delegate_t tflm_reference_delegate;

/* The custom op's kernel functions for `delegate` (the generated model_delegates.c wraps
 * them per custom op name). */
tflm_status_t tflm_partition_init(tflm_context_t *ctx, tflm_node_t *node,
                                  const tflm_delegate_t *delegate);
tflm_status_t tflm_partition_prepare(tflm_context_t *ctx, tflm_node_t *node,
                                     const tflm_delegate_t *delegate);
tflm_status_t tflm_partition_eval(tflm_context_t *ctx, tflm_node_t *node,
                                  const tflm_delegate_t *delegate);
void tflm_partition_free(tflm_context_t *ctx, tflm_node_t *node, const tflm_delegate_t *delegate);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_DELEGATE_H */
