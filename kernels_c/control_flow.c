/* tflm-op: IF tflm_op_if types: bool */
/* tflm-op: WHILE tflm_op_while types: float32,int8,int16,int32,int64,uint8,uint32,bool */
/* tflm-op: CALL_ONCE tflm_op_call_once types: none */
/* Control flow: operators that run other subgraphs of the model (tflm_subgraph_invoke).
 * As in TFLM, tensors pass between the caller and a subgraph by copying their bytes, in
 * the order TFLM copies them, and the checks are TFLM's: counts in prepare, byte sizes
 * when copying.  The subgraphs' tensors are planned in the same arena by the runtime. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t first;   /* IF: then branch; WHILE: cond; CALL_ONCE: init subgraph */
  int32_t second;  /* IF: else branch; WHILE: body; CALL_ONCE: 1 once it has run */
} tflm_control_params_t;

/* Which tensors a copy moves: the node's inputs (from `first_input` on) or outputs, and a
 * subgraph's inputs or outputs. */
enum { TFLM_NODE_INPUTS, TFLM_NODE_OUTPUTS, TFLM_GRAPH_INPUTS, TFLM_GRAPH_OUTPUTS };

static tflm_status_t tflm_control_view(tflm_context_t *ctx, const tflm_node_t *node, int32_t kind,
                                       int32_t subgraph, int32_t i, tflm_tensor_t *view) {
  switch (kind) {
    case TFLM_NODE_INPUTS: return tflm_node_input(ctx, node, i, view);
    case TFLM_NODE_OUTPUTS: return tflm_node_output(ctx, node, i, view);
    case TFLM_GRAPH_INPUTS: return tflm_subgraph_input(ctx, subgraph, i, view);
    default: return tflm_subgraph_output(ctx, subgraph, i, view);
  }
}

/* Copies `count` tensors: from[first_from + i] to to[i]. */
static tflm_status_t tflm_control_move(tflm_context_t *ctx, const tflm_node_t *node,
                                       int32_t subgraph, int32_t to, int32_t from,
                                       int32_t first_from, int32_t count) {
  int32_t i;
  for (i = 0; i < count; ++i) {
    tflm_tensor_t dst, src;
    tflm_status_t status = tflm_control_view(ctx, node, to, subgraph, i, &dst);
    if (status == TFLM_OK) status = tflm_control_view(ctx, node, from, subgraph, first_from + i, &src);
    if (status == TFLM_OK) status = tflm_tensor_copy(&dst, &src);
    if (status != TFLM_OK) return status;
  }
  return TFLM_OK;
}

static tflm_control_params_t *tflm_control_params(tflm_context_t *ctx, tflm_node_t *node,
                                                  int32_t first, int32_t second) {
  tflm_control_params_t *p = (tflm_control_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  if (p == NULL) return NULL;
  p->first = first;
  p->second = second;
  node->user_data = p;
  return p;
}

static int tflm_control_valid_subgraph(tflm_context_t *ctx, int32_t subgraph) {
  return subgraph >= 0 && subgraph < tflm_subgraph_count(ctx);
}

static tflm_status_t tflm_if_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t cond;
  tflm_control_params_t *p = tflm_control_params(
      ctx, node, tflm_opt_int(node, TFLM_OPT_IF_THEN_SUBGRAPH_INDEX, 0),
      tflm_opt_int(node, TFLM_OPT_IF_ELSE_SUBGRAPH_INDEX, 0));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  TFLM_KERNEL_CHECK(ctx, node, node->inputs_count > 0, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 0, &cond) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, cond.type == TFLM_TYPE_BOOL, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(&cond) == 1, TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_control_valid_subgraph(ctx, p->first) &&
                    tflm_control_valid_subgraph(ctx, p->second), TFLM_ERR_BAD_PARAMS);
  /* TFLM checks the then branch's signature only. */
  TFLM_KERNEL_CHECK(ctx, node, tflm_subgraph_inputs_count(ctx, p->first) == node->inputs_count - 1,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_subgraph_outputs_count(ctx, p->first) == node->outputs_count,
                    TFLM_ERR_BAD_PARAMS);
  return TFLM_OK;
}

static tflm_status_t tflm_if_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_control_params_t *p = (const tflm_control_params_t *)node->user_data;
  const uint8_t *cond = (const uint8_t *)tflm_node_input_data(ctx, node, 0);
  int32_t branch = cond[0] != 0 ? p->first : p->second, outputs;
  tflm_status_t status;
  TFLM_KERNEL_CHECK(ctx, node, tflm_subgraph_inputs_count(ctx, branch) == node->inputs_count - 1,
                    TFLM_ERR_BAD_PARAMS);
  status = tflm_control_move(ctx, node, branch, TFLM_GRAPH_INPUTS, TFLM_NODE_INPUTS, 1,
                             node->inputs_count - 1);
  if (status == TFLM_OK) status = tflm_subgraph_invoke(ctx, branch);
  outputs = tflm_subgraph_outputs_count(ctx, branch);
  if (status != TFLM_OK || outputs == 0) return status;
  TFLM_KERNEL_CHECK(ctx, node, outputs == node->outputs_count, TFLM_ERR_BAD_PARAMS);
  return tflm_control_move(ctx, node, branch, TFLM_NODE_OUTPUTS, TFLM_GRAPH_OUTPUTS, 0, outputs);
}

static tflm_status_t tflm_while_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_control_params_t *p = tflm_control_params(
      ctx, node, tflm_opt_int(node, TFLM_OPT_WHILE_COND_SUBGRAPH_INDEX, 0),
      tflm_opt_int(node, TFLM_OPT_WHILE_BODY_SUBGRAPH_INDEX, 0));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  TFLM_KERNEL_CHECK(ctx, node, tflm_control_valid_subgraph(ctx, p->first) &&
                    tflm_control_valid_subgraph(ctx, p->second), TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_subgraph_inputs_count(ctx, p->first) == node->inputs_count &&
                    tflm_subgraph_inputs_count(ctx, p->second) == node->inputs_count &&
                    node->outputs_count == node->inputs_count &&
                    tflm_subgraph_outputs_count(ctx, p->second) == node->outputs_count,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_subgraph_outputs_count(ctx, p->first) >= 1,
                    TFLM_ERR_BAD_PARAMS);
  return TFLM_OK;
}

/* Runs the cond subgraph on the node's outputs (the loop state) and reads its verdict. */
static tflm_status_t tflm_while_test(tflm_context_t *ctx, const tflm_node_t *node, int32_t cond,
                                     int *go_on) {
  tflm_tensor_t verdict;
  tflm_status_t status = tflm_subgraph_invoke(ctx, cond);
  if (status == TFLM_OK) status = tflm_subgraph_output(ctx, cond, 0, &verdict);
  if (status != TFLM_OK) return status;
  TFLM_KERNEL_CHECK(ctx, node, verdict.data != NULL && verdict.bytes >= 1, TFLM_ERROR);
  *go_on = ((const uint8_t *)verdict.data)[0] != 0;
  return TFLM_OK;
}

static tflm_status_t tflm_while_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_control_params_t *p = (const tflm_control_params_t *)node->user_data;
  int32_t count = node->inputs_count;
  int go_on = 0;
  tflm_status_t status =
      tflm_control_move(ctx, node, p->first, TFLM_GRAPH_INPUTS, TFLM_NODE_INPUTS, 0, count);
  /* The outputs carry the loop state from here on, as in TFLM. */
  if (status == TFLM_OK) {
    status = tflm_control_move(ctx, node, 0, TFLM_NODE_OUTPUTS, TFLM_NODE_INPUTS, 0, count);
  }
  if (status == TFLM_OK) status = tflm_while_test(ctx, node, p->first, &go_on);
  while (status == TFLM_OK && go_on) {
    status = tflm_control_move(ctx, node, p->second, TFLM_GRAPH_INPUTS, TFLM_NODE_OUTPUTS, 0, count);
    if (status == TFLM_OK) status = tflm_subgraph_invoke(ctx, p->second);
    if (status == TFLM_OK) {
      status = tflm_control_move(ctx, node, p->second, TFLM_NODE_OUTPUTS, TFLM_GRAPH_OUTPUTS, 0,
                                 count);
    }
    if (status == TFLM_OK) {
      status = tflm_control_move(ctx, node, p->first, TFLM_GRAPH_INPUTS, TFLM_NODE_OUTPUTS, 0,
                                 count);
    }
    if (status == TFLM_OK) status = tflm_while_test(ctx, node, p->first, &go_on);
  }
  return status;
}

static tflm_status_t tflm_call_once_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_control_params_t *p = tflm_control_params(
      ctx, node, tflm_opt_int(node, TFLM_OPT_CALL_ONCE_INIT_SUBGRAPH_INDEX, 0), 0);
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  TFLM_KERNEL_CHECK(ctx, node, node->inputs_count == 0 && node->outputs_count == 0,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_control_valid_subgraph(ctx, p->first), TFLM_ERR_BAD_PARAMS);
  return TFLM_OK;
}

/* Runs the init subgraph at the first invoke only.  There is no reset: as in TFLM, a reset
 * of the interpreter clears the variables the init subgraph set but does not run it again. */
static tflm_status_t tflm_call_once_eval(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_control_params_t *p = (tflm_control_params_t *)node->user_data;
  tflm_status_t status;
  if (p->second) return TFLM_OK;
  status = tflm_subgraph_invoke(ctx, p->first);
  if (status == TFLM_OK) p->second = 1;
  return status;
}

const tflm_registration_t tflm_op_if = {
    NULL, TFLM_BUILTIN_IF, NULL, tflm_if_prepare, tflm_if_eval, NULL, NULL};
const tflm_registration_t tflm_op_while = {
    NULL, TFLM_BUILTIN_WHILE, NULL, tflm_while_prepare, tflm_while_eval, NULL, NULL};
const tflm_registration_t tflm_op_call_once = {
    NULL, TFLM_BUILTIN_CALL_ONCE, NULL, tflm_call_once_prepare, tflm_call_once_eval,
    NULL, NULL};
