/* Data-movement helpers shared by the shape and layout kernels (TRANSPOSE, STRIDED_SLICE,
 * SLICE, PAD, DEPTH_TO_SPACE, SPACE_TO_DEPTH, CONCATENATION, PACK, SPLIT, ...).
 *
 * These kernels never compute on values: they move whole elements, so one implementation
 * serves every dtype and is bit-exact by construction.  Both persistent structs below use
 * fixed-width fields only (arena sizes are the same on every target). */
#ifndef TFLM_LAYOUT_H
#define TFLM_LAYOUT_H

#include <stdint.h>

#include "tflm_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* memmove without libc: safe for overlapping buffers. */
void tflm_layout_move(uint8_t *dst, const uint8_t *src, int32_t bytes);

/* Element i of a constant int32 or int64 tensor, as int32 (0 if the type is neither). */
int32_t tflm_layout_read_index(const tflm_tensor_t *tensor, int32_t i);

/* Product of dims[from .. to-1] (1 when the range is empty). */
int32_t tflm_layout_product(const int32_t *dims, int32_t from, int32_t to);

/* Row-major element strides of a shape: strides[ndims-1] = 1. */
void tflm_layout_strides(const int32_t *dims, int32_t ndims, int32_t *strides);

/* A strided copy: for every index (i0..i5) below dims, the element at
 * in_base + sum(i_k * in_strides[k]) is copied to out_base + sum(i_k * out_strides[k])
 * (offsets in elements; input strides may be negative).  Unused axes have dims 1. */
typedef struct {
  int32_t element_size;                /* bytes per element */
  int32_t in_base;                     /* element offset of index 0 in the input */
  int32_t out_base;                    /* element offset of index 0 in the output */
  int32_t dims[TFLM_MAX_DIMS];         /* extent of each copied axis, outermost first */
  int32_t in_strides[TFLM_MAX_DIMS];   /* input element stride of each axis */
  int32_t out_strides[TFLM_MAX_DIMS];  /* output element stride of each axis */
} tflm_layout_view_t;

/* Sets a view of six axes with dims 1 and strides 0 moving element_size bytes. */
void tflm_layout_view_init(tflm_layout_view_t *view, int32_t element_size);
/* Right-aligns the first `ndims` axes of view (as filled by the caller) into the six slots,
 * so that the copy loop always runs six deep. */
void tflm_layout_view_align(tflm_layout_view_t *view, int32_t ndims);
void tflm_layout_view_copy(const tflm_layout_view_t *view, const uint8_t *in, uint8_t *out);
/* Eval of ops whose node->user_data is a view: copies from input 0 into output 0. */
tflm_status_t tflm_layout_view_eval(tflm_context_t *ctx, tflm_node_t *node);
/* Persistent copy of *view for node->user_data (TFLM_ERR_ARENA_TOO_SMALL when full). */
tflm_status_t tflm_layout_view_keep(tflm_context_t *ctx, tflm_node_t *node,
                                    const tflm_layout_view_t *view);

/* Joining and splitting along one axis (CONCATENATION, PACK, SPLIT, SPLIT_V, UNPACK): the
 * joined tensor is `outer` rows of `row_bytes`; row r holds, in order, one run of
 * piece_bytes[k] bytes of each piece k (a piece's own row r).  The struct is followed by
 * `pieces` int32 values piece_bytes[]. */
typedef struct {
  int32_t outer;      /* rows: product of the joined shape before the axis */
  int32_t row_bytes;  /* sum of piece_bytes */
  int32_t pieces;     /* number of pieces (inputs of a join, outputs of a split) */
  int32_t first;      /* tensor index of piece 0 among the inputs (join) or outputs (split) */
  int32_t joined;     /* tensor index of the joined tensor: output (join) or input (split) */
} tflm_layout_pieces_t;

/* Persistent block for `pieces` pieces (NULL when the arena is full). */
tflm_layout_pieces_t *tflm_layout_pieces_alloc(tflm_context_t *ctx, int32_t pieces);
int32_t *tflm_layout_piece_bytes(tflm_layout_pieces_t *block);
/* Eval of a join (pieces are inputs) and of a split (pieces are outputs). */
tflm_status_t tflm_layout_join_eval(tflm_context_t *ctx, tflm_node_t *node);
tflm_status_t tflm_layout_split_eval(tflm_context_t *ctx, tflm_node_t *node);

/* The layout of a reduction over some axes of its input (MEAN, SUM, REDUCE_MAX, REDUCE_MIN,
 * REDUCE_ALL): the output keeps the other axes in order (with or without keep_dims, the
 * same layout).  Fixed-width fields only; the output strides of the walk are derived at
 * eval (tflm_layout_reduction_start), not kept. */
typedef struct {
  int32_t dims[TFLM_MAX_DIMS]; /* input dims right-aligned in six (leading 1s) */
  int32_t out_elements;        /* elements of the output */
  int32_t count;               /* input elements per output (the input has
                                * count * out_elements) */
  uint8_t reduced;             /* bit k: axis k of the six is reduced */
  uint8_t unused[3];
} tflm_layout_reduction_t;

/* The state of a walk of the input in row-major order. */
typedef struct {
  int32_t idx[TFLM_MAX_DIMS];         /* the input index, six counters */
  int32_t out_strides[TFLM_MAX_DIMS]; /* output stride of each input axis, 0 when reduced */
  int32_t at;                         /* offset of the output the element reduces into */
} tflm_layout_reduction_walk_t;

/* Fills *r for input `in` reduced over the axes of the node's constant int32 input 1
 * (negative axes count from the end, duplicates are ignored) and checks that `out` holds
 * r->out_elements; a count past int32 is TFLM_ERR_BAD_SHAPE. */
tflm_status_t tflm_layout_reduction_init(tflm_context_t *ctx, tflm_node_t *node,
                                         const tflm_tensor_t *in, const tflm_tensor_t *out,
                                         tflm_layout_reduction_t *r);
/* Starts a walk at input element 0 (w->at = 0); returns the input's element count. */
int32_t tflm_layout_reduction_start(const tflm_layout_reduction_t *r,
                                    tflm_layout_reduction_walk_t *w);
/* Advances the walk to the next input element (w->at follows). */
void tflm_layout_reduction_next(const tflm_layout_reduction_t *r,
                                tflm_layout_reduction_walk_t *w);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_LAYOUT_H */
