/* Decoding of compressed filters; the format is in tflm_decode.h and tflm_gen/compress.py. */
#include "tflm_decode.h"

#include <stddef.h>

#define LUT_ENTRIES (1u << TFLM_DECODE_CODE_BITS)

static uint32_t read_le(const uint8_t *p, int32_t width) {
  uint32_t value = 0;
  int32_t i;
  for (i = width - 1; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

static uint32_t block_offset(const tflm_decode_t *d, int32_t b) {
  return read_le(d->offsets + (size_t)b * (size_t)d->width, d->width);
}

static int32_t code_length(const uint8_t *lengths, int32_t symbol) {
  return (lengths[symbol >> 1] >> ((symbol & 1) * 4)) & 15;
}

/* The Kraft sum of the code lengths must fill the table exactly: every entry of the
 * look-up table then holds a code of 1 to CODE_BITS bits, so decoding always advances. */
static int huffman_complete(const uint8_t *lengths) {
  uint32_t filled = 0;
  int32_t s;
  for (s = 0; s < TFLM_DECODE_ALPHABET; ++s) {
    const int32_t n = code_length(lengths, s);
    if (n > TFLM_DECODE_CODE_BITS) return 0;
    if (n > 0) filled += LUT_ENTRIES >> n;
  }
  return filled == LUT_ENTRIES;
}

/* Offsets ascending from 0, the last within the payload. */
static int offsets_valid(const tflm_decode_t *d, uint32_t payload_bytes) {
  uint32_t previous = 0;
  int32_t b;
  if (block_offset(d, 0) != 0) return 0;
  for (b = 1; b <= d->blocks; ++b) {
    const uint32_t offset = block_offset(d, b);
    if (offset < previous) return 0;
    previous = offset;
  }
  return previous <= payload_bytes;
}

tflm_status_t tflm_decode_open(tflm_decode_t *d, const void *stream, uint32_t length,
                               int32_t channels, int32_t row) {
  const uint8_t *s = (const uint8_t *)stream;
  uint32_t index_bytes, table_bytes;
  if (s == NULL || length < TFLM_DECODE_HEADER_BYTES || channels <= 0 || row <= 0) {
    return TFLM_ERR_MODEL;
  }
  d->codec = s[0];
  d->zero = s[1];
  d->width = s[2];
  if ((d->codec != TFLM_DECODE_ZRLE && d->codec != TFLM_DECODE_HUFFMAN) ||
      (d->width != 2 && d->width != 4) || read_le(s + 4, 4) != (uint32_t)channels ||
      read_le(s + 8, 4) != (uint32_t)row) {
    return TFLM_ERR_MODEL;
  }
  d->channels = channels;
  d->row = row;
  d->group = (int32_t)read_le(s + 12, 4);
  if (d->group <= 0 || d->group > channels || d->group > 0x7FFFFFFF / row) return TFLM_ERR_MODEL;
  d->blocks = (channels + d->group - 1) / d->group;
  index_bytes = (uint32_t)(d->blocks + 1) * (uint32_t)d->width;
  table_bytes = d->codec == TFLM_DECODE_HUFFMAN ? TFLM_DECODE_ALPHABET / 2 : 0;
  if (index_bytes + table_bytes > length - TFLM_DECODE_HEADER_BYTES) return TFLM_ERR_MODEL;
  d->offsets = s + TFLM_DECODE_HEADER_BYTES;
  d->lengths = table_bytes ? d->offsets + index_bytes : NULL;
  d->payload = d->offsets + index_bytes + table_bytes;
  if (!offsets_valid(d, length - TFLM_DECODE_HEADER_BYTES - index_bytes - table_bytes) ||
      (d->lengths != NULL && !huffman_complete(d->lengths))) {
    return TFLM_ERR_MODEL;
  }
  return TFLM_OK;
}

static uint32_t lut_bytes(const tflm_decode_t *d) {
  return d->codec == TFLM_DECODE_HUFFMAN ? LUT_ENTRIES * 2u : 0u;
}

uint32_t tflm_decode_scratch_bytes(const tflm_decode_t *d) {
  return lut_bytes(d) + (uint32_t)d->group * (uint32_t)d->row;
}

/* Canonical codes in (length, symbol) order: entry i of the table holds the symbol whose
 * code is the first `length` bits of i, as symbol << 4 | length. */
void tflm_decode_start(const tflm_decode_t *d, void *scratch) {
  uint16_t *lut = (uint16_t *)scratch;
  uint32_t counts[TFLM_DECODE_CODE_BITS + 1] = {0}, next[TFLM_DECODE_CODE_BITS + 1];
  uint32_t code = 0;
  int32_t s, n;
  if (d->lengths == NULL) return;
  for (s = 0; s < TFLM_DECODE_ALPHABET; ++s) counts[code_length(d->lengths, s)]++;
  counts[0] = 0;
  for (n = 1; n <= TFLM_DECODE_CODE_BITS; ++n) {
    code = (code + counts[n - 1]) << 1;
    next[n] = code;
  }
  for (s = 0; s < TFLM_DECODE_ALPHABET; ++s) {
    const int32_t length = code_length(d->lengths, s);
    uint32_t first, last;
    if (length == 0) continue;
    first = next[length]++ << (TFLM_DECODE_CODE_BITS - length);
    last = first + (LUT_ENTRIES >> length);
    for (; first < last; ++first) lut[first] = (uint16_t)((uint32_t)s << 4 | (uint32_t)length);
  }
}

/* Zero-run-length: stops when `out` is full; a payload that ends early leaves zeros. */
static void zrle_block(const uint8_t *p, const uint8_t *end, uint8_t *out, uint8_t *out_end,
                       uint8_t zero) {
  while (out < out_end) {
    uint32_t token, run;
    if (p >= end) {
      while (out < out_end) *out++ = zero;
      return;
    }
    token = *p++;
    run = token < (uint32_t)(out_end - out) ? token : (uint32_t)(out_end - out);
    for (; run > 0; --run) *out++ = zero;
    if (token < 255u && out < out_end && p < end) *out++ = *p++;
  }
}

/* Huffman: a 32-bit window of the bits, MSB first, refilled a byte at a time (zero bytes
 * past the block's end), one table look-up per symbol. */
static void huffman_block(const uint16_t *lut, const uint8_t *p, const uint8_t *end,
                          uint8_t *out, uint8_t *out_end, uint8_t zero) {
  uint32_t window = 0;
  int32_t bits = 0;
  while (out < out_end) {
    uint32_t entry, symbol;
    while (bits <= 24) {
      window |= (uint32_t)(p < end ? *p++ : 0u) << (24 - bits);
      bits += 8;
    }
    entry = lut[window >> (32 - TFLM_DECODE_CODE_BITS)];
    window <<= entry & 15u;
    bits -= (int32_t)(entry & 15u);
    symbol = entry >> 4;
    if (symbol < 256u) {
      *out++ = (uint8_t)symbol;
    } else {
      uint32_t run = symbol - 255u;
      if (run > (uint32_t)(out_end - out)) run = (uint32_t)(out_end - out);
      for (; run > 0; --run) *out++ = zero;
    }
  }
}

const int8_t *tflm_decode_block(const tflm_decode_t *d, void *scratch, int32_t b,
                                int32_t *count) {
  uint8_t *out = (uint8_t *)scratch + lut_bytes(d);
  const int32_t first = b * d->group;
  const int32_t channels = d->channels - first < d->group ? d->channels - first : d->group;
  const uint8_t *start = d->payload + block_offset(d, b);
  const uint8_t *end = d->payload + block_offset(d, b + 1);
  uint8_t *out_end = out + (size_t)channels * (size_t)d->row;
  *count = channels;
  if (d->codec == TFLM_DECODE_HUFFMAN) {
    huffman_block((const uint16_t *)scratch, start, end, out, out_end, (uint8_t)d->zero);
  } else {
    zrle_block(start, end, out, out_end, (uint8_t)d->zero);
  }
  return (const int8_t *)out;
}
