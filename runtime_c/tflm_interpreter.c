#include "tflm_interpreter.h"

#include <stddef.h>

#include "tflm_allocator.h"
#include "tflm_model.h"
#include "tflm_stage.h"

/* The node view a kernel sees for global operator `index`, from the positions cached when
 * the model was opened, so invoke reads no flatbuffer tables.  Custom options are only
 * looked up for custom ops. */
void tflm_node_build(tflm_interpreter_t *it, int32_t index, tflm_node_t *node) {
  const uint8_t *model = it->fb.data;
  const tflm_node_state_t *state = &it->nodes[index];
  node->subgraph = tflm_model_node_subgraph(it, index);
  node->index = index - (int32_t)it->subgraphs[node->subgraph].first_node;
  node->version = state->version;
  node->inputs_count = state->inputs != 0 ? (int32_t)tflm_fb_read_u32(model + state->inputs) : 0;
  node->inputs_ = model + state->inputs + 4;
  node->outputs_count =
      state->outputs != 0 ? (int32_t)tflm_fb_read_u32(model + state->outputs) : 0;
  node->outputs_ = model + state->outputs + 4;
  node->options = state->options != 0 ? model + state->options : NULL;
  node->custom_options = NULL;
  node->custom_options_size = 0;
  if (it->resolver->ops[state->registration]->builtin_code == TFLM_BUILTIN_CUSTOM) {
    uint32_t op = tflm_model_operator(it, index), length;
    uint32_t custom = tflm_fb_vector(&it->fb, op, OPERATOR_CUSTOM_OPTIONS, 1, &length);
    node->custom_options = custom != 0 ? model + custom : NULL;
    node->custom_options_size = custom != 0 ? length : 0;
  }
  node->model_end_ = model + it->fb.size;
  node->user_data = state->user_data == TFLM_NO_DATA ? NULL : it->arena.base + state->user_data;
}

/* Remembers where a kernel's persistent data lives, as an offset (pointer-width free). */
static void keep_user_data(tflm_interpreter_t *it, int32_t index, const tflm_node_t *node) {
  it->nodes[index].user_data =
      node->user_data == NULL ? TFLM_NO_DATA
                              : (uint32_t)((uint8_t *)node->user_data - it->arena.base);
}

static int name_matches(const char *wanted, const uint8_t *name, uint32_t length) {
  uint32_t i;
  for (i = 0; i < length; ++i) {
    if (wanted[i] == '\0' || (uint8_t)wanted[i] != name[i]) return 0;
  }
  return wanted[length] == '\0';
}

/* Index of the registration for an operator, or -1. */
static int32_t resolve(tflm_interpreter_t *it, int32_t index) {
  uint32_t op = tflm_model_operator(it, index), length;
  const uint8_t *name;
  int32_t version, code = tflm_model_builtin_code(it, op, &version, &name, &length), i;
  for (i = 0; i < it->resolver->count; ++i) {
    const tflm_registration_t *reg = it->resolver->ops[i];
    if (reg->builtin_code != code) continue;
    if (code != TFLM_BUILTIN_CUSTOM) return i;
    if (name != NULL && reg->custom_name != NULL && name_matches(reg->custom_name, name, length)) {
      return i;
    }
  }
  return -1;
}

/* Remembers where the operator's index vectors (their length word) and options are;
 * 0 marks an absent field. */
static void cache_positions(tflm_interpreter_t *it, int32_t index) {
  uint32_t op = tflm_model_operator(it, index), count;
  uint32_t inputs = tflm_fb_vector(&it->fb, op, OPERATOR_INPUTS, 4, &count);
  uint32_t outputs = tflm_fb_vector(&it->fb, op, OPERATOR_OUTPUTS, 4, &count);
  it->nodes[index].inputs = inputs != 0 ? inputs - 4 : 0;
  it->nodes[index].outputs = outputs != 0 ? outputs - 4 : 0;
  it->nodes[index].options = tflm_fb_table(&it->fb, op, OPERATOR_BUILTIN_OPTIONS);
}

static int32_t node_version(tflm_interpreter_t *it, int32_t index) {
  uint32_t length;
  const uint8_t *name;
  int32_t version;
  tflm_model_builtin_code(it, tflm_model_operator(it, index), &version, &name, &length);
  return version;
}

static tflm_status_t allocate_state(tflm_interpreter_t *it) {
  uint32_t i;
  tflm_status_t status = tflm_allocate_tables(it);
  if (status != TFLM_OK) return status;
  for (i = 0; i < it->operators_count; ++i) {
    int32_t registration = resolve(it, (int32_t)i);
    if (registration < 0) return tflm_init_fail(TFLM_ERR_UNSUPPORTED_OP, "operator", (int32_t)i);
    it->nodes[i].user_data = TFLM_NO_DATA;
    it->nodes[i].registration = (uint16_t)registration;
    it->nodes[i].version = (uint16_t)node_version(it, (int32_t)i);
    cache_positions(it, (int32_t)i);
  }
  return tflm_allocate_resources(it);
}

typedef tflm_status_t (*node_step_t)(tflm_context_t *, tflm_node_t *);

/* 1 for the first operator of the patch stage (tflm_stage.h), which prepares and runs
 * them all; 2 for its other operators; 0 outside it. */
static int stage_part(const tflm_interpreter_t *it, int32_t node) {
  int32_t first, count;
  if (!tflm_stage_span(it, &first, &count) || node < first || node >= first + count) return 0;
  return node == first ? 1 : 2;
}

/* Runs init (prepare_pass 0) or prepare (1) of every node of every subgraph, in order
 * (TFLM inits all subgraphs, then prepares all). */
static tflm_status_t run_setup_pass(tflm_interpreter_t *it, int prepare_pass) {
  uint32_t i;
  for (i = 0; i < it->operators_count; ++i) {
    const tflm_registration_t *reg = it->resolver->ops[it->nodes[i].registration];
    node_step_t step = prepare_pass ? reg->prepare : reg->init;
    tflm_node_t node;
    tflm_status_t status;
    if (prepare_pass && stage_part(it, (int32_t)i) != 0) {
      status = stage_part(it, (int32_t)i) == 1 ? tflm_stage_prepare(it) : TFLM_OK;
      if (status != TFLM_OK) return status;
      continue;
    }
    if (step == NULL) continue;
    tflm_node_build(it, (int32_t)i, &node);
    it->current_node = (int32_t)i;
    status = step(it, &node);
    keep_user_data(it, (int32_t)i, &node);
    if (it->arena.shortfall != 0) status = TFLM_ERR_ARENA_TOO_SMALL;
    if (status != TFLM_OK) {
      return tflm_init_fail(status, prepare_pass ? "prepare" : "init", (int32_t)i);
    }
  }
  return TFLM_OK;
}

static void clear_interpreter(tflm_interpreter_t *it, const tflm_resolver_t *resolver) {
  uint8_t *bytes = (uint8_t *)it;
  uint32_t i;
  for (i = 0; i < (uint32_t)sizeof(*it); ++i) bytes[i] = 0;
  it->resolver = resolver;
  it->current_node = -1;
}

/* Separate weights start at the model's size rounded up to 16 (tflm_gen/weights.py); a
 * model too large for that keeps none, so every constant must then lie in the model. */
static void set_weights(tflm_interpreter_t *it, uint32_t model_size, const void *weights,
                        uint32_t weights_size) {
  if (weights == NULL || model_size > TFLM_IN_MODEL - 16u) return;
  it->weights = (const uint8_t *)weights;
  it->weights_size = weights_size;
  it->weights_start = (model_size + 15u) & ~15u;
}

static tflm_status_t init_interpreter(tflm_interpreter_t *it, const void *model,
                                     uint32_t model_size, const void *weights,
                                     uint32_t weights_size, const tflm_resolver_t *resolver,
                                     void *arena, uint32_t arena_size) {
  tflm_status_t status;
  clear_interpreter(it, resolver);
  set_weights(it, model_size, weights, weights_size);
  if (!tflm_arena_init(&it->arena, arena, arena_size)) {
    return tflm_init_fail(TFLM_ERR_ARENA_ALIGNMENT, "arena start", 0);
  }
  status = tflm_model_open(it, model, model_size);
  if (status != TFLM_OK) return tflm_init_fail(status, "model", 0);
  it->requant = tflm_model_requant(it, &it->requant_words);
  it->layout = tflm_model_layout(it, &it->layout_words);
  status = allocate_state(it);
  if (status == TFLM_OK) status = tflm_stage_open(it);
  if (status == TFLM_OK) status = tflm_allocate_fixed_tensors(it);
  it->in_prepare = 1;
  if (status == TFLM_OK) status = run_setup_pass(it, 0);
  if (status == TFLM_OK) status = run_setup_pass(it, 1);
  it->in_prepare = 0;
  if (status == TFLM_OK) status = tflm_allocate_head(it);
  it->ready = (uint8_t)(status == TFLM_OK);
  return status;
}

tflm_status_t tflm_interpreter_init(tflm_interpreter_t *it, const void *model,
                                    uint32_t model_size, const tflm_resolver_t *resolver,
                                    void *arena, uint32_t arena_size) {
  return tflm_interpreter_init_profiled(it, model, model_size, resolver, arena, arena_size,
                                        NULL);
}

tflm_status_t tflm_interpreter_init_profiled(tflm_interpreter_t *it, const void *model,
                                             uint32_t model_size,
                                             const tflm_resolver_t *resolver, void *arena,
                                             uint32_t arena_size, const tflm_profiler_t *p) {
  return tflm_interpreter_init_separate(it, model, model_size, NULL, 0, resolver, arena,
                                        arena_size, p);
}

tflm_status_t tflm_interpreter_init_separate(tflm_interpreter_t *it, const void *model,
                                             uint32_t model_size, const void *weights,
                                             uint32_t weights_size,
                                             const tflm_resolver_t *resolver, void *arena,
                                             uint32_t arena_size, const tflm_profiler_t *p) {
  tflm_status_t status;
  if (p != NULL) p->begin(p->user, TFLM_PROFILE_INIT);
  status = init_interpreter(it, model, model_size, weights, weights_size, resolver, arena,
                            arena_size);
  it->profiler = p;
  if (p != NULL) p->end(p->user, TFLM_PROFILE_INIT);
  return status;
}

/* Runs the operators of subgraph s in order.  Only subgraph 0's operators are reported to
 * the profiler: a control-flow operator's time includes the subgraphs it runs. */
tflm_status_t tflm_subgraph_invoke(tflm_context_t *it, int32_t s) {
  const tflm_subgraph_t *g;
  uint32_t i;
  if (!it->ready || s < 0 || (uint32_t)s >= it->subgraphs_count) return TFLM_ERR_BAD_INDEX;
  g = &it->subgraphs[s];
  for (i = g->first_node; i < g->first_node + g->operators_count; ++i) {
    const tflm_registration_t *reg = it->resolver->ops[it->nodes[i].registration];
    const tflm_profiler_t *profiler = s == 0 ? it->profiler : NULL;
    tflm_node_t node;
    tflm_status_t status;
    tflm_node_build(it, (int32_t)i, &node);
    if (profiler != NULL) profiler->begin(profiler->user, node.index);
    /* The stage runs whole at its first operator (timed there); the others are empty. */
    if (stage_part(it, (int32_t)i) != 0) {
      status = stage_part(it, (int32_t)i) == 1 ? tflm_stage_invoke(it) : TFLM_OK;
    } else {
      status = reg->eval != NULL ? reg->eval(it, &node) : TFLM_OK;
    }
    if (profiler != NULL) profiler->end(profiler->user, node.index);
    if (status != TFLM_OK) return tflm_init_fail(status, "eval", node.index);
  }
  return TFLM_OK;
}

tflm_status_t tflm_interpreter_invoke(tflm_interpreter_t *it) {
  if (!it->ready) return TFLM_ERR_NOT_READY;
  return tflm_subgraph_invoke(it, 0);
}

/* Refills every allocated resource variable with its reset byte (TFLM's ResetAll). */
static void reset_resources(tflm_interpreter_t *it) {
  uint32_t r;
  for (r = 0; r < it->resources_count; ++r) {
    const tflm_resource_t *resource = &it->resources[r];
    if (resource->data == TFLM_NO_DATA) continue;
    tflm_allocator_fill(it->arena.base + resource->data, resource->bytes, (uint8_t)resource->fill);
  }
}

tflm_status_t tflm_interpreter_reset(tflm_interpreter_t *it) {
  uint32_t t, i;
  if (!it->ready) return TFLM_ERR_NOT_READY;
  for (t = 0; t < it->tensors_count; ++t) {
    uint32_t tensor = tflm_model_tensor(it, (int32_t)t);
    if (tflm_fb_int(&it->fb, tensor, TENSOR_IS_VARIABLE, 1, 0) != 0 &&
        tflm_fb_int(&it->fb, tensor, TENSOR_TYPE, 1, 0) != TFLM_TYPE_RESOURCE &&
        !(it->tensor_location[t] & TFLM_IN_MODEL)) {
      tflm_allocator_reset_variable(it, (int32_t)t);
    }
  }
  reset_resources(it);
  for (i = 0; i < it->operators_count; ++i) {
    const tflm_registration_t *reg = it->resolver->ops[it->nodes[i].registration];
    tflm_node_t node;
    if (reg->reset == NULL) continue;
    tflm_node_build(it, (int32_t)i, &node);
    reg->reset(it, &node);
  }
  return TFLM_OK;
}

void tflm_interpreter_set_profiler(tflm_interpreter_t *it, const tflm_profiler_t *profiler) {
  it->profiler = profiler;
}

int32_t tflm_interpreter_inputs_count(const tflm_interpreter_t *it) {
  return (int32_t)it->inputs_count;
}

int32_t tflm_interpreter_outputs_count(const tflm_interpreter_t *it) {
  return (int32_t)it->outputs_count;
}

/* Tensor index of graph input or output i, or -1. */
static int32_t graph_tensor(const tflm_interpreter_t *it, uint32_t list, uint32_t count,
                            int32_t i) {
  if (!it->ready || i < 0 || (uint32_t)i >= count) return -1;
  return tflm_model_int_at(it, list, (uint32_t)i);
}

tflm_status_t tflm_interpreter_input(tflm_interpreter_t *it, int32_t i, tflm_tensor_t *view) {
  int32_t t = graph_tensor(it, it->inputs, it->inputs_count, i);
  if (t < 0) return TFLM_ERR_BAD_INDEX;
  return tflm_model_view(it, t, view);
}

tflm_status_t tflm_interpreter_output(tflm_interpreter_t *it, int32_t i, tflm_tensor_t *view) {
  int32_t t = graph_tensor(it, it->outputs, it->outputs_count, i);
  if (t < 0) return TFLM_ERR_BAD_INDEX;
  return tflm_model_view(it, t, view);
}

void *tflm_interpreter_input_data(tflm_interpreter_t *it, int32_t i) {
  return tflm_model_tensor_data(it, graph_tensor(it, it->inputs, it->inputs_count, i));
}

void *tflm_interpreter_output_data(tflm_interpreter_t *it, int32_t i) {
  return tflm_model_tensor_data(it, graph_tensor(it, it->outputs, it->outputs_count, i));
}

uint32_t tflm_interpreter_arena_used_bytes(const tflm_interpreter_t *it) { return it->arena.peak; }

uint32_t tflm_interpreter_arena_head_bytes(const tflm_interpreter_t *it) {
  return it->ready ? it->arena.bottom : 0;
}

uint32_t tflm_interpreter_arena_tail_bytes(const tflm_interpreter_t *it) {
  return tflm_arena_tail_bytes(&it->arena);
}

uint32_t tflm_interpreter_arena_shortfall(const tflm_interpreter_t *it) {
  return it->arena.shortfall;
}

uint32_t tflm_interpreter_arena_shared_size(const tflm_interpreter_t *it) {
  return it->ready ? it->arena.tail_start : 0;
}
