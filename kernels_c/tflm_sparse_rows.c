/* Row-sparse FULLY_CONNECTED filters (SPARSE_GROUPS); see tflm_sparse_rows.h. */
#include "tflm_sparse_rows.h"

#include "tflm_quant.h"

static uint32_t read_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int32_t tflm_sparse_rows_is(const void *stream, uint32_t length) {
  const uint8_t *s = (const uint8_t *)stream;
  return stream != NULL && ((length >= TFLM_SPARSE_ROWS_HEADER_BYTES &&
                             s[0] == TFLM_SPARSE_GROUPS) ||
                            (length >= TFLM_SPARSE_NARROW_HEADER_BYTES &&
                             s[0] == TFLM_SPARSE_NARROW));
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

/* SPARSE_NARROW: token k's gap nibble, and its literal code of `width` bits at bit `bit`. */
static uint32_t narrow_gap(const uint8_t *gaps, uint32_t k) {
  return (gaps[k >> 1] >> (4u * (k & 1u))) & 15u;
}

static uint32_t narrow_code(const uint8_t *codes, uint32_t bit, uint32_t width) {
  const uint32_t shift = bit & 7u;
  uint32_t value = (uint32_t)codes[bit >> 3] >> shift;
  if (shift + width > 8u) value |= (uint32_t)codes[(bit >> 3) + 1u] << (8u - shift);
  return value & ((1u << width) - 1u);
}

/* The weight of a literal code >= 2 (`half` = 2^(width - 1), t the threshold). */
static int32_t narrow_weight(uint32_t code, uint32_t half, int32_t t) {
  return code >= half ? (int32_t)(code - half) + t : (int32_t)code - (int32_t)half + 1 - t;
}

/* Checks the rows of a SPARSE_NARROW stream whose common header checked out: W and t, the
 * regions' sizes against the length, every row's tokens inside `depth` inputs and inside
 * the N tokens, every coded weight an int8, the corrections used exactly. */
static tflm_status_t narrow_check(const uint8_t *s, uint32_t length, int32_t rows,
                                  int32_t depth) {
  const uint32_t width = s[3], total = read_u32(s + 12);
  const uint32_t corrections = read_u32(s + 16) & 0xffffffu;
  tflm_sparse_narrow_t walk;
  uint32_t used = 0, k, end;
  int32_t r;
  if (width < 3u || width > 8u || s[19] == 0 ||
      TFLM_SPARSE_NARROW_HEADER_BYTES + (uint64_t)rows * count_width(s) + (total + 1ull) / 2u +
              ((uint64_t)total * width + 7u) / 8u + corrections != length) {
    return TFLM_ERR_MODEL;
  }
  tflm_sparse_narrow_start(s, &walk);
  for (r = 0, k = 0; r < rows; ++r, k = end) {
    uint64_t span = 0;
    end = k + read_count(walk.counts + (uint32_t)r * walk.count_bytes, walk.count_bytes);
    if (end > total) return TFLM_ERR_MODEL;
    for (; k < end; ++k) {
      const uint32_t gap = narrow_gap(walk.gaps, k), code = narrow_code(walk.codes, k * width, width);
      const int32_t w = narrow_weight(code, 1u << (width - 1u), walk.threshold);
      span += code == 0u ? 16u * (gap + 1u) : gap + 1u;
      used += code == 1u;
      if (code >= 2u && (w < -128 || w > 127)) return TFLM_ERR_MODEL;
    }
    if (span > (uint64_t)depth) return TFLM_ERR_MODEL;
  }
  return k == total && used == corrections ? TFLM_OK : TFLM_ERR_MODEL;
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

void tflm_sparse_narrow_start(const void *stream, tflm_sparse_narrow_t *walk) {
  const uint8_t *s = (const uint8_t *)stream;
  const uint32_t rows = read_u32(s + 4), total = read_u32(s + 12);
  walk->count_bytes = count_width(s);
  walk->width = s[3];
  walk->threshold = (int32_t)s[19];
  walk->counts = s + TFLM_SPARSE_NARROW_HEADER_BYTES;
  walk->gaps = walk->counts + rows * walk->count_bytes;
  walk->codes = walk->gaps + (total + 1u) / 2u;
  walk->corrections = (const int8_t *)(const void *)(walk->codes + (total * walk->width + 7u) / 8u);
  walk->token = 0;
}

int32_t tflm_sparse_narrow_dot(tflm_sparse_narrow_t *walk, const int8_t *x, int32_t offset) {
  const uint32_t width = walk->width, half = 1u << (width - 1u);
  const uint32_t end = walk->token + read_count(walk->counts, walk->count_bytes);
  uint32_t k, bit = walk->token * width;
  int32_t acc = 0;
  for (k = walk->token; k < end; ++k, bit += width) {
    const uint32_t gap = narrow_gap(walk->gaps, k), code = narrow_code(walk->codes, bit, width);
    if (code == 0u) { /* an escape */
      x += 16u * (gap + 1u);
      continue;
    }
    x += gap;
    acc = tflm_mac_wrap(acc,
                        code == 1u ? (int32_t)*walk->corrections++
                                   : narrow_weight(code, half, walk->threshold),
                        (int32_t)*x++ + offset);
  }
  walk->counts += walk->count_bytes;
  walk->token = end;
  return acc;
}
