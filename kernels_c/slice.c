/* tflm-op: SLICE tflm_op_slice types: float32,int8,int16,int32,bool */
/* tflm-op: STRIDED_SLICE tflm_op_strided_slice types: float32,int8,int16,int32,bool */
/* SLICE and STRIDED_SLICE copy a (strided) box of the input.  begin / size / end / strides
 * must be constant tensors (int32 or int64) with one entry per input dimension (up to six).
 * STRIDED_SLICE follows TFLM's index rules: negative indices count from the end, indices
 * are clamped to the axis, begin_mask / end_mask select the whole axis, shrink_axis_mask
 * takes one element, `offset` makes end relative to begin.  ellipsis_mask and new_axis_mask
 * are refused (the converter folds them away; TFLM does not implement them either). */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

/* Fetches input 0, output 0 and constant index inputs 1 .. count-1 into idx[]. */
static tflm_status_t slice_views(tflm_context_t *ctx, tflm_node_t *node, int32_t count,
                                 tflm_tensor_t *in, tflm_tensor_t *out, tflm_tensor_t *idx) {
  int32_t k;
  TFLM_KERNEL_TRY(
      tflm_node_check_io(ctx, node, count, TFLM_TYPES_SIZED, TFLM_IO_ANY_SHAPE, in, out));
  for (k = 1; k < count; ++k) {
    tflm_tensor_t *t = &idx[k - 1];
    TFLM_KERNEL_TRY(tflm_node_constant_input(ctx, node, k, TFLM_TYPE_BIT(INT32) | TFLM_TYPE_BIT(INT64), t));
    TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(t) == in->ndims, TFLM_ERR_BAD_SHAPE);
  }
  return TFLM_OK;
}

/* A view whose axis k starts at start[k] and steps step[k] input elements count[k] times;
 * the output must hold exactly the selected elements. */
static tflm_status_t slice_keep(tflm_context_t *ctx, tflm_node_t *node, const tflm_tensor_t *in,
                                const tflm_tensor_t *out, const int32_t *start,
                                const int32_t *step, const int32_t *count) {
  tflm_layout_view_t view;
  int32_t strides[TFLM_MAX_DIMS];
  int32_t k, elements = 1;
  tflm_layout_view_init(&view, tflm_type_size(in->type));
  tflm_layout_strides(in->dims, in->ndims, strides);
  for (k = 0; k < in->ndims; ++k) {
    view.dims[k] = count[k];
    view.in_base += start[k] * strides[k];
    view.in_strides[k] = step[k] * strides[k];
    elements *= count[k];
  }
  tflm_layout_strides(view.dims, in->ndims, view.out_strides);
  TFLM_KERNEL_CHECK(ctx, node, elements == tflm_tensor_elements(out), TFLM_ERR_BAD_SHAPE);
  tflm_layout_view_align(&view, in->ndims);
  return tflm_layout_view_keep(ctx, node, &view);
}

/* SLICE: inputs (input, begin, size); size -1 means "to the end of the axis". */
static tflm_status_t slice_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out, idx[2];
  int32_t start[TFLM_MAX_DIMS], step[TFLM_MAX_DIMS], count[TFLM_MAX_DIMS];
  int32_t k;
  tflm_status_t status = slice_views(ctx, node, 3, &in, &out, idx);
  if (status != TFLM_OK) return status;
  for (k = 0; k < in.ndims; ++k) {
    start[k] = tflm_layout_read_index(&idx[0], k);
    count[k] = tflm_layout_read_index(&idx[1], k);
    step[k] = 1;
    TFLM_KERNEL_CHECK(ctx, node, start[k] >= 0 && start[k] <= in.dims[k], TFLM_ERR_BAD_PARAMS);
    if (count[k] == -1) count[k] = in.dims[k] - start[k];
    TFLM_KERNEL_CHECK(ctx, node, count[k] >= 0 && count[k] <= in.dims[k] - start[k],
                      TFLM_ERR_BAD_PARAMS);
  }
  return slice_keep(ctx, node, &in, &out, start, step, count);
}

static int32_t clamp(int32_t v, int32_t lo, int32_t hi) {
  return hi < v ? hi : (v < lo ? lo : v);
}

/* The masks and offset flag of a StridedSliceOptions. */
typedef struct {
  int32_t begin_mask, end_mask, shrink_mask, offset;
} strided_masks_t;

/* First index of the axis (TFLM's StridedSliceStartForAxis). */
static int32_t strided_start(const strided_masks_t *m, int32_t axis, int32_t size,
                             int32_t start, int32_t stride) {
  if (start < 0) start += size;
  start = stride > 0 ? clamp(start, 0, size) : clamp(start, -1, size - 1);
  if (m->begin_mask & (1 << axis)) start = stride > 0 ? 0 : size - 1;
  return start;
}

/* One past the last index (TFLM's StridedSliceEndForAxis). */
static int32_t strided_end(const strided_masks_t *m, int32_t axis, int32_t size, int32_t start,
                           int32_t end, int32_t stride) {
  if (m->shrink_mask & (1 << axis)) return start >= size ? start : start + 1;
  if (m->offset) { /* saturating: the clamp below gives what the exact sum would */
    const int64_t sum = (int64_t)end + start;
    end = sum > INT32_MAX ? INT32_MAX : (sum < INT32_MIN ? INT32_MIN : (int32_t)sum);
  }
  if (end < 0) end += size;
  end = stride > 0 ? clamp(end, 0, size) : clamp(end, -1, size - 1);
  if (m->end_mask & (1 << axis)) end = stride > 0 ? size : -1;
  return end;
}

/* Elements from start toward end (exclusive) in steps of stride. */
static int32_t strided_count(int32_t start, int32_t end, int32_t stride) {
  /* In 64 bits: a stride near +-2^31 would overflow the rounding up (or its negation). */
  const int64_t span = stride > 0 ? (int64_t)end - start : (int64_t)start - end;
  const int64_t step = stride > 0 ? (int64_t)stride : -(int64_t)stride;
  return span > 0 ? (int32_t)((span + step - 1) / step) : 0;
}

/* STRIDED_SLICE: inputs (input, begin, end, strides). */
static tflm_status_t strided_slice_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t in, out, idx[3];
  int32_t start[TFLM_MAX_DIMS], step[TFLM_MAX_DIMS], count[TFLM_MAX_DIMS];
  strided_masks_t m;
  int32_t k;
  tflm_status_t status = slice_views(ctx, node, 4, &in, &out, idx);
  if (status != TFLM_OK) return status;
  TFLM_KERNEL_CHECK(ctx, node,
                    tflm_opt_int(node, TFLM_OPT_STRIDED_SLICE_ELLIPSIS_MASK, 0) == 0 &&
                        tflm_opt_int(node, TFLM_OPT_STRIDED_SLICE_NEW_AXIS_MASK, 0) == 0,
                    TFLM_ERR_BAD_PARAMS);
  m.begin_mask = tflm_opt_int(node, TFLM_OPT_STRIDED_SLICE_BEGIN_MASK, 0);
  m.end_mask = tflm_opt_int(node, TFLM_OPT_STRIDED_SLICE_END_MASK, 0);
  m.shrink_mask = tflm_opt_int(node, TFLM_OPT_STRIDED_SLICE_SHRINK_AXIS_MASK, 0);
  m.offset = tflm_opt_int(node, TFLM_OPT_STRIDED_SLICE_OFFSET, 0);
  for (k = 0; k < in.ndims; ++k) {
    step[k] = tflm_layout_read_index(&idx[2], k);
    TFLM_KERNEL_CHECK(ctx, node, step[k] != 0, TFLM_ERR_BAD_PARAMS);
    start[k] = strided_start(&m, k, in.dims[k], tflm_layout_read_index(&idx[0], k), step[k]);
    count[k] = strided_count(start[k], strided_end(&m, k, in.dims[k], start[k],
                                                   tflm_layout_read_index(&idx[1], k), step[k]),
                             step[k]);
    if (count[k] == 0) start[k] = 0; /* nothing is read; keep the base inside the input */
    /* One element or none: the stride is never applied, and a huge one would overflow
     * the view's element stride (with two or more, |stride| * stride_k < the input). */
    if (count[k] <= 1) step[k] = 1;
  }
  return slice_keep(ctx, node, &in, &out, start, step, count);
}

const tflm_registration_t tflm_op_slice = {
    NULL, TFLM_BUILTIN_SLICE, NULL, slice_prepare, tflm_layout_view_eval, NULL,
    NULL};

const tflm_registration_t tflm_op_strided_slice = {
    NULL, TFLM_BUILTIN_STRIDED_SLICE, NULL, strided_slice_prepare,
    tflm_layout_view_eval, NULL, NULL};
