/* tflm-op: SPACE_TO_BATCH_ND tflm_op_space_to_batch_nd types: float32,int8 */
/* tflm-op: BATCH_TO_SPACE_ND tflm_op_batch_to_space_nd types: float32,int8 */
/* SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND on 4-D NHWC tensors, or 3-D NHC ones (a width
 * of 1 and a one-element block shape), with constant int32 block_shape and
 * paddings / crops, as TFLM's reference kernels.
 *   SPACE_TO_BATCH_ND: output batch ob = (shift_h * block_w + shift_w) * in_batch + b takes
 *   input row oh * block_h + shift_h - pad_top, column ow * block_w + shift_w - pad_left of
 *   batch b; positions in the padding get real 0: the output zero point for int8, 0.0f for
 *   float32, as TFLite does.  (The installed TFLM reads its pad value from an op-data field
 *   it never sets, so its padding holds whatever the arena held; tests avoid padding.)
 *   BATCH_TO_SPACE_ND: the inverse, each output position (after adding the crops) reading
 *   its one input element.
 * Whole elements move; TFLM runs float32 and int8 only. */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_layout.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t element_size;   /* bytes per element */
  int32_t to_batch;       /* 1: SPACE_TO_BATCH_ND, 0: BATCH_TO_SPACE_ND */
  int32_t in_dims[4];     /* NHWC input (W 1 for 3-D tensors) */
  int32_t out_dims[4];    /* NHWC output */
  int32_t block_h, block_w;
  int32_t top, left;      /* paddings (space to batch) or crops (batch to space) */
  int32_t bottom, right;  /* the other ends (shape checks only) */
  int32_t pad_value;      /* stored padding element: int8 zero point, else 0 */
} tflm_space_batch_params_t;

static void space_batch_dims4(const tflm_tensor_t *t, int32_t *dims) {
  dims[0] = t->dims[0];
  dims[1] = t->dims[1];
  dims[2] = t->ndims == 4 ? t->dims[2] : 1;
  dims[3] = t->dims[t->ndims - 1];
}

static tflm_status_t space_batch_params(tflm_context_t *ctx, tflm_node_t *node,
                                        const tflm_tensor_t *in, const tflm_tensor_t *out,
                                        tflm_space_batch_params_t *p) {
  tflm_tensor_t block, pads;
  const int32_t spatial = in->ndims - 2;
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 1, &block) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 2, &pads) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, block.is_constant && pads.is_constant && block.data != NULL &&
                                   pads.data != NULL,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, block.type == TFLM_TYPE_INT32 && pads.type == TFLM_TYPE_INT32,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node, tflm_tensor_elements(&block) == spatial &&
                                   tflm_tensor_elements(&pads) == 2 * spatial,
                    TFLM_ERR_BAD_SHAPE);
  p->block_h = tflm_layout_read_index(&block, 0);
  p->block_w = spatial == 2 ? tflm_layout_read_index(&block, 1) : 1;
  p->top = tflm_layout_read_index(&pads, 0);
  p->bottom = tflm_layout_read_index(&pads, 1);
  p->left = spatial == 2 ? tflm_layout_read_index(&pads, 2) : 0;
  p->right = spatial == 2 ? tflm_layout_read_index(&pads, 3) : 0;
  TFLM_KERNEL_CHECK(ctx, node,
                    p->block_h > 0 && p->block_w > 0 && p->top >= 0 && p->left >= 0 &&
                        p->bottom >= 0 && p->right >= 0,
                    TFLM_ERR_BAD_PARAMS);
  space_batch_dims4(in, p->in_dims);
  space_batch_dims4(out, p->out_dims);
  return TFLM_OK;
}

/* The output shape TFLM computes: space dims padded (cropped) and divided (multiplied) by
 * the block, the batch multiplied (divided) by the block size. */
static tflm_status_t space_batch_check(tflm_context_t *ctx, tflm_node_t *node,
                                       const tflm_space_batch_params_t *p) {
  const int32_t *space = p->to_batch ? p->in_dims : p->out_dims;
  const int32_t *batch = p->to_batch ? p->out_dims : p->in_dims;
  const int32_t blocks = p->block_h * p->block_w;
  TFLM_KERNEL_CHECK(ctx, node, batch[0] == space[0] * blocks && batch[3] == space[3],
                    TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node,
                    batch[1] * p->block_h == space[1] + p->top + p->bottom &&
                        batch[2] * p->block_w == space[2] + p->left + p->right,
                    TFLM_ERR_BAD_SHAPE);
  return TFLM_OK;
}

static tflm_status_t space_batch_prepare(tflm_context_t *ctx, tflm_node_t *node,
                                         int32_t to_batch) {
  tflm_tensor_t in, out;
  tflm_space_batch_params_t *p;
  tflm_status_t status;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 3, TFLM_TYPE_BIT(FLOAT32) | TFLM_TYPE_BIT(INT8),
                                     TFLM_IO_ANY_SHAPE, &in, &out));
  TFLM_KERNEL_CHECK(ctx, node, (in.ndims == 3 || in.ndims == 4) && out.ndims == in.ndims,
                    TFLM_ERR_BAD_SHAPE);
  p = (tflm_space_batch_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->element_size = tflm_type_size(in.type);
  p->to_batch = to_batch;
  p->pad_value = out.type == TFLM_TYPE_INT8 ? out.zero_point : 0;
  status = space_batch_params(ctx, node, &in, &out, p);
  if (status != TFLM_OK) return status;
  status = space_batch_check(ctx, node, p);
  if (status != TFLM_OK) return status;
  node->user_data = p;
  return TFLM_OK;
}

/* Input element of output position (b, h, w), or -1 for padding. */
static int32_t space_batch_source(const tflm_space_batch_params_t *p, int32_t b, int32_t h,
                                  int32_t w) {
  const int32_t *in = p->in_dims;
  int32_t in_b, in_h, in_w;
  if (p->to_batch) {
    const int32_t k = b / in[0];
    in_b = b % in[0];
    in_h = h * p->block_h + k / p->block_w - p->top;
    in_w = w * p->block_w + k % p->block_w - p->left;
    if (in_h < 0 || in_h >= in[1] || in_w < 0 || in_w >= in[2]) return -1;
  } else {
    const int32_t full_h = h + p->top, full_w = w + p->left;
    in_h = full_h / p->block_h;
    in_w = full_w / p->block_w;
    in_b = ((full_h % p->block_h) * p->block_w + full_w % p->block_w) * p->out_dims[0] + b;
  }
  return ((in_b * in[1] + in_h) * in[2] + in_w) * in[3];
}

static tflm_status_t space_batch_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_space_batch_params_t *p = (const tflm_space_batch_params_t *)node->user_data;
  const uint8_t *in = (const uint8_t *)tflm_node_input_data(ctx, node, 0);
  uint8_t *out = (uint8_t *)tflm_node_output_data(ctx, node, 0);
  const int32_t size = p != NULL ? p->element_size : 0;
  const int32_t row = p != NULL ? p->out_dims[3] * size : 0;
  int32_t b, h, w, i;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && in != NULL && out != NULL, TFLM_ERR_NOT_READY);
  for (b = 0; b < p->out_dims[0]; ++b) {
    for (h = 0; h < p->out_dims[1]; ++h) {
      for (w = 0; w < p->out_dims[2]; ++w, out += row) {
        const int32_t at = space_batch_source(p, b, h, w);
        for (i = 0; i < row; ++i) {
          out[i] = at < 0 ? (uint8_t)p->pad_value : in[(ptrdiff_t)at * size + i];
        }
      }
    }
  }
  return TFLM_OK;
}

static tflm_status_t space_to_batch_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return space_batch_prepare(ctx, node, 1);
}

static tflm_status_t batch_to_space_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  return space_batch_prepare(ctx, node, 0);
}

const tflm_registration_t tflm_op_space_to_batch_nd = {
    NULL, TFLM_BUILTIN_SPACE_TO_BATCH_ND, NULL, space_to_batch_prepare,
    space_batch_eval, NULL, NULL};
const tflm_registration_t tflm_op_batch_to_space_nd = {
    NULL, TFLM_BUILTIN_BATCH_TO_SPACE_ND, NULL, batch_to_space_prepare,
    space_batch_eval, NULL, NULL};
