/* Interpolated 513-entry lookup tables for int16 activations (int16 SOFTMAX), built and
 * read with the arithmetic of TFLM's reference kernels so results are bit-exact. */
#ifndef TFLM_LUT_H
#define TFLM_LUT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Entries of an int16 -> int16 table: 512 segments plus the end point of the last one. */
#define TFLM_LUT_INT16_SIZE 513

/* Fills lut with func sampled over [input_min, input_max] and scaled so that
 * [output_min, output_max] spans the int16 range.  Each entry is nudged by half the error
 * that linear interpolation makes at its segment's midpoint.  Float arithmetic throughout
 * (call from prepare: it evaluates func 1537 times). */
void tflm_lut_generate_int16(float (*func)(float), float input_min, float input_max,
                             float output_min, float output_max, int16_t *lut);

/* The table at int16 input value: segment (value >> 7) + 256, linearly interpolated with
 * the low 7 bits, rounded. */
int16_t tflm_lut_lookup_int16(int16_t value, const int16_t *lut);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_LUT_H */
