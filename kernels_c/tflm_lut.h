/* Lookup tables of activations, built and read with the arithmetic of TFLM's (and
 * LiteRT's) reference kernels so results are bit-exact: 256 entries for int8, interpolated
 * 513-entry tables for int16 (int16 SOFTMAX, GELU). */
#ifndef TFLM_LUT_H
#define TFLM_LUT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fills the 256-entry int8 table of func: each stored value v dequantised
 * (input_scale * (v - input_zero_point)), mapped, multiplied by 1 / output_scale, rounded
 * half away from zero, offset by output_zero_point and clamped; the entry of v is at index
 * (uint8_t)v.  Float arithmetic throughout (call from prepare). */
void tflm_lut_generate_int8(float (*func)(float), float input_scale, int32_t input_zero_point,
                            float output_scale, int32_t output_zero_point, int8_t *lut);

/* output[i] = lut[(uint8_t)input[i]] for count elements. */
void tflm_lut_apply_int8(const int8_t *lut, const int8_t *input, int8_t *output, int32_t count);

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
