/* Validation of one subgraph's dataflow and quantisation when the model is opened, so a
 * kernel never reads a tensor nothing wrote (leftover arena bytes) and never derives a
 * multiplier from a corrupt scale.  Everything is per subgraph: a graph's own inputs,
 * tensors and operators, in the order the interpreter runs them. */
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

static uint32_t graph_tensor(tflm_interpreter_t *it, const tflm_model_graph_t *g, int32_t t) {
  return tflm_fb_vector_table(&it->fb, g->tensors, g->tensors_count, (uint32_t)t);
}

/* Every scale finite and positive: kernels divide by scales and turn their ratios into
 * fixed-point multipliers, which NaN, infinity, zero or a negative value make undefined. */
static int scales_valid(tflm_interpreter_t *it, uint32_t tensor) {
  uint32_t quant = tflm_fb_table(&it->fb, tensor, TENSOR_QUANTIZATION), count, i;
  uint32_t scales = tflm_fb_vector(&it->fb, quant, QUANT_SCALE, 4, &count);
  for (i = 0; i < count; ++i) {
    uint32_t bits = tflm_fb_read_u32(it->fb.data + scales + 4u * i);
    /* Sign clear, not zero, exponent not all ones (infinity or NaN). */
    if ((bits >> 31) != 0 || bits == 0 || (bits & 0x7F800000u) == 0x7F800000u) return 0;
  }
  return 1;
}

/* Alignment a kernel needs to read the tensor's elements in place (at most 8). */
static uint32_t element_alignment(int32_t type) {
  switch (type) {
    case TFLM_TYPE_INT16: case TFLM_TYPE_UINT16: case TFLM_TYPE_FLOAT16: return 2;
    case TFLM_TYPE_FLOAT32: case TFLM_TYPE_INT32: case TFLM_TYPE_UINT32: return 4;
    case TFLM_TYPE_INT64: case TFLM_TYPE_UINT64: case TFLM_TYPE_FLOAT64:
    case TFLM_TYPE_COMPLEX64: return 8;
    default: return 1;
  }
}

/* Constants are read in place: their address (the model's own placement included) must
 * suit their type, or loads fault on Cortex-M0 and are undefined in C everywhere. */
static int constant_aligned(tflm_interpreter_t *it, uint32_t tensor) {
  uint32_t data = tflm_model_constant_data(it, tensor);
  uint32_t align = element_alignment(tflm_fb_int(&it->fb, tensor, TENSOR_TYPE, 1, 0));
  return data == 0 || ((uintptr_t)(it->fb.data + data) & (align - 1u)) == 0;
}

/* Marks the tensors that hold data before the first operator runs: constants, variables
 * and the graph's inputs. */
static tflm_status_t mark_fixed(tflm_interpreter_t *it, const tflm_model_graph_t *g,
                                uint8_t *written) {
  uint32_t i;
  for (i = 0; i < g->tensors_count; ++i) {
    uint32_t tensor = graph_tensor(it, g, (int32_t)i);
    if (!scales_valid(it, tensor)) {
      return tflm_model_reject(TFLM_ERR_MODEL_SCALE, "tensor", (int32_t)i);
    }
    if (!constant_aligned(it, tensor)) {
      return tflm_model_reject(TFLM_ERR_MODEL_ALIGNMENT, "tensor", (int32_t)i);
    }
    if (tflm_model_constant_data(it, tensor) != 0 ||
        tflm_fb_int(&it->fb, tensor, TENSOR_IS_VARIABLE, 1, 0) != 0) {
      set_bit(written, (int32_t)i);
    }
  }
  for (i = 0; i < g->inputs_count; ++i) {
    int32_t t = tflm_model_int_at(it, g->inputs, i);
    if (is_set(written, t)) {
      return tflm_model_reject(TFLM_ERR_MODEL_TWO_PRODUCERS, "graph input", t);
    }
    set_bit(written, t);
  }
  return TFLM_OK;
}

/* Operator `index` reads only written tensors (-1: an absent optional input) and writes
 * only tensors nothing has written yet. */
static tflm_status_t check_dataflow(tflm_interpreter_t *it, const tflm_model_graph_t *g,
                                    int32_t index, uint8_t *written) {
  uint32_t op = tflm_fb_vector_table(&it->fb, g->operators, g->operators_count, (uint32_t)index);
  uint32_t count, i, inputs = tflm_fb_vector(&it->fb, op, OPERATOR_INPUTS, 4, &count);
  uint32_t outputs_count, outputs = tflm_fb_vector(&it->fb, op, OPERATOR_OUTPUTS, 4,
                                                   &outputs_count);
  for (i = 0; i < count; ++i) {
    int32_t t = tflm_model_int_at(it, inputs, i);
    if (t >= 0 && !is_set(written, t)) {
      return tflm_model_reject(TFLM_ERR_MODEL_UNWRITTEN_INPUT, "operator", index);
    }
  }
  if (outputs_count == 0) return tflm_model_reject(TFLM_ERR_MODEL_NO_OUTPUTS, "operator", index);
  for (i = 0; i < outputs_count; ++i) {
    int32_t t = tflm_model_int_at(it, outputs, i);
    if (t < 0) continue; /* an output the operator does not produce */
    if (is_set(written, t)) {
      return tflm_model_reject(TFLM_ERR_MODEL_TWO_PRODUCERS, "operator", index);
    }
    set_bit(written, t);
  }
  return TFLM_OK;
}

static tflm_status_t check_outputs(tflm_interpreter_t *it, const tflm_model_graph_t *g,
                                   const uint8_t *written) {
  uint32_t i;
  for (i = 0; i < g->outputs_count; ++i) {
    int32_t t = tflm_model_int_at(it, g->outputs, i);
    if (!is_set(written, t)) {
      return tflm_model_reject(TFLM_ERR_MODEL_UNWRITTEN_INPUT, "graph output", t);
    }
  }
  return TFLM_OK;
}

tflm_status_t tflm_model_check_graph(tflm_interpreter_t *it, const tflm_model_graph_t *g) {
  const uint32_t mark = tflm_arena_mark(&it->arena), bytes = (g->tensors_count + 7u) / 8u;
  uint8_t *written = (uint8_t *)tflm_arena_alloc_temp(&it->arena, bytes);
  tflm_status_t status = TFLM_OK;
  uint32_t i;
  if (written == NULL && bytes > 0) return TFLM_ERR_ARENA_TOO_SMALL;
  for (i = 0; i < bytes; ++i) written[i] = 0;
  status = mark_fixed(it, g, written);
  for (i = 0; status == TFLM_OK && i < g->operators_count; ++i) {
    status = check_dataflow(it, g, (int32_t)i, written);
  }
  if (status == TFLM_OK) status = check_outputs(it, g, written);
  tflm_arena_reset_temp(&it->arena, mark);
  return status;
}
