/* Shared prepare logic and layouts of UNIDIRECTIONAL_SEQUENCE_LSTM (no tag replaces
 * lstm_common.c, so a tag's lstm.c only carries the step loops).
 *
 * Inputs (24, TFLite order): 0 input [batches, steps, input_size] ([steps, batches, ...] when
 * time_major); 1-4 input weights [units, input_size] of the input, forget, cell and output
 * gates; 5-8 recurrent weights [units, units] in the same gate order; 12-15 gate biases
 * [units]; 18 hidden state and 19 cell state, variable tensors of batches * units elements
 * (kept across invokes by the runtime, zeroed on reset).  Peephole (9-11), projection (16-17)
 * and layer-norm (20-23) inputs must be absent, and the input gate present (no CIFG), as in
 * TFLM.  Output [batches, steps, units] (or time-major), a copy of the hidden state per step.
 *
 * Types: float32 throughout; or int8 input, hidden state and output, int8 per-tensor
 * weights, int32 biases and an int16 cell state whose scale is a power of two; or the same
 * with int16 input, hidden state and output and int64 biases (TFLM's 16x8 LSTM).  Gate
 * pre-activations are int16 in Q3.12, gate outputs Q0.15 (fixed scales in TFLM: the
 * operator's intermediate tensors are not read).
 *
 * prepare stores one tflm_lstm_params_t in node->user_data and requests one scratch buffer
 * of 4 * batches * units cells (float or int16). */
#ifndef TFLM_LSTM_COMMON_H
#define TFLM_LSTM_COMMON_H

#include <stdint.h>

#include "tflm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFLM_LSTM_GATES 4 /* gate order everywhere: input, forget, cell, output */

/* One int8 fully connected product feeding a gate (accumulator -> Q3.12). */
typedef struct {
  int32_t multiplier;
  int32_t shift;
  int32_t input_offset;  /* minus the input's (or hidden state's) zero point */
  int32_t filter_offset; /* minus the weights' zero point */
} tflm_lstm_fc_t;

/* One element-wise int16 product requantised to the destination. */
typedef struct {
  int32_t multiplier;
  int32_t shift;
  int32_t output_offset; /* destination zero point */
  int32_t act_min;       /* destination type range */
  int32_t act_max;
} tflm_lstm_mul_t;

typedef struct {
  int32_t type;             /* TFLM_TYPE_FLOAT32, TFLM_TYPE_INT8 or TFLM_TYPE_INT16 */
  int32_t time_major;       /* 1: steps outermost, all batches per step */
  int32_t batches;
  int32_t steps;
  int32_t input_size;
  int32_t units;            /* state dimension */
  int32_t cell_activation;  /* TFLM_ACT_TANH applies tanh to the cell gate; TFLM applies
                               nothing for other codes, and neither do we */
  float cell_clip;          /* > 0: cell state clipped to +-cell_clip */
  int32_t cell_scale_power; /* quantised: cell state scale = 2^cell_scale_power */
  int32_t quantized_cell_clip;
  tflm_lstm_fc_t input_fc[TFLM_LSTM_GATES];
  tflm_lstm_fc_t recurrent_fc[TFLM_LSTM_GATES];
  tflm_lstm_mul_t forget_mul; /* forget gate x cell state -> cell state */
  tflm_lstm_mul_t input_mul;  /* input gate x cell gate -> cell state */
  tflm_lstm_mul_t hidden_mul; /* tanh(cell state) x output gate -> hidden state */
  int32_t scratch;            /* handle of the 4 gate buffers */
} tflm_lstm_params_t;

/* Tensor positions of the inputs. */
#define TFLM_LSTM_INPUT 0
#define TFLM_LSTM_INPUT_WEIGHTS 1     /* + gate */
#define TFLM_LSTM_RECURRENT_WEIGHTS 5 /* + gate */
#define TFLM_LSTM_BIAS 12             /* + gate */
#define TFLM_LSTM_HIDDEN_STATE 18
#define TFLM_LSTM_CELL_STATE 19

tflm_status_t tflm_lstm_prepare(tflm_context_t *ctx, tflm_node_t *node);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_LSTM_COMMON_H */
