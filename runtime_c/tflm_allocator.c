/* Allocation of an interpreter's arena at init (see tflm_allocator.h): the tail's tables,
 * resource and variable tensors, then the head planned from the tensors' lifetimes through
 * the planner interface (tflm_planner.h).  The order of the allocations is the arena
 * layout tflm_gen/arena.py models; keep the two in step. */
#include "tflm_allocator.h"

#include <stddef.h>

#include "tflm_model.h"
#include "tflm_planner.h"
#include "tflm_printf.h"
#include "tflm_stage.h"

tflm_status_t tflm_init_fail(tflm_status_t status, const char *what, int32_t index) {
#ifndef TFLM_NO_MESSAGES
  tflm_printf("tflm: error: %s (%s, index %d)\n", tflm_status_text(status), what, (int)index);
#else
  (void)what;
  (void)index;
#endif
  return status;
}

tflm_status_t tflm_allocate_tables(tflm_interpreter_t *it) {
  it->tensor_location =
      (uint32_t *)tflm_arena_alloc_tail(&it->arena, 4u * it->tensors_count);
  it->nodes = (tflm_node_state_t *)tflm_arena_alloc_tail(
      &it->arena, (uint32_t)sizeof(tflm_node_state_t) * it->operators_count);
  if ((it->tensor_location == NULL && it->tensors_count > 0) ||
      (it->nodes == NULL && it->operators_count > 0)) {
    return tflm_init_fail(TFLM_ERR_ARENA_TOO_SMALL, "interpreter state", 0);
  }
  return TFLM_OK;
}

/* Room for one resource variable per VAR_HANDLE (TFLM's Python interpreter sizes its
 * table by distinct shared names; duplicates only leave slots unused). */
tflm_status_t tflm_allocate_resources(tflm_interpreter_t *it) {
  uint32_t i, length;
  const uint8_t *name;
  int32_t version;
  for (i = 0; i < it->operators_count; ++i) {
    uint32_t op = tflm_model_operator(it, (int32_t)i);
    it->resources_capacity +=
        (uint32_t)(tflm_model_builtin_code(it, op, &version, &name, &length) ==
                   TFLM_BUILTIN_VAR_HANDLE);
  }
  if (it->resources_capacity == 0) return TFLM_OK;
  it->resources = (tflm_resource_t *)tflm_arena_alloc_tail(
      &it->arena, (uint32_t)sizeof(tflm_resource_t) * it->resources_capacity);
  return it->resources == NULL ? tflm_init_fail(TFLM_ERR_ARENA_TOO_SMALL, "resource variables", 0)
                               : TFLM_OK;
}

void tflm_allocator_fill(uint8_t *p, uint32_t count, uint8_t value) {
  while (count-- > 0) *p++ = value;
}

/* A variable tensor's initial state, as TFLM sets it: int8 state holds its zero point
 * (real value 0), every other type all-zero bytes. */
void tflm_allocator_reset_variable(tflm_interpreter_t *it, int32_t t) {
  tflm_tensor_t view;
  tflm_model_view(it, t, &view);
  if (view.data == NULL) return;
  tflm_allocator_fill((uint8_t *)view.data, (uint32_t)view.bytes,
             view.type == TFLM_TYPE_INT8 ? (uint8_t)(int8_t)view.zero_point : 0u);
}

/* A resource tensor holds a variable's id.  It lives in the tail, not the head, so that
 * VAR_HANDLE's prepare can already write the id there for ASSIGN_VARIABLE's prepare (TFLM
 * points the tensor at VAR_HANDLE's persistent data); -1 until then. */
static tflm_status_t place_resource_tensor(tflm_interpreter_t *it, int32_t t) {
  uint8_t *id = (uint8_t *)tflm_arena_alloc_tail(&it->arena, 4u);
  if (id == NULL) return tflm_init_fail(TFLM_ERR_ARENA_TOO_SMALL, "resource tensor", t);
  tflm_allocator_fill(id, 4u, 0xFFu);
  it->tensor_location[t] = (uint32_t)(id - it->arena.base);
  return TFLM_OK;
}

/* Constants point into the model; variable tensors get zeroed persistent memory. */
tflm_status_t tflm_allocate_fixed_tensors(tflm_interpreter_t *it) {
  uint32_t t;
  for (t = 0; t < it->tensors_count; ++t) {
    uint32_t tensor = tflm_model_tensor(it, (int32_t)t);
    uint32_t data = tflm_model_constant_data(it, tensor);
    it->tensor_location[t] = data != 0 ? (data | TFLM_IN_MODEL) : TFLM_NOWHERE;
    if (data == 0 && tflm_fb_int(&it->fb, tensor, TENSOR_TYPE, 1, 0) == TFLM_TYPE_RESOURCE) {
      tflm_status_t status = place_resource_tensor(it, (int32_t)t);
      if (status != TFLM_OK) return status;
    } else if (data == 0 && tflm_fb_int(&it->fb, tensor, TENSOR_IS_VARIABLE, 1, 0) != 0) {
      uint32_t bytes = tflm_model_tensor_bytes(it, tensor);
      uint8_t *state = (uint8_t *)tflm_arena_alloc_tail(&it->arena, bytes);
      if (state == NULL) {
        return tflm_init_fail(TFLM_ERR_ARENA_TOO_SMALL, "variable tensor", (int32_t)t);
      }
      it->variable_bytes += tflm_arena_align(bytes);
      it->tensor_location[t] = (uint32_t)(state - it->arena.base);
      tflm_allocator_reset_variable(it, (int32_t)t);
    }
  }
  return TFLM_OK;
}

/* Lifetimes in one timeline of steps for all subgraphs: a subgraph's operators take the
 * steps right after the operator that calls it (as TFLM's allocation scopes do), so a
 * caller's tensors that are live across the call overlap every tensor of the callee.  The
 * arrays live in temporary memory during planning. */
typedef struct {
  int16_t *first, *last;           /* per global tensor (-1: unused) */
  int16_t *node_first, *node_last; /* per global node: its step and the last of its callees */
  int16_t *window_lo, *window_hi;  /* per subgraph: steps of further call sites (-1: none) */
  uint8_t *visit;                  /* per subgraph: 0 new, 1 being marked, 2 marked */
  int32_t step;                    /* next free step */
  int32_t depth;                   /* subgraphs being marked (nesting of calls) */
} tflm_lifetimes_t;

/* Deepest nesting of subgraph calls: marking here and invoking later recurse once per
 * level, so a corrupt model must not be able to exhaust a small stack. */
#define TFLM_MAX_CALL_DEPTH 16

static void extend_span(int16_t *first, int16_t *last, int32_t step) {
  if (*first < 0 || step < *first) *first = (int16_t)step;
  if (step > *last) *last = (int16_t)step;
}

/* Extends local tensor `local` of subgraph s (or nothing for -1) to cover `step`. */
static void touch(tflm_interpreter_t *it, tflm_lifetimes_t *l, int32_t s, int32_t local,
                  int32_t step) {
  int32_t t = local + (int32_t)it->subgraphs[s].first_tensor;
  if (local >= 0) extend_span(&l->first[t], &l->last[t], step);
}

static void touch_list(tflm_interpreter_t *it, tflm_lifetimes_t *l, int32_t s,
                       const uint8_t *list, int32_t count, int32_t step) {
  int32_t k;
  for (k = 0; k < count; ++k) touch(it, l, s, (int32_t)tflm_fb_read_u32(list + 4 * k), step);
}

/* The same for the tensor list a node state caches (a model offset; 0 when absent). */
static void touch_vector(tflm_interpreter_t *it, tflm_lifetimes_t *l, int32_t s,
                         uint32_t position, int32_t step) {
  const uint8_t *list = it->fb.data + position;
  if (position == 0) return;
  touch_list(it, l, s, list + 4, (int32_t)tflm_fb_read_u32(list), step);
}

/* A subgraph marked already runs again at steps [lo, hi]: so do the ones it calls.  A
 * window that covers [lo, hi] already has been passed on to the callees (this keeps the
 * walk linear however often a subgraph is called). */
static void widen_window(tflm_interpreter_t *it, tflm_lifetimes_t *l, int32_t s, int32_t lo,
                         int32_t hi) {
  const tflm_subgraph_t *g = &it->subgraphs[s];
  uint32_t i;
  if (l->window_lo[s] >= 0 && l->window_lo[s] <= lo && l->window_hi[s] >= hi) return;
  extend_span(&l->window_lo[s], &l->window_hi[s], lo);
  extend_span(&l->window_lo[s], &l->window_hi[s], hi);
  for (i = 0; i < g->operators_count; ++i) {
    int32_t called[2], k, count = tflm_model_called_subgraphs(it, (int32_t)(g->first_node + i), called);
    for (k = 0; k < count; ++k) widen_window(it, l, called[k], lo, hi);
  }
}

static tflm_status_t mark_subgraph(tflm_interpreter_t *it, tflm_lifetimes_t *l, int32_t s);

/* Gives node n its step, marks the subgraphs it calls inside its span, then extends its
 * inputs and outputs over the whole span (they are copied in and out around the calls). */
static tflm_status_t mark_node(tflm_interpreter_t *it, tflm_lifetimes_t *l, int32_t s,
                               int32_t n) {
  int32_t called[2], k, count = tflm_model_called_subgraphs(it, n, called);
  uint8_t marked_before[2] = {0, 0};
  tflm_status_t status = TFLM_OK;
  if (count < 0 || l->step >= 0x7FFF) return TFLM_ERR_MODEL;
  l->node_first[n] = (int16_t)l->step++;
  for (k = 0; k < count && status == TFLM_OK; ++k) {
    if (l->visit[called[k]] == 1) return TFLM_ERR_MODEL; /* recursion: TFLM never returns */
    marked_before[k] = (uint8_t)(l->visit[called[k]] == 2);
    if (l->visit[called[k]] == 0) status = mark_subgraph(it, l, called[k]);
  }
  l->node_last[n] = (int16_t)(l->step - 1);
  for (k = 0; k < count; ++k) {
    if (marked_before[k]) widen_window(it, l, called[k], l->node_first[n], l->node_last[n]);
  }
  touch_vector(it, l, s, it->nodes[n].inputs, l->node_first[n]);
  touch_vector(it, l, s, it->nodes[n].inputs, l->node_last[n]);
  touch_vector(it, l, s, it->nodes[n].outputs, l->node_first[n]);
  touch_vector(it, l, s, it->nodes[n].outputs, l->node_last[n]);
  return status;
}

/* Inputs live from the subgraph's first step, outputs to its last (an empty subgraph still
 * takes one step). */
static tflm_status_t mark_subgraph(tflm_interpreter_t *it, tflm_lifetimes_t *l, int32_t s) {
  const tflm_subgraph_t *g = &it->subgraphs[s];
  int32_t start = l->step;
  uint32_t i, k;
  tflm_status_t status = TFLM_OK;
  if (++l->depth > TFLM_MAX_CALL_DEPTH) return TFLM_ERR_TOO_MANY;
  l->visit[s] = 1;
  for (k = 0; k < g->inputs_count; ++k) touch(it, l, s, tflm_model_int_at(it, g->inputs, k), start);
  for (i = 0; i < g->operators_count && status == TFLM_OK; ++i) {
    status = mark_node(it, l, s, (int32_t)(g->first_node + i));
  }
  if (g->operators_count == 0 && l->step++ >= 0x7FFF) return TFLM_ERR_MODEL;
  for (k = 0; k < g->outputs_count; ++k) {
    touch(it, l, s, tflm_model_int_at(it, g->outputs, k), l->step - 1);
  }
  l->visit[s] = 2;
  --l->depth;
  return status;
}

/* Stretches every used tensor and every node of a subgraph that runs from several call
 * sites over all of them. */
static void apply_windows(tflm_interpreter_t *it, tflm_lifetimes_t *l) {
  uint32_t s, t, i;
  for (s = 0; s < it->subgraphs_count; ++s) {
    const tflm_subgraph_t *g = &it->subgraphs[s];
    if (l->window_lo[s] < 0) continue;
    for (t = g->first_tensor; t < g->first_tensor + g->tensors_count; ++t) {
      if (l->first[t] < 0) continue;
      extend_span(&l->first[t], &l->last[t], l->window_lo[s]);
      extend_span(&l->first[t], &l->last[t], l->window_hi[s]);
    }
    for (i = g->first_node; i < g->first_node + g->operators_count; ++i) {
      extend_span(&l->node_first[i], &l->node_last[i], l->window_lo[s]);
      extend_span(&l->node_first[i], &l->node_last[i], l->window_hi[s]);
    }
  }
}

static void fill_int16(int16_t *p, uint32_t count) {
  while (count-- > 0) *p++ = -1;
}

/* The patch stage is one operator to the planner (tflm_stage.h): its operators, their
 * tensors (the stage input, the tiles, the output) and scratch buffers span all its steps. */
static void widen_stage(tflm_interpreter_t *it, tflm_lifetimes_t *l) {
  int32_t first, count, n, lo, hi;
  if (!tflm_stage_span(it, &first, &count)) return;
  lo = l->node_first[first];
  hi = l->node_last[first + count - 1];
  for (n = first; n < first + count; ++n) {
    l->node_first[n] = (int16_t)lo;
    l->node_last[n] = (int16_t)hi;
    touch_vector(it, l, 0, it->nodes[n].inputs, lo);
    touch_vector(it, l, 0, it->nodes[n].inputs, hi);
    touch_vector(it, l, 0, it->nodes[n].outputs, lo);
    touch_vector(it, l, 0, it->nodes[n].outputs, hi);
  }
}

/* Subgraph 0 first; subgraphs nothing calls are planned after it, each on its own. */
static tflm_status_t compute_lifetimes(tflm_interpreter_t *it, tflm_lifetimes_t *l) {
  uint32_t s;
  tflm_status_t status = TFLM_OK;
  fill_int16(l->first, it->tensors_count);
  fill_int16(l->last, it->tensors_count);
  fill_int16(l->window_lo, it->subgraphs_count);
  fill_int16(l->window_hi, it->subgraphs_count);
  tflm_allocator_fill(l->visit, it->subgraphs_count, 0u);
  l->step = 0;
  l->depth = 0;
  for (s = 0; s < it->subgraphs_count && status == TFLM_OK; ++s) {
    if (l->visit[s] == 0) status = mark_subgraph(it, l, (int32_t)s);
  }
  if (status == TFLM_OK) apply_windows(it, l);
  if (status == TFLM_OK) widen_stage(it, l);
  return status;
}

/* True for tensors the head holds: activations that some operator or graph uses, except
 * patch-stage tiles that take turns in another tile's buffer (placed with it). */
static int is_planned(tflm_interpreter_t *it, const int16_t *first, uint32_t t) {
  return it->tensor_location[t] == TFLM_NOWHERE && first[t] >= 0 &&
         tflm_stage_tile_owner(it, (int32_t)t) < 0;
}

/* The offline offset of tensor t, TFLM_PLAN_ONLINE when none; 0 on a nonsense offset
 * (negative other than -1, too large, or not a multiple of the arena alignment). */
static int offline_offset(tflm_interpreter_t *it, uint32_t plan, uint32_t t, uint32_t *offset) {
  int32_t value = plan != 0 ? tflm_model_int_at(it, plan, t) : -1;
  *offset = value < 0 ? TFLM_PLAN_ONLINE : (uint32_t)value;
  return value == -1 ||
         (value >= 0 && value <= 0x3FFFFFFF && value % (int32_t)TFLM_ARENA_ALIGN == 0);
}

/* Fills plan buffers: planned tensors in index order, then scratch buffers, which live
 * over their node's span (a control-flow node's callees run inside it). */
static tflm_status_t collect_buffers(tflm_interpreter_t *it, const tflm_lifetimes_t *l,
                                     tflm_plan_buffer_t *buffers) {
  uint32_t t, s, count = 0, plan = tflm_model_offline_plan(it);
  for (t = 0; t < it->tensors_count; ++t) {
    tflm_plan_buffer_t *buffer = &buffers[count];
    if (!is_planned(it, l->first, t)) continue;
    buffer->bytes = tflm_arena_align(tflm_stage_head_bytes(
        it, (int32_t)t, tflm_model_tensor_bytes(it, tflm_model_tensor(it, (int32_t)t))));
    if (!offline_offset(it, plan, t, &buffer->offset)) return TFLM_ERR_MODEL;
    buffer->first = l->first[t];
    buffer->last = l->last[t];
    ++count;
  }
  for (s = 0; s < it->scratch_count; ++s) {
    tflm_plan_buffer_t *buffer = &buffers[count + s];
    uint32_t node = it->scratch_request[2 * s + 1];
    buffer->bytes = it->scratch_request[2 * s];
    buffer->offset = TFLM_PLAN_ONLINE;
    buffer->first = l->node_first[node];
    buffer->last = l->node_last[node];
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
  for (t = 0; t < it->tensors_count; ++t) {
    int32_t owner = tflm_stage_tile_owner(it, (int32_t)t);
    if (owner >= 0) it->tensor_location[t] = it->tensor_location[owner];
  }
}

static uint32_t count_planned(tflm_interpreter_t *it, const int16_t *first) {
  uint32_t t, count = it->scratch_count;
  for (t = 0; t < it->tensors_count; ++t) count += (uint32_t)is_planned(it, first, t);
  return count;
}

/* The lifetime arrays, in temporary memory. */
static int alloc_lifetimes(tflm_interpreter_t *it, tflm_lifetimes_t *l) {
  uint32_t tensors = 2u * it->tensors_count, nodes = 2u * it->operators_count;
  uint32_t subgraphs = 2u * it->subgraphs_count;
  l->first = (int16_t *)tflm_arena_alloc_temp(&it->arena, tensors);
  l->last = (int16_t *)tflm_arena_alloc_temp(&it->arena, tensors);
  l->node_first = (int16_t *)tflm_arena_alloc_temp(&it->arena, nodes);
  l->node_last = (int16_t *)tflm_arena_alloc_temp(&it->arena, nodes);
  l->window_lo = (int16_t *)tflm_arena_alloc_temp(&it->arena, subgraphs);
  l->window_hi = (int16_t *)tflm_arena_alloc_temp(&it->arena, subgraphs);
  l->visit = (uint8_t *)tflm_arena_alloc_temp(&it->arena, it->subgraphs_count);
  return it->arena.shortfall == 0;
}

/* With a complete offline plan (every tensor left for the head has an offset; no scratch
 * buffer, no patch stage) the offsets need no lifetimes: the head ends at the highest
 * buffer's end, and planning takes no temporary memory (hello_world: 144 bytes of
 * lifetime arrays beside a 32-byte head).  0 when the plan is not complete. */
static int place_offline(tflm_interpreter_t *it, uint32_t *head) {
  uint32_t t, offset, plan = tflm_model_offline_plan(it);
  if (plan == 0 || it->scratch_count != 0 || it->stage != 0) return 0;
  for (t = 0; t < it->tensors_count; ++t) {
    if (it->tensor_location[t] != TFLM_NOWHERE) continue;
    if (!offline_offset(it, plan, t, &offset) || offset == TFLM_PLAN_ONLINE) return 0;
  }
  *head = 0;
  for (t = 0; t < it->tensors_count; ++t) {
    uint32_t end;
    if (it->tensor_location[t] != TFLM_NOWHERE) continue;
    (void)offline_offset(it, plan, t, &offset);
    end = offset + tflm_arena_align(tflm_model_tensor_bytes(it, tflm_model_tensor(it, (int32_t)t)));
    *head = end > *head ? end : *head;
    it->tensor_location[t] = offset;
  }
  return 1;
}

/* Plans every non-persistent buffer in temporary memory, then reserves the head.  Offsets
 * from an offline plan in the model are kept; the rest are placed around them. */
tflm_status_t tflm_allocate_head(tflm_interpreter_t *it) {
  uint32_t head, count;
  tflm_lifetimes_t lifetimes;
  uint16_t *order;
  tflm_plan_buffer_t *buffers;
  tflm_status_t status;
  it->scratch_location = (uint32_t *)tflm_arena_alloc_tail(&it->arena, 4u * it->scratch_count);
  if (place_offline(it, &head)) {
    it->scratch_request = NULL;
    return tflm_arena_set_head(&it->arena, head) ? TFLM_OK
                                                 : tflm_init_fail(TFLM_ERR_ARENA_TOO_SMALL, "head", 0);
  }
  if (!alloc_lifetimes(it, &lifetimes)) {
    return tflm_init_fail(TFLM_ERR_ARENA_TOO_SMALL, "planning", 0);
  }
  status = compute_lifetimes(it, &lifetimes);
  if (status != TFLM_OK) return tflm_init_fail(status, "subgraph calls", 0);
  count = count_planned(it, lifetimes.first);
  if (count > 0xFFFFu) return tflm_init_fail(TFLM_ERR_TOO_MANY, "planned buffers", (int32_t)count);
  buffers = (tflm_plan_buffer_t *)tflm_arena_alloc_temp(
      &it->arena, (uint32_t)sizeof(tflm_plan_buffer_t) * count);
  order = (uint16_t *)tflm_arena_alloc_temp(&it->arena, 2u * count);
  if (it->arena.shortfall != 0) return tflm_init_fail(TFLM_ERR_ARENA_TOO_SMALL, "planning", 0);
  status = collect_buffers(it, &lifetimes, buffers);
  if (status != TFLM_OK) return tflm_init_fail(status, "offline plan", 0);
  head = tflm_plan(buffers, (int32_t)count, order);
  assign_locations(it, lifetimes.first, buffers);
  it->scratch_request = NULL;
  if (!tflm_arena_set_head(&it->arena, head)) {
    return tflm_init_fail(TFLM_ERR_ARENA_TOO_SMALL, "head", 0);
  }
  return TFLM_OK;
}
