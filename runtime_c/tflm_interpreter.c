#include "tflm_interpreter.h"

#include <stddef.h>

#include "tflm_model.h"
#include "tflm_planner.h"
#include "tflm_printf.h"

/* Logs why init failed (compiled out with TFLM_NO_MESSAGES) and returns the status. */
static tflm_status_t fail(tflm_status_t status, const char *what, int32_t index) {
#ifndef TFLM_NO_MESSAGES
  tflm_printf("tflm: error: %s (%s, index %d)\n", tflm_status_text(status), what, (int)index);
#else
  (void)what;
  (void)index;
#endif
  return status;
}

/* The node view a kernel sees for operator `index`, from the positions cached when the
 * model was opened, so invoke reads no flatbuffer tables.  Custom options are only looked
 * up for custom ops. */
static void build_node(tflm_interpreter_t *it, int32_t index, tflm_node_t *node) {
  const uint8_t *model = it->fb.data;
  const tflm_node_state_t *state = &it->nodes[index];
  node->index = index;
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
static void keep_user_data(tflm_interpreter_t *it, const tflm_node_t *node) {
  it->nodes[node->index].user_data =
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
  it->tensor_location =
      (uint32_t *)tflm_arena_alloc_tail(&it->arena, 4u * it->tensors_count);
  it->nodes = (tflm_node_state_t *)tflm_arena_alloc_tail(
      &it->arena, (uint32_t)sizeof(tflm_node_state_t) * it->operators_count);
  if ((it->tensor_location == NULL && it->tensors_count > 0) ||
      (it->nodes == NULL && it->operators_count > 0)) {
    return fail(TFLM_ERR_ARENA_TOO_SMALL, "interpreter state", 0);
  }
  for (i = 0; i < it->operators_count; ++i) {
    int32_t registration = resolve(it, (int32_t)i);
    if (registration < 0) return fail(TFLM_ERR_UNSUPPORTED_OP, "operator", (int32_t)i);
    it->nodes[i].user_data = TFLM_NO_DATA;
    it->nodes[i].registration = (uint16_t)registration;
    it->nodes[i].version = (uint16_t)node_version(it, (int32_t)i);
    cache_positions(it, (int32_t)i);
  }
  return TFLM_OK;
}

static void fill_bytes(uint8_t *p, uint32_t count, uint8_t value) {
  while (count-- > 0) *p++ = value;
}

/* A variable tensor's initial state, as TFLM sets it: int8 state holds its zero point
 * (real value 0), every other type all-zero bytes. */
static void reset_variable(tflm_interpreter_t *it, int32_t t) {
  tflm_tensor_t view;
  tflm_model_view(it, t, &view);
  if (view.data == NULL) return;
  fill_bytes((uint8_t *)view.data, (uint32_t)view.bytes,
             view.type == TFLM_TYPE_INT8 ? (uint8_t)(int8_t)view.zero_point : 0u);
}

/* Constants point into the model; variable tensors get zeroed persistent memory. */
static tflm_status_t place_fixed_tensors(tflm_interpreter_t *it) {
  uint32_t t;
  for (t = 0; t < it->tensors_count; ++t) {
    uint32_t tensor = tflm_model_tensor(it, (int32_t)t);
    uint32_t data = tflm_model_constant_data(it, tensor);
    it->tensor_location[t] = data != 0 ? (data | TFLM_IN_MODEL) : TFLM_NOWHERE;
    if (data == 0 && tflm_fb_int(&it->fb, tensor, TENSOR_IS_VARIABLE, 1, 0) != 0) {
      uint32_t bytes = tflm_model_tensor_bytes(it, tensor);
      uint8_t *state = (uint8_t *)tflm_arena_alloc_tail(&it->arena, bytes);
      if (state == NULL) return fail(TFLM_ERR_ARENA_TOO_SMALL, "variable tensor", (int32_t)t);
      it->variable_bytes += tflm_arena_align(bytes);
      it->tensor_location[t] = (uint32_t)(state - it->arena.base);
      reset_variable(it, (int32_t)t);
    }
  }
  return TFLM_OK;
}

typedef tflm_status_t (*node_step_t)(tflm_context_t *, tflm_node_t *);

/* Runs init (prepare_pass 0) or prepare (1) of every node. */
static tflm_status_t run_setup_pass(tflm_interpreter_t *it, int prepare_pass) {
  uint32_t i;
  for (i = 0; i < it->operators_count; ++i) {
    const tflm_registration_t *reg = it->resolver->ops[it->nodes[i].registration];
    node_step_t step = prepare_pass ? reg->prepare : reg->init;
    tflm_node_t node;
    tflm_status_t status;
    if (step == NULL) continue;
    build_node(it, (int32_t)i, &node);
    it->current_node = (int32_t)i;
    status = step(it, &node);
    keep_user_data(it, &node);
    if (it->arena.shortfall != 0) status = TFLM_ERR_ARENA_TOO_SMALL;
    if (status != TFLM_OK) return fail(status, prepare_pass ? "prepare" : "init", (int32_t)i);
  }
  return TFLM_OK;
}

static void extend_lifetime(int16_t *first, int16_t *last, int32_t t, int32_t step) {
  if (t < 0) return;
  if (first[t] < 0) first[t] = (int16_t)step;
  if (step > last[t]) last[t] = (int16_t)step;
}

/* first/last operator step of every tensor; graph inputs live from the start and graph
 * outputs to the end.  (Counts are at most 0x7FFF, checked when the model is opened.) */
static void compute_lifetimes(tflm_interpreter_t *it, int16_t *first, int16_t *last) {
  uint32_t t, i, k;
  int32_t end = it->operators_count > 0 ? (int32_t)it->operators_count - 1 : 0;
  for (t = 0; t < it->tensors_count; ++t) first[t] = last[t] = -1;
  for (k = 0; k < it->inputs_count; ++k) {
    extend_lifetime(first, last, tflm_model_int_at(it, it->inputs, k), 0);
  }
  for (i = 0; i < it->operators_count; ++i) {
    tflm_node_t node;
    build_node(it, (int32_t)i, &node);
    for (k = 0; k < (uint32_t)node.inputs_count; ++k) {
      extend_lifetime(first, last, (int32_t)tflm_fb_read_u32(node.inputs_ + 4 * k), (int32_t)i);
    }
    for (k = 0; k < (uint32_t)node.outputs_count; ++k) {
      extend_lifetime(first, last, (int32_t)tflm_fb_read_u32(node.outputs_ + 4 * k), (int32_t)i);
    }
  }
  for (k = 0; k < it->outputs_count; ++k) {
    extend_lifetime(first, last, tflm_model_int_at(it, it->outputs, k), end);
  }
}

/* True for tensors the head holds: activations that some operator or the graph uses. */
static int is_planned(const tflm_interpreter_t *it, const int16_t *first, uint32_t t) {
  return it->tensor_location[t] == TFLM_NOWHERE && first[t] >= 0;
}

/* The offline offset of tensor t, TFLM_PLAN_ONLINE when none; 0 on a nonsense offset
 * (negative other than -1, too large, or not a multiple of the arena alignment). */
static int offline_offset(tflm_interpreter_t *it, uint32_t plan, uint32_t t, uint32_t *offset) {
  int32_t value = plan != 0 ? tflm_model_int_at(it, plan, t) : -1;
  *offset = value < 0 ? TFLM_PLAN_ONLINE : (uint32_t)value;
  return value == -1 ||
         (value >= 0 && value <= 0x3FFFFFFF && value % (int32_t)TFLM_ARENA_ALIGN == 0);
}

/* Fills plan buffers: planned tensors in index order, then scratch buffers. */
static tflm_status_t collect_buffers(tflm_interpreter_t *it, const int16_t *first,
                                     const int16_t *last, tflm_plan_buffer_t *buffers) {
  uint32_t t, s, count = 0, plan = tflm_model_offline_plan(it);
  for (t = 0; t < it->tensors_count; ++t) {
    tflm_plan_buffer_t *buffer = &buffers[count];
    if (!is_planned(it, first, t)) continue;
    buffer->bytes = tflm_arena_align(tflm_model_tensor_bytes(it, tflm_model_tensor(it, (int32_t)t)));
    if (!offline_offset(it, plan, t, &buffer->offset)) return TFLM_ERR_MODEL;
    buffer->first = first[t];
    buffer->last = last[t];
    ++count;
  }
  for (s = 0; s < it->scratch_count; ++s) {
    tflm_plan_buffer_t *buffer = &buffers[count + s];
    buffer->bytes = it->scratch_request[2 * s];
    buffer->offset = TFLM_PLAN_ONLINE;
    buffer->first = buffer->last = (int16_t)it->scratch_request[2 * s + 1];
  }
  return TFLM_OK;
}

static void assign_locations(tflm_interpreter_t *it, const int16_t *first,
                             const tflm_plan_buffer_t *buffers) {
  uint32_t t, s, count = 0;
  for (t = 0; t < it->tensors_count; ++t) {
    if (is_planned(it, first, t)) it->tensor_location[t] = buffers[count++].offset;
  }
  for (s = 0; s < it->scratch_count; ++s) it->scratch_location[s] = buffers[count++].offset;
}

static uint32_t count_planned(const tflm_interpreter_t *it, const int16_t *first) {
  uint32_t t, count = it->scratch_count;
  for (t = 0; t < it->tensors_count; ++t) count += (uint32_t)is_planned(it, first, t);
  return count;
}

/* Plans every non-persistent buffer in temporary memory, then reserves the head.  Offsets
 * from an offline plan in the model are kept; the rest are placed around them. */
static tflm_status_t plan_head(tflm_interpreter_t *it) {
  uint32_t n = it->tensors_count, head, count;
  int16_t *first, *last;
  uint16_t *order;
  tflm_plan_buffer_t *buffers;
  tflm_status_t status;
  it->scratch_location = (uint32_t *)tflm_arena_alloc_tail(&it->arena, 4u * it->scratch_count);
  first = (int16_t *)tflm_arena_alloc_temp(&it->arena, 2u * n);
  last = (int16_t *)tflm_arena_alloc_temp(&it->arena, 2u * n);
  if (it->arena.shortfall != 0) return fail(TFLM_ERR_ARENA_TOO_SMALL, "planning", 0);
  compute_lifetimes(it, first, last);
  count = count_planned(it, first);
  if (count > 0xFFFFu) return fail(TFLM_ERR_TOO_MANY, "planned buffers", (int32_t)count);
  buffers = (tflm_plan_buffer_t *)tflm_arena_alloc_temp(
      &it->arena, (uint32_t)sizeof(tflm_plan_buffer_t) * count);
  order = (uint16_t *)tflm_arena_alloc_temp(&it->arena, 2u * count);
  if (it->arena.shortfall != 0) return fail(TFLM_ERR_ARENA_TOO_SMALL, "planning", 0);
  status = collect_buffers(it, first, last, buffers);
  if (status != TFLM_OK) return fail(status, "offline plan", 0);
  head = tflm_plan(buffers, (int32_t)count, order);
  assign_locations(it, first, buffers);
  it->scratch_request = NULL;
  if (!tflm_arena_set_head(&it->arena, head)) return fail(TFLM_ERR_ARENA_TOO_SMALL, "head", 0);
  return TFLM_OK;
}

static void clear_interpreter(tflm_interpreter_t *it, const tflm_resolver_t *resolver) {
  uint8_t *bytes = (uint8_t *)it;
  uint32_t i;
  for (i = 0; i < (uint32_t)sizeof(*it); ++i) bytes[i] = 0;
  it->resolver = resolver;
  it->current_node = -1;
}

static tflm_status_t init_interpreter(tflm_interpreter_t *it, const void *model,
                                     uint32_t model_size, const tflm_resolver_t *resolver,
                                     void *arena, uint32_t arena_size) {
  tflm_status_t status;
  clear_interpreter(it, resolver);
  if (!tflm_arena_init(&it->arena, arena, arena_size)) {
    return fail(TFLM_ERR_ARENA_ALIGNMENT, "arena start", 0);
  }
  status = tflm_model_open(it, model, model_size);
  if (status != TFLM_OK) return fail(status, "model", 0);
  it->requant = tflm_model_requant(it, &it->requant_words);
  status = allocate_state(it);
  if (status == TFLM_OK) status = place_fixed_tensors(it);
  it->in_prepare = 1;
  if (status == TFLM_OK) status = run_setup_pass(it, 0);
  if (status == TFLM_OK) status = run_setup_pass(it, 1);
  it->in_prepare = 0;
  if (status == TFLM_OK) status = plan_head(it);
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
  tflm_status_t status;
  if (p != NULL) p->begin(p->user, TFLM_PROFILE_INIT);
  status = init_interpreter(it, model, model_size, resolver, arena, arena_size);
  it->profiler = p;
  if (p != NULL) p->end(p->user, TFLM_PROFILE_INIT);
  return status;
}

tflm_status_t tflm_interpreter_invoke(tflm_interpreter_t *it) {
  uint32_t i;
  if (!it->ready) return TFLM_ERR_NOT_READY;
  for (i = 0; i < it->operators_count; ++i) {
    const tflm_registration_t *reg = it->resolver->ops[it->nodes[i].registration];
    tflm_node_t node;
    tflm_status_t status;
    build_node(it, (int32_t)i, &node);
    if (it->profiler != NULL) it->profiler->begin(it->profiler->user, (int32_t)i);
    status = reg->eval != NULL ? reg->eval(it, &node) : TFLM_OK;
    if (it->profiler != NULL) it->profiler->end(it->profiler->user, (int32_t)i);
    if (status != TFLM_OK) return fail(status, "eval", (int32_t)i);
  }
  return TFLM_OK;
}

tflm_status_t tflm_interpreter_reset(tflm_interpreter_t *it) {
  uint32_t t, i;
  if (!it->ready) return TFLM_ERR_NOT_READY;
  for (t = 0; t < it->tensors_count; ++t) {
    uint32_t tensor = tflm_model_tensor(it, (int32_t)t);
    if (tflm_fb_int(&it->fb, tensor, TENSOR_IS_VARIABLE, 1, 0) != 0 &&
        !(it->tensor_location[t] & TFLM_IN_MODEL)) {
      reset_variable(it, (int32_t)t);
    }
  }
  for (i = 0; i < it->operators_count; ++i) {
    const tflm_registration_t *reg = it->resolver->ops[it->nodes[i].registration];
    tflm_node_t node;
    if (reg->reset == NULL) continue;
    build_node(it, (int32_t)i, &node);
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
