/* Decoding of compressed filters; the format is in tflm_decode.h and tflm_gen/compress.py. */
#include "tflm_decode.h"

#include <stddef.h>
#include <stdint.h>

#include "tflm_compiler.h"

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

/* The Kraft sum of each code (literals 0..255, runs 256..ALPHABET - 1) must fill its
 * table exactly: every entry then holds a code of 1 to CODE_BITS bits, so decoding always
 * advances. */
static int code_complete(const uint8_t *lengths, int32_t first, int32_t end) {
  uint32_t filled = 0;
  int32_t s;
  for (s = first; s < end; ++s) {
    const int32_t n = code_length(lengths, s);
    if (n > TFLM_DECODE_CODE_BITS) return 0;
    if (n > 0) filled += LUT_ENTRIES >> n;
  }
  return filled == LUT_ENTRIES;
}

static int huffman_complete(const uint8_t *lengths) {
  return code_complete(lengths, 0, 256) && code_complete(lengths, 256, TFLM_DECODE_ALPHABET);
}

/* Every entry of precomputed look-up tables consumes 1 to CODE_BITS bits: the window then
 * always holds the bits the next code needs (any symbol is safe: huffman_block bounds
 * runs by the block's end). */
static int lut_valid(const uint16_t *lut) {
  uint32_t i;
  for (i = 0; i < 2u * LUT_ENTRIES; ++i) {
    const uint32_t length = lut[i] & 15u;
    if (length == 0u || length > TFLM_DECODE_CODE_BITS) return 0;
  }
  return 1;
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

/* The header's fields and where the index, table and payload are; TFLM_ERR_MODEL when they
 * do not fit in `length` bytes.  *payload_bytes receives the payload's length. */
static tflm_status_t read_header(tflm_decode_t *d, const uint8_t *s, uint32_t length,
                                 const void *shared, uint32_t shared_bytes, int32_t channels,
                                 int32_t row, uint32_t *payload_bytes) {
  uint32_t index_bytes, live_bytes, table_bytes;
  if (s == NULL || length < TFLM_DECODE_HEADER_BYTES || channels <= 0 || row <= 0) {
    return TFLM_ERR_MODEL;
  }
  d->codec = s[0];
  d->zero = s[1];
  d->width = s[2];
  if (d->codec < TFLM_DECODE_ZRLE || d->codec > TFLM_DECODE_HUFFMAN_SHARED ||
      (d->codec == TFLM_DECODE_HUFFMAN_SHARED &&
       (shared == NULL || shared_bytes < TFLM_DECODE_ALPHABET / 2)) ||
      (d->width != 2 && d->width != 4) || (s[3] & ~TFLM_DECODE_LIVE_MAP) != 0 ||
      read_le(s + 4, 4) != (uint32_t)channels ||
      read_le(s + 8, 4) != (uint32_t)row) {
    return TFLM_ERR_MODEL;
  }
  d->channels = channels;
  d->row = row;
  d->group = (int32_t)read_le(s + 12, 4);
  if (d->group <= 0 || d->group > channels || d->group > 0x7FFFFFFF / row) return TFLM_ERR_MODEL;
  d->blocks = (channels + d->group - 1) / d->group;
  index_bytes = (uint32_t)(d->blocks + 1) * (uint32_t)d->width;
  live_bytes = s[3] ? ((uint32_t)channels + 7u) / 8u : 0u;
  table_bytes = d->codec == TFLM_DECODE_HUFFMAN ? TFLM_DECODE_ALPHABET / 2 : 0;
  if (index_bytes + live_bytes + table_bytes > length - TFLM_DECODE_HEADER_BYTES) {
    return TFLM_ERR_MODEL;
  }
  d->offsets = s + TFLM_DECODE_HEADER_BYTES;
  d->live = live_bytes ? d->offsets + index_bytes : NULL;
  d->lengths = table_bytes ? d->offsets + index_bytes + live_bytes : NULL;
  d->lut = NULL;
  if (d->codec == TFLM_DECODE_HUFFMAN_SHARED) {
    d->lengths = (const uint8_t *)shared;
    if (shared_bytes >= TFLM_DECODE_ALPHABET / 2 + 4u * LUT_ENTRIES &&
        ((uintptr_t)(d->lengths + TFLM_DECODE_ALPHABET / 2) & 1u) == 0) {
      d->lut = (const uint16_t *)(const void *)(d->lengths + TFLM_DECODE_ALPHABET / 2);
    }
  }
  d->payload = d->offsets + index_bytes + live_bytes + table_bytes;
  *payload_bytes = length - TFLM_DECODE_HEADER_BYTES - index_bytes - live_bytes - table_bytes;
  return TFLM_OK;
}

tflm_status_t tflm_decode_open(tflm_decode_t *d, const void *stream, uint32_t length,
                               const void *shared, uint32_t shared_bytes, int32_t channels,
                               int32_t row) {
  uint32_t payload_bytes;
  tflm_status_t status = read_header(d, (const uint8_t *)stream, length, shared, shared_bytes,
                                     channels, row, &payload_bytes);
  if (status != TFLM_OK) return status;
  if (!offsets_valid(d, payload_bytes) || (d->lengths != NULL && !huffman_complete(d->lengths)) ||
      (d->lut != NULL && !lut_valid(d->lut))) {
    return TFLM_ERR_MODEL;
  }
  return TFLM_OK;
}

tflm_status_t tflm_decode_reopen(tflm_decode_t *d, const void *stream, uint32_t length,
                                 const void *shared, uint32_t shared_bytes, int32_t channels,
                                 int32_t row) {
  uint32_t payload_bytes;
  return read_header(d, (const uint8_t *)stream, length, shared, shared_bytes, channels, row,
                     &payload_bytes);
}

/* The literal look-up table, then the run one. */
static uint32_t lut_bytes(const tflm_decode_t *d) {
  return d->lengths != NULL ? 2u * LUT_ENTRIES * 2u : 0u;
}

uint32_t tflm_decode_scratch_bytes(const tflm_decode_t *d) {
  return lut_bytes(d) + (uint32_t)d->group * (uint32_t)d->row;
}

/* Entries out[0 .. count) set to `value`, two at a time when count is even (out is then
 * 4-byte aligned: a code's entries are aligned to their count). */
static TFLM_ALWAYS_INLINE void fill_entries(uint16_t *out, uint32_t count, uint32_t value) {
  if (count == 1u) {
    *out = (uint16_t)value;
    return;
  }
  for (value *= 0x10001u; count > 0u; count -= 2u, out += 2) *(uint32_t *)(void *)out = value;
}

/* The entries of `symbol`'s code of `length` bits from next[length] on, which moves past
 * them; lengths 0 (no code) and above CODE_BITS (refused by tflm_decode_open) are skipped. */
static TFLM_ALWAYS_INLINE void put_code(uint16_t *lut, uint32_t *next, uint32_t symbol,
                                        uint32_t length) {
  if (length - 1u >= TFLM_DECODE_CODE_BITS) return;
  fill_entries(lut + next[length], LUT_ENTRIES >> length, symbol << 4 | length);
  next[length] += LUT_ENTRIES >> length;
}

/* Canonical codes of symbols first..end - 1 (both even) in (length, symbol) order: entry i
 * of `lut` holds the symbol (less `first`) whose code is the first `length` bits of i, as
 * symbol << 4 | length.  Runs once per eval of every coded op (9,000 instructions on the
 * Cortex-M4 before this form, a fifth of a 1x1 kws layer's decoding): the 4-bit lengths are
 * read a byte (two symbols) at a time, bytes of two unused symbols skipped, and next[n] is
 * the first entry of the next code of n bits (the codes of fewer bits fill the entries
 * before). */
static void build_lut(const uint8_t *lengths, int32_t first, int32_t end, uint16_t *lut) {
  uint32_t counts[16] = {0}, next[TFLM_DECODE_CODE_BITS + 1], entry = 0;
  const uint8_t *p, *stop = lengths + end / 2;
  uint32_t symbol = 0;
  int32_t n;
  for (p = lengths + first / 2; p < stop; ++p) {
    counts[*p & 15u]++;
    counts[*p >> 4]++;
  }
  for (n = 1; n <= TFLM_DECODE_CODE_BITS; ++n) {
    next[n] = entry;
    entry += counts[n] << (TFLM_DECODE_CODE_BITS - n);
  }
  for (p = lengths + first / 2; p < stop; ++p, symbol += 2u) {
    const uint32_t pair = *p;
    if (pair == 0u) continue;
    put_code(lut, next, symbol, pair & 15u);
    put_code(lut, next, symbol + 1u, pair >> 4);
  }
}

void tflm_decode_start(const tflm_decode_t *d, void *scratch) {
  if (d->lengths == NULL || d->lut != NULL) return;
  build_lut(d->lengths, 0, 256, (uint16_t *)scratch);
  build_lut(d->lengths, 256, TFLM_DECODE_ALPHABET, (uint16_t *)scratch + LUT_ENTRIES);
}

/* The block filled with the zero byte, a word at a time (`out` is 4-byte aligned): runs
 * then only move the output pointer. */
static void fill_zero(uint8_t *out, uint8_t *out_end, uint8_t zero) {
  const uint32_t word = zero * 0x01010101u;
  for (; out + 4 <= out_end; out += 4) *(uint32_t *)(void *)out = word;
  for (; out < out_end; ++out) *out = zero;
}

/* Zero-run-length: stops when `out` is full; a payload that ends early leaves zeros. */
static void zrle_block(const uint8_t *p, const uint8_t *end, uint8_t *out, uint8_t *out_end) {
  while (out < out_end && p < end) {
    const uint32_t token = *p++;
    out += token < (uint32_t)(out_end - out) ? token : (uint32_t)(out_end - out);
    if (token < 255u && out < out_end && p < end) *out++ = *p++;
  }
}

/* The next code's table entry; the window holds at least CODE_BITS bits. */
static TFLM_ALWAYS_INLINE uint32_t next_symbol(const uint16_t *lut, uint32_t *window,
                                               int32_t *bits) {
  const uint32_t entry = lut[*window >> (32 - TFLM_DECODE_CODE_BITS)];
  *window <<= entry & 15u;
  *bits -= (int32_t)(entry & 15u);
  return entry >> 4;
}

/* Tops the window up to more than 16 bits (a run code and a literal code at most), 16 at a
 * time while the payload has two more bytes, else a byte at a time with zero bytes past
 * the payload's end. */
static TFLM_ALWAYS_INLINE void refill(const uint8_t **p, const uint8_t *end, uint32_t *window,
                                      int32_t *bits) {
  if (*bits > 16) return;
  if (end - *p >= 2) {
    *window |= ((uint32_t)(*p)[0] << 8 | (*p)[1]) << (16 - *bits);
    *p += 2;
    *bits += 16;
    return;
  }
  while (*bits <= 16) {
    *window |= (uint32_t)(*p < end ? *(*p)++ : 0u) << (24 - *bits);
    *bits += 8;
  }
}

/* Huffman: a 32-bit window of the bits, MSB first.  A run that reaches the block's end
 * ends it (a trailing run has no literal); a full run has no literal either. */
static void huffman_block(const uint16_t *literals, const uint8_t *p, const uint8_t *end,
                          uint8_t *out, uint8_t *out_end) {
  const uint16_t *runs = literals + LUT_ENTRIES;
  uint32_t window = 0;
  int32_t bits = 0;
  for (;;) {
    uint32_t run;
    refill(&p, end, &window, &bits);
    run = next_symbol(runs, &window, &bits);
    if (run >= (uint32_t)(out_end - out)) return;
    out += run;
    if (run == TFLM_DECODE_RUNS - 1) continue;
    *out++ = (uint8_t)next_symbol(literals, &window, &bits);
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
  fill_zero(out, out_end, (uint8_t)d->zero);
  if (d->lengths != NULL) { /* it may read on into the next blocks' bits, never decode them */
    huffman_block(d->lut != NULL ? d->lut : (const uint16_t *)scratch, start, d->payload + block_offset(d, d->blocks),
                  out, out_end);
  } else {
    zrle_block(start, end, out, out_end);
  }
  return (const int8_t *)out;
}

static int32_t channel_live(const tflm_decode_t *d, int32_t c) {
  return d->live == NULL || ((d->live[c >> 3] >> (c & 7)) & 1);
}

/* The end of the run of channels from `first` that are all live or all dead. */
static int32_t same_run(const tflm_decode_t *d, int32_t first, int32_t end, int32_t *live) {
  int32_t c = first + 1;
  *live = channel_live(d, first);
  while (c < end && channel_live(d, c) == *live) ++c;
  return c;
}

/* Dead runs shorter than TFLM_DECODE_MIN_DEAD_BYTES of weights count as live (a kernel
 * call more costs more than they save; tflm_gen/compress.py skips_channels writes the
 * live map only when a longer one exists). */
int32_t tflm_decode_run(const tflm_decode_t *d, int32_t first, int32_t end, int32_t *live) {
  const int32_t shortest = d->row >= TFLM_DECODE_MIN_DEAD_BYTES
                               ? 1
                               : (TFLM_DECODE_MIN_DEAD_BYTES + d->row - 1) / d->row;
  int32_t next = same_run(d, first, end, live), after, next_live;
  if (!*live && next - first >= shortest) return next;
  *live = 1;
  while (next < end) {
    after = same_run(d, next, end, &next_live);
    if (!next_live && after - next >= shortest) break;
    next = after;
  }
  return next;
}
