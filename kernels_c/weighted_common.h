/* What the ops with weights (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV
 * and their tag replacements) share in prepare and eval: their four tensors, TFLM's type rule, and where
 * their per-channel requantisation arrays are. */
#ifndef TFLM_WEIGHTED_COMMON_H
#define TFLM_WEIGHTED_COMMON_H

#include <stdint.h>

#include "tflm_compiler.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Input, weights, optional bias (data == NULL when absent) and output. */
typedef struct {
  tflm_tensor_t input;
  tflm_tensor_t filter;
  tflm_tensor_t bias;
  tflm_tensor_t output;
} tflm_weighted_views_t;

/* Fills the views of a node with 2 or 3 inputs (the bias optional) and 1 output. */
tflm_status_t tflm_weighted_views(tflm_context_t *ctx, tflm_node_t *node,
                                  tflm_weighted_views_t *v);
/* float32 x float32 (+ float32 bias), int8 x int8 (+ int32), int16 x int8 (+ int64). */
tflm_status_t tflm_weighted_types(tflm_context_t *ctx, tflm_node_t *node,
                                  const tflm_weighted_views_t *v);
/* The data of a node's tensors in eval. */
typedef struct {
  const void *input;
  const void *filter;
  const void *bias; /* NULL when absent */
  void *output;
} tflm_weighted_data_t;

/* Fills `d`; 0 when input, filter or output has no data (the node is not ready). */
int32_t tflm_weighted_data(tflm_context_t *ctx, const tflm_node_t *node,
                           tflm_weighted_data_t *d);
/* True when the generator precomputed this node's `channels` multipliers and shifts into
 * the model, so prepare keeps them in flash instead of persistent memory. */
int32_t tflm_weighted_requant_in_model(tflm_context_t *ctx, const tflm_node_t *node,
                                       int32_t channels);
/* The per-channel arrays of a prepared node: precomputed in the model when `in_model`,
 * else `own` (channels multipliers followed by channels shifts in persistent memory). */
void tflm_weighted_requant(tflm_context_t *ctx, const tflm_node_t *node, int32_t in_model,
                           const int32_t *own, int32_t channels, tflm_requant_t *requant);

/* ---- Compressed filters (tflm_decode.h) ----
 * prepare: when input 1 is a coded stream of `channels` rows of `row` weights, checks it
 * (TFLM_ERR_MODEL when corrupt, or when `type` is not int8 / int16: only int8 filters are
 * coded) and requests its decoding scratch into *handle, with room after the block for
 * `copy` bytes per weight of the whole filter (DEPTHWISE_CONV_2D: 1, its blocks transposed
 * back into the filter's taps-major order, so that its kernels read them with the node's
 * own strides); *handle = -1 when not coded. */
tflm_status_t tflm_weighted_decode_prepare(tflm_context_t *ctx, const tflm_node_t *node,
                                           int32_t type, int32_t channels, int32_t row,
                                           int32_t copy, int16_t *handle);
/* A decoded depthwise block (`count` rows of `taps` weights) transposed into
 * `taps_major` (taps rows `stride` channels apart; the block's first channel at 0). */
void tflm_weighted_transpose(const int8_t *rows, int32_t count, int32_t taps, int32_t stride,
                             int8_t *taps_major);

struct tflm_weighted_call;
/* Called once per decoded block: `rows` holds channels first .. first + count - 1; `room`
 * is the scratch asked for with `copy` (tflm_weighted_decode_prepare). */
typedef void (*tflm_weighted_block_fn)(tflm_context_t *ctx,
                                       const struct tflm_weighted_call *call,
                                       const int8_t *rows, int8_t *room, int32_t first,
                                       int32_t count);
/* eval: decodes the filter one block at a time into the scratch of `handle` and hands each
 * block to `run`, so that each block is decoded once per invoke. */
tflm_status_t tflm_weighted_decoded(tflm_context_t *ctx, const struct tflm_weighted_call *call,
                                    int32_t handle, int32_t channels, int32_t row,
                                    tflm_weighted_block_fn run);
/* Called for channels first .. first + count - 1 whose weights are all 0 (the stream's live
 * map): it writes their outputs without the weights. */
typedef void (*tflm_weighted_dead_fn)(const struct tflm_weighted_call *call, int32_t first,
                                      int32_t count);
/* tflm_weighted_decoded that hands `run` only the runs of live channels and `dead` the
 * others (a block without a live channel is not decoded).  For kernels whose channels are
 * independent: `run` may see a part of a block. */
tflm_status_t tflm_weighted_decoded_live(tflm_context_t *ctx,
                                         const struct tflm_weighted_call *call, int32_t handle,
                                         int32_t channels, int32_t row,
                                         tflm_weighted_block_fn run, tflm_weighted_dead_fn dead);

/* ---- One eval for every weighted op and tag ----
 * A kernel lists one function per type in a tflm_weighted_kernels_t; tflm_weighted_eval
 * fetches the data and the requantisation arrays and calls the one for the node's type. */

/* The `type` of a hybrid node's parameter block (hybrid_common.h): no TFLM_TYPE_* has this
 * value. */
#define TFLM_TYPE_HYBRID 0x4859

/* What a per-type function gets: the op's prepared parameters (tflm_conv_params_t or
 * tflm_fc_params_t), the tag kernel's own node data (NULL for the reference kernels), the
 * per-channel requantisation arrays and the tensors' data. */
typedef struct tflm_weighted_call {
  const tflm_node_t *node; /* for per-node generated data (tflm_node_layout) */
  const void *params;
  const void *own;
  tflm_requant_t requant;
  tflm_weighted_data_t data;
} tflm_weighted_call_t;

typedef tflm_status_t (*tflm_weighted_type_fn)(tflm_context_t *ctx,
                                               const tflm_weighted_call_t *call);

/* The per-type functions of one weighted op (NULL where it has none) and how it finds its
 * requantisation arrays from its parameters. */
typedef struct {
  void (*requant)(tflm_context_t *ctx, const tflm_node_t *node, const void *params,
                  tflm_requant_t *requant);
  tflm_weighted_type_fn hybrid; /* float32 activations, int8 weights: LiteRT only */
  tflm_weighted_type_fn float32, int8, int16;
} tflm_weighted_kernels_t;

/* Define `name`, a tflm_weighted_type_fn over one loop of the kernels' shape:
 * loop(params, input, filter, bias, output) for float32, with &requant after params for the
 * quantised types (the data pointers convert from void implicitly). */
#define TFLM_WEIGHTED_RUN_FLOAT(name, loop)                                                \
  tflm_status_t name(tflm_context_t *ctx, const tflm_weighted_call_t *call) {              \
    (void)ctx;                                                                             \
    loop(call->params, call->data.input, call->data.filter, call->data.bias,              \
         call->data.output);                                                               \
    return TFLM_OK;                                                                        \
  }
#define TFLM_WEIGHTED_RUN_QUANT(name, loop)                                                \
  tflm_status_t name(tflm_context_t *ctx, const tflm_weighted_call_t *call) {              \
    (void)ctx;                                                                             \
    loop(call->params, &call->requant, call->data.input, call->data.filter,               \
         call->data.bias, call->data.output);                                              \
    return TFLM_OK;                                                                        \
  }

/* The function of `kernels` for `type`, NULL where it has none. */
static TFLM_ALWAYS_INLINE tflm_weighted_type_fn
tflm_weighted_type_kernel(const tflm_weighted_kernels_t *kernels, int32_t type) {
  switch (type) {
    case TFLM_TYPE_HYBRID: return kernels->hybrid;
    case TFLM_TYPE_FLOAT32: return kernels->float32;
    case TFLM_TYPE_INT8: return kernels->int8;
    case TFLM_TYPE_INT16: return kernels->int16;
    default: return NULL;
  }
}

/* Runs the function of `kernels` for `type` (a TFLM_TYPE_*, or TFLM_TYPE_HYBRID) on the
 * node; `params` must not be NULL. */
static TFLM_ALWAYS_INLINE tflm_status_t tflm_weighted_eval(
    tflm_context_t *ctx, tflm_node_t *node, const void *params, const void *own, int32_t type,
    const tflm_weighted_kernels_t *kernels) {
  const tflm_weighted_type_fn run = tflm_weighted_type_kernel(kernels, type);
  tflm_weighted_call_t call;
  TFLM_KERNEL_CHECK(ctx, node, tflm_weighted_data(ctx, node, &call.data), TFLM_ERR_NOT_READY);
  if (run == NULL) {
    return TFLM_ERR_UNSUPPORTED_TYPE;
  }
  call.node = node;
  call.params = params;
  call.own = own;
  kernels->requant(ctx, node, params, &call.requant);
  return run(ctx, &call);
}

/* The eval of every weighted op and tag (TFLM_WEIGHTED_OP): node->user_data holds the op's prepared parameters (tflm_conv_params_t or
 * tflm_fc_params_t, whose first field is the TFLM_TYPE_* that picks the function), or, with
 * `own_record`, the tag's own record, whose first field (uint64_t) holds their address. */
static TFLM_ALWAYS_INLINE tflm_status_t tflm_weighted_node_eval(
    tflm_context_t *ctx, tflm_node_t *node, const tflm_weighted_kernels_t *kernels,
    int32_t own_record) {
  const void *own = own_record ? node->user_data : NULL;
  const void *params =
      own != NULL ? (const void *)(uintptr_t)*(const uint64_t *)own : node->user_data;
  TFLM_KERNEL_CHECK(ctx, node, params != NULL, TFLM_ERR_NOT_READY);
  return tflm_weighted_eval(ctx, node, params, own, *(const int32_t *)params, kernels);
}

/* Defines the registration `symbol` of a weighted op (builtin `code`) over its `prepare`
 * and its kernel table; `own_record` as tflm_weighted_node_eval. */
#define TFLM_WEIGHTED_OP(symbol, code, prepare, kernels, own_record)                       \
  static tflm_status_t symbol##_eval(tflm_context_t *ctx, tflm_node_t *node) {             \
    return tflm_weighted_node_eval(ctx, node, &(kernels), own_record);                     \
  }                                                                                        \
  const tflm_registration_t symbol = {NULL, code, NULL, prepare, symbol##_eval, NULL, NULL}

/* What a weighted op's reference file gives a tag to reuse: tflm_<op>_run_float32,
 * tflm_<op>_run_int8 and tflm_<op>_run_int16 (one per type, so a tag's table names the ones
 * it keeps) and the table tflm_<op>_reference_kernels. */
#define TFLM_WEIGHTED_REFERENCE_DECLARE(op)                                                \
  tflm_status_t tflm_##op##_run_float32(tflm_context_t *ctx,                               \
                                        const tflm_weighted_call_t *call);                 \
  tflm_status_t tflm_##op##_run_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call); \
  tflm_status_t tflm_##op##_run_int16(tflm_context_t *ctx, const tflm_weighted_call_t *call); \
  extern const tflm_weighted_kernels_t tflm_##op##_reference_kernels

/* Defines the functions and table TFLM_WEIGHTED_REFERENCE_DECLARE(op) declares, over
 * `requant`, `hybrid` and run(ctx, call, type): one always-inlined run for every type, which
 * each per-type function instantiates for its own constant TFLM_TYPE_* (one loop nest per
 * function, as hand-written kernels have: one function holding every type's nest spills
 * registers on small cores). */
#define TFLM_WEIGHTED_REFERENCE_DEFINE(op, requant, hybrid, run)                          \
  tflm_status_t tflm_##op##_run_float32(tflm_context_t *ctx,                               \
                                        const tflm_weighted_call_t *call) {                \
    return run(ctx, call, TFLM_TYPE_FLOAT32);                                              \
  }                                                                                        \
  tflm_status_t tflm_##op##_run_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call) { \
    return run(ctx, call, TFLM_TYPE_INT8);                                                 \
  }                                                                                        \
  tflm_status_t tflm_##op##_run_int16(tflm_context_t *ctx,                                 \
                                      const tflm_weighted_call_t *call) {                  \
    return run(ctx, call, TFLM_TYPE_INT16);                                                \
  }                                                                                        \
  const tflm_weighted_kernels_t tflm_##op##_reference_kernels = {                          \
      requant, hybrid, tflm_##op##_run_float32, tflm_##op##_run_int8,                      \
      tflm_##op##_run_int16}

#ifdef __cplusplus
}
#endif

#endif /* TFLM_WEIGHTED_COMMON_H */
