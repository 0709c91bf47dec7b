/* Validation of one subgraph's dataflow and quantisation when the model is opened, so a
 * kernel never reads a tensor nothing wrote (leftover arena bytes) and never derives a
 * multiplier from a corrupt scale.  Everything is per subgraph: a graph's own inputs,
 * tensors and operators in its local numbering, in the order the interpreter runs them;
 * the rules are those of tflm_gen/model/graph_check.py, so a model the generator accepts
 * opens. */
#include <stddef.h>

#include "tflm_model.h"
#include "tflm_printf.h"

tflm_status_t tflm_model_reject(tflm_status_t status, const char *what, int32_t index) {
#ifndef TFLM_NO_MESSAGES
  tflm_printf("tflm: model: %s (%s %d)\n", tflm_status_text(status), what, (int)index);
#else
  (void)what;
  (void)index;
#endif
  return status;
}

/* Bits of a bitmap with one bit per tensor, in temporary arena memory. */
static int is_set(const uint8_t *bits, int32_t t) { return (bits[t >> 3] >> (t & 7)) & 1; }
static void set_bit(uint8_t *bits, int32_t t) {
  bits[t >> 3] = (uint8_t)(bits[t >> 3] | (1u << (t & 7)));
}

/* Constants are read in place: their address (the model's own placement included) must
 * suit their type, or loads fault on Cortex-M0 and are undefined in C everywhere. */
static int constant_aligned(tflm_interpreter_t *it, uint32_t tensor) {
  uint32_t data = tflm_model_constant_data(it, tensor);
  /* A kernel reads an element with one load: its size is its alignment (every size is a
   * power of two up to 8); bytes of types with no size need none. */
  const int32_t size = tflm_type_size(tflm_fb_int(&it->fb, tensor, TENSOR_TYPE, 1, 0));
  const uint32_t align = size > 0 ? (uint32_t)size : 1u;
  return data == 0 || ((uintptr_t)tflm_model_at(it, data) & (align - 1u)) == 0;
}

static uint32_t graph_tensor(tflm_interpreter_t *it, const tflm_model_graph_t *g, int32_t t) {
  return tflm_fb_vector_table(&it->fb, g->tensors, g->tensors_count, (uint32_t)t);
}

static uint32_t graph_operator(tflm_interpreter_t *it, const tflm_model_graph_t *g,
                               int32_t index) {
  return tflm_fb_vector_table(&it->fb, g->operators, g->operators_count, (uint32_t)index);
}

/* The scales of a tensor, as graph_check.py's _scale_problem sees them. */
enum { SCALES_VALID, SCALES_ZERO_ONLY, SCALES_NEGATIVE };

/* SCALES_VALID when every scale is finite and positive: kernels divide by scales and turn
 * their ratios into fixed-point multipliers.  SCALES_NEGATIVE when one is below zero
 * (corrupt everywhere).  SCALES_ZERO_ONLY when one is NaN, +infinity or zero (either
 * sign): converters put those on tensors that can only hold zeros, where any product is
 * zero whatever the scale, so they pass there and only there. */
static int classify_scales(tflm_interpreter_t *it, uint32_t tensor) {
  uint32_t quant = tflm_fb_table(&it->fb, tensor, TENSOR_QUANTIZATION), count, i;
  uint32_t scales = tflm_fb_vector(&it->fb, quant, QUANT_SCALE, 4, &count);
  int result = SCALES_VALID;
  for (i = 0; i < count; ++i) {
    const uint32_t bits = tflm_fb_read_u32(it->fb.data + scales + 4u * i);
    const uint32_t magnitude = bits & 0x7FFFFFFFu;
    if (magnitude > 0x7F800000u || magnitude == 0) { /* NaN (any sign), +0 or -0 */
      result = SCALES_ZERO_ONLY;
    } else if ((bits >> 31) != 0) { /* negative, -infinity included */
      return SCALES_NEGATIVE;
    } else if (magnitude == 0x7F800000u) { /* +infinity */
      result = SCALES_ZERO_ONLY;
    }
  }
  return result;
}

/* A constant whose buffer holds only zero bytes (graph_check.py: `not any(data)`). */
static int constant_all_zero(tflm_interpreter_t *it, uint32_t tensor) {
  const uint32_t data = tflm_model_constant_data(it, tensor);
  const uint8_t *bytes = tflm_model_at(it, data);
  uint32_t length, i;
  if (data == 0) return 0;
  length = tflm_model_constant_length(it, tensor); /* in range: tflm_model_constant_data */
  for (i = 0; i < length; ++i) {
    if (bytes[i] != 0) return 0;
  }
  return 1;
}

/* Marks the tensors that can only hold zeros: all-zero constants, then in operator order
 * the outputs of FILL(dims, value) whose value is one of them. */
static void mark_zero_tensors(tflm_interpreter_t *it, const tflm_model_graph_t *g,
                              uint8_t *zeros) {
  uint32_t i, j;
  for (i = 0; i < g->tensors_count; ++i) {
    if (constant_all_zero(it, graph_tensor(it, g, (int32_t)i))) set_bit(zeros, (int32_t)i);
  }
  for (i = 0; i < g->operators_count; ++i) {
    const uint32_t op = graph_operator(it, g, (int32_t)i);
    const uint8_t *name;
    uint32_t name_length, count, outputs_count, inputs, outputs;
    int32_t version, value;
    if (tflm_model_builtin_code(it, op, &version, &name, &name_length) != TFLM_BUILTIN_FILL) {
      continue;
    }
    inputs = tflm_fb_vector(&it->fb, op, OPERATOR_INPUTS, 4, &count);
    if (count != 2) continue;
    value = tflm_model_int_at(it, inputs, 1);
    if (value < 0 || !is_set(zeros, value)) continue;
    outputs = tflm_fb_vector(&it->fb, op, OPERATOR_OUTPUTS, 4, &outputs_count);
    for (j = 0; j < outputs_count; ++j) {
      const int32_t t = tflm_model_int_at(it, outputs, j);
      if (t >= 0) set_bit(zeros, t);
    }
  }
}

/* Every tensor's scales (see classify_scales) and constant alignment.  The zero tensors
 * are only looked for when some scale needs them, so valid models scan no weights. */
static tflm_status_t check_tensors(tflm_interpreter_t *it, const tflm_model_graph_t *g,
                                   uint8_t *zeros) {
  uint32_t i;
  int zeros_marked = 0;
  for (i = 0; i < g->tensors_count; ++i) {
    const uint32_t tensor = graph_tensor(it, g, (int32_t)i);
    const int32_t global = (int32_t)(g->first_tensor + i);
    const int scales = classify_scales(it, tensor);
    if (scales == SCALES_ZERO_ONLY && !zeros_marked) {
      mark_zero_tensors(it, g, zeros);
      zeros_marked = 1;
    }
    if (scales == SCALES_NEGATIVE || (scales == SCALES_ZERO_ONLY && !is_set(zeros, (int32_t)i))) {
      return tflm_model_reject(TFLM_ERR_MODEL_SCALE, "tensor", global);
    }
    if (!constant_aligned(it, tensor)) {
      return tflm_model_reject(TFLM_ERR_MODEL_ALIGNMENT, "tensor", global);
    }
  }
  return TFLM_OK;
}

/* A dimension of zero (a scalar, with no dimensions, has one element). */
static int has_no_elements(tflm_interpreter_t *it, uint32_t tensor) {
  uint32_t count, i, shape = tflm_fb_vector(&it->fb, tensor, TENSOR_SHAPE, 4, &count);
  for (i = 0; i < count; ++i) {
    if (tflm_model_int_at(it, shape, i) == 0) return 1;
  }
  return 0;
}

/* Readable before any operator runs: a constant, a variable or a tensor of no elements. */
static int ready_without_producer(tflm_interpreter_t *it, uint32_t tensor) {
  return tflm_model_constant_data(it, tensor) != 0 ||
         tflm_fb_int(&it->fb, tensor, TENSOR_IS_VARIABLE, 1, 0) != 0 ||
         has_no_elements(it, tensor);
}

/* Graph inputs are written by the caller (for IF/WHILE bodies, by the calling operator):
 * none may be a constant or be listed twice.  They start `written` and `ready`. */
static tflm_status_t mark_inputs(tflm_interpreter_t *it, const tflm_model_graph_t *g,
                                 uint8_t *written, uint8_t *ready) {
  uint32_t i;
  for (i = 0; i < g->inputs_count; ++i) {
    const int32_t t = tflm_model_int_at(it, g->inputs, i);
    if (is_set(written, t) || tflm_model_constant_data(it, graph_tensor(it, g, t)) != 0) {
      return tflm_model_reject(TFLM_ERR_MODEL_TWO_PRODUCERS, "graph input",
                               (int32_t)g->first_tensor + t);
    }
    set_bit(written, t);
    set_bit(ready, t);
  }
  return TFLM_OK;
}

/* A constant shorter than its tensor is a coded filter (tflm_model_compressed, which
 * check_tensor required): only the filter input of the ops that decode may read it. */
static int coded_input_allowed(tflm_interpreter_t *it, uint32_t op, uint32_t i,
                               uint32_t tensor) {
  const uint8_t *name;
  uint32_t name_length;
  int32_t version, code;
  if (tflm_model_constant_data(it, tensor) == 0 ||
      tflm_model_constant_length(it, tensor) >= tflm_model_tensor_bytes(it, tensor)) {
    return 1;
  }
  code = tflm_model_builtin_code(it, op, &version, &name, &name_length);
  return i == 1 && (code == TFLM_BUILTIN_CONV_2D || code == TFLM_BUILTIN_DEPTHWISE_CONV_2D ||
                    code == TFLM_BUILTIN_FULLY_CONNECTED);
}

/* Operator `index` reads only ready tensors (-1: an absent optional input) and writes
 * only tensors that are neither constants, graph inputs nor any earlier output. */
static tflm_status_t check_dataflow(tflm_interpreter_t *it, const tflm_model_graph_t *g,
                                    int32_t index, uint8_t *written, uint8_t *ready) {
  const uint32_t op = graph_operator(it, g, index);
  const int32_t global = (int32_t)g->first_node + index;
  uint32_t count, i, inputs = tflm_fb_vector(&it->fb, op, OPERATOR_INPUTS, 4, &count);
  uint32_t outputs_count, outputs = tflm_fb_vector(&it->fb, op, OPERATOR_OUTPUTS, 4,
                                                   &outputs_count);
  for (i = 0; i < count; ++i) {
    const int32_t t = tflm_model_int_at(it, inputs, i);
    if (t >= 0 && !is_set(ready, t) && !ready_without_producer(it, graph_tensor(it, g, t))) {
      return tflm_model_reject(TFLM_ERR_MODEL_UNWRITTEN_INPUT, "operator", global);
    }
    if (t >= 0 && !coded_input_allowed(it, op, i, graph_tensor(it, g, t))) {
      return tflm_model_reject(TFLM_ERR_MODEL_CONSTANT_SIZE, "operator", global);
    }
  }
  if (outputs_count == 0) {
    const uint8_t *name;
    uint32_t name_length;
    int32_t version, code = tflm_model_builtin_code(it, op, &version, &name, &name_length);
    if (code != TFLM_BUILTIN_ASSIGN_VARIABLE && code != TFLM_BUILTIN_CALL_ONCE) {
      return tflm_model_reject(TFLM_ERR_MODEL_NO_OUTPUTS, "operator", global);
    }
  }
  for (i = 0; i < outputs_count; ++i) {
    const int32_t t = tflm_model_int_at(it, outputs, i);
    if (t < 0) continue; /* an output the operator does not produce */
    if (is_set(written, t) || tflm_model_constant_data(it, graph_tensor(it, g, t)) != 0) {
      return tflm_model_reject(TFLM_ERR_MODEL_TWO_PRODUCERS, "operator", global);
    }
    set_bit(written, t);
    set_bit(ready, t);
  }
  return TFLM_OK;
}

static tflm_status_t check_outputs(tflm_interpreter_t *it, const tflm_model_graph_t *g,
                                   const uint8_t *ready) {
  uint32_t i;
  for (i = 0; i < g->outputs_count; ++i) {
    const int32_t t = tflm_model_int_at(it, g->outputs, i);
    if (!is_set(ready, t) && !ready_without_producer(it, graph_tensor(it, g, t))) {
      return tflm_model_reject(TFLM_ERR_MODEL_UNWRITTEN_INPUT, "graph output",
                               (int32_t)g->first_tensor + t);
    }
  }
  return TFLM_OK;
}

tflm_status_t tflm_model_check_graph(tflm_interpreter_t *it, const tflm_model_graph_t *g) {
  const uint32_t mark = tflm_arena_mark(&it->arena), bytes = (g->tensors_count + 7u) / 8u;
  /* Three bitmaps: tensors an operator or the caller writes, tensors readable so far, and
   * tensors that can only hold zeros. */
  uint8_t *written = (uint8_t *)tflm_arena_alloc_temp(&it->arena, 3u * bytes);
  uint8_t *ready, *zeros;
  tflm_status_t status;
  uint32_t i;
  if (written == NULL && bytes > 0) return TFLM_ERR_ARENA_TOO_SMALL;
  for (i = 0; i < 3u * bytes; ++i) written[i] = 0;
  ready = written + bytes;
  zeros = ready + bytes;
  status = check_tensors(it, g, zeros);
  if (status == TFLM_OK) status = mark_inputs(it, g, written, ready);
  for (i = 0; status == TFLM_OK && i < g->operators_count; ++i) {
    status = check_dataflow(it, g, (int32_t)i, written, ready);
  }
  if (status == TFLM_OK) status = check_outputs(it, g, ready);
  tflm_arena_reset_temp(&it->arena, mark);
  return status;
}
