/* Row-sparse FULLY_CONNECTED filters (tflm_gen/compress_rows.py, `--compress`): consumed in
 * place, row by row, by the kernel, never expanded (a batch-1 layer uses each weight once,
 * so decoding would cost as much as the layer).
 *
 * A row is a list of tokens: token t skips `gap` (0 .. 15) inputs and multiplies the next
 * one by its int8 literal (a run of more than 15 zeros takes tokens (15, 0)).  Stream
 * (little-endian): codec TFLM_SPARSE_GROUPS, 0, flags (TFLM_SPARSE_COUNT_BYTE or 0), 0;
 * u32 rows C, u32 row length R, u32 G (the groups' bytes); then the groups of all rows (12
 * bytes each: a word of 8 gap nibbles, token 2i's in the low nibble of byte i, then 8
 * literals), then per row its token count n (u8 under TFLM_SPARSE_COUNT_BYTE, else u16) and
 * its tail: the row's first t = n % 8 tokens, ceil(t / 2) gap bytes (an odd tail's first
 * low nibble is padding) and t literals, which take a group's last t slots; the row's n / 8
 * groups follow its tail.  The groups start on a word when the stream does (one LDM each
 * on the Cortex-M4).
 *
 * TFLM_SPARSE_NARROW (compress_rows.SPARSE_NARROW, `--compress-goal size`): tokens of a
 * gap nibble g and a code b of W = 2 .. 7 bits; a row's walk starts at input -1, and each
 * token moves g inputs on, then multiplies the input there by its code's weight: 0 for
 * b = 0, -(t + 2^(W-1) - 1 - b) for b < 2^(W-1), t + b - 2^(W-1) above (t the tensor's
 * smallest |weight|); a weight no code holds takes several tokens at one input (g = 0).
 * Stream: codec, 0, flags (TFLM_SPARSE_COUNT_BYTE or 0), W; u32 C, u32 R, u32 t; then per
 * row its token count n (u8 or u16), its tail (its first n % 8 tokens: gap nibbles as a
 * SPARSE_GROUPS tail, then their codes, W bits each, LSB first, in whole bytes) and its n / 8
 * groups (a word of 8 gap nibbles, then 8 codes in W bytes); then 3 zero bytes (codes are
 * read a word at a time). */
#ifndef TFLM_SPARSE_ROWS_H
#define TFLM_SPARSE_ROWS_H

#include <stdint.h>

#include "tflm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFLM_SPARSE_GROUPS 17 /* the codec byte (compress_rows.SPARSE_GROUPS) */
#define TFLM_SPARSE_ROWS_HEADER_BYTES 16
#define TFLM_SPARSE_NARROW 19 /* the codec byte (compress_rows.SPARSE_NARROW) */
#define TFLM_SPARSE_COUNT_BYTE 1 /* header byte 2: the counts are u8 (compress_rows.COUNT_BYTE) */

/* Where a walk over a checked stream stands. */
typedef struct {
  const uint8_t *groups; /* the next row's first full group */
  const uint8_t *tails;  /* its count and tail */
  uint32_t count_bytes;  /* 1 or 2: the width of a row's count */
} tflm_sparse_groups_t;

/* Where a walk over a checked TFLM_SPARSE_NARROW stream stands. */
typedef struct {
  const uint8_t *row;    /* the next row's count */
  uint32_t count_bytes;  /* 1 or 2: the width of a row's count */
  uint32_t width;        /* W: the bits of a code */
  int8_t weights[128];   /* code -> weight */
} tflm_sparse_narrow_t;

/* 1 when the `length`-byte coded stream is a row-sparse one (its codec byte: either). */
int32_t tflm_sparse_rows_is(const void *stream, uint32_t length);
/* Checks a whole stream for `rows` rows of `depth` inputs: the header, every row's count,
 * tail and groups inside their regions, every token inside its row, the regions used
 * exactly.  TFLM_ERR_MODEL otherwise.  After it, the kernel reads without checks. */
tflm_status_t tflm_sparse_rows_check(const void *stream, uint32_t length, int32_t rows,
                                     int32_t depth);
/* A walk at the first row of a checked stream. */
void tflm_sparse_groups_start(const void *stream, tflm_sparse_groups_t *walk);
/* The sum over the walk's next row's tokens (literal * (input + offset), wrapping int32),
 * the inputs from x on; the walk advanced to the next row. */
int32_t tflm_sparse_groups_dot(tflm_sparse_groups_t *walk, const int8_t *x, int32_t offset);
/* The same for a checked TFLM_SPARSE_NARROW stream. */
void tflm_sparse_narrow_start(const void *stream, tflm_sparse_narrow_t *walk);
int32_t tflm_sparse_narrow_dot(tflm_sparse_narrow_t *walk, const int8_t *x, int32_t offset);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_SPARSE_ROWS_H */
