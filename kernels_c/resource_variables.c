/* tflm-op: VAR_HANDLE tflm_op_var_handle types: resource */
/* tflm-op: READ_VARIABLE tflm_op_read_variable types: resource */
/* tflm-op: ASSIGN_VARIABLE tflm_op_assign_variable types: resource,int32 */
/* Resource variables: state that survives invokes (tf.Variable).  VAR_HANDLE turns its
 * (container, shared name) into an id that its output tensor carries; ASSIGN_VARIABLE
 * copies a tensor into the variable and READ_VARIABLE copies it out.  The runtime keeps the
 * variables (tflm_resource_*) with TFLM's semantics: the first ASSIGN_VARIABLE prepared for
 * a variable sizes it and fills it with its value's zero point (as int8), the value a reset
 * restores. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t id; /* the variable's id */
} tflm_var_handle_params_t;

/* Writes the id into the handle tensor, which the runtime keeps in persistent memory. */
static void tflm_var_handle_write(tflm_context_t *ctx, const tflm_node_t *node, int32_t id) {
  int32_t *handle = (int32_t *)tflm_node_output_data(ctx, node, 0);
  if (handle != NULL) handle[0] = id;
}

static tflm_status_t tflm_var_handle_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_var_handle_params_t *p;
  uint32_t container_length, name_length;
  const uint8_t *container =
      tflm_opt_string(node, TFLM_OPT_VAR_HANDLE_CONTAINER, &container_length);
  const uint8_t *name = tflm_opt_string(node, TFLM_OPT_VAR_HANDLE_SHARED_NAME, &name_length);
  TFLM_KERNEL_CHECK(ctx, node, node->outputs_count == 1, TFLM_ERR_BAD_PARAMS);
  p = (tflm_var_handle_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  node->user_data = p;
  p->id = tflm_resource_id(ctx, container, container_length, name, name_length);
  TFLM_KERNEL_CHECK(ctx, node, p->id >= 0, TFLM_ERR_TOO_MANY);
  tflm_var_handle_write(ctx, node, p->id);
  return TFLM_OK;
}

static tflm_status_t tflm_var_handle_eval(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_var_handle_write(ctx, node, ((const tflm_var_handle_params_t *)node->user_data)->id);
  return TFLM_OK;
}

/* The id a handle tensor carries, -1 when it has none yet. */
static int32_t tflm_variable_id(tflm_context_t *ctx, const tflm_node_t *node) {
  const int32_t *handle = (const int32_t *)tflm_node_input_data(ctx, node, 0);
  return handle != NULL ? handle[0] : -1;
}

static void tflm_variable_copy(uint8_t *to, const uint8_t *from, uint32_t bytes) {
  uint32_t i;
  for (i = 0; i < bytes; ++i) to[i] = from[i];
}

static tflm_status_t tflm_read_variable_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t handle, out;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 1, 0, TFLM_IO_ANY_SHAPE, &handle, &out));
  TFLM_KERNEL_CHECK(ctx, node, handle.type == TFLM_TYPE_RESOURCE, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(&handle) == 1, TFLM_ERR_BAD_SHAPE);
  return TFLM_OK;
}

static tflm_status_t tflm_read_variable_eval(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t out;
  uint32_t bytes;
  const uint8_t *value = (const uint8_t *)tflm_resource_data(ctx, tflm_variable_id(ctx, node), &bytes);
  TFLM_KERNEL_CHECK(ctx, node, value != NULL, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, &out) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, (uint32_t)out.bytes == bytes, TFLM_ERR_BAD_SHAPE);
  tflm_variable_copy((uint8_t *)out.data, value, bytes);
  return TFLM_OK;
}

/* The byte a variable starts from and resets to: the value's zero point cast to int8 when
 * the value is quantised (TFLM's MicroResourceVariables::Allocate), else 0. */
static uint8_t tflm_variable_fill(const tflm_tensor_t *value) {
  if (value->nscales == 0 || value->zero_points_le == NULL) return 0u;
  return (uint8_t)(int8_t)value->zero_point;
}

static tflm_status_t tflm_assign_variable_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t handle, value;
  int32_t id;
  TFLM_KERNEL_CHECK(ctx, node, node->inputs_count == 2 && node->outputs_count == 0,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 0, &handle) == TFLM_OK &&
                    tflm_node_input(ctx, node, 1, &value) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, handle.type == TFLM_TYPE_RESOURCE ||
                    handle.type == TFLM_TYPE_INT32, TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(&handle) == 1, TFLM_ERR_BAD_SHAPE);
  /* A handle that comes from another subgraph gets its id only at invoke (as in TFLM);
   * the variable must then be sized by another ASSIGN_VARIABLE. */
  id = tflm_variable_id(ctx, node);
  if (id == -1) return TFLM_OK;
  return tflm_resource_allocate(ctx, id, (uint32_t)value.bytes, tflm_variable_fill(&value));
}

static tflm_status_t tflm_assign_variable_eval(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t value;
  uint32_t bytes;
  uint8_t *variable = (uint8_t *)tflm_resource_data(ctx, tflm_variable_id(ctx, node), &bytes);
  TFLM_KERNEL_CHECK(ctx, node, variable != NULL, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 1, &value) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, (uint32_t)value.bytes == bytes, TFLM_ERR_BAD_SHAPE);
  tflm_variable_copy(variable, (const uint8_t *)value.data, bytes);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_var_handle = {
    NULL, TFLM_BUILTIN_VAR_HANDLE, NULL, tflm_var_handle_prepare,
    tflm_var_handle_eval, NULL, NULL};
const tflm_registration_t tflm_op_read_variable = {
    NULL, TFLM_BUILTIN_READ_VARIABLE, NULL, tflm_read_variable_prepare,
    tflm_read_variable_eval, NULL, NULL};
const tflm_registration_t tflm_op_assign_variable = {
    NULL, TFLM_BUILTIN_ASSIGN_VARIABLE, NULL, tflm_assign_variable_prepare,
    tflm_assign_variable_eval, NULL, NULL};
