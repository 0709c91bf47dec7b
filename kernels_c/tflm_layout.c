/* Data-movement helpers; see tflm_layout.h. */
#include "tflm_layout.h"

#include <stddef.h>

void tflm_layout_move(uint8_t *dst, const uint8_t *src, int32_t bytes) {
  int32_t i;
  if (dst == src || bytes <= 0) return;
  if (dst < src) {
    for (i = 0; i < bytes; ++i) dst[i] = src[i];
  } else {
    for (i = bytes; i > 0; --i) dst[i - 1] = src[i - 1];
  }
}

int32_t tflm_layout_read_index(const tflm_tensor_t *tensor, int32_t i) {
  if (tensor->type == TFLM_TYPE_INT32) {
    return ((const int32_t *)tensor->data)[i];
  }
  if (tensor->type == TFLM_TYPE_INT64) {
    return (int32_t)((const int64_t *)tensor->data)[i];
  }
  return 0;
}

int32_t tflm_layout_product(const int32_t *dims, int32_t from, int32_t to) {
  int32_t product = 1;
  int32_t i;
  for (i = from; i < to; ++i) product *= dims[i];
  return product;
}

void tflm_layout_strides(const int32_t *dims, int32_t ndims, int32_t *strides) {
  int32_t stride = 1;
  int32_t i;
  for (i = ndims - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims[i];
  }
}

void tflm_layout_view_init(tflm_layout_view_t *view, int32_t element_size) {
  int32_t i;
  view->element_size = element_size;
  view->in_base = 0;
  view->out_base = 0;
  for (i = 0; i < TFLM_MAX_DIMS; ++i) {
    view->dims[i] = 1;
    view->in_strides[i] = 0;
    view->out_strides[i] = 0;
  }
}

void tflm_layout_view_align(tflm_layout_view_t *view, int32_t ndims) {
  const int32_t shift = TFLM_MAX_DIMS - ndims;
  int32_t i;
  if (shift <= 0) return;
  for (i = ndims - 1; i >= 0; --i) {
    view->dims[i + shift] = view->dims[i];
    view->in_strides[i + shift] = view->in_strides[i];
    view->out_strides[i + shift] = view->out_strides[i];
  }
  for (i = 0; i < shift; ++i) {
    view->dims[i] = 1;
    view->in_strides[i] = 0;
    view->out_strides[i] = 0;
  }
}

/* Copies one element of `size` bytes. */
static void copy_element(uint8_t *dst, const uint8_t *src, int32_t size) {
  int32_t i;
  for (i = 0; i < size; ++i) dst[i] = src[i];
}

/* The innermost two axes; the outer four are walked by tflm_layout_view_copy. */
static void copy_plane(const tflm_layout_view_t *v, const uint8_t *in, uint8_t *out,
                       int32_t in_offset, int32_t out_offset) {
  const int32_t size = v->element_size;
  int32_t i4, i5;
  for (i4 = 0; i4 < v->dims[4]; ++i4) {
    int32_t in_at = in_offset + i4 * v->in_strides[4];
    int32_t out_at = out_offset + i4 * v->out_strides[4];
    for (i5 = 0; i5 < v->dims[5]; ++i5) {
      copy_element(out + (ptrdiff_t)out_at * size, in + (ptrdiff_t)in_at * size, size);
      in_at += v->in_strides[5];
      out_at += v->out_strides[5];
    }
  }
}

void tflm_layout_view_copy(const tflm_layout_view_t *v, const uint8_t *in, uint8_t *out) {
  int32_t i0, i1, i2, i3;
  for (i0 = 0; i0 < v->dims[0]; ++i0) {
    for (i1 = 0; i1 < v->dims[1]; ++i1) {
      for (i2 = 0; i2 < v->dims[2]; ++i2) {
        for (i3 = 0; i3 < v->dims[3]; ++i3) {
          const int32_t in_offset = v->in_base + i0 * v->in_strides[0] +
                                    i1 * v->in_strides[1] + i2 * v->in_strides[2] +
                                    i3 * v->in_strides[3];
          const int32_t out_offset = v->out_base + i0 * v->out_strides[0] +
                                     i1 * v->out_strides[1] + i2 * v->out_strides[2] +
                                     i3 * v->out_strides[3];
          copy_plane(v, in, out, in_offset, out_offset);
        }
      }
    }
  }
}

tflm_status_t tflm_layout_view_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_layout_view_t *v = (const tflm_layout_view_t *)node->user_data;
  const uint8_t *in = (const uint8_t *)tflm_node_input_data(ctx, node, 0);
  uint8_t *out = (uint8_t *)tflm_node_output_data(ctx, node, 0);
  TFLM_KERNEL_CHECK(ctx, node, v != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  tflm_layout_view_copy(v, in, out);
  return TFLM_OK;
}

tflm_status_t tflm_layout_view_keep(tflm_context_t *ctx, tflm_node_t *node,
                                    const tflm_layout_view_t *view) {
  tflm_layout_view_t *kept = (tflm_layout_view_t *)tflm_alloc_persistent(ctx, sizeof(*kept));
  TFLM_KERNEL_CHECK(ctx, node, kept != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  *kept = *view;
  node->user_data = kept;
  return TFLM_OK;
}

tflm_layout_pieces_t *tflm_layout_pieces_alloc(tflm_context_t *ctx, int32_t pieces) {
  const uint32_t bytes =
      (uint32_t)sizeof(tflm_layout_pieces_t) + (uint32_t)pieces * (uint32_t)sizeof(int32_t);
  tflm_layout_pieces_t *block = (tflm_layout_pieces_t *)tflm_alloc_persistent(ctx, bytes);
  if (block != NULL) {
    block->pieces = pieces;
    block->outer = 0;
    block->row_bytes = 0;
    block->first = 0;
    block->joined = 0;
  }
  return block;
}

int32_t *tflm_layout_piece_bytes(tflm_layout_pieces_t *block) {
  return (int32_t *)(void *)(block + 1);
}

/* Moves piece k's rows to or from the joined tensor (to_joined selects the direction). */
static void move_piece(const tflm_layout_pieces_t *p, int32_t column, int32_t piece_bytes,
                       uint8_t *joined, uint8_t *piece, int32_t to_joined) {
  int32_t row;
  for (row = 0; row < p->outer; ++row) {
    uint8_t *j = joined + (ptrdiff_t)row * p->row_bytes + column;
    uint8_t *q = piece + (ptrdiff_t)row * piece_bytes;
    if (to_joined) {
      tflm_layout_move(j, q, piece_bytes);
    } else {
      tflm_layout_move(q, j, piece_bytes);
    }
  }
}

static tflm_status_t run_pieces(tflm_context_t *ctx, tflm_node_t *node, int32_t to_joined) {
  tflm_layout_pieces_t *p = (tflm_layout_pieces_t *)node->user_data;
  const int32_t *piece_bytes;
  uint8_t *joined;
  int32_t k, column = 0;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_NOT_READY);
  piece_bytes = tflm_layout_piece_bytes(p);
  joined = to_joined ? (uint8_t *)tflm_node_output_data(ctx, node, p->joined)
                     : (uint8_t *)tflm_node_input_data(ctx, node, p->joined);
  for (k = 0; k < p->pieces; ++k) {
    uint8_t *piece = to_joined ? (uint8_t *)tflm_node_input_data(ctx, node, p->first + k)
                               : (uint8_t *)tflm_node_output_data(ctx, node, p->first + k);
    if (piece_bytes[k] > 0) {
      TFLM_KERNEL_CHECK(ctx, node, piece != NULL && joined != NULL, TFLM_ERR_NOT_READY);
      move_piece(p, column, piece_bytes[k], joined, piece, to_joined);
    }
    column += piece_bytes[k];
  }
  return TFLM_OK;
}

tflm_status_t tflm_layout_join_eval(tflm_context_t *ctx, tflm_node_t *node) {
  return run_pieces(ctx, node, 1);
}

tflm_status_t tflm_layout_split_eval(tflm_context_t *ctx, tflm_node_t *node) {
  return run_pieces(ctx, node, 0);
}

/* Marks the reduced axes (bit k: axis k of the input) from the node's axis tensor. */
static tflm_status_t reduction_axes(tflm_context_t *ctx, tflm_node_t *node, int32_t ndims,
                                    int32_t *mask) {
  tflm_tensor_t axis;
  int32_t i;
  TFLM_KERNEL_TRY(tflm_node_constant_input(ctx, node, 1, TFLM_TYPE_BIT(INT32), &axis));
  *mask = 0;
  for (i = 0; i < tflm_tensor_elements(&axis); ++i) {
    int32_t a = tflm_layout_read_index(&axis, i);
    if (a < 0) a += ndims;
    TFLM_KERNEL_CHECK(ctx, node, a >= 0 && a < ndims, TFLM_ERR_BAD_PARAMS);
    *mask |= 1 << a;
  }
  return TFLM_OK;
}

/* Returns 0 when a count does not fit int32 (a zero-sized axis lets the others multiply
 * past 2^31). */
static int32_t reduction_shapes(const tflm_tensor_t *in, int32_t mask,
                                tflm_layout_reduction_t *r) {
  const int32_t shift = TFLM_MAX_DIMS - in->ndims;
  int64_t count = 1, stride = 1;
  int32_t k;
  r->reduced = 0;
  r->unused[0] = r->unused[1] = r->unused[2] = 0;
  for (k = 0; k < TFLM_MAX_DIMS; ++k) {
    r->dims[k] = k < shift ? 1 : in->dims[k - shift];
  }
  for (k = TFLM_MAX_DIMS - 1; k >= shift; --k) {
    if (mask & (1 << (k - shift))) {
      count *= r->dims[k];
      r->reduced = (uint8_t)(r->reduced | (1u << k));
    } else {
      stride *= r->dims[k];
    }
    if (count > INT32_MAX || stride > INT32_MAX) return 0;
  }
  if (count * stride > INT32_MAX) return 0; /* the input's elements */
  r->count = (int32_t)count;
  r->out_elements = (int32_t)stride;
  return 1;
}

tflm_status_t tflm_layout_reduction_init(tflm_context_t *ctx, tflm_node_t *node,
                                         const tflm_tensor_t *in, const tflm_tensor_t *out,
                                         tflm_layout_reduction_t *r) {
  int32_t mask;
  TFLM_KERNEL_TRY(reduction_axes(ctx, node, in->ndims, &mask));
  TFLM_KERNEL_CHECK(ctx, node, reduction_shapes(in, mask, r), TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(out) == r->out_elements,
                    TFLM_ERR_BAD_SHAPE);
  return TFLM_OK;
}

int32_t tflm_layout_reduction_start(const tflm_layout_reduction_t *r,
                                    tflm_layout_reduction_walk_t *w) {
  int32_t stride = 1, k;
  for (k = TFLM_MAX_DIMS - 1; k >= 0; --k) {
    w->idx[k] = 0;
    if (r->reduced & (1u << k)) {
      w->out_strides[k] = 0;
    } else {
      w->out_strides[k] = stride;
      stride *= r->dims[k];
    }
  }
  w->at = 0;
  /* count * out_elements is the input's element count, which fits int32. */
  return r->count * r->out_elements;
}

void tflm_layout_reduction_next(const tflm_layout_reduction_t *r,
                                tflm_layout_reduction_walk_t *w) {
  int32_t k;
  for (k = TFLM_MAX_DIMS - 1; k >= 0; --k) {
    ++w->idx[k];
    w->at += w->out_strides[k];
    if (w->idx[k] < r->dims[k]) return;
    w->at -= w->out_strides[k] * r->dims[k];
    w->idx[k] = 0;
  }
}
