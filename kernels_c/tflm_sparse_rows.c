/* Row-sparse FULLY_CONNECTED filters; see tflm_sparse_rows.h. */
#include "tflm_sparse_rows.h"

#include "tflm_quant.h"

static uint32_t read_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int32_t tflm_sparse_rows_is(const void *stream, uint32_t length) {
  return stream != NULL && length >= TFLM_SPARSE_ROWS_HEADER_BYTES &&
         ((const uint8_t *)stream)[0] == TFLM_SPARSE_ROWS;
}

/* The bytes of one row at `row` (at most `left` of them), 0 when it does not fit or a
 * token reaches past `depth` inputs. */
static uint32_t check_row(const uint8_t *row, uint32_t left, int32_t depth) {
  uint32_t count, gap_bytes, t;
  int64_t position = 0;
  if (left < 2u) return 0;
  count = (uint32_t)row[0] | (uint32_t)row[1] << 8;
  gap_bytes = (count + 1u) / 2u;
  if ((uint64_t)gap_bytes + count > (uint64_t)left - 2u) return 0;
  for (t = 0; t < count; ++t) {
    position += ((row[2u + t / 2u] >> (4u * (t & 1u))) & 15u) + 1;
  }
  return position <= depth ? 2u + gap_bytes + count : 0u;
}

tflm_status_t tflm_sparse_rows_check(const void *stream, uint32_t length, int32_t rows,
                                     int32_t depth) {
  const uint8_t *s = (const uint8_t *)stream;
  uint32_t at = TFLM_SPARSE_ROWS_HEADER_BYTES;
  int32_t r;
  if (!tflm_sparse_rows_is(stream, length) || s[1] != 0 || s[2] != 0 || s[3] != 0 ||
      rows <= 0 || depth <= 0 || read_u32(s + 4) != (uint32_t)rows ||
      read_u32(s + 8) != (uint32_t)depth ||
      read_u32(s + 12) != length - TFLM_SPARSE_ROWS_HEADER_BYTES) {
    return TFLM_ERR_MODEL;
  }
  for (r = 0; r < rows; ++r) {
    const uint32_t bytes = check_row(s + at, length - at, depth);
    if (bytes == 0) return TFLM_ERR_MODEL;
    at += bytes;
  }
  return at == length ? TFLM_OK : TFLM_ERR_MODEL;
}

const uint8_t *tflm_sparse_rows_first(const void *stream) {
  return (const uint8_t *)stream + TFLM_SPARSE_ROWS_HEADER_BYTES;
}

const uint8_t *tflm_sparse_rows_dot(const uint8_t *row, const int8_t *x, int32_t offset,
                                    int32_t *acc) {
  const int32_t count = (int32_t)row[0] | (int32_t)row[1] << 8;
  const uint8_t *gaps = row + 2;
  const int8_t *literals = (const int8_t *)(const void *)(gaps + (count + 1) / 2);
  int32_t sum = 0, t;
  for (t = 0; t + 1 < count; t += 2) {
    const int32_t pair = gaps[t >> 1];
    x += pair & 15;
    sum = tflm_mac_wrap(sum, literals[t], (int32_t)*x++ + offset);
    x += pair >> 4;
    sum = tflm_mac_wrap(sum, literals[t + 1], (int32_t)*x++ + offset);
  }
  if (t < count) {
    x += gaps[t >> 1] & 15;
    sum = tflm_mac_wrap(sum, literals[t], (int32_t)*x + offset);
  }
  *acc = sum;
  return (const uint8_t *)(const void *)(literals + count);
}
