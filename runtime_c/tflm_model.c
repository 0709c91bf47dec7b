#include "tflm_model.h"

#include <stddef.h>

const uint8_t *tflm_model_at(const tflm_interpreter_t *it, uint32_t position) {
  if (position < it->fb.size || it->weights == NULL) return it->fb.data + position;
  return it->weights + (position - it->weights_start);
}

int32_t tflm_model_int_at(const tflm_interpreter_t *it, uint32_t elements, uint32_t i) {
  return (int32_t)tflm_fb_read_u32(tflm_model_at(it, elements + 4u * i));
}

int32_t tflm_model_tensor_subgraph(const tflm_interpreter_t *it, int32_t t) {
  int32_t s = (int32_t)it->subgraphs_count - 1;
  while (s > 0 && (uint32_t)t < it->subgraphs[s].first_tensor) --s;
  return s;
}

int32_t tflm_model_node_subgraph(const tflm_interpreter_t *it, int32_t node) {
  int32_t s = (int32_t)it->subgraphs_count - 1;
  while (s > 0 && (uint32_t)node < it->subgraphs[s].first_node) --s;
  return s;
}

uint32_t tflm_model_tensor(tflm_interpreter_t *it, int32_t t) {
  const tflm_subgraph_t *g;
  if (t < 0 || (uint32_t)t >= it->tensors_count) return 0;
  g = &it->subgraphs[tflm_model_tensor_subgraph(it, t)];
  return tflm_fb_vector_table(&it->fb, g->tensors, g->tensors_count, (uint32_t)t - g->first_tensor);
}

uint32_t tflm_model_operator(tflm_interpreter_t *it, int32_t index) {
  const tflm_subgraph_t *g;
  if (index < 0 || (uint32_t)index >= it->operators_count) return 0;
  g = &it->subgraphs[tflm_model_node_subgraph(it, index)];
  return tflm_fb_vector_table(&it->fb, g->operators, g->operators_count,
                              (uint32_t)index - g->first_node);
}

uint32_t tflm_model_tensor_bytes(tflm_interpreter_t *it, uint32_t tensor) {
  uint32_t count, i;
  uint32_t elements = (uint32_t)tflm_type_size(tflm_fb_int(&it->fb, tensor, TENSOR_TYPE, 1, 0));
  uint32_t shape = tflm_fb_vector(&it->fb, tensor, TENSOR_SHAPE, 4, &count);
  for (i = 0; i < count; ++i) {
    int32_t dim = tflm_model_int_at(it, shape, i);
    if (dim < 0 || (dim > 0 && elements > 0x7FFFFFFFu / (uint32_t)dim)) return 0x7FFFFFFFu;
    elements *= (uint32_t)dim;
  }
  return elements;
}

/* A Buffer's 64-bit offset or size field: its low word, 0 when absent, TFLM_NOWHERE when
 * the high word is set (beyond anything the runtime addresses). */
static uint32_t buffer_word(tflm_interpreter_t *it, uint32_t buffer, int32_t slot) {
  uint32_t position = tflm_fb_field(&it->fb, buffer, slot, 8);
  if (position == 0) return 0;
  if (tflm_fb_read_u32(it->fb.data + position + 4u) != 0) return TFLM_NOWHERE;
  return tflm_fb_read_u32(it->fb.data + position);
}

/* True when `length` bytes from `position` lie in the model or in the separate weights. */
static int located_in_range(const tflm_interpreter_t *it, uint32_t position, uint32_t length) {
  uint32_t start = it->weights_start;
  if (position >= TFLM_IN_MODEL) return 0; /* positions carry TFLM_IN_MODEL as a flag */
  if (position <= it->fb.size && length <= it->fb.size - position) return 1;
  return it->weights != NULL && position >= start && position - start <= it->weights_size &&
         length <= it->weights_size - (position - start);
}

/* Position and length of a buffer's bytes: its inline data, or the (offset, size) fields
 * that locate them after the flatbuffer (models over 2 GB) or in the separate weights
 * (tflm_interpreter_init_separate).  0 (length 0) when it has none or they lie out of
 * range. */
static uint32_t buffer_bytes(tflm_interpreter_t *it, uint32_t buffer, uint32_t *length) {
  uint32_t data = tflm_fb_vector(&it->fb, buffer, BUFFER_DATA, 1, length), offset;
  if (data != 0 && *length > 0) return data;
  offset = buffer_word(it, buffer, BUFFER_OFFSET);
  *length = buffer_word(it, buffer, BUFFER_SIZE);
  if (offset > 1 && *length > 0 && located_in_range(it, offset, *length)) return offset;
  *length = 0;
  return 0;
}

/* The table of a tensor's buffer, 0 for buffer 0 (none) or an index out of range. */
static uint32_t tensor_buffer(tflm_interpreter_t *it, uint32_t tensor) {
  uint32_t index = (uint32_t)tflm_fb_int(&it->fb, tensor, TENSOR_BUFFER, 4, 0);
  if (index == 0 || index >= it->buffers_count) return 0;
  return tflm_fb_vector_table(&it->fb, it->buffers, it->buffers_count, index);
}

uint32_t tflm_model_constant_data(tflm_interpreter_t *it, uint32_t tensor) {
  uint32_t length;
  return buffer_bytes(it, tensor_buffer(it, tensor), &length);
}

uint32_t tflm_model_constant_length(tflm_interpreter_t *it, uint32_t tensor) {
  uint32_t length;
  buffer_bytes(it, tensor_buffer(it, tensor), &length);
  return length;
}

/* With separate weights, every buffer whose (offset, size) fields locate bytes must find
 * them in the model or the weights, metadata included: weights too short or misplaced are
 * refused at load, never read past their end nor taken for a non-constant tensor or absent
 * metadata. */
static tflm_status_t check_buffers(tflm_interpreter_t *it) {
  uint32_t i, length;
  for (i = 0; i < it->buffers_count && !it->fb.corrupt; ++i) {
    uint32_t buffer = tflm_fb_vector_table(&it->fb, it->buffers, it->buffers_count, i);
    if (buffer_bytes(it, buffer, &length) == 0 && buffer_word(it, buffer, BUFFER_OFFSET) > 1 &&
        buffer_word(it, buffer, BUFFER_SIZE) > 0) {
      return tflm_model_reject(TFLM_ERR_MODEL_WEIGHTS, "buffer", (int32_t)i);
    }
  }
  return it->fb.corrupt ? tflm_model_reject(TFLM_ERR_MODEL, "buffer", (int32_t)i) : TFLM_OK;
}

/* True when the tensor's buffer locates bytes (offset and size set) lying neither in the
 * model nor in the weights: e.g. a mini flatbuffer given without its weights. */
static int constant_outside(tflm_interpreter_t *it, uint32_t tensor) {
  uint32_t buffer = tensor_buffer(it, tensor);
  return buffer != 0 && tflm_model_constant_data(it, tensor) == 0 &&
         buffer_word(it, buffer, BUFFER_OFFSET) > 1 && buffer_word(it, buffer, BUFFER_SIZE) > 0;
}

/* Zero points must lie in their type's range: kernels add them to accumulators, and a
 * corrupt one would overflow the arithmetic. */
static int zero_points_valid(tflm_interpreter_t *it, uint32_t tensor, uint32_t quant) {
  int32_t type = tflm_fb_int(&it->fb, tensor, TENSOR_TYPE, 1, 0), low, high;
  uint32_t count, i, zero_points = tflm_fb_vector(&it->fb, quant, QUANT_ZERO_POINT, 8, &count);
  if (type == TFLM_TYPE_INT8) {
    low = -128, high = 127;
  } else if (type == TFLM_TYPE_UINT8) {
    low = 0, high = 255;
  } else if (type == TFLM_TYPE_INT16) {
    low = -32768, high = 32767;
  } else {
    return 1;
  }
  for (i = 0; i < count; ++i) {
    const uint8_t *p = it->fb.data + zero_points + 8u * i;
    int32_t value = (int32_t)tflm_fb_read_u32(p);
    uint32_t upper = tflm_fb_read_u32(p + 4);
    if (upper != (value < 0 ? 0xFFFFFFFFu : 0u) || value < low || value > high) return 0;
  }
  return 1;
}

/* Every dimension non-negative (TFLM_ERR_MODEL otherwise) and the element count and byte
 * size below 2^31 (TFLM_ERR_MODEL_TOO_LARGE): kernels multiply dims in int32_t. */
static tflm_status_t check_shape(tflm_interpreter_t *it, uint32_t tensor) {
  uint32_t count, i, shape = tflm_fb_vector(&it->fb, tensor, TENSOR_SHAPE, 4, &count);
  uint32_t elements = 1;
  for (i = 0; i < count; ++i) {
    int32_t dim = tflm_model_int_at(it, shape, i);
    if (dim < 0) return TFLM_ERR_MODEL;
    if (dim > 0 && elements > 0x7FFFFFFFu / (uint32_t)dim) return TFLM_ERR_MODEL_TOO_LARGE;
    elements *= (uint32_t)dim;
  }
  /* tflm_model_tensor_bytes saturates at 2^31 - 1 */
  return tflm_model_tensor_bytes(it, tensor) >= 0x7FFFFFFFu ? TFLM_ERR_MODEL_TOO_LARGE : TFLM_OK;
}

static tflm_status_t check_tensor(tflm_interpreter_t *it, int32_t t) {
  uint32_t tensor = tflm_model_tensor(it, t), count, quant;
  int32_t buffer;
  tflm_status_t status;
  if (tensor == 0) return TFLM_ERR_MODEL;
  tflm_fb_vector(&it->fb, tensor, TENSOR_SHAPE, 4, &count);
  if (count > TFLM_MAX_DIMS) return TFLM_ERR_BAD_SHAPE;
  status = check_shape(it, tensor);
  if (status != TFLM_OK) return it->fb.corrupt ? TFLM_ERR_MODEL : status;
  buffer = tflm_fb_int(&it->fb, tensor, TENSOR_BUFFER, 4, 0);
  if (buffer < 0 || (uint32_t)buffer >= it->buffers_count) return TFLM_ERR_MODEL;
  quant = tflm_fb_table(&it->fb, tensor, TENSOR_QUANTIZATION);
  if (quant != 0) {
    uint32_t scales, zero_points;
    tflm_fb_vector(&it->fb, quant, QUANT_SCALE, 4, &scales);
    tflm_fb_vector(&it->fb, quant, QUANT_ZERO_POINT, 8, &zero_points);
    if (zero_points != 0 && zero_points != scales) return TFLM_ERR_MODEL;
    if (!zero_points_valid(it, tensor, quant)) return TFLM_ERR_MODEL;
  }
  if (constant_outside(it, tensor)) return it->fb.corrupt ? TFLM_ERR_MODEL : TFLM_ERR_MODEL_WEIGHTS;
  if (tflm_model_constant_data(it, tensor) != 0 &&
      tflm_model_constant_length(it, tensor) < tflm_model_tensor_bytes(it, tensor) &&
      !tflm_model_compressed(it, t)) {
    return it->fb.corrupt ? TFLM_ERR_MODEL : TFLM_ERR_MODEL_CONSTANT_SIZE;
  }
  return it->fb.corrupt ? TFLM_ERR_MODEL : TFLM_OK;
}

/* Operator tensor indices are local to the operator's subgraph (-1: omitted). */
static int tensor_indices_valid(tflm_interpreter_t *it, uint32_t table, int32_t slot,
                                uint32_t tensors_count) {
  uint32_t count, i, elements = tflm_fb_vector(&it->fb, table, slot, 4, &count);
  for (i = 0; i < count; ++i) {
    int32_t t = tflm_model_int_at(it, elements, i);
    if (t < -1 || t >= (int32_t)tensors_count) return 0;
  }
  return 1;
}

static int graph_io_valid(tflm_interpreter_t *it, uint32_t elements, uint32_t count,
                          uint32_t tensors_count) {
  uint32_t i;
  for (i = 0; i < count; ++i) {
    int32_t t = tflm_model_int_at(it, elements, i);
    if (t < 0 || t >= (int32_t)tensors_count) return 0;
  }
  return 1;
}

static tflm_status_t check_operator(tflm_interpreter_t *it, int32_t index) {
  uint32_t op = tflm_model_operator(it, index), options, length;
  uint32_t local_tensors = it->subgraphs[tflm_model_node_subgraph(it, index)].tensors_count;
  int32_t opcode;
  if (op == 0) return TFLM_ERR_MODEL;
  opcode = tflm_fb_int(&it->fb, op, OPERATOR_OPCODE_INDEX, 4, 0);
  if (opcode < 0 || (uint32_t)opcode >= it->opcodes_count) return TFLM_ERR_MODEL;
  if (!tensor_indices_valid(it, op, OPERATOR_INPUTS, local_tensors)) return TFLM_ERR_MODEL;
  if (!tensor_indices_valid(it, op, OPERATOR_OUTPUTS, local_tensors)) return TFLM_ERR_MODEL;
  options = tflm_fb_table(&it->fb, op, OPERATOR_BUILTIN_OPTIONS);
  if (options != 0) tflm_fb_field(&it->fb, options, 0, 0); /* validates its vtable */
  tflm_fb_vector(&it->fb, op, OPERATOR_CUSTOM_OPTIONS, 1, &length);
  tflm_fb_vector_table(&it->fb, it->opcodes, it->opcodes_count, (uint32_t)opcode);
  return it->fb.corrupt ? TFLM_ERR_MODEL : TFLM_OK;
}

/* Reads subgraph s's vectors into *g, numbering its tensors and operators after those of
 * the subgraphs before it. */
static tflm_status_t read_subgraph(tflm_interpreter_t *it, uint32_t subgraphs, uint32_t s,
                                   tflm_subgraph_t *g) {
  uint32_t table = tflm_fb_vector_table(&it->fb, subgraphs, it->subgraphs_count, s);
  if (table == 0) return TFLM_ERR_MODEL;
  g->tensors = tflm_fb_vector(&it->fb, table, SUBGRAPH_TENSORS, 4, &g->tensors_count);
  g->operators = tflm_fb_vector(&it->fb, table, SUBGRAPH_OPERATORS, 4, &g->operators_count);
  g->inputs = tflm_fb_vector(&it->fb, table, SUBGRAPH_INPUTS, 4, &g->inputs_count);
  g->outputs = tflm_fb_vector(&it->fb, table, SUBGRAPH_OUTPUTS, 4, &g->outputs_count);
  g->first_tensor = it->tensors_count;
  g->first_node = it->operators_count;
  /* Global counts stay below 2^15: the planner keeps steps and indices in int16. */
  if (it->fb.corrupt || g->tensors_count > 0x7FFFu - it->tensors_count ||
      g->operators_count > 0x7FFFu - it->operators_count) {
    return TFLM_ERR_MODEL;
  }
  if (!graph_io_valid(it, g->inputs, g->inputs_count, g->tensors_count) ||
      !graph_io_valid(it, g->outputs, g->outputs_count, g->tensors_count)) {
    return TFLM_ERR_MODEL;
  }
  it->tensors_count += g->tensors_count;
  it->operators_count += g->operators_count;
  return TFLM_OK;
}

/* Finds every subgraph; their positions go to the arena tail. */
static tflm_status_t find_subgraphs(tflm_interpreter_t *it) {
  uint32_t root = tflm_fb_root(&it->fb, "TFL3"), subgraphs, s;
  tflm_status_t status = TFLM_OK;
  if (root == 0) return TFLM_ERR_MODEL;
  if (tflm_fb_int(&it->fb, root, MODEL_VERSION, 4, 0) != 3) return TFLM_ERR_MODEL_VERSION;
  subgraphs = tflm_fb_vector(&it->fb, root, MODEL_SUBGRAPHS, 4, &it->subgraphs_count);
  if (it->fb.corrupt || it->subgraphs_count == 0 || it->subgraphs_count > 0x7FFFu) {
    return TFLM_ERR_MODEL;
  }
  it->opcodes = tflm_fb_vector(&it->fb, root, MODEL_OPERATOR_CODES, 4, &it->opcodes_count);
  it->buffers = tflm_fb_vector(&it->fb, root, MODEL_BUFFERS, 4, &it->buffers_count);
  it->subgraphs = (tflm_subgraph_t *)tflm_arena_alloc_tail(
      &it->arena, (uint32_t)sizeof(tflm_subgraph_t) * it->subgraphs_count);
  if (it->subgraphs == NULL) return TFLM_ERR_ARENA_TOO_SMALL;
  for (s = 0; status == TFLM_OK && s < it->subgraphs_count; ++s) {
    status = read_subgraph(it, subgraphs, s, &it->subgraphs[s]);
  }
  it->inputs = it->subgraphs[0].inputs;
  it->inputs_count = it->subgraphs[0].inputs_count;
  it->outputs = it->subgraphs[0].outputs;
  it->outputs_count = it->subgraphs[0].outputs_count;
  return it->fb.corrupt ? TFLM_ERR_MODEL : status;
}

tflm_status_t tflm_model_open(tflm_interpreter_t *it, const void *model, uint32_t size) {
  tflm_status_t status;
  int32_t i;
  it->fb.data = (const uint8_t *)model;
  it->fb.size = size;
  it->fb.corrupt = model == NULL;
  status = model == NULL ? TFLM_ERR_MODEL : find_subgraphs(it);
  /* Only with separate weights: a whole model's unused buffers were never read. */
  if (status == TFLM_OK && it->weights != NULL) status = check_buffers(it);
  for (i = 0; status == TFLM_OK && i < (int32_t)it->tensors_count; ++i) {
    status = check_tensor(it, i);
    if (status != TFLM_OK) tflm_model_reject(status, "tensor", i);
  }
  for (i = 0; status == TFLM_OK && i < (int32_t)it->operators_count; ++i) {
    status = check_operator(it, i);
    if (status != TFLM_OK) tflm_model_reject(status, "operator", i);
  }
  /* Each subgraph against its own inputs, in its local tensor numbering. */
  for (i = 0; status == TFLM_OK && i < (int32_t)it->subgraphs_count; ++i) {
    status = tflm_model_check_graph(it, &it->subgraphs[i]);
  }
  return status;
}

void *tflm_model_tensor_data(tflm_interpreter_t *it, int32_t t) {
  uint32_t location;
  if (t < 0 || it->tensor_location == NULL) return NULL;
  location = it->tensor_location[t];
  if (location == TFLM_NOWHERE) return NULL;
  if (location & TFLM_IN_MODEL) return (void *)tflm_model_at(it, location & ~TFLM_IN_MODEL);
  return it->arena.base + location;
}

static void view_quantization(tflm_interpreter_t *it, uint32_t tensor, tflm_tensor_t *view) {
  uint32_t quant = tflm_fb_table(&it->fb, tensor, TENSOR_QUANTIZATION), count, zero_count;
  uint32_t scales = tflm_fb_vector(&it->fb, quant, QUANT_SCALE, 4, &count);
  uint32_t zero_points = tflm_fb_vector(&it->fb, quant, QUANT_ZERO_POINT, 8, &zero_count);
  view->nscales = (int32_t)count;
  view->scales_le = scales != 0 ? it->fb.data + scales : NULL;
  view->zero_points_le = zero_points != 0 && zero_count > 0 ? it->fb.data + zero_points : NULL;
  view->quantized_dimension = tflm_fb_int(&it->fb, quant, QUANT_DIMENSION, 4, 0);
  view->scale = count > 0 ? tflm_tensor_scale(view, 0) : 0.0f;
  view->zero_point = view->zero_points_le != NULL ? tflm_tensor_zero_point(view, 0) : 0;
}

tflm_status_t tflm_model_view(tflm_interpreter_t *it, int32_t t, tflm_tensor_t *view) {
  uint32_t tensor, count, shape, i;
  view->data = NULL;
  view->ndims = 0;
  view->bytes = 0;
  if (t < 0) return TFLM_OK;
  tensor = tflm_model_tensor(it, t);
  if (tensor == 0) return TFLM_ERR_BAD_INDEX;
  shape = tflm_fb_vector(&it->fb, tensor, TENSOR_SHAPE, 4, &count);
  for (i = 0; i < count && i < TFLM_MAX_DIMS; ++i) view->dims[i] = tflm_model_int_at(it, shape, i);
  view->ndims = (int32_t)i;
  view->type = tflm_fb_int(&it->fb, tensor, TENSOR_TYPE, 1, 0);
  view->bytes = (int32_t)tflm_model_tensor_bytes(it, tensor);
  view->is_variable = (uint8_t)(tflm_fb_int(&it->fb, tensor, TENSOR_IS_VARIABLE, 1, 0) != 0);
  view->is_constant = (uint8_t)(tflm_model_constant_data(it, tensor) != 0);
  view_quantization(it, tensor, view);
  view->data = tflm_model_tensor_data(it, t);
  if (view->data == NULL && view->is_constant) {
    view->data = (void *)tflm_model_at(it, tflm_model_constant_data(it, tensor));
  }
  return TFLM_OK;
}

int32_t tflm_model_builtin_code(tflm_interpreter_t *it, uint32_t op, int32_t *version,
                                const uint8_t **custom_name, uint32_t *custom_name_length) {
  int32_t index = tflm_fb_int(&it->fb, op, OPERATOR_OPCODE_INDEX, 4, 0);
  uint32_t code = tflm_fb_vector_table(&it->fb, it->opcodes, it->opcodes_count, (uint32_t)index);
  int32_t deprecated = tflm_fb_int(&it->fb, code, OPCODE_DEPRECATED_BUILTIN, 1, 0);
  int32_t builtin = tflm_fb_int(&it->fb, code, OPCODE_BUILTIN, 4, 0);
  uint32_t name = tflm_fb_string(&it->fb, code, OPCODE_CUSTOM_CODE, custom_name_length);
  *custom_name = name != 0 ? it->fb.data + name : NULL;
  *version = tflm_fb_int(&it->fb, code, OPCODE_VERSION, 4, 1);
  /* Schema 3a: the larger of the two fields is the real code (old models use byte one). */
  return builtin > deprecated ? builtin : deprecated;
}

int32_t tflm_partition_options_subgraph(const uint8_t *options, uint32_t size) {
  uint32_t index;
  if (options == NULL || size != 8u) return -1;
  if (options[0] != 'T' || options[1] != 'G' || options[2] != 'P' || options[3] != '1') return -1;
  index = (uint32_t)options[4] | ((uint32_t)options[5] << 8) | ((uint32_t)options[6] << 16) |
          ((uint32_t)options[7] << 24);
  return index > 0x7FFFu ? -1 : (int32_t)index;
}

/* An accelerator op (CUSTOM with partition options) runs one subgraph: 1, 0 or -1. */
static int32_t partition_called(tflm_interpreter_t *it, uint32_t op, int32_t called[2]) {
  uint32_t length, position = tflm_fb_vector(&it->fb, op, OPERATOR_CUSTOM_OPTIONS, 1, &length);
  if (position == 0) return 0;
  called[0] = tflm_partition_options_subgraph(it->fb.data + position, length);
  if (called[0] < 0) return 0;
  return (uint32_t)called[0] < it->subgraphs_count ? 1 : -1;
}

int32_t tflm_model_called_subgraphs(tflm_interpreter_t *it, int32_t node, int32_t called[2]) {
  uint32_t op = tflm_model_operator(it, node), length, options;
  const uint8_t *name;
  int32_t version, code = tflm_model_builtin_code(it, op, &version, &name, &length), count, i;
  /* IfOptions and WhileOptions hold two indices in slots 0 and 1, CallOnceOptions one. */
  if (code == TFLM_BUILTIN_IF || code == TFLM_BUILTIN_WHILE) {
    count = 2;
  } else if (code == TFLM_BUILTIN_CALL_ONCE) {
    count = 1;
  } else if (code == TFLM_BUILTIN_CUSTOM) {
    return partition_called(it, op, called);
  } else {
    return 0;
  }
  options = tflm_fb_table(&it->fb, op, OPERATOR_BUILTIN_OPTIONS);
  for (i = 0; i < count; ++i) {
    called[i] = tflm_fb_int(&it->fb, options, i, 4, 0);
    if (called[i] < 0 || (uint32_t)called[i] >= it->subgraphs_count) return -1;
  }
  return count;
}

/* True when the string field equals `text` (NUL-terminated). */
static int string_equals(tflm_interpreter_t *it, uint32_t table, int32_t slot, const char *text) {
  uint32_t length, i, position = tflm_fb_string(&it->fb, table, slot, &length);
  if (position == 0) return 0;
  for (i = 0; i < length; ++i) {
    if (text[i] == '\0' || (uint8_t)text[i] != it->fb.data[position + i]) return 0;
  }
  return text[length] == '\0';
}

/* Data position and byte length of the model's metadata buffer named `name`, or 0. */
static uint32_t find_metadata(tflm_interpreter_t *it, const char *name, uint32_t *length) {
  uint32_t root = tflm_fb_root(&it->fb, 0), count, i;
  uint32_t entries = tflm_fb_vector(&it->fb, root, MODEL_METADATA, 4, &count);
  *length = 0;
  for (i = 0; i < count; ++i) {
    uint32_t entry = tflm_fb_vector_table(&it->fb, entries, count, i), buffer;
    if (!string_equals(it, entry, METADATA_NAME, name)) continue;
    buffer = (uint32_t)tflm_fb_int(&it->fb, entry, METADATA_BUFFER, 4, 0);
    if (buffer >= it->buffers_count) return 0;
    buffer = tflm_fb_vector_table(&it->fb, it->buffers, it->buffers_count, buffer);
    return buffer_bytes(it, buffer, length);
  }
  return 0;
}

/* The "tflm_gen.compress" words (version 1, count K, K global tensor indices, then the
 * table's byte count T and its T bytes) and K; 0 when absent or K does not fit. */
static uint32_t compress_words(tflm_interpreter_t *it, uint32_t *length, uint32_t *count) {
  uint32_t data = find_metadata(it, "tflm_gen.compress", length);
  if (data == 0 || *length < 8u || tflm_model_int_at(it, data, 0) != 1) return 0;
  *count = (uint32_t)tflm_model_int_at(it, data, 1);
  return *count <= *length / 4u - 2u ? data : 0;
}

int tflm_model_compressed(tflm_interpreter_t *it, int32_t t) {
  uint32_t length, count = 0, i, data = compress_words(it, &length, &count);
  for (i = 0; data != 0 && i < count; ++i) {
    if (tflm_model_int_at(it, data, 2u + i) == t) return 1;
  }
  return 0;
}

uint32_t tflm_model_compress_table(tflm_interpreter_t *it, uint32_t *bytes) {
  uint32_t length, count = 0, data = compress_words(it, &length, &count), words;
  *bytes = 0;
  if (data == 0 || (words = length / 4u) < count + 3u) return 0;
  *bytes = (uint32_t)tflm_model_int_at(it, data, 2u + count);
  if (*bytes == 0 || *bytes > length - 4u * (count + 3u)) {
    *bytes = 0;
    return 0;
  }
  return data + 4u * (count + 3u);
}

uint32_t tflm_model_offline_plan(tflm_interpreter_t *it) {
  uint32_t length, data = find_metadata(it, "OfflineMemoryAllocation", &length);
  /* Words: version 1, subgraph 0, tensor count, then one offset per tensor of every
   * subgraph in order (TFLM's format for multi-subgraph models). */
  if (data == 0 || length < 12u + 4u * it->tensors_count ||
      tflm_model_int_at(it, data, 0) != 1 || tflm_model_int_at(it, data, 1) != 0 ||
      tflm_model_int_at(it, data, 2) != (int32_t)it->tensors_count) {
    return 0;
  }
  return data + 12u;
}

/* True when every record of the requantisation words lies inside them and every shift
 * is one the kernels can apply (|shift| <= 31); a corrupt table is then never used. */
static int requant_records_valid(tflm_interpreter_t *it, uint32_t data, uint32_t words) {
  uint32_t op, c;
  for (op = 0; op < it->operators_count; ++op) {
    uint32_t record = (uint32_t)tflm_model_int_at(it, data, 2u + op), count;
    if (record == 0) continue;
    if (record < 2u + it->operators_count || record >= words) return 0;
    count = (uint32_t)tflm_model_int_at(it, data, record);
    if (count > (words - record - 1u) / 2u) return 0;
    for (c = 0; c < count; ++c) {
      int32_t shift = tflm_model_int_at(it, data, record + 1u + count + c);
      if (shift < -31 || shift > 31) return 0;
    }
  }
  return 1;
}

uint32_t tflm_model_requant(tflm_interpreter_t *it, uint32_t *words) {
  uint32_t length, data = find_metadata(it, "tflm_gen.requant", &length);
  *words = length / 4u;
  /* Words: version 1, operator count, one record offset per operator (0: none). Kernels
   * read the records through int32 pointers, so they must be 4-byte aligned. */
  if (data == 0 || *words < 2u + it->operators_count || tflm_model_int_at(it, data, 0) != 1 ||
      tflm_model_int_at(it, data, 1) != (int32_t)it->operators_count ||
      ((uintptr_t)tflm_model_at(it, data) & 3u) != 0 || !requant_records_valid(it, data, *words)) {
    *words = 0;
    return 0;
  }
  return data;
}

/* True when every record of the layout words lies inside them. */
static int layout_records_valid(tflm_interpreter_t *it, uint32_t data, uint32_t words) {
  uint32_t op;
  for (op = 0; op < it->operators_count; ++op) {
    uint32_t record = (uint32_t)tflm_model_int_at(it, data, 2u + op);
    if (record == 0) continue;
    if (record < 2u + it->operators_count || record >= words) return 0;
    if ((uint32_t)tflm_model_int_at(it, data, record) > words - record - 1u) return 0;
  }
  return 1;
}

uint32_t tflm_model_layout(tflm_interpreter_t *it, uint32_t *words) {
  uint32_t length, data = find_metadata(it, "tflm_gen.layout", &length);
  *words = length / 4u;
  /* Words: version 1, operator count, one record offset per operator (0: none); a record
   * is its length in words, then that many words.  Kernels read records through int32
   * pointers, so they must be 4-byte aligned. */
  if (data == 0 || *words < 2u + it->operators_count || tflm_model_int_at(it, data, 0) != 1 ||
      tflm_model_int_at(it, data, 1) != (int32_t)it->operators_count ||
      ((uintptr_t)tflm_model_at(it, data) & 3u) != 0 || !layout_records_valid(it, data, *words)) {
    *words = 0;
    return 0;
  }
  return data;
}

uint32_t tflm_model_stage(tflm_interpreter_t *it, uint32_t *words) {
  uint32_t length, data = find_metadata(it, "tflm_gen.stage", &length);
  *words = length / 4u;
  if (data == 0 || ((uintptr_t)tflm_model_at(it, data) & 3u) != 0) *words = 0;
  return *words != 0 ? data : 0;
}
