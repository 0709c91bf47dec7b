/* Sparse 1x1 CONV_2D filters (tflm_gen/compress_sparse_conv.py, `--compress`): computed
 * from the coded stream, never decoded into scratch as a whole.  For layers with few output
 * pixels (person_detect's 1x1 convolutions on 6x6 and 3x3 maps) decoding a block of channels
 * costs as much as the multiply-accumulates it feeds; here the kernel widens the pixels'
 * inputs once ([Cin + 1][even(P)] int16 in scratch, the input offset added; the last row is
 * never read), reads one output channel's non-zero weights into a list of (row offset,
 * weight) and walks it once per group of pixels (4 here, 8 in the cmsis DSP step).  The
 * sums are TFLM's: bias + sum of w * (x + input_offset) in wrapping int32 (the order of an
 * exact integer sum is free), then its requantisation.
 *
 * Stream (little-endian): codec TFLM_CONV_SPARSE, 0, token bits W, least weight magnitude t;
 * u32 channels C, u32 row length R (Cin), u32 payload bytes (even); then W-bit tokens, least
 * significant bit first, over the C * R positions.  With V = 257 - 2t values (index i: the
 * weight t + i wrapped to int8) and G = (2^W - 1) / V gaps: a code below G * V is
 * code / V zeros then the weight of index code % V; a code k from G * V on skips
 * (k - G * V + 1) * G zeros.  The last token skips to or past C * R. */
#ifndef TFLM_CONV_SPARSE_H
#define TFLM_CONV_SPARSE_H

#include <stdint.h>

#include "conv_common.h"
#include "tflm_kernel.h"
#include "weighted_common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFLM_CONV_SPARSE 18 /* the codec byte (compress_sparse_conv.SPARSE_CONV) */
#define TFLM_CONV_SPARSE_HEADER_BYTES 16
#define TFLM_CONV_SPARSE_MAX_OFFSET 65535 /* 2 (Cin + 1) even(P): the list's byte offsets */

/* p->decode_scratch of a node with a sparse filter: -2 - the widened inputs' scratch handle
 * (-1 is a plain filter, 0 and above a block-coded one's decode scratch). */
#define TFLM_CONV_SPARSE_SCRATCH(handle) (-2 - (handle))
#define TFLM_CONV_IS_SPARSE(p) ((p)->decode_scratch <= -2)

/* When the node's filter holds a sparse stream: checks the node (int8, 1x1, stride 1, no
 * padding, ungrouped) and the whole stream (every token inside its channel's row, the
 * payload ending at the stream's end; TFLM_ERR_MODEL otherwise), requests the widened
 * inputs' scratch and sets p->decode_scratch to TFLM_CONV_SPARSE_SCRATCH of it; else
 * leaves it. */
tflm_status_t tflm_conv_sparse_prepare(tflm_context_t *ctx, const tflm_node_t *node,
                                       tflm_conv_params_t *p);
/* Scratch of such a node: the widened inputs, [Cin + 1][even(P)] int16, then one channel's
 * list, Cin words, and its sums, P words. */
uint32_t tflm_conv_sparse_scratch_bytes(const tflm_conv_params_t *p);

/* Reading a stream's tokens in order.  Positions count in units of `step` (the kernel's
 * row stride, so that they are offsets into its widened inputs; 1 for the check).  A tag's
 * list step may read these fields by offset (cmsis/cmsis_conv_sparse.h): keep their order. */
typedef struct {
  const uint8_t *next;  /* the next 16-bit unit of the payload */
  uint32_t buffer;      /* bits read, not yet used (low first) */
  int32_t bits;         /* how many */
  int32_t width;        /* W */
  int32_t values;       /* V */
  int32_t gap_codes;    /* G * V */
  int32_t skip_step;    /* G * step: a skip code's unit */
  int32_t step;
  int32_t floor;        /* t */
  int32_t position;     /* where the next token's gap starts */
  int32_t at;           /* the last token's position (a skip: where it ends) */
  int32_t weight;       /* its weight, 0 for a skip */
} tflm_conv_sparse_reader_t;

/* The weights of the channel whose tokens follow, up to position `end` (positions counted
 * from its first input; the reader holds the first token at or past it): each into list[]
 * as its position (an offset into the widened inputs) in the high halfword and the weight
 * in the low one; returns how many and leaves the reader on the next channel's first
 * token, positions counted from it.  The reader's stream passed the prepare's check. */
typedef int32_t (*tflm_conv_sparse_list_fn)(tflm_conv_sparse_reader_t *r, int32_t end,
                                            uint32_t *list);
/* sums[pixel] = start + the list's weights times the inputs of that pixel (x + pixel), for
 * pixel < pixels (>= 1), in wrapping int32.  A list entry holds the byte offset of its input
 * row from x in its high halfword, its weight in the low one. */
typedef void (*tflm_conv_sparse_sums_fn)(const uint32_t *list, int32_t count, const int16_t *x,
                                         int32_t pixels, uint32_t start, uint32_t *sums);
/* Requantises output channel oc's sums (bias included, wrapping int32) of `pixels` pixels
 * into out[pixel * Cout] (out points at the channel's first output). */
typedef void (*tflm_conv_sparse_store_fn)(const tflm_conv_params_t *p,
                                          const tflm_requant_t *requant, int32_t oc,
                                          const uint32_t *sums, int32_t pixels, int8_t *out);
/* The three hot steps, which a tag may replace with faster exact ones. */
typedef struct {
  tflm_conv_sparse_list_fn list;
  tflm_conv_sparse_sums_fn sums;
  tflm_conv_sparse_store_fn store;
} tflm_conv_sparse_kernels_t;

/* The portable ones (C loops, 4 pixels per pass over the list; tflm_requantize).
 * tflm_conv_sparse_quads: the sums of 4 * quads pixels (quads >= 1), 4 per pass. */
int32_t tflm_conv_sparse_list(tflm_conv_sparse_reader_t *r, int32_t end, uint32_t *list);
void tflm_conv_sparse_quads(const uint32_t *list, int32_t count, const int16_t *x,
                            int32_t quads, uint32_t start, uint32_t *sums);
uint32_t tflm_conv_sparse_one(const uint32_t *list, int32_t count, const int16_t *x,
                              uint32_t start);
void tflm_conv_sparse_sums(const uint32_t *list, int32_t count, const int16_t *x,
                           int32_t pixels, uint32_t start, uint32_t *sums);
void tflm_conv_sparse_store(const tflm_conv_params_t *p, const tflm_requant_t *requant,
                            int32_t oc, const uint32_t *sums, int32_t pixels, int8_t *out);
extern const tflm_conv_sparse_kernels_t tflm_conv_sparse_portable;

/* The int8 convolution of a node whose p is TFLM_CONV_IS_SPARSE. */
tflm_status_t tflm_conv_sparse_int8(tflm_context_t *ctx, const tflm_weighted_call_t *call,
                                    const tflm_conv_sparse_kernels_t *kernels);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_CONV_SPARSE_H */
