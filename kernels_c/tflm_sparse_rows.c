/* Row-sparse FULLY_CONNECTED filters (SPARSE_GROUPS); see tflm_sparse_rows.h. */
#include "tflm_sparse_rows.h"

#include "tflm_quant.h"

static uint32_t read_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int32_t tflm_sparse_rows_is(const void *stream, uint32_t length) {
  const uint8_t *s = (const uint8_t *)stream;
  return stream != NULL && length >= TFLM_SPARSE_ROWS_HEADER_BYTES &&
         (s[0] == TFLM_SPARSE_GROUPS || s[0] == TFLM_SPARSE_NARROW);
}

/* A row's token count: u8 or u16 (count_bytes 1 or 2). */
static uint32_t read_count(const uint8_t *p, uint32_t count_bytes) {
  return count_bytes == 1u ? (uint32_t)p[0] : (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

/* The width of the stream's counts (its flags byte checked). */
static uint32_t count_width(const uint8_t *s) {
  return (s[2] & TFLM_SPARSE_COUNT_BYTE) != 0 ? 1u : 2u;
}

/* The inputs n tokens cover: their gap nibbles from `slot` on, plus one each. */
static uint32_t tokens_span(const uint8_t *gaps, uint32_t slot, uint32_t n) {
  uint32_t span = n, i;
  for (i = slot; i < slot + n; ++i) span += (gaps[i >> 1] >> (4u * (i & 1u))) & 15u;
  return span;
}

/* Checks the rows of a SPARSE_GROUPS stream whose header checked out: every row's tail
 * and groups inside their regions and its tokens inside `depth` inputs, the regions used
 * exactly. */
static tflm_status_t groups_check(const uint8_t *s, uint32_t length, int32_t rows,
                                  int32_t depth) {
  const uint32_t width = count_width(s);
  uint64_t groups = TFLM_SPARSE_ROWS_HEADER_BYTES, tails, group_end;
  int32_t r;
  group_end = tails = groups + read_u32(s + 12);
  if (group_end > length) return TFLM_ERR_MODEL;
  for (r = 0; r < rows; ++r) {
    uint32_t n, t, size, g;
    uint64_t span;
    if (tails + width > length) return TFLM_ERR_MODEL;
    n = read_count(s + tails, width);
    t = n & 7u;
    size = (t + 1u) / 2u;
    tails += width;
    if (tails + size + t > length || groups + 12u * (uint64_t)(n >> 3) > group_end) {
      return TFLM_ERR_MODEL;
    }
    span = tokens_span(s + tails, t & 1u, t);
    tails += size + t;
    for (g = 0; g < (n >> 3); ++g, groups += 12u) span += tokens_span(s + groups, 0, 8);
    if (span > (uint64_t)depth) return TFLM_ERR_MODEL;
  }
  return groups == group_end && tails == length ? TFLM_OK : TFLM_ERR_MODEL;
}

/* The bytes of a row's tail of t tokens (gap nibbles, then codes) and where its codes
 * start (the padding bits before them). */
static uint32_t narrow_tail_bytes(uint32_t t, uint32_t width) {
  return (t + 1u) / 2u + (t * width + 7u) / 8u;
}

static uint32_t narrow_tail_skip(uint32_t t, uint32_t width) {
  return (8u - t) * width % 8u;
}

/* Checks the rows of a SPARSE_NARROW stream whose common header checked out: W and t, every
 * row inside the stream (before its 3 bytes of padding), its first token moving at least
 * one input, its tokens inside `depth` inputs. */
static tflm_status_t narrow_check(const uint8_t *s, uint32_t length, int32_t rows,
                                  int32_t depth) {
  const uint32_t width = s[3], t = read_u32(s + 12), count_bytes = count_width(s);
  const uint8_t *p = s + TFLM_SPARSE_ROWS_HEADER_BYTES, *end;
  int32_t r;
  if (width < 2u || width > 7u || t < 1u || t + (1u << (width - 1u)) > 128u ||
      length < TFLM_SPARSE_ROWS_HEADER_BYTES + 3u) {
    return TFLM_ERR_MODEL;
  }
  end = s + length - 3u;
  for (r = 0; r < rows; ++r) {
    uint32_t n, tail, g;
    uint64_t span;
    if (p + count_bytes > end) return TFLM_ERR_MODEL;
    n = read_count(p, count_bytes);
    tail = n & 7u;
    p += count_bytes;
    if ((uint64_t)(end - p) <
        narrow_tail_bytes(tail, width) + (uint64_t)(n >> 3) * (4u + width)) {
      return TFLM_ERR_MODEL;
    }
    /* the first token's gap: in the tail's first slot, or the first group's */
    if (n > 0u && ((tail > 0u ? p[0] >> (4u * (tail & 1u))
                              : p[narrow_tail_bytes(tail, width)]) & 15u) == 0u) {
      return TFLM_ERR_MODEL;
    }
    span = tokens_span(p, tail & 1u, tail) - tail; /* the gaps' sum */
    p += narrow_tail_bytes(tail, width);
    for (g = 0; g < (n >> 3); ++g, p += 4u + width) span += tokens_span(p, 0, 8) - 8u;
    if (span > (uint64_t)depth) return TFLM_ERR_MODEL;
  }
  return p == end ? TFLM_OK : TFLM_ERR_MODEL;
}

tflm_status_t tflm_sparse_rows_check(const void *stream, uint32_t length, int32_t rows,
                                     int32_t depth) {
  const uint8_t *s = (const uint8_t *)stream;
  if (!tflm_sparse_rows_is(stream, length) || s[1] != 0 ||
      (s[2] & ~TFLM_SPARSE_COUNT_BYTE) != 0 || (s[0] == TFLM_SPARSE_GROUPS && s[3] != 0) ||
      rows <= 0 || depth <= 0 || read_u32(s + 4) != (uint32_t)rows ||
      read_u32(s + 8) != (uint32_t)depth) {
    return TFLM_ERR_MODEL;
  }
  return s[0] == TFLM_SPARSE_GROUPS ? groups_check(s, length, rows, depth)
                                    : narrow_check(s, length, rows, depth);
}

void tflm_sparse_groups_start(const void *stream, tflm_sparse_groups_t *walk) {
  const uint8_t *s = (const uint8_t *)stream;
  walk->groups = s + TFLM_SPARSE_ROWS_HEADER_BYTES;
  walk->tails = walk->groups + read_u32(s + 12);
  walk->count_bytes = count_width(s);
}

/* acc plus the n tokens whose gap nibbles start at `slot` of `gaps`; *x advanced. */
static int32_t tokens_dot(const uint8_t *gaps, uint32_t slot, uint32_t n,
                          const int8_t *literals, const int8_t **x, int32_t offset,
                          int32_t acc) {
  const int8_t *at = *x;
  uint32_t i;
  for (i = 0; i < n; ++i, ++slot) {
    at += (gaps[slot >> 1] >> (4u * (slot & 1u))) & 15u;
    acc = tflm_mac_wrap(acc, literals[i], (int32_t)*at++ + offset);
  }
  *x = at;
  return acc;
}

int32_t tflm_sparse_groups_dot(tflm_sparse_groups_t *walk, const int8_t *x, int32_t offset) {
  const uint32_t n = read_count(walk->tails, walk->count_bytes), t = n & 7u;
  const uint32_t size = (t + 1u) / 2u;
  const uint8_t *gaps = walk->tails + walk->count_bytes;
  int32_t acc = tokens_dot(gaps, t & 1u, t, (const int8_t *)(const void *)(gaps + size), &x,
                           offset, 0);
  uint32_t g;
  walk->tails = gaps + size + t;
  for (g = 0; g < (n >> 3); ++g, walk->groups += 12) {
    acc = tokens_dot(walk->groups, 0, 8, (const int8_t *)(const void *)(walk->groups + 4), &x,
                     offset, acc);
  }
  return acc;
}

/* The code -> weight table: 0 -> 0, then two runs of consecutive weights (compress_rows.
 * narrow_values): codes 1 .. half - 1 from 2 - half - t up, codes half .. 2 half - 1 from
 * t up (half = 2^(W - 1), t the threshold).  Built every invoke: a loop per run, no
 * per-code arithmetic (W = 7: 128 codes). */
void tflm_sparse_narrow_start(const void *stream, tflm_sparse_narrow_t *walk) {
  const uint8_t *s = (const uint8_t *)stream;
  const uint32_t half = 1u << (s[3] - 1u);
  const int32_t t = (int32_t)read_u32(s + 12);
  int8_t *out = walk->weights;
  int32_t weight;
  walk->count_bytes = count_width(s);
  walk->width = s[3];
  walk->row = s + TFLM_SPARSE_ROWS_HEADER_BYTES;
  *out++ = 0;
  for (weight = 2 - (int32_t)half - t; weight <= -t; ++weight) *out++ = (int8_t)weight;
  for (weight = t; weight < t + (int32_t)half; ++weight) *out++ = (int8_t)weight;
}

/* acc plus the n tokens whose gap nibbles start at `slot` of `gaps` and codes `bit` bits
 * into `codes` (each read as two bytes), from input *position on; *position moved. */
static int32_t narrow_tokens_dot(const tflm_sparse_narrow_t *walk, const uint8_t *gaps,
                                 uint32_t slot, const uint8_t *codes, uint32_t bit,
                                 uint32_t n, const int8_t *x, int32_t offset,
                                 int32_t *position, int32_t acc) {
  const uint32_t width = walk->width, mask = (1u << width) - 1u;
  int32_t at = *position;
  uint32_t i;
  for (i = 0; i < n; ++i, ++slot, bit += width) {
    const uint8_t *code = codes + (bit >> 3);
    at += (int32_t)((gaps[slot >> 1] >> (4u * (slot & 1u))) & 15u);
    acc = tflm_mac_wrap(acc,
                        walk->weights[(((uint32_t)code[0] | (uint32_t)code[1] << 8) >>
                                       (bit & 7u)) & mask],
                        (int32_t)x[at] + offset);
  }
  *position = at;
  return acc;
}

int32_t tflm_sparse_narrow_dot(tflm_sparse_narrow_t *walk, const int8_t *x, int32_t offset) {
  const uint32_t width = walk->width, n = read_count(walk->row, walk->count_bytes);
  const uint32_t t = n & 7u;
  const uint8_t *p = walk->row + walk->count_bytes;
  int32_t position = -1, acc;
  uint32_t g;
  acc = narrow_tokens_dot(walk, p, t & 1u, p + (t + 1u) / 2u, narrow_tail_skip(t, width), t,
                          x, offset, &position, 0);
  p += narrow_tail_bytes(t, width);
  for (g = 0; g < (n >> 3); ++g, p += 4u + width) {
    acc = narrow_tokens_dot(walk, p, 0, p + 4, 0, 8, x, offset, &position, acc);
  }
  walk->row = p;
  return acc;
}
