/* Reading the TFLite schema in place: positions of every subgraph's tables and views of
 * their tensors, by global tensor and operator index (see tflm_subgraph_t).  Private to the
 * runtime (kernels use tflm_kernel.h). */
#ifndef TFLM_MODEL_H
#define TFLM_MODEL_H

#include "tflm_interpreter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Field slots of the TFLite schema tables the runtime reads. */
enum {
  MODEL_VERSION = 0, MODEL_OPERATOR_CODES = 1, MODEL_SUBGRAPHS = 2, MODEL_BUFFERS = 4,
  MODEL_METADATA = 6, METADATA_NAME = 0, METADATA_BUFFER = 1,
  SUBGRAPH_TENSORS = 0, SUBGRAPH_INPUTS = 1, SUBGRAPH_OUTPUTS = 2, SUBGRAPH_OPERATORS = 3,
  TENSOR_SHAPE = 0, TENSOR_TYPE = 1, TENSOR_BUFFER = 2, TENSOR_QUANTIZATION = 4,
  TENSOR_IS_VARIABLE = 5,
  QUANT_SCALE = 2, QUANT_ZERO_POINT = 3, QUANT_DIMENSION = 6,
  OPERATOR_OPCODE_INDEX = 0, OPERATOR_INPUTS = 1, OPERATOR_OUTPUTS = 2,
  OPERATOR_BUILTIN_OPTIONS = 4, OPERATOR_CUSTOM_OPTIONS = 5,
  OPCODE_DEPRECATED_BUILTIN = 0, OPCODE_CUSTOM_CODE = 1, OPCODE_VERSION = 2, OPCODE_BUILTIN = 3,
  BUFFER_DATA = 0, BUFFER_OFFSET = 1, BUFFER_SIZE = 2
};

/* One subgraph's vectors and where its numbering starts (tflm_interpreter.h). */
typedef tflm_subgraph_t tflm_model_graph_t;

/* Checks a subgraph whose tables and indices are already bounds-checked, in its own local
 * tensor numbering, with the rules of tflm_gen/model/graph_check.py: scales finite and
 * positive (NaN, infinite or zero allowed on tensors that can only hold zeros: constants
 * whose data are all zero bytes and FILL outputs of such a value; negative never),
 * constants aligned, every operator input ready before it is read (a constant, variable,
 * graph input, tensor of no elements or earlier output; -1 = absent optional input), no
 * graph input constant or listed twice, every tensor written by at most one operator and
 * never a constant or graph input, every operator with an output (except ASSIGN_VARIABLE
 * and CALL_ONCE), every graph output ready.  Uses temporary arena memory (bitmaps with one
 * bit per tensor) and releases it.  Logged indices are global.  tflm_graph_check.c. */
tflm_status_t tflm_model_check_graph(tflm_interpreter_t *it, const tflm_model_graph_t *graph);

/* Logs why the model is refused ("tflm: model: <status text> (<what> <index>)") and
 * returns the status; silent with TFLM_NO_MESSAGES. */
tflm_status_t tflm_model_reject(tflm_status_t status, const char *what, int32_t index);

/* Finds every subgraph (their positions go to the arena tail) and checks every table the
 * runtime will read later. */
tflm_status_t tflm_model_open(tflm_interpreter_t *it, const void *model, uint32_t size);
/* Position of global tensor t's table (0 when out of range). */
uint32_t tflm_model_tensor(tflm_interpreter_t *it, int32_t t);
uint32_t tflm_model_operator(tflm_interpreter_t *it, int32_t index);
/* The subgraph that holds global tensor t (operator `node`); both already checked. */
int32_t tflm_model_tensor_subgraph(const tflm_interpreter_t *it, int32_t t);
int32_t tflm_model_node_subgraph(const tflm_interpreter_t *it, int32_t node);
/* The subgraphs operator `node` (global) runs: IF then/else, WHILE cond/body, CALL_ONCE
 * init.  Returns their count (0 for other ops); an index out of range gives -1. */
int32_t tflm_model_called_subgraphs(tflm_interpreter_t *it, int32_t node, int32_t called[2]);
/* Bytes of a tensor's data: element size times element count (0 for unknown types). */
uint32_t tflm_model_tensor_bytes(tflm_interpreter_t *it, uint32_t tensor);
/* Position (tflm_model_at) of a tensor's constant data, 0 when the tensor has none or its
 * (offset, size) fields lie outside the model and the weights. */
uint32_t tflm_model_constant_data(tflm_interpreter_t *it, uint32_t tensor);
/* Bytes of the buffer behind a constant tensor's data (the tensor already checked). */
uint32_t tflm_model_constant_length(tflm_interpreter_t *it, uint32_t tensor);
/* The address of a position: an offset in the model, or, from weights_start on (past the
 * model's end), weights_start + an offset in the separate weights (tflm_gen/weights.py). */
const uint8_t *tflm_model_at(const tflm_interpreter_t *it, uint32_t position);
/* Element i of an int32 vector at `elements` (positions from tflm_fb_vector or of metadata
 * words, which may lie in the weights). */
int32_t tflm_model_int_at(const tflm_interpreter_t *it, uint32_t elements, uint32_t i);
/* Fills a view of tensor t (data from tensor_location when placed). */
tflm_status_t tflm_model_view(tflm_interpreter_t *it, int32_t t, tflm_tensor_t *view);
/* The data address of tensor t, or NULL when it has none yet. */
void *tflm_model_tensor_data(tflm_interpreter_t *it, int32_t t);
/* Position of the offsets of an `OfflineMemoryAllocation` plan (one little-endian int32
 * per global tensor, -1 = plan online), or 0 when the model has none. */
uint32_t tflm_model_offline_plan(tflm_interpreter_t *it);
/* True when global tensor t is listed in the "tflm_gen.compress" metadata: its constant
 * data is a coded stream (kernels_c/tflm_decode.h) that only a decoding kernel reads. */
int tflm_model_compressed(tflm_interpreter_t *it, int32_t t);
/* Position and byte count of the model-wide Huffman table in that metadata, or 0. */
uint32_t tflm_model_compress_table(tflm_interpreter_t *it, uint32_t *bytes);
/* Position of the "tflm_gen.requant" metadata words and their count, or 0. */
uint32_t tflm_model_requant(tflm_interpreter_t *it, uint32_t *words);
/* Position of the "tflm_gen.layout" metadata words and their count, or 0 (format:
 * tflm_gen/layout.py; every record lies inside the words once this returns non-zero). */
uint32_t tflm_model_layout(tflm_interpreter_t *it, uint32_t *words);
/* Position of the "tflm_gen.stage" metadata words and their count, or 0 (format:
 * tflm_stage.h; its contents are checked by tflm_stage_open). */
uint32_t tflm_model_stage(tflm_interpreter_t *it, uint32_t *words);
/* The node view a kernel sees for global operator `index` (tflm_interpreter.c). */
void tflm_node_build(tflm_interpreter_t *it, int32_t index, tflm_node_t *node);
/* Builtin code, version and custom name of an operator's code. */
int32_t tflm_model_builtin_code(tflm_interpreter_t *it, uint32_t op, int32_t *version,
                                const uint8_t **custom_name, uint32_t *custom_name_length);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_MODEL_H */
