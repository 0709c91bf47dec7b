/* Shared plumbing of the elementwise kernels (SUB, MUL, MAXIMUM, comparisons, SELECT_V2 ...):
 * numpy-style broadcasting of up to three inputs to the output shape (up to 6-D) and the
 * integer activation range (element sizes: tflm_type_size of the kernel API).
 *
 * Broadcasting: every input is right-aligned against the output shape; a dimension of an
 * input is either the output's or 1 (then the input is repeated along it).  The walk calls
 * a row function once per index of the five outer dimensions with the innermost run of
 * outputs; each input's step in that run is 1, or 0 when it is broadcast there. */
#ifndef TFLM_ELEMENTWISE_H
#define TFLM_ELEMENTWISE_H

#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFLM_ELEMENTWISE_MAX_INPUTS 3

/* Broadcast layout, kept in persistent op data (fixed-width fields only).  An input's
 * strides are not kept: tflm_broadcast_run derives them from out_dims and its `ones` mask
 * (the input's dims are the output's except where they are 1). */
typedef struct {
  int32_t count;                   /* output elements */
  int32_t out_dims[TFLM_MAX_DIMS]; /* output shape, leading 1s added */
  uint8_t ones[TFLM_ELEMENTWISE_MAX_INPUTS]; /* bit k: input i has dim 1 at output axis k
                                    * (its step there is 0) */
  uint8_t flat;                    /* 1: no input is broadcast, one row of `count` values */
} tflm_broadcast_t;

/* One run of n outputs: in[i] advances by step[i] elements (1, or 0 when broadcast). */
typedef void (*tflm_elementwise_row_fn)(const void *params, const void *const *in,
                                        const int32_t *step, void *out, int32_t n);

/* Fills *b for `count` inputs broadcast to the output shape; returns 0 when an input does
 * not broadcast to it. */
int32_t tflm_broadcast_init(tflm_broadcast_t *b, const tflm_tensor_t *inputs, int32_t count,
                            const tflm_tensor_t *output);

/* Fetches the node's first `count` inputs and output 0 into the views and fills *b,
 * checking the node has exactly `count` inputs and one output. */
tflm_status_t tflm_elementwise_prepare(tflm_context_t *ctx, tflm_node_t *node, int32_t count,
                                       tflm_tensor_t *inputs, tflm_tensor_t *output,
                                       tflm_broadcast_t *b);

/* tflm_elementwise_prepare into `size` bytes of persistent op data that start with a
 * tflm_broadcast_t; *data (and node->user_data) get the op data. */
tflm_status_t tflm_elementwise_alloc(tflm_context_t *ctx, tflm_node_t *node, uint32_t size,
                                     int32_t count, tflm_tensor_t *inputs,
                                     tflm_tensor_t *output, void **data);

/* Runs `row` over the whole output.  in[i] has elements of in_size[i] bytes, the output of
 * out_size bytes; `count` inputs (1..3). */
void tflm_broadcast_run(const tflm_broadcast_t *b, const void *params, int32_t count,
                        const void *const *in, const int32_t *in_size, void *out,
                        int32_t out_size, tflm_elementwise_row_fn row);

/* Fused activation range for int32 outputs (TFLM's CalculateActivationRange<int32_t>). */
void tflm_activation_range_int32(int32_t activation, int32_t *lo, int32_t *hi);


/* Defines the registration `symbol` (builtin `code`) of a one-input op that maps each
 * element of input 0 (x_t, TFLM_TYPE_<type>) to the output element (z_t, the same type and
 * count) as `element(x)` (ROUND, LOGICAL_NOT): its prepare checks, its eval is the loop. */
#define TFLM_MAP_OP(symbol, code, type, x_t, z_t, element)                                \
  static tflm_status_t symbol##_prepare(tflm_context_t *ctx, tflm_node_t *node) {         \
    tflm_tensor_t in, out;                                                                \
    return tflm_node_check_io(ctx, node, 1, TFLM_TYPE_BIT(type), TFLM_IO_SAME_COUNT, &in,  \
                              &out);                                                      \
  }                                                                                       \
  static tflm_status_t symbol##_eval(tflm_context_t *ctx, tflm_node_t *node) {            \
    const x_t *x = (const x_t *)tflm_node_input_data(ctx, node, 0);                       \
    tflm_tensor_t out;                                                                    \
    int32_t i, n;                                                                         \
    TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, &out) == TFLM_OK,          \
                      TFLM_ERROR);                                                        \
    TFLM_KERNEL_CHECK(ctx, node, x != NULL && out.data != NULL, TFLM_ERR_NOT_READY);      \
    n = tflm_tensor_elements(&out);                                                       \
    for (i = 0; i < n; ++i) ((z_t *)out.data)[i] = (z_t)element(x[i]);                    \
    return TFLM_OK;                                                                       \
  }                                                                                       \
  const tflm_registration_t symbol = {NULL, code, NULL, symbol##_prepare, symbol##_eval,  \
                                      NULL, NULL}

/* ---- Binary ops (ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE, PRELU, MINIMUM/MAXIMUM, the
 * comparisons, LOGICAL_AND/OR) ----
 * Each op keeps a tflm_binary_t first in its persistent data, lists one row function per
 * type of input 0 (NULL where it refuses the type), and writes only its element function;
 * prepare, the type checks and the eval dispatch are these. */

/* The fields every binary op's persistent data starts with (fixed-width fields only). */
typedef struct {
  tflm_broadcast_t shape;
  int32_t type;               /* TFLM_TYPE_* of input 0 (and of the output, unless bool) */
  int32_t second_type;        /* TFLM_TYPE_* of input 1 (PRELU's alpha may differ) */
  int32_t act_min, act_max;   /* int32 clamp of the fused activation (quantised ops
                               * overwrite it with the quantised range) */
  float act_min_f, act_max_f; /* float clamp of the fused activation */
} tflm_binary_t;

/* Row functions of one binary op by the type of input 0; NULL where the op refuses it. */
typedef struct {
  tflm_elementwise_row_fn float32, int8, int16, int32, int64, boolean;
  int32_t bool_output; /* 1: the output is bool whatever the inputs (comparisons, logical
                        * ops); 0: the output has input 0's type */
} tflm_binary_rows_t;

/* Input rescaling of the quantised SUB / SQUARED_DIFFERENCE family: both inputs shifted
 * left, rescaled to twice the larger input scale; the output multiplier is the op's. */
typedef struct {
  int32_t input1_offset, input2_offset, output_offset; /* -zp1, -zp2, +zp_out */
  int32_t left_shift;
  int32_t input1_multiplier, input1_shift;
  int32_t input2_multiplier, input2_shift;
  int32_t output_multiplier, output_shift;
} tflm_binary_rescale_t;

/* Allocates `size` bytes of persistent op data (a tflm_binary_t first), fills the broadcast
 * layout, the types and the activation ranges, and checks that the op has a row for input
 * 0's type, that the output has that type (bool for rows->bool_output) and, when
 * `same_types`, that input 1 has it too.  The views are left in in[2] / *out for the op's
 * quantised parameters; *data gets the op data, which is also node->user_data. */
tflm_status_t tflm_binary_prepare(tflm_context_t *ctx, tflm_node_t *node, size_t size,
                                  const tflm_binary_rows_t *rows, int32_t activation,
                                  int32_t same_types, tflm_tensor_t *in, tflm_tensor_t *out,
                                  void **data);

/* Declares `name`, a binary op's finish: its own checks and parameters into `data` (its op
 * data as tflm_binary_prepare filled it) from the views `in[2]` / `out` and the fused
 * `activation`.  Written once, as every op's finish has this shape. */
#define TFLM_BINARY_FINISH(name)                                                         \
  tflm_status_t name(tflm_context_t *ctx, tflm_node_t *node, const tflm_tensor_t *in,    \
                     const tflm_tensor_t *out, int32_t activation, void *data)

typedef TFLM_BINARY_FINISH((*tflm_binary_finish_fn));

/* Everything the shared prepare and eval need of one binary op (a const table in flash). */
typedef struct {
  const tflm_binary_rows_t *rows;
  uint32_t size;             /* bytes of its op data, a tflm_binary_t first */
  int32_t activation_option; /* TFLM_OPT_* of its fused activation; 0: it has none */
  int32_t same_types;        /* 1: input 1 must have input 0's type */
  tflm_binary_finish_fn finish; /* NULL when the op has nothing of its own */
} tflm_binary_op_t;

/* The prepare of every binary op: tflm_binary_prepare as `op` says, then op->finish. */
tflm_status_t tflm_binary_op_prepare(tflm_context_t *ctx, tflm_node_t *node,
                                     const tflm_binary_op_t *op);

/* Defines the registration `symbol` of the binary op with builtin `code` over its `rows`
 * (a tflm_binary_rows_t), its op data `params_t`, its TFLM_OPT_* fused-activation option (0:
 * none), whether input 1 has input 0's type and its `finish` (tflm_binary_op_t): the
 * shared prepare and eval, so an op's file holds its element functions, rows and this. */
#define TFLM_BINARY_OP(symbol, code, rows, params_t, activation_option, same_types, finish) \
  static const tflm_binary_op_t symbol##_binary = {                                        \
      &(rows), sizeof(params_t), activation_option, same_types, finish};                   \
  static tflm_status_t symbol##_prepare(tflm_context_t *ctx, tflm_node_t *node) {          \
    return tflm_binary_op_prepare(ctx, node, &symbol##_binary);                            \
  }                                                                                        \
  static tflm_status_t symbol##_eval(tflm_context_t *ctx, tflm_node_t *node) {             \
    return tflm_binary_eval(ctx, node, &(rows));                                           \
  }                                                                                        \
  const tflm_registration_t symbol = {NULL, code, NULL, symbol##_prepare, symbol##_eval,   \
                                      NULL, NULL}

/* Runs the op's row for its type over the broadcast output (op data in node->user_data). */
tflm_status_t tflm_binary_eval(tflm_context_t *ctx, tflm_node_t *node,
                               const tflm_binary_rows_t *rows);
/* The same with the op data given (a tag that keeps its own record in node->user_data). */
tflm_status_t tflm_binary_run(tflm_context_t *ctx, const tflm_node_t *node,
                              const tflm_binary_t *p, const tflm_binary_rows_t *rows);

/* Fills the offsets and input multipliers of *r for inputs shifted left by `left_shift`;
 * returns twice the larger input scale, or 0 when a scale is not positive. */
double tflm_binary_rescale_inputs(const tflm_tensor_t *in, const tflm_tensor_t *out,
                                  int32_t left_shift, tflm_binary_rescale_t *r);

/* The op data of ADD and SUB (fixed-width fields only). */
typedef struct {
  tflm_binary_t binary;          /* shape, types, activation clamp (int8/int16: quantised) */
  tflm_binary_rescale_t rescale; /* int8 / int16 only */
} tflm_binary_sum_t;

/* The finish of ADD and SUB (tflm_binary_op_t.finish over a tflm_binary_sum_t): for int8 /
 * int16 the rescaling (tflm_binary_rescale_sum) and the quantised clamp. */
TFLM_BINARY_FINISH(tflm_binary_sum_finish);

/* All of *r for the quantised ADD and SUB (TFLM's CalculateOpData: inputs shifted left 20
 * bits for int8, 15 for int16, multipliers in double); returns 0 when TFLM refuses the
 * scales (a non-positive scale, or an output multiplier not below one). */
int32_t tflm_binary_rescale_sum(const tflm_tensor_t *in, const tflm_tensor_t *out,
                                tflm_binary_rescale_t *r);

/* Clamps v to [lo, hi]. */
static inline int32_t tflm_clamp_int32(int32_t v, int32_t lo, int32_t hi) {
  v = v > lo ? v : lo;
  return v < hi ? v : hi;
}

/* The rescaled sum (sign 1) or difference (sign -1) of two stored int8 / int16 values,
 * offset to the output and clamped to [lo, hi]: the arithmetic of TFLM's quantised ADD and
 * SUB. */
static inline int32_t tflm_binary_rescaled(const tflm_binary_rescale_t *r, int32_t sign,
                                           int32_t a, int32_t b, int32_t lo, int32_t hi) {
  const int32_t shifted1 = (a + r->input1_offset) * ((int32_t)1 << r->left_shift);
  const int32_t shifted2 = (b + r->input2_offset) * ((int32_t)1 << r->left_shift);
  const int32_t scaled1 =
      tflm_multiply_by_quantized_multiplier(shifted1, r->input1_multiplier, r->input1_shift);
  const int32_t scaled2 =
      tflm_multiply_by_quantized_multiplier(shifted2, r->input2_multiplier, r->input2_shift);
  const int32_t raw = sign > 0 ? scaled1 + scaled2 : scaled1 - scaled2;
  return tflm_clamp_int32(
      tflm_multiply_by_quantized_multiplier(raw, r->output_multiplier, r->output_shift) +
          r->output_offset,
      lo, hi);
}

/* The smallest and largest value of an int8 / int16 output type. */
void tflm_binary_type_range(int32_t type, int32_t *qmin, int32_t *qmax);

/* Defines a row function `name` applying `element(p, a, b)` (p a `const params_t *`) to
 * each pair of inputs of element types x_t / y_t, writing z_t outputs.  Written once here so
 * that every binary op's file holds only its element functions. */
#define TFLM_BINARY_ROW_TO(name, params_t, x_t, y_t, z_t, element)                      \
  void name(const void *params, const void *const *in, const int32_t *step, void *out, \
            int32_t n) {                                                               \
    const params_t *p = (const params_t *)params;                                      \
    const x_t *x = (const x_t *)in[0];                                                 \
    const y_t *y = (const y_t *)in[1];                                                 \
    z_t *z = (z_t *)out;                                                               \
    int32_t i;                                                                         \
    for (i = 0; i < n; ++i) {                                                          \
      z[i] = (z_t)element(p, x[i * step[0]], y[i * step[1]]);                          \
    }                                                                                  \
  }

/* The row of an op whose output has input 0's type. */
#define TFLM_BINARY_ROW(name, params_t, x_t, y_t, element) \
  TFLM_BINARY_ROW_TO(name, params_t, x_t, y_t, x_t, element)

/* The rows `rows`_float, _int8, _int16 and _int32 of an arithmetic op over float32, int8,
 * int16 and int32 (ADD, SUB, MUL, SQUARED_DIFFERENCE: int8 and int16 share the element
 * function `quantized`) and their table `rows`; `storage` is `static` or empty. */
#define TFLM_BINARY_ARITHMETIC_ROWS(storage, rows, params_t, float_value, quantized,          \
                                    int32_value)                                            \
  static TFLM_BINARY_ROW(rows##_float, params_t, float, float, float_value)                  \
  static TFLM_BINARY_ROW(rows##_int8, params_t, int8_t, int8_t, quantized)                   \
  static TFLM_BINARY_ROW(rows##_int16, params_t, int16_t, int16_t, quantized)                \
  static TFLM_BINARY_ROW(rows##_int32, params_t, int32_t, int32_t, int32_value)              \
  storage const tflm_binary_rows_t rows = {rows##_float, rows##_int8, rows##_int16,       \
                                           rows##_int32, NULL, NULL, 0}

#ifdef __cplusplus
}
#endif

#endif /* TFLM_ELEMENTWISE_H */
