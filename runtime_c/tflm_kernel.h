/* The kernel API: what an operator implementation sees of the runtime.
 *
 * A kernel is a tflm_registration_t of function pointers.  The runtime calls, per node:
 *   init     once, may allocate persistent memory (tflm_alloc_persistent);
 *   prepare  once, after init; checks types and shapes, may allocate persistent memory and
 *            request scratch buffers (tflm_request_scratch);
 *   eval     at every invoke; fetches scratch buffers (tflm_get_scratch), never allocates;
 *   reset    when the application resets state (variable tensors are zeroed by the runtime);
 *   free     when the interpreter is torn down.
 * Any pointer may be NULL.  All memory comes from the arena; kernels never use a heap.
 *
 * Layout rule that keeps arena sizes identical on every target: structs that kernels
 * store in persistent memory use fixed-width integer and float fields only (no pointers,
 * no int/long/size_t), so their size is the same on 8-, 32- and 64-bit machines. */
#ifndef TFLM_KERNEL_H
#define TFLM_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "tflm_builtin_codes.h"
#include "tflm_compiler.h"
#include "tflm_schema.h"
#include "tflm_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFLM_MAX_DIMS 6

typedef struct tflm_context tflm_context_t; /* opaque to kernels */

/* A view of one tensor, built on demand from the flatbuffer; valid until the next invoke. */
typedef struct {
  void *data;                 /* arena (activations) or model flash (constants); NULL if absent */
  int32_t dims[TFLM_MAX_DIMS]; /* shape, outermost first */
  int32_t ndims;
  int32_t type;               /* TFLM_TYPE_* */
  int32_t bytes;              /* element size times element count */
  float scale;                /* first (or only) quantisation scale; 0 when not quantised */
  int32_t zero_point;         /* first (or only) zero point */
  int32_t nscales;            /* number of scales: 1 per-tensor, C per-channel, 0 none */
  int32_t quantized_dimension;
  const uint8_t *scales_le;   /* nscales little-endian float32 values inside the model */
  const uint8_t *zero_points_le; /* nscales little-endian int64 values inside the model */
  uint8_t is_constant;        /* data lives in the model */
  uint8_t is_variable;        /* state that persists across invokes */
} tflm_tensor_t;

/* The node being initialised, prepared or evaluated (built by the runtime per call). */
typedef struct {
  int32_t index;             /* operator index in its subgraph */
  int32_t subgraph;          /* the subgraph the operator belongs to (0: the main one) */
  int32_t version;           /* operator version from the model */
  int32_t inputs_count;
  int32_t outputs_count;
  const uint8_t *options;    /* builtin options table, NULL when absent: read with tflm_opt_* */
  const uint8_t *custom_options; /* custom op bytes, NULL when absent */
  uint32_t custom_options_size;
  void *user_data;           /* set by init or prepare (persistent memory); kept by the runtime */
  const uint8_t *inputs_;    /* private to the runtime */
  const uint8_t *outputs_;   /* private to the runtime */
  const uint8_t *model_end_; /* private: bound for option reads */
} tflm_node_t;

typedef struct {
  const char *custom_name;   /* NULL for builtin operators */
  int32_t builtin_code;      /* TFLM_BUILTIN_* (tflm_builtin_codes.h); CUSTOM for custom ops */
  tflm_status_t (*init)(tflm_context_t *ctx, tflm_node_t *node);
  tflm_status_t (*prepare)(tflm_context_t *ctx, tflm_node_t *node);
  tflm_status_t (*eval)(tflm_context_t *ctx, tflm_node_t *node);
  void (*reset)(tflm_context_t *ctx, tflm_node_t *node);
  void (*free)(tflm_context_t *ctx, tflm_node_t *node);
} tflm_registration_t;

/* --- tensors ----------------------------------------------------------------------- */

/* Fills *view for input i (output i) of the node.  An optional input the model leaves out
 * (index -1) gives TFLM_OK with view->data == NULL and ndims == 0. */
tflm_status_t tflm_node_input(tflm_context_t *ctx, const tflm_node_t *node, int32_t i,
                              tflm_tensor_t *view);
tflm_status_t tflm_node_output(tflm_context_t *ctx, const tflm_node_t *node, int32_t i,
                               tflm_tensor_t *view);
/* Data pointers only: the fast path for eval (no flatbuffer parsing).  NULL if absent. */
void *tflm_node_input_data(tflm_context_t *ctx, const tflm_node_t *node, int32_t i);
void *tflm_node_output_data(tflm_context_t *ctx, const tflm_node_t *node, int32_t i);

/* Patch-based execution (runtime_c/tflm_stage.h): while the node runs on a band of rows of
 * a stage, its input and output views hold only the band's rows, and this returns 1 with
 * *pad_top the zero rows to assume above the input view (in place of the padding the
 * tensor heights give); 0 otherwise.  Windowed kernels (convolutions, pooling) call it
 * in prepare; their windows must skip rows outside the input view, as for padding. */
int tflm_node_band_pad(tflm_context_t *ctx, const tflm_node_t *node, int32_t *pad_top);
/* A stage's reduction (runtime_c/tflm_stage.h): while the node adds one band of its input's
 * rows, returns 1 with *sums its running int32 sums (one per output element, kept from band
 * to band), *offset the input elements before the band, *first and *last whether the band
 * is the first (start the sums) and the last (write the output); 0 otherwise. */
int tflm_node_band_sum(tflm_context_t *ctx, const tflm_node_t *node, int32_t **sums,
                       int32_t *offset, int32_t *first, int32_t *last);
/* 1 when the node is a stage's reduction (its evals then take the band_sum path), already
 * in prepare: a kernel refuses there what such a node would need and it lacks. */
int tflm_node_reduces(tflm_context_t *ctx, const tflm_node_t *node);

/* Scale of channel c of a (per-channel) quantised tensor; the first scale if per-tensor. */
float tflm_tensor_scale(const tflm_tensor_t *view, int32_t c);
int32_t tflm_tensor_zero_point(const tflm_tensor_t *view, int32_t c);
/* Bytes per element of a TFLM_TYPE_*; 0 for types with no fixed size the runtime holds
 * (string, variant, int4, ...).  The one table of element sizes in C: the model's tensor
 * sizes, the constants' alignment and every kernel that moves or steps over elements read
 * it (tests/test_single_sources.py checks it against the schema's dtype table). */
int32_t tflm_type_size(int32_t type);
/* Number of elements: product of dims (1 for a scalar). */
int32_t tflm_tensor_elements(const tflm_tensor_t *view);
/* Copies src's bytes to dst (operators that pass tensors to a subgraph): tensors of
 * different byte sizes are TFLM_ERR_BAD_SHAPE, tensors sharing memory need no copy. */
tflm_status_t tflm_tensor_copy(const tflm_tensor_t *dst, const tflm_tensor_t *src);

/* Per-channel requantisation the generator precomputed into the model (metadata
 * "tflm_gen.requant"): `*channels` Q31 multipliers followed by `*channels` shifts, read in
 * place from flash.  NULL when the model carries none for this node (compute them then). */
const int32_t *tflm_node_requant(tflm_context_t *ctx, const tflm_node_t *node, int32_t *channels);

/* The node's record of the offline weight layout the generator wrote into the model
 * (metadata "tflm_gen.layout", tflm_gen/layout.py): `*words` int32 words, read in place from
 * flash, whose meaning the op's kernel and layout.py agree on (CONV_2D: kind, channels,
 * folded per-channel constants, reordered filter bytes).  NULL when the model carries none
 * for this node: the kernel then runs on the plain filter.  Validate the record's own
 * fields against the node's shapes before trusting them. */
const int32_t *tflm_node_layout(tflm_context_t *ctx, const tflm_node_t *node, int32_t *words);

/* A filter the generator compressed (metadata "tflm_gen.compress", kernels_c/tflm_decode.h). */
typedef struct {
  const void *data;     /* the coded stream: the tensor's constant data */
  uint32_t bytes;       /* its length */
  const void *table;    /* the model-wide Huffman table, NULL when the model has none */
  uint32_t table_bytes; /* its length */
} tflm_coded_t;

/* 1 and *coded filled when input i is compressed; 0 when it is not (its data is then the
 * plain tensor). */
int32_t tflm_node_coded_input(tflm_context_t *ctx, const tflm_node_t *node, int32_t i,
                              tflm_coded_t *coded);

/* --- the prepare check of one-output ops ----------------------------------------- */

/* TFLM_TYPE_<name> as a member of a set of types (tflm_node_check_io's `types`):
 * TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8). */
#define TFLM_TYPE_BIT(name) ((uint32_t)1u << TFLM_TYPE_##name)
/* Every type with an element size: for ops that move elements without computing on them. */
#define TFLM_TYPES_SIZED 0xFFFFFFFFu
/* tflm_node_check_io's `shape`: input 0 and the output hold as many elements, or any. */
#define TFLM_IO_SAME_COUNT 1
#define TFLM_IO_ANY_SHAPE 0

/* What the prepare of an op with `inputs` inputs and one output checks first, in this order,
 * returning the status of the first check that fails (and logging it):
 *   the node has `inputs` inputs and one output            TFLM_ERR_BAD_PARAMS
 *   views of input 0 into *in and of output 0 into *out     TFLM_ERROR
 *   unless `types` is 0 (the kernel checks types itself): input 0 and the output have one
 *   type, a member of `types` (TFLM_TYPE_BIT ors) with an element size
 *                                                           TFLM_ERR_UNSUPPORTED_TYPE
 *   with TFLM_IO_SAME_COUNT, as many elements in both       TFLM_ERR_BAD_SHAPE */
tflm_status_t tflm_node_check_io(tflm_context_t *ctx, const tflm_node_t *node, int32_t inputs,
                                 uint32_t types, int32_t shape, tflm_tensor_t *in,
                                 tflm_tensor_t *out);

/* An input the model must hold as a constant (axes, paddings, permutations): a view of
 * input i into *view (TFLM_ERROR), data present in the model (TFLM_ERR_BAD_PARAMS) and,
 * unless `types` is 0, a type from `types` (TFLM_ERR_UNSUPPORTED_TYPE). */
tflm_status_t tflm_node_constant_input(tflm_context_t *ctx, const tflm_node_t *node, int32_t i,
                                       uint32_t types, tflm_tensor_t *view);

/* --- memory ------------------------------------------------------------------------ */

/* Persistent memory for the node's lifetime (init and prepare only).  8-byte aligned.
 * Returns NULL when the arena is full; the runtime then reports how much was needed. */
void *tflm_alloc_persistent(tflm_context_t *ctx, uint32_t bytes);
/* Requests a scratch buffer live only while this node runs (prepare only); the planner
 * places it with the tensors.  *handle identifies it in eval. */
tflm_status_t tflm_request_scratch(tflm_context_t *ctx, uint32_t bytes, int32_t *handle);
/* The scratch buffer of a handle (eval only).  8-byte aligned. */
void *tflm_get_scratch(tflm_context_t *ctx, int32_t handle);

/* --- subgraphs (control flow: IF, WHILE, CALL_ONCE) ------------------------------- */

int32_t tflm_subgraph_count(tflm_context_t *ctx);
/* Inputs and outputs of a subgraph; -1 for a subgraph index out of range. */
int32_t tflm_subgraph_inputs_count(tflm_context_t *ctx, int32_t subgraph);
int32_t tflm_subgraph_outputs_count(tflm_context_t *ctx, int32_t subgraph);
/* Views of input (output) i of a subgraph, as tflm_node_input gives them. */
tflm_status_t tflm_subgraph_input(tflm_context_t *ctx, int32_t subgraph, int32_t i,
                                  tflm_tensor_t *view);
tflm_status_t tflm_subgraph_output(tflm_context_t *ctx, int32_t subgraph, int32_t i,
                                   tflm_tensor_t *view);
/* Runs every operator of a subgraph once (eval only).  Its tensors are planned in the same
 * arena, apart from everything live while the calling operator runs. */
tflm_status_t tflm_subgraph_invoke(tflm_context_t *ctx, int32_t subgraph);
/* The subgraph an accelerator op's custom options name: 8 bytes, the magic "TGP1" then the
 * index (uint32 little-endian; accelerators/README.md).  -1 for other options. */
int32_t tflm_partition_options_subgraph(const uint8_t *options, uint32_t size);

/* --- resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE) --------------- */

/* The id of the variable a (container, shared name) pair names: strings inside the model
 * from tflm_opt_string, a NULL container matching any.  Creates the variable when none
 * matches (prepare only); -1 when no id can be given. */
int32_t tflm_resource_id(tflm_context_t *ctx, const uint8_t *container,
                         uint32_t container_length, const uint8_t *name, uint32_t name_length);
/* Gives variable `id` `bytes` of persistent memory, filled with `fill` now and at every
 * reset, unless it has its memory already (prepare only). */
tflm_status_t tflm_resource_allocate(tflm_context_t *ctx, int32_t id, uint32_t bytes,
                                     uint8_t fill);
/* The variable's bytes (their count in *bytes); NULL when it has none. */
void *tflm_resource_data(tflm_context_t *ctx, int32_t id, uint32_t *bytes);

/* --- builtin options (read in place from the model) -------------------------------- */

/* `field` is a TFLM_OPT_<OPTIONS>_<FIELD> macro of tflm_schema.h (slot and width). */
int32_t tflm_opt_int(const tflm_node_t *node, int32_t field, int32_t default_value);
float tflm_opt_float(const tflm_node_t *node, int32_t field, float default_value);
/* Copies up to max int32 elements of a vector field; returns the element count (-1 absent). */
int32_t tflm_opt_int_vector(const tflm_node_t *node, int32_t field, int32_t *out, int32_t max);
/* The bytes of a string field (not NUL-terminated) and their count; NULL when absent. */
const uint8_t *tflm_opt_string(const tflm_node_t *node, int32_t field, uint32_t *length);

/* --- errors ------------------------------------------------------------------------ */

/* Logs "op <index>: <message>" through DebugLog when messages are compiled in. */
void tflm_kernel_log(tflm_context_t *ctx, const tflm_node_t *node, const char *message);

/* Logs "op <index>: check failed (line <line>)": the source line of the failed check. */
void tflm_kernel_check_failed(tflm_context_t *ctx, const tflm_node_t *node, int32_t line);

/* Returns status from the calling kernel function when cond is false, logging where.  The
 * condition's text is not kept: on chips whose constants sit in RAM (AVR) the 400-odd
 * conditions' texts took 2 KB of an 8 KB part. */
#define TFLM_KERNEL_CHECK(ctx, node, cond, status)                 \
  do {                                                             \
    if (!(cond)) {                                                 \
      tflm_kernel_check_failed((ctx), (node), (int32_t)__LINE__);  \
      return (status);                                             \
    }                                                              \
  } while (0)

/* Returns the status of `call` from the calling kernel function unless it is TFLM_OK (the
 * callee, a kernel-API check such as tflm_node_check_io, has logged why). */
#define TFLM_KERNEL_TRY(call)                          \
  do {                                                 \
    const tflm_status_t tflm_try_status_ = (call);     \
    if (tflm_try_status_ != TFLM_OK) {                 \
      return tflm_try_status_;                         \
    }                                                  \
  } while (0)

#ifdef __cplusplus
}
#endif

#endif /* TFLM_KERNEL_H */
