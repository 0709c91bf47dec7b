/* Prepare logic of UNIDIRECTIONAL_SEQUENCE_LSTM; see lstm_common.h. */
#include "lstm_common.h"

#include <math.h>
#include <stddef.h>

#include "tflm_quant.h"

/* Inputs TFLM's kernel does not support: peephole, projection and layer norm. */
static const int32_t unsupported_inputs[] = {9, 10, 11, 16, 17, 20, 21, 22, 23};

static int32_t absent(tflm_context_t *ctx, const tflm_node_t *node, int32_t i) {
  tflm_tensor_t view;
  return tflm_node_input(ctx, node, i, &view) == TFLM_OK && view.data == NULL &&
         view.ndims == 0;
}

static int32_t is_matrix(const tflm_tensor_t *t, int32_t rows, int32_t columns) {
  return t->data != NULL && t->ndims == 2 && t->dims[0] == rows && t->dims[1] == columns;
}

/* Shapes as TFLM's ValidateTensorSize checks them. */
static tflm_status_t fill_shapes(tflm_context_t *ctx, tflm_node_t *node, tflm_lstm_params_t *p,
                                 const tflm_tensor_t *input, const tflm_tensor_t *hidden,
                                 const tflm_tensor_t *cell, const tflm_tensor_t *output) {
  TFLM_KERNEL_CHECK(ctx, node, input->ndims == 3 && hidden->ndims == 2 && output->ndims == 3,
                    TFLM_ERR_BAD_SHAPE);
  p->batches = input->dims[p->time_major ? 1 : 0];
  p->steps = input->dims[p->time_major ? 0 : 1];
  p->input_size = input->dims[2];
  p->units = hidden->dims[1];
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(hidden) == p->batches * p->units &&
                                   tflm_tensor_elements(cell) == p->batches * p->units,
                    TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, output->dims[0] == input->dims[0] &&
                                   output->dims[1] == input->dims[1] &&
                                   output->dims[2] == p->units,
                    TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, hidden->is_variable && cell->is_variable, TFLM_ERR_BAD_PARAMS);
  return TFLM_OK;
}

/* Weights and biases of every gate: present, right shape, right type, per-tensor. */
static tflm_status_t check_gate_tensors(tflm_context_t *ctx, tflm_node_t *node,
                                        const tflm_lstm_params_t *p) {
  const int32_t quantized = p->type != TFLM_TYPE_FLOAT32;
  const int32_t weight_type = quantized ? TFLM_TYPE_INT8 : TFLM_TYPE_FLOAT32;
  const int32_t bias_type = p->type == TFLM_TYPE_INT16 ? TFLM_TYPE_INT64
                            : quantized                ? TFLM_TYPE_INT32
                                                       : TFLM_TYPE_FLOAT32;
  tflm_tensor_t in, rec, bias;
  int32_t g;
  for (g = 0; g < TFLM_LSTM_GATES; ++g) {
    tflm_status_t status = tflm_node_input(ctx, node, TFLM_LSTM_INPUT_WEIGHTS + g, &in);
    if (status == TFLM_OK) status = tflm_node_input(ctx, node, TFLM_LSTM_RECURRENT_WEIGHTS + g, &rec);
    if (status == TFLM_OK) status = tflm_node_input(ctx, node, TFLM_LSTM_BIAS + g, &bias);
    if (status != TFLM_OK) return status;
    TFLM_KERNEL_CHECK(ctx, node, is_matrix(&in, p->units, p->input_size) &&
                                     is_matrix(&rec, p->units, p->units),
                      TFLM_ERR_BAD_SHAPE);
    TFLM_KERNEL_CHECK(ctx, node, bias.data != NULL && bias.ndims == 1 && bias.dims[0] == p->units,
                      TFLM_ERR_BAD_SHAPE);
    TFLM_KERNEL_CHECK(ctx, node, in.type == weight_type && rec.type == weight_type &&
                                     bias.type == bias_type,
                      TFLM_ERR_UNSUPPORTED_TYPE);
    TFLM_KERNEL_CHECK(ctx, node, !quantized || (in.nscales == 1 && rec.nscales == 1),
                      TFLM_ERR_BAD_PARAMS);
  }
  return TFLM_OK;
}

/* The gate products' multiplier: the scale product and the division in double.  (With the
 * product rounded to float first, 16x8 LSTMs differ from TFLM by one on some gate values,
 * where the Q15 multiplier of the 64-bit requantisation rounds the other way.) */
static void fill_fc(tflm_lstm_fc_t *fc, const tflm_tensor_t *input, const tflm_tensor_t *weights,
                    float output_scale) {
  const double product = (double)input->scale * (double)weights->scale;
  tflm_quantize_multiplier(product / (double)output_scale, &fc->multiplier, &fc->shift);
  fc->input_offset = -input->zero_point;
  fc->filter_offset = -weights->zero_point;
}

/* TFLM's inter-gate multiplication recipe: scales widened to double, then multiplied. */
static void fill_mul(tflm_lstm_mul_t *mul, float scale_1, float scale_2, float output_scale,
                     int32_t output_zero_point, int32_t output_is_int8) {
  tflm_quantize_multiplier((double)scale_1 * (double)scale_2 / (double)output_scale,
                           &mul->multiplier, &mul->shift);
  mul->output_offset = output_zero_point;
  mul->act_min = output_is_int8 ? -128 : -32768;
  mul->act_max = output_is_int8 ? 127 : 32767;
}

/* The cell state's power-of-two exponent, computed in float as TFLM's CheckedLog2 does. */
static int32_t scale_power(float scale) {
  const float log2_scale = logf(scale) * (1.0f / logf(2.0f));
  return (int32_t)roundf(log2_scale);
}

/* int8 or int16 activations (the hidden state's type), int16 cell state. */
static tflm_status_t fill_quantized(tflm_context_t *ctx, tflm_node_t *node, tflm_lstm_params_t *p,
                               const tflm_tensor_t *input, const tflm_tensor_t *hidden,
                               const tflm_tensor_t *cell) {
  const float gate_input_scale = 0.000244140625f;     /* 2^-12: Q3.12 */
  const float gate_output_scale = 0.000030517578125f; /* 2^-15: Q0.15 */
  double clip;
  int32_t g;
  TFLM_KERNEL_CHECK(ctx, node, hidden->type == p->type && cell->type == TFLM_TYPE_INT16,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, cell->scale > 0.0f && hidden->scale > 0.0f, TFLM_ERR_BAD_PARAMS);
  for (g = 0; g < TFLM_LSTM_GATES; ++g) {
    tflm_tensor_t in, rec;
    tflm_node_input(ctx, node, TFLM_LSTM_INPUT_WEIGHTS + g, &in);
    tflm_node_input(ctx, node, TFLM_LSTM_RECURRENT_WEIGHTS + g, &rec);
    fill_fc(&p->input_fc[g], input, &in, gate_input_scale);
    fill_fc(&p->recurrent_fc[g], hidden, &rec, gate_input_scale);
  }
  fill_mul(&p->forget_mul, gate_output_scale, cell->scale, cell->scale, 0, 0);
  fill_mul(&p->input_mul, gate_output_scale, gate_output_scale, cell->scale, 0, 0);
  fill_mul(&p->hidden_mul, gate_output_scale, gate_output_scale, hidden->scale,
           hidden->zero_point, hidden->type == TFLM_TYPE_INT8);
  p->cell_scale_power = scale_power(cell->scale);
  clip = (double)p->cell_clip / (double)cell->scale;
  clip = clip > -32768.0 ? clip : -32768.0;
  p->quantized_cell_clip = (int32_t)(int16_t)(clip < 32767.0 ? clip : 32767.0);
  return TFLM_OK;
}

static tflm_status_t fetch_states(tflm_context_t *ctx, tflm_node_t *node, tflm_tensor_t *input,
                                  tflm_tensor_t *hidden, tflm_tensor_t *cell,
                                  tflm_tensor_t *output) {
  tflm_status_t status = tflm_node_input(ctx, node, TFLM_LSTM_INPUT, input);
  if (status == TFLM_OK) status = tflm_node_input(ctx, node, TFLM_LSTM_HIDDEN_STATE, hidden);
  if (status == TFLM_OK) status = tflm_node_input(ctx, node, TFLM_LSTM_CELL_STATE, cell);
  if (status == TFLM_OK) status = tflm_node_output(ctx, node, 0, output);
  return status;
}

static tflm_status_t check_node(tflm_context_t *ctx, tflm_node_t *node) {
  uint32_t i;
  TFLM_KERNEL_CHECK(ctx, node, node->inputs_count == 24 && node->outputs_count == 1,
                    TFLM_ERR_BAD_PARAMS);
  for (i = 0; i < sizeof(unsupported_inputs) / sizeof(unsupported_inputs[0]); ++i) {
    TFLM_KERNEL_CHECK(ctx, node, absent(ctx, node, unsupported_inputs[i]), TFLM_ERR_BAD_PARAMS);
  }
  return TFLM_OK;
}

tflm_status_t tflm_lstm_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t input, hidden, cell, output;
  tflm_lstm_params_t *p;
  uint32_t cell_bytes;
  tflm_status_t status = check_node(ctx, node);
  if (status == TFLM_OK) status = fetch_states(ctx, node, &input, &hidden, &cell, &output);
  if (status != TFLM_OK) return status;
  TFLM_KERNEL_CHECK(ctx, node, (input.type == TFLM_TYPE_FLOAT32 || input.type == TFLM_TYPE_INT8 ||
                                input.type == TFLM_TYPE_INT16) &&
                                   output.type == input.type,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p = (tflm_lstm_params_t *)tflm_alloc_persistent(ctx, (uint32_t)sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = input.type;
  p->time_major = tflm_opt_int(node, TFLM_OPT_UNIDIRECTIONAL_SEQUENCE_LSTM_TIME_MAJOR, 0) != 0;
  p->cell_activation = tflm_opt_int(
      node, TFLM_OPT_UNIDIRECTIONAL_SEQUENCE_LSTM_FUSED_ACTIVATION_FUNCTION, TFLM_ACT_NONE);
  p->cell_clip = tflm_opt_float(node, TFLM_OPT_UNIDIRECTIONAL_SEQUENCE_LSTM_CELL_CLIP, 0.0f);
  TFLM_KERNEL_CHECK(ctx, node, p->cell_clip >= 0.0f, TFLM_ERR_BAD_PARAMS);
  status = fill_shapes(ctx, node, p, &input, &hidden, &cell, &output);
  if (status == TFLM_OK) status = check_gate_tensors(ctx, node, p);
  if (status != TFLM_OK) return status;
  if (p->type != TFLM_TYPE_FLOAT32) {
    status = fill_quantized(ctx, node, p, &input, &hidden, &cell);
  } else {
    TFLM_KERNEL_CHECK(ctx, node, hidden.type == TFLM_TYPE_FLOAT32 && cell.type == TFLM_TYPE_FLOAT32,
                      TFLM_ERR_UNSUPPORTED_TYPE);
  }
  if (status != TFLM_OK) return status;
  cell_bytes = p->type == TFLM_TYPE_FLOAT32 ? 4u : 2u;
  node->user_data = p;
  return tflm_request_scratch(
      ctx, 4u * (uint32_t)(p->batches * p->units) * cell_bytes, &p->scratch);
}
