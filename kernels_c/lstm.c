/* tflm-op: UNIDIRECTIONAL_SEQUENCE_LSTM tflm_op_unidirectional_sequence_lstm types: float32,int8,int16 */
/* UNIDIRECTIONAL_SEQUENCE_LSTM reference kernels (float32; int8 or int16 activations with
 * int8 weights and an int16 cell state).
 * Layouts, types and the persistent block: lstm_common.h; prepare: lstm_common.c.
 *
 * One step, in TFLM's order so results are bit-identical:
 *   gate_g = act(W_g x + b_g + R_g h)       (sigmoid, or the cell activation for g = cell;
 *                                            quantised: both products saturate to int16
 *                                            Q3.12, then a saturating add; int16 inputs
 *                                            accumulate in 64 bits with int64 biases)
 *   c = forget * c;  c = c + input * cell_gate;  c clipped when cell_clip > 0
 *   h = tanh(c) * output_gate;  the step's output row is a copy of h.
 * time_major runs every batch in one step; otherwise each batch runs all its steps in turn.
 * Scratch: four buffers of batches * units cells (gate outputs and one temporary). */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "lstm_common.h"
#include "tflm_kernel.h"
#include "tflm_quant.h"
#include "tflm_sigmoid_lut.h"

/* Tensor data of one invoke and the position inside the sequence. */
typedef struct {
  const void *input;
  const void *input_weights[TFLM_LSTM_GATES];
  const void *recurrent_weights[TFLM_LSTM_GATES];
  const void *bias[TFLM_LSTM_GATES];
  void *hidden;
  void *cell;
  void *output;
  void *buffers;
  int32_t rows;          /* batches computed together in one step */
  int32_t input_offset;  /* element offsets of the current step */
  int32_t state_offset;
  int32_t output_offset;
} lstm_run_t;

/* --- int8 and int16 ----------------------------------------------------------------- */

/* rows x units int16 results of an int8 product, saturated (TFLM's FC with int16 output). */
static void fc_int8(const tflm_lstm_fc_t *fc, const int8_t *input, int32_t rows, int32_t depth,
                    int32_t units, const int8_t *weights, const int32_t *bias, int16_t *out) {
  int32_t r, u, d;
  for (r = 0; r < rows; ++r) {
    for (u = 0; u < units; ++u) {
      const int8_t *w = weights + u * depth;
      int32_t acc = 0;
      for (d = 0; d < depth; ++d) {
        acc = tflm_mac_wrap(acc, (int32_t)w[d] + fc->filter_offset,
                            (int32_t)input[r * depth + d] + fc->input_offset);
      }
      if (bias != NULL) acc = tflm_add_wrap(acc, bias[u]);
      out[r * units + u] = (int16_t)tflm_requantize(acc, fc->multiplier, fc->shift, 0, -32768, 32767);
    }
  }
}

/* The same for int16 inputs: a 64-bit accumulator and int64 biases (TFLM's 16x8 FC). */
static void fc_int16(const tflm_lstm_fc_t *fc, const int16_t *input, int32_t rows, int32_t depth,
                     int32_t units, const int8_t *weights, const int64_t *bias, int16_t *out) {
  int32_t r, u, d, scaled;
  for (r = 0; r < rows; ++r) {
    for (u = 0; u < units; ++u) {
      const int8_t *w = weights + u * depth;
      int64_t acc = 0;
      for (d = 0; d < depth; ++d) {
        acc += (int64_t)(((int32_t)w[d] + fc->filter_offset) *
                         ((int32_t)input[r * depth + d] + fc->input_offset));
      }
      if (bias != NULL) acc += bias[u];
      scaled = tflm_multiply_by_quantized_multiplier_64(acc, fc->multiplier, fc->shift);
      out[r * units + u] = (int16_t)(scaled < -32768 ? -32768 : (scaled > 32767 ? 32767 : scaled));
    }
  }
}

/* Input and recurrent products of gate g into out (int16 Q3.12), by activation type. */
static void gate_products(const tflm_lstm_params_t *p, const lstm_run_t *run, int32_t g,
                          int16_t *out, int16_t *temp) {
  if (p->type == TFLM_TYPE_INT16) {
    fc_int16(&p->input_fc[g], (const int16_t *)run->input + run->input_offset, run->rows,
             p->input_size, p->units, (const int8_t *)run->input_weights[g],
             (const int64_t *)run->bias[g], out);
    fc_int16(&p->recurrent_fc[g], (const int16_t *)run->hidden + run->state_offset, run->rows,
             p->units, p->units, (const int8_t *)run->recurrent_weights[g], NULL, temp);
    return;
  }
  fc_int8(&p->input_fc[g], (const int8_t *)run->input + run->input_offset, run->rows,
          p->input_size, p->units, (const int8_t *)run->input_weights[g],
          (const int32_t *)run->bias[g], out);
  fc_int8(&p->recurrent_fc[g], (const int8_t *)run->hidden + run->state_offset, run->rows,
          p->units, p->units, (const int8_t *)run->recurrent_weights[g], NULL, temp);
}

static void add_saturating_int16(const int16_t *a, const int16_t *b, int32_t count, int16_t *out) {
  int32_t i;
  for (i = 0; i < count; ++i) {
    const int32_t sum = (int32_t)a[i] + (int32_t)b[i];
    out[i] = (int16_t)(sum < -32768 ? -32768 : (sum > 32767 ? 32767 : sum));
  }
}

static void mul_int16(const tflm_lstm_mul_t *m, const int16_t *a, const int16_t *b, int32_t count,
                      int16_t *out16, int8_t *out8) {
  int32_t i;
  for (i = 0; i < count; ++i) {
    const int32_t value = tflm_requantize((int32_t)a[i] * (int32_t)b[i], m->multiplier, m->shift,
                                          m->output_offset, m->act_min, m->act_max);
    if (out8 != NULL) {
      out8[i] = (int8_t)value;
    } else {
      out16[i] = (int16_t)value;
    }
  }
}

static void gate_quantized(const tflm_lstm_params_t *p, const lstm_run_t *run, int32_t g,
                      int16_t *out, int16_t *temp) {
  const int32_t count = run->rows * p->units;
  gate_products(p, run, g, out, temp);
  add_saturating_int16(out, temp, count, out);
  if (g != 2) {
    tflm_logistic_int16(0, 0, count, out, out); /* Q3.12 input: the power-of-two case */
  } else if (p->cell_activation == TFLM_ACT_TANH) {
    tflm_tanh_int16(0, 0, count, out, out);
  }
}

/* The new hidden state tanh(cell) x output gate, written into the hidden state (int8 or
 * int16) and copied to the step's output row. */
static void update_hidden(const tflm_lstm_params_t *p, const lstm_run_t *run,
                          const int16_t *tanh_cell, const int16_t *output_gate, int32_t count) {
  int32_t i;
  if (p->type == TFLM_TYPE_INT16) {
    int16_t *hidden = (int16_t *)run->hidden + run->state_offset;
    int16_t *output = (int16_t *)run->output + run->output_offset;
    mul_int16(&p->hidden_mul, tanh_cell, output_gate, count, hidden, NULL);
    for (i = 0; i < count; ++i) output[i] = hidden[i];
  } else {
    int8_t *hidden = (int8_t *)run->hidden + run->state_offset;
    int8_t *output = (int8_t *)run->output + run->output_offset;
    mul_int16(&p->hidden_mul, tanh_cell, output_gate, count, NULL, hidden);
    for (i = 0; i < count; ++i) output[i] = hidden[i];
  }
}

static void step_quantized(const tflm_lstm_params_t *p, const lstm_run_t *run) {
  const int32_t count = run->rows * p->units;
  int16_t *forget = (int16_t *)run->buffers, *input = forget + count;
  int16_t *cell_gate = input + count, *temp = cell_gate + count;
  int16_t *cell = (int16_t *)run->cell + run->state_offset;
  int32_t tanh_shift = 15 + p->cell_scale_power - 3, i;
  gate_quantized(p, run, 1, forget, temp);
  gate_quantized(p, run, 0, input, temp);
  gate_quantized(p, run, 2, cell_gate, temp);
  mul_int16(&p->forget_mul, forget, cell, count, cell, NULL);
  mul_int16(&p->input_mul, input, cell_gate, count, input, NULL);
  add_saturating_int16(cell, input, count, cell);
  if (p->cell_clip > 0.0f) {
    const int16_t clip = (int16_t)p->quantized_cell_clip;
    for (i = 0; i < count; ++i) {
      const int16_t low = cell[i] < clip ? cell[i] : clip;
      cell[i] = low > (int16_t)-clip ? low : (int16_t)-clip;
    }
  }
  gate_quantized(p, run, 3, input, temp);
  /* tanh of the cell state: TFLM's shift handling for its power-of-two scale */
  tflm_tanh_int16(tanh_shift < 0 ? 3 : 0, tanh_shift < 0 ? -tanh_shift : tanh_shift, count, cell,
                  forget);
  update_hidden(p, run, forget, input, count);
}

/* --- float32 ------------------------------------------------------------------------ */

static void fc_float(const float *input, int32_t rows, int32_t depth, int32_t units,
                     const float *weights, const float *bias, float *out) {
  int32_t r, u, d;
  for (r = 0; r < rows; ++r) {
    for (u = 0; u < units; ++u) {
      float acc = 0.0f;
      for (d = 0; d < depth; ++d) acc += input[r * depth + d] * weights[u * depth + d];
      /* TFLM adds 0.0f when there is no bias, and clamps to the finite range */
      out[r * units + u] = tflm_clamp_float(acc + (bias != NULL ? bias[u] : 0.0f), -FLT_MAX, FLT_MAX);
    }
  }
}

/* TFLM's float logistic, with its cut-offs. */
static float logistic_float(float x) {
  if (x > 16.619047164916992188f) return 1.0f;
  if (x < -9.0f) return expf(x);
  return 1.0f / (1.0f + expf(-x));
}

static void gate_float(const tflm_lstm_params_t *p, const lstm_run_t *run, int32_t g, float *out,
                       float *temp) {
  const int32_t count = run->rows * p->units;
  int32_t i;
  fc_float((const float *)run->input + run->input_offset, run->rows, p->input_size, p->units,
           (const float *)run->input_weights[g], (const float *)run->bias[g], out);
  fc_float((const float *)run->hidden + run->state_offset, run->rows, p->units, p->units,
           (const float *)run->recurrent_weights[g], NULL, temp);
  for (i = 0; i < count; ++i) {
    out[i] = out[i] + temp[i];
    if (g != 2) {
      out[i] = logistic_float(out[i]);
    } else if (p->cell_activation == TFLM_ACT_TANH) {
      out[i] = tanhf(out[i]);
    }
  }
}

static void step_float(const tflm_lstm_params_t *p, const lstm_run_t *run) {
  const int32_t count = run->rows * p->units;
  float *forget = (float *)run->buffers, *input = forget + count;
  float *cell_gate = input + count, *temp = cell_gate + count;
  float *cell = (float *)run->cell + run->state_offset;
  float *hidden = (float *)run->hidden + run->state_offset;
  float *output = (float *)run->output + run->output_offset;
  int32_t i;
  gate_float(p, run, 1, forget, temp);
  gate_float(p, run, 0, input, temp);
  gate_float(p, run, 2, cell_gate, temp);
  for (i = 0; i < count; ++i) {
    float value = tflm_clamp_float(forget[i] * cell[i], -FLT_MAX, FLT_MAX);
    value = value + tflm_clamp_float(input[i] * cell_gate[i], -FLT_MAX, FLT_MAX);
    if (p->cell_clip > 0.0f) {
      const float low = value < p->cell_clip ? value : p->cell_clip;
      value = low < -p->cell_clip ? -p->cell_clip : low;
    }
    cell[i] = value;
  }
  gate_float(p, run, 3, input, temp);
  for (i = 0; i < count; ++i) {
    hidden[i] = tflm_clamp_float(tanhf(cell[i]) * input[i], -FLT_MAX, FLT_MAX);
    output[i] = hidden[i];
  }
}

/* --- driver ------------------------------------------------------------------------- */

static void run_sequence(const tflm_lstm_params_t *p, lstm_run_t *run) {
  const int32_t outer = p->time_major ? 1 : p->batches;
  int32_t b, t;
  run->rows = p->time_major ? p->batches : 1;
  run->input_offset = run->output_offset = run->state_offset = 0;
  for (b = 0; b < outer; ++b) {
    for (t = 0; t < p->steps; ++t) {
      if (p->type != TFLM_TYPE_FLOAT32) {
        step_quantized(p, run);
      } else {
        step_float(p, run);
      }
      run->input_offset += run->rows * p->input_size;
      run->output_offset += run->rows * p->units;
    }
    run->state_offset += p->units; /* batch-major: the next batch's state row */
  }
}

static tflm_status_t lstm_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_lstm_params_t *p = (const tflm_lstm_params_t *)node->user_data;
  lstm_run_t run;
  int32_t g;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_NOT_READY);
  run.input = tflm_node_input_data(ctx, node, TFLM_LSTM_INPUT);
  for (g = 0; g < TFLM_LSTM_GATES; ++g) {
    run.input_weights[g] = tflm_node_input_data(ctx, node, TFLM_LSTM_INPUT_WEIGHTS + g);
    run.recurrent_weights[g] = tflm_node_input_data(ctx, node, TFLM_LSTM_RECURRENT_WEIGHTS + g);
    run.bias[g] = tflm_node_input_data(ctx, node, TFLM_LSTM_BIAS + g);
  }
  run.hidden = tflm_node_input_data(ctx, node, TFLM_LSTM_HIDDEN_STATE);
  run.cell = tflm_node_input_data(ctx, node, TFLM_LSTM_CELL_STATE);
  run.output = tflm_node_output_data(ctx, node, 0);
  run.buffers = tflm_get_scratch(ctx, p->scratch);
  TFLM_KERNEL_CHECK(ctx, node, run.input != NULL && run.hidden != NULL && run.cell != NULL &&
                                   run.output != NULL && run.buffers != NULL,
                    TFLM_ERR_NOT_READY);
  run_sequence(p, &run);
  return TFLM_OK;
}

const tflm_registration_t tflm_op_unidirectional_sequence_lstm = {
    NULL, TFLM_BUILTIN_UNIDIRECTIONAL_SEQUENCE_LSTM, NULL, tflm_lstm_prepare,
    lstm_eval, NULL, NULL}; /* the runtime resets the state tensors as TFLM does */
