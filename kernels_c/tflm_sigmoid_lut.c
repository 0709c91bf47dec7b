/* int16 sigmoid / tanh lookup (see tflm_sigmoid_lut.h).
 *
 * The table is not a clean rounding of 65536 * sigmoid(i / 24) (a few entries are one
 * above it), so it was measured from the oracle: tests/test_ops_lstm.py
 * (derive_sigmoid_table) runs tflite-micro's int16 TANH with input scale 2^-12 over all
 * 65536 inputs and solves the interpolation for every entry; a test checks that this copy
 * still equals the measured table. */
#include "tflm_sigmoid_lut.h"

const uint16_t tflm_sigmoid_table_uint16[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
};

/* Valid models give shifts of a few bits; a corrupt scale must not make a shift undefined. */
static int32_t bounded_shift(int32_t shift, int32_t most) {
  return shift < 0 ? 0 : (shift > most ? most : shift);
}

/* TFLM's input rescaling: returns the multiplier and shift actually applied. */
static void effective_scaling(int32_t *multiplier, int32_t *left_shift) {
  *left_shift = bounded_shift(*left_shift, *multiplier == 0 ? 29 : 30);
  if (*multiplier == 0) {
    *multiplier = (int32_t)3 << *left_shift;
    *left_shift = 0;
  }
}

static int32_t rescale(int16_t x, int32_t multiplier, int32_t left_shift) {
  const int32_t round = left_shift > 0 ? (int32_t)1 << (left_shift - 1) : 0;
  /* Wrapping product: a corrupt or missing scale leaves multiplier 3 << 29 (see above). */
  const uint32_t scaled = (uint32_t)(int32_t)x * (uint32_t)multiplier + (uint32_t)round;
  return (int32_t)scaled >> left_shift;
}

void tflm_logistic_int16(int32_t multiplier, int32_t left_shift, int32_t count,
                         const int16_t *input, int16_t *output) {
  int32_t i;
  effective_scaling(&multiplier, &left_shift);
  for (i = 0; i < count; ++i) {
    const int32_t x = rescale(input[i], multiplier, left_shift);
    const uint32_t magnitude = x < 0 ? 0u - (uint32_t)x : (uint32_t)x; /* INT32_MIN too */
    const uint32_t segment = magnitude >> 9; /* 7 input fraction bits plus the 3/4 scale */
    uint32_t result;
    if (segment >= UINT32_C(255)) {
      result = (uint32_t)0x7FFF << 10;
    } else {
      const uint32_t lo = tflm_sigmoid_table_uint16[segment];
      const uint32_t hi = tflm_sigmoid_table_uint16[segment + 1];
      result = (lo << 9) + (magnitude & UINT32_C(0x1FF)) * (hi - lo);
    }
    /* sigmoid(-x) = 1 - sigmoid(x), rounded the way TFLM rounds it */
    result = x >= 0 ? result + (UINT32_C(1) << 9)
                    : (UINT32_C(1) << 25) - result + (UINT32_C(1) << 9) - UINT32_C(1);
    output[i] = (int16_t)(result >> 10);
  }
}

void tflm_tanh_int16(int32_t multiplier, int32_t left_shift, int32_t count,
                     const int16_t *input, int16_t *output) {
  int32_t i;
  effective_scaling(&multiplier, &left_shift);
  for (i = 0; i < count; ++i) {
    const int32_t x = rescale(input[i], multiplier, left_shift);
    const uint32_t magnitude = x < 0 ? 0u - (uint32_t)x : (uint32_t)x; /* INT32_MIN too */
    const uint32_t segment = magnitude >> 8; /* tanh(x) = 2 sigmoid(2x) - 1 */
    int32_t result;
    if (segment >= UINT32_C(255)) {
      result = (int32_t)0xFFFF << 8;
    } else {
      const uint32_t lo = tflm_sigmoid_table_uint16[segment];
      const uint32_t hi = tflm_sigmoid_table_uint16[segment + 1];
      result = (int32_t)((lo << 8) + (magnitude & UINT32_C(0xFF)) * (hi - lo));
    }
    result = x >= 0 ? result - ((int32_t)1 << 23) + ((int32_t)1 << 7)
                    : -result + ((int32_t)1 << 23) + ((int32_t)1 << 7) - 1;
    output[i] = (int16_t)(result >> 8);
  }
}
