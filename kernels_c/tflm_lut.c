/* Interpolated lookup tables: see tflm_lut.h. */
#include "tflm_lut.h"

#include <math.h>

/* value clamped to [lo, hi] before the conversion, NaN as 0: a huge or tiny scale must not
 * make the float-to-int conversion undefined (C leaves out-of-range and NaN undefined). */
static int32_t tflm_lut_clamp_to_int(float value, float lo, float hi) {
  if (value != value) return 0;
  value = value < lo ? lo : value;
  return (int32_t)(hi < value ? hi : value);
}

void tflm_lut_generate_int8(float (*func)(float), float input_scale, int32_t input_zero_point,
                            float output_scale, int32_t output_zero_point, int8_t *lut) {
  const float inverse_scale = 1.0f / output_scale;
  int32_t v;
  for (v = -128; v <= 127; ++v) {
    const float rescaled = roundf(func(input_scale * (float)(v - input_zero_point)) *
                                  inverse_scale);
    /* Clamping in float first gives the int clamp's result for every finite value. */
    lut[(uint8_t)(int8_t)v] =
        (int8_t)tflm_lut_clamp_to_int(rescaled + (float)output_zero_point, -128.0f, 127.0f);
  }
}

void tflm_lut_apply_int8(const int8_t *lut, const int8_t *input, int8_t *output, int32_t count) {
  int32_t i;
  for (i = 0; i < count; ++i) {
    output[i] = lut[(uint8_t)input[i]];
  }
}

static int16_t tflm_lut_clamp_int16(float value) {
  /* std::max, then std::min; NaN (only from degenerate ranges) as 0 */
  return (int16_t)tflm_lut_clamp_to_int(value, -32768.0f, 32767.0f);
}

/* Entry i: the rounded sample at the segment start, minus half (rounded) of how far the
 * interpolated midpoint lies from the true midpoint. */
static float tflm_lut_entry(float (*func)(float), float input_min, float step, float scaling,
                            int32_t i) {
  const float value = func(input_min + (float)i * step);
  const float midpoint = func(input_min + (float)i * step + step / 2.0f);
  const float next = func(input_min + (float)(i + 1) * step);
  const float sample = roundf(value * scaling);
  const float interpolated = roundf((next * scaling + roundf(value * scaling)) / 2.0f);
  const float midpoint_error = interpolated - roundf(midpoint * scaling);
  return sample - roundf(midpoint_error / 2.0f);
}

void tflm_lut_generate_int16(float (*func)(float), float input_min, float input_max,
                             float output_min, float output_max, int16_t *lut) {
  const int32_t steps = TFLM_LUT_INT16_SIZE - 1;
  const float step = (input_max - input_min) / (float)steps;
  const float scaling = 65536.0f / (output_max - output_min); /* int16 levels per unit */
  int32_t i;
  for (i = 0; i < steps; ++i) {
    lut[i] = tflm_lut_clamp_int16(tflm_lut_entry(func, input_min, step, scaling, i));
  }
  lut[steps] = tflm_lut_clamp_int16(roundf(func(input_max) * scaling));
}

int16_t tflm_lut_lookup_int16(int16_t value, const int16_t *lut) {
  /* Arithmetic shift: value >> 7 is in [-256, 255]. */
  const int32_t index = 256 + ((int32_t)value >> 7);
  const int32_t offset = (int32_t)value & 0x7f;
  const int32_t base = lut[index];
  const int32_t slope = (int32_t)lut[index + 1] - base;
  return (int16_t)(base + ((slope * offset + 64) >> 7));
}
