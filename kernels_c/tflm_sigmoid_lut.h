/* int16 sigmoid and tanh through TFLM's 256-entry interpolated table (the int16 LOGISTIC /
 * TANH reference kernels and the integer LSTM gates use the same arithmetic).
 *
 * Inputs are first rescaled as TFLM does: multiplier 0 means the power-of-two case, where
 * the input is multiplied by 3 << left_shift (the 3/4 range expansion folded in); otherwise
 * input * multiplier is rounded right by left_shift.  Outputs are Q0.15. */
#ifndef TFLM_SIGMOID_LUT_H
#define TFLM_SIGMOID_LUT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 65536 * sigmoid(i / 24) for i = 0..255, as TFLM's kernels see it (see the .c file for how
 * the values were obtained). */
extern const uint16_t tflm_sigmoid_table_uint16[256];

void tflm_logistic_int16(int32_t multiplier, int32_t left_shift, int32_t count,
                         const int16_t *input, int16_t *output);
void tflm_tanh_int16(int32_t multiplier, int32_t left_shift, int32_t count,
                     const int16_t *input, int16_t *output);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_SIGMOID_LUT_H */
