/* The interpreter: runs subgraph 0 of a TFLite model read in place from memory; control-flow
 * kernels (IF, WHILE, CALL_ONCE) run the other subgraphs from inside it.
 *
 *   static tflm_interpreter_t interpreter;              (any storage; not in the arena)
 *   tflm_interpreter_init(&interpreter, model, model_size, &resolver, arena, arena_size);
 *   memcpy(tflm_interpreter_input_data(&interpreter, 0), input, bytes);
 *   tflm_interpreter_invoke(&interpreter);
 *   read tflm_interpreter_output_data(&interpreter, 0)
 *
 * All memory comes from the caller's arena during init; invoke allocates nothing.  The
 * arena must start at an address aligned for any scalar (see tflm_max_align_t). */
#ifndef TFLM_INTERPRETER_H
#define TFLM_INTERPRETER_H

#include <stdint.h>

#include "tflm_arena.h"
#include "tflm_flatbuffer.h"
#include "tflm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFLM_RUNTIME_ABI_VERSION 2

/* The operators an application links in: builtins by code, custom ops by name. */
typedef struct {
  const tflm_registration_t *const *ops;
  int32_t count;
} tflm_resolver_t;

/* Optional hooks around each operator's eval (a profiler); NULL when unused.  Init is
 * reported as node TFLM_PROFILE_INIT when the profiler is given to init. */
#define TFLM_PROFILE_INIT (-1)
typedef struct {
  void (*begin)(void *user, int32_t node_index);
  void (*end)(void *user, int32_t node_index);
  void *user;
} tflm_profiler_t;

/* Per-node state kept in the arena tail (fixed-width fields: same size on every target). */
typedef struct {
  uint32_t user_data;   /* arena offset of the kernel's persistent data, or TFLM_NO_DATA */
  uint16_t registration; /* index into the resolver */
  uint16_t version;     /* operator version from the model's operator code */
  uint32_t inputs;      /* model positions of the operator's input and output index vectors */
  uint32_t outputs;     /* and options table (0: none), so invoke reads no tables */
  uint32_t options;
} tflm_node_state_t;

#define TFLM_NO_DATA 0xFFFFFFFFu

/* Per-subgraph positions kept in the arena tail.  Tensors and operators of all subgraphs
 * share one global numbering: subgraph s's tensor t is global tensor first_tensor + t. */
typedef struct {
  uint32_t tensors, tensors_count;     /* positions and lengths of the subgraph's vectors */
  uint32_t operators, operators_count;
  uint32_t inputs, inputs_count;
  uint32_t outputs, outputs_count;
  uint32_t first_tensor;               /* global index of the subgraph's tensor 0 */
  uint32_t first_node;                 /* global index of its operator 0 */
} tflm_subgraph_t;

/* A resource variable (VAR_HANDLE's container and shared name), kept in the arena tail. */
typedef struct {
  uint32_t container;        /* model position of the container string, 0 when absent */
  uint32_t container_length;
  uint32_t name;             /* model position of the shared name, 0 when absent */
  uint32_t name_length;
  uint32_t data;             /* arena offset of its bytes, TFLM_NO_DATA until allocated */
  uint32_t bytes;
  uint32_t fill;             /* byte the value is reset to (TFLM: the zero point as int8) */
} tflm_resource_t;

/* Where the arena's bytes went, by category (the allocation audit). */
typedef struct {
  uint32_t arena_bytes;     /* smallest arena that works: the peak during init */
  uint32_t head_bytes;      /* planned activations and scratch buffers */
  uint32_t tail_bytes;      /* everything persistent, the sum of the next three */
  uint32_t runtime_bytes;   /* tensor locations, node states, scratch offsets */
  uint32_t kernel_bytes;    /* kernels' persistent data (op parameters) */
  uint32_t variable_bytes;  /* variable tensors (RNN state) */
  uint32_t scratch_count;   /* scratch buffers requested by kernels */
  uint32_t scratch_bytes;   /* their total size (they share the head with activations) */
} tflm_memory_stats_t;

/* The interpreter; fields are private to the runtime. */
struct tflm_context {
  tflm_fb_t fb;                 /* the model */
  const uint8_t *weights;       /* separate weights (NULL: none), see init_separate */
  uint32_t weights_size;
  uint32_t weights_start;       /* position of their first byte: model size rounded to 16 */
  const tflm_resolver_t *resolver;
  tflm_arena_t arena;
  uint32_t opcodes, opcodes_count;     /* positions and lengths of the model's vectors */
  uint32_t buffers, buffers_count;
  tflm_subgraph_t *subgraphs;   /* per subgraph */
  uint32_t subgraphs_count;
  uint32_t tensors_count;       /* tensors of all subgraphs */
  uint32_t operators_count;     /* operators of all subgraphs */
  uint32_t inputs, inputs_count;       /* subgraph 0's inputs and outputs */
  uint32_t outputs, outputs_count;
  uint32_t *tensor_location;    /* per tensor: arena offset, TFLM_IN_MODEL|model offset, or none */
  tflm_node_state_t *nodes;     /* per operator */
  tflm_resource_t *resources;   /* resource variables, in the order VAR_HANDLEs created them */
  uint32_t resources_count, resources_capacity;
  uint32_t *scratch_location;   /* per scratch buffer: arena offset */
  uint32_t scratch_count;
  uint32_t *scratch_request;    /* during prepare: (bytes, node) pairs in temporary memory */
  uint32_t scratch_capacity;
  int32_t current_node;         /* node being prepared (owner of scratch requests) */
  uint32_t requant, requant_words; /* "tflm_gen.requant" metadata: position, length in words */
  uint32_t layout, layout_words;   /* "tflm_gen.layout" metadata: position, length in words */
  uint32_t stage, stage_words;     /* "tflm_gen.stage" metadata (tflm_stage.h): position, words */
  uint32_t stage_data;          /* arena offset of the stage's per (band, op) user data */
  int32_t stage_skip;           /* S when the stage's last operator is a residual join, else -1 */
  const struct tflm_band *band; /* the band a stage operator runs on now (NULL: whole tensors) */
  uint8_t ready;                /* init succeeded */
  uint8_t in_prepare;           /* scratch requests and persistent allocation allowed */
  const tflm_profiler_t *profiler;
  uint32_t kernel_bytes;        /* persistent bytes handed to kernels (audit) */
  uint32_t variable_bytes;      /* persistent bytes of variable tensors (audit) */
  uint32_t scratch_bytes;       /* requested scratch bytes (audit) */
};
typedef struct tflm_context tflm_interpreter_t;

#define TFLM_IN_MODEL 0x80000000u
#define TFLM_NOWHERE 0xFFFFFFFFu

/* Parses the model, resolves every operator, runs each kernel's init and prepare, plans
 * the head.  On TFLM_ERR_ARENA_TOO_SMALL, tflm_interpreter_arena_shortfall says how many
 * more bytes the failing step needed. */
tflm_status_t tflm_interpreter_init(tflm_interpreter_t *interpreter, const void *model,
                                    uint32_t model_size, const tflm_resolver_t *resolver,
                                    void *arena, uint32_t arena_size);
/* The same, with the profiler's hooks around the whole init and then around every eval. */
tflm_status_t tflm_interpreter_init_profiled(tflm_interpreter_t *interpreter,
                                             const void *model, uint32_t model_size,
                                             const tflm_resolver_t *resolver, void *arena,
                                             uint32_t arena_size, const tflm_profiler_t *p);
tflm_status_t tflm_interpreter_invoke(tflm_interpreter_t *interpreter);
/* The same for a model whose constant data lies apart (tflm-gen --weights separate):
 * `model` is the mini flatbuffer, whose constant buffers have (offset, size) fields
 * counting from the model's start as if `weights` followed it at the next 16-byte
 * boundary; `weights` (read in place, e.g. from external flash; 16-byte aligned for the
 * fastest kernels, and aligned at least for each constant's type) holds `weights_size`
 * bytes.  A constant lying past the weights' end is refused (TFLM_ERR_MODEL_WEIGHTS), never
 * read.  `p` may be NULL. */
tflm_status_t tflm_interpreter_init_separate(tflm_interpreter_t *interpreter, const void *model,
                                             uint32_t model_size, const void *weights,
                                             uint32_t weights_size,
                                             const tflm_resolver_t *resolver, void *arena,
                                             uint32_t arena_size, const tflm_profiler_t *p);
/* Zeroes variable tensors (RNN state), refills resource variables with their reset byte
 * and calls each kernel's reset, in every subgraph (as TFLM's Reset does). */
tflm_status_t tflm_interpreter_reset(tflm_interpreter_t *interpreter);
void tflm_interpreter_set_profiler(tflm_interpreter_t *interpreter, const tflm_profiler_t *p);

int32_t tflm_interpreter_inputs_count(const tflm_interpreter_t *interpreter);
int32_t tflm_interpreter_outputs_count(const tflm_interpreter_t *interpreter);
/* Views of graph input/output i (shape, type, quantisation, data). */
tflm_status_t tflm_interpreter_input(tflm_interpreter_t *interpreter, int32_t i,
                                     tflm_tensor_t *view);
tflm_status_t tflm_interpreter_output(tflm_interpreter_t *interpreter, int32_t i,
                                      tflm_tensor_t *view);
void *tflm_interpreter_input_data(tflm_interpreter_t *interpreter, int32_t i);
void *tflm_interpreter_output_data(tflm_interpreter_t *interpreter, int32_t i);

/* The smallest arena size that works for this model: the peak bytes used during init. */
uint32_t tflm_interpreter_arena_used_bytes(const tflm_interpreter_t *interpreter);
uint32_t tflm_interpreter_arena_head_bytes(const tflm_interpreter_t *interpreter);
uint32_t tflm_interpreter_arena_tail_bytes(const tflm_interpreter_t *interpreter);
/* The allocation audit; tflm_interpreter_print_memory prints it through DebugLog. */
void tflm_interpreter_memory(const tflm_interpreter_t *interpreter, tflm_memory_stats_t *stats);
void tflm_interpreter_print_memory(const tflm_interpreter_t *interpreter);
/* Multitenancy: the arena size to give the next interpreter that shares this arena (same
 * start address).  Its persistent tail stacks below this one's; the non-persistent head
 * is shared, so interpreters sharing an arena must not run at the same time, and inputs
 * are written right before each invoke. */
uint32_t tflm_interpreter_arena_shared_size(const tflm_interpreter_t *interpreter);
/* After a failed init: bytes the failing allocation was short by (0 otherwise). */
uint32_t tflm_interpreter_arena_shortfall(const tflm_interpreter_t *interpreter);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_INTERPRETER_H */
