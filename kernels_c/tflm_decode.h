/* Decoding of compressed filters (tflm_gen/compress.py, `--compress`): a kernel whose
 * filter the generator coded decodes it one block of output channels at a time into a
 * scratch buffer it requested in prepare, never the whole tensor.
 *
 * The stream (the filter tensor's constant data, little-endian): codec, zero byte, offset
 * width (2 or 4), flags; u32 channels C, u32 row length R, u32 channels per block G; B + 1
 * block offsets (B = ceil(C / G)) into the payload; with the flag TFLM_DECODE_LIVE_MAP, a
 * bitmap of the live channels (ceil(C / 8) bytes, low bit first: set when the channel has a
 * weight other than 0); the codec's table; the payload.
 * Rows are one output channel each: conv [Cout, FH*FW*Cin], fully connected [Cout, K],
 * depthwise [C, FH*FW] (transposed from its [1, FH, FW, C] filter). */
#ifndef TFLM_DECODE_H
#define TFLM_DECODE_H

#include <stdint.h>

#include "tflm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFLM_DECODE_ZRLE 1    /* byte r < 255: r zeros then a literal; 255: 255 zeros */
#define TFLM_DECODE_HUFFMAN 2 /* two canonical codes: zero runs, then literals */
#define TFLM_DECODE_HUFFMAN_SHARED 3 /* HUFFMAN with the model-wide table */
#define TFLM_DECODE_RUNS 64   /* run symbol r < 63: r zeros then a literal; 63: 63 zeros */
#define TFLM_DECODE_ALPHABET (256 + TFLM_DECODE_RUNS) /* literals 0..255, then the runs */
#define TFLM_DECODE_CODE_BITS 8 /* longest code: each look-up table has 2^8 entries */
#define TFLM_DECODE_HEADER_BYTES 16
#define TFLM_DECODE_LIVE_MAP 1 /* header flag: the live-channel bitmap follows the offsets */
#define TFLM_DECODE_MIN_DEAD_BYTES 256 /* shortest dead run skipped, in weights */

/* A validated stream, read in place (fields from its header). */
typedef struct {
  const uint8_t *payload;     /* coded blocks */
  const uint8_t *offsets;     /* blocks + 1 offsets into the payload, `width` bytes each */
  const uint8_t *lengths;     /* Huffman: a 4-bit code length per symbol (its own table or
                                 the model's); NULL for ZRLE */
  const uint16_t *lut;        /* HUFFMAN_SHARED: the model's precomputed look-up tables
                                 (literals, then runs) when its table holds them, else NULL:
                                 tflm_decode_start builds them into scratch */
  const uint8_t *live;        /* bit c set: channel c has a weight other than 0; NULL when
                                 the stream has no map (every channel counts as live) */
  int32_t codec;              /* TFLM_DECODE_ZRLE or TFLM_DECODE_HUFFMAN */
  int32_t zero;               /* the byte a run stands for (the filter's zero point) */
  int32_t width;              /* bytes per offset: 2 or 4 */
  int32_t channels;           /* C */
  int32_t row;                /* R */
  int32_t group;              /* channels per block G */
  int32_t blocks;             /* B */
} tflm_decode_t;

/* Reads and checks the header, index and table of a `length`-byte stream coding a
 * `channels` x `row` filter (`shared`: the model-wide table of `shared_bytes` for
 * HUFFMAN_SHARED: ALPHABET / 2 bytes of code lengths, optionally followed by the two
 * look-up tables, 2 x 2^CODE_BITS uint16, 2-byte aligned); TFLM_ERR_MODEL when anything is out of bounds or a Huffman code is not
 * complete.  A block's payload is never read past its end, nor its output written past its
 * G * R bytes, whatever the payload holds. */
tflm_status_t tflm_decode_open(tflm_decode_t *d, const void *stream, uint32_t length,
                               const void *shared, uint32_t shared_bytes, int32_t channels,
                               int32_t row);
/* tflm_decode_open without the checks that read the whole index and table, for a stream
 * tflm_decode_open accepted in prepare (the model is read-only). */
tflm_status_t tflm_decode_reopen(tflm_decode_t *d, const void *stream, uint32_t length,
                                 const void *shared, uint32_t shared_bytes, int32_t channels,
                                 int32_t row);
/* Scratch a kernel requests for decoding: the Huffman look-up table and one block. */
uint32_t tflm_decode_scratch_bytes(const tflm_decode_t *d);
/* Once per eval, before the blocks: builds the two look-up tables in `scratch` (unless
 * the model holds them). */
void tflm_decode_start(const tflm_decode_t *d, void *scratch);
/* Decodes block b (channels b * G on) into scratch; returns its rows and *count, the
 * channels it holds. */
const int8_t *tflm_decode_block(const tflm_decode_t *d, void *scratch, int32_t b,
                                int32_t *count);
/* The end of the run of channels from `first` (< end) that are all live or all dead (every
 * weight 0), at most `end`; *live says which.  A dead run of fewer than
 * TFLM_DECODE_MIN_DEAD_BYTES weights joins the live ones around it. */
int32_t tflm_decode_run(const tflm_decode_t *d, int32_t first, int32_t end, int32_t *live);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_DECODE_H */
