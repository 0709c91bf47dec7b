/* tflm-op: BATCH_MATMUL tflm_op_batch_matmul types: float32,int8,int16 */
/* BATCH_MATMUL: out[..., m, n] = sum over k of lhs[..., m, k] * rhs[..., k, n], with
 * adj_x / adj_y meaning lhs / rhs are stored transposed ([..., k, m] / [..., n, k]).  Up to
 * three batch dimensions (rank 5), broadcast where one side has 1.  Arithmetic as TFLM:
 *   float: the sum runs over k in order from 0.0f;
 *   int8:  int32 sum of (lhs - lhs_zp) * (rhs - rhs_zp), requantised by
 *          lhs_scale * rhs_scale / out_scale, plus the output zero point, saturated;
 *   int16: zero points 0, int64 sum, 64-bit requantisation.
 * Operands are read in place (no transposed copies, so no scratch buffer). */
#include <stddef.h>
#include <stdint.h>

#include "tflm_kernel.h"
#include "tflm_quant.h"

/* Persistent op data (fixed-width fields only). */
typedef struct {
  int32_t type;               /* TFLM_TYPE_* of lhs, rhs and output */
  int32_t batch[3];           /* output batch dims (rank 5, right-aligned) */
  int32_t lhs_step[3];        /* lhs elements per batch index, 0 when broadcast */
  int32_t rhs_step[3];        /* rhs elements per batch index, 0 when broadcast */
  int32_t rows, cols, depth;  /* M, N, K */
  int32_t lhs_row, lhs_k;     /* lhs element strides of m and k */
  int32_t rhs_k, rhs_col;     /* rhs element strides of k and n */
  int32_t lhs_offset;         /* minus the lhs zero point */
  int32_t rhs_offset;         /* minus the rhs zero point */
  int32_t output_offset;      /* output zero point */
  int32_t multiplier, shift;  /* requantisation */
  int32_t qmin, qmax;         /* range of the integer type */
} tflm_batch_matmul_params_t;

/* dims of t right-aligned into five. */
static void extend5(const tflm_tensor_t *t, int32_t *dims) {
  int32_t k;
  for (k = 0; k < 5; ++k) dims[k] = k < 5 - t->ndims ? 1 : t->dims[k - (5 - t->ndims)];
}

/* Elements after axis k of a five-axis shape (the step of axis k). */
static int32_t product_after(const int32_t *dims, int32_t k) {
  int32_t product = 1;
  for (++k; k < 5; ++k) product *= dims[k];
  return product;
}

/* Batch dims, broadcast steps, and the matrix strides for the adjoint flags. */
static tflm_status_t matmul_shapes(tflm_context_t *ctx, tflm_node_t *node,
                                   const tflm_tensor_t *lhs, const tflm_tensor_t *rhs,
                                   const tflm_tensor_t *out, tflm_batch_matmul_params_t *p) {
  const int32_t adj_x = tflm_opt_int(node, TFLM_OPT_BATCH_MAT_MUL_ADJ_X, 0);
  const int32_t adj_y = tflm_opt_int(node, TFLM_OPT_BATCH_MAT_MUL_ADJ_Y, 0);
  int32_t l[5], r[5], o[5], k;
  TFLM_KERNEL_CHECK(ctx, node, lhs->ndims >= 2 && lhs->ndims <= 5 && rhs->ndims >= 2 &&
                                   rhs->ndims <= 5 && out->ndims <= 5,
                    TFLM_ERR_BAD_SHAPE);
  extend5(lhs, l);
  extend5(rhs, r);
  extend5(out, o);
  p->rows = adj_x ? l[4] : l[3];
  p->depth = adj_x ? l[3] : l[4];
  p->cols = adj_y ? r[3] : r[4];
  TFLM_KERNEL_CHECK(ctx, node, (adj_y ? r[4] : r[3]) == p->depth, TFLM_ERR_BAD_SHAPE);
  TFLM_KERNEL_CHECK(ctx, node, o[3] == p->rows && o[4] == p->cols, TFLM_ERR_BAD_SHAPE);
  for (k = 0; k < 3; ++k) {
    TFLM_KERNEL_CHECK(ctx, node, l[k] == r[k] || l[k] == 1 || r[k] == 1, TFLM_ERR_BAD_SHAPE);
    p->batch[k] = l[k] == 1 ? r[k] : l[k];
    TFLM_KERNEL_CHECK(ctx, node, o[k] == p->batch[k], TFLM_ERR_BAD_SHAPE);
    p->lhs_step[k] = l[k] == 1 ? 0 : product_after(l, k);
    p->rhs_step[k] = r[k] == 1 ? 0 : product_after(r, k);
  }
  p->lhs_row = adj_x ? 1 : p->depth;
  p->lhs_k = adj_x ? p->rows : 1;
  p->rhs_k = adj_y ? 1 : p->cols;
  p->rhs_col = adj_y ? p->depth : 1;
  return TFLM_OK;
}

static tflm_status_t matmul_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t lhs, rhs, out;
  tflm_batch_matmul_params_t *p;
  tflm_status_t status;
  TFLM_KERNEL_TRY(tflm_node_check_io(ctx, node, 2, 0, TFLM_IO_ANY_SHAPE, &lhs, &out));
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 1, &rhs) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, lhs.type == rhs.type && lhs.type == out.type,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node,
                    lhs.type == TFLM_TYPE_FLOAT32 || lhs.type == TFLM_TYPE_INT8 ||
                        lhs.type == TFLM_TYPE_INT16,
                    TFLM_ERR_UNSUPPORTED_TYPE);
  p = (tflm_batch_matmul_params_t *)tflm_alloc_persistent(ctx, sizeof(*p));
  TFLM_KERNEL_CHECK(ctx, node, p != NULL, TFLM_ERR_ARENA_TOO_SMALL);
  p->type = lhs.type;
  status = matmul_shapes(ctx, node, &lhs, &rhs, &out, p);
  if (status != TFLM_OK) return status;
  p->lhs_offset = -lhs.zero_point;
  p->rhs_offset = -rhs.zero_point;
  p->output_offset = out.zero_point;
  p->qmin = lhs.type == TFLM_TYPE_INT16 ? -32768 : -128;
  p->qmax = lhs.type == TFLM_TYPE_INT16 ? 32767 : 127;
  p->multiplier = 0;
  p->shift = 0;
  if (lhs.type != TFLM_TYPE_FLOAT32) {
    if (lhs.type == TFLM_TYPE_INT16) {
      TFLM_KERNEL_CHECK(ctx, node, lhs.zero_point == 0 && rhs.zero_point == 0 &&
                                       out.zero_point == 0,
                        TFLM_ERR_BAD_PARAMS);
    }
    tflm_quantize_multiplier((double)lhs.scale * (double)rhs.scale / (double)out.scale,
                             &p->multiplier, &p->shift);
  }
  node->user_data = p;
  return TFLM_OK;
}

/* One output matrix; lhs and rhs point at this batch's matrices. */
static void matmul_float(const tflm_batch_matmul_params_t *p, const float *lhs,
                         const float *rhs, float *out) {
  int32_t m, n, k;
  for (m = 0; m < p->rows; ++m) {
    for (n = 0; n < p->cols; ++n) {
      float total = 0.0f;
      for (k = 0; k < p->depth; ++k) {
        total += rhs[k * p->rhs_k + n * p->rhs_col] * lhs[m * p->lhs_row + k * p->lhs_k];
      }
      out[m * p->cols + n] = total;
    }
  }
}

static void matmul_int8(const tflm_batch_matmul_params_t *p, const int8_t *lhs,
                        const int8_t *rhs, int8_t *out) {
  int32_t m, n, k;
  for (m = 0; m < p->rows; ++m) {
    for (n = 0; n < p->cols; ++n) {
      int32_t total = 0, v;
      for (k = 0; k < p->depth; ++k) {
        total = tflm_mac_wrap(total, (int32_t)rhs[k * p->rhs_k + n * p->rhs_col] + p->rhs_offset,
                              (int32_t)lhs[m * p->lhs_row + k * p->lhs_k] + p->lhs_offset);
      }
      v = tflm_requantize(total, p->multiplier, p->shift, p->output_offset, p->qmin, p->qmax);
      out[m * p->cols + n] = (int8_t)v;
    }
  }
}

static void matmul_int16(const tflm_batch_matmul_params_t *p, const int16_t *lhs,
                         const int16_t *rhs, int16_t *out) {
  int32_t m, n, k;
  for (m = 0; m < p->rows; ++m) {
    for (n = 0; n < p->cols; ++n) {
      int64_t total = 0;
      int32_t v;
      for (k = 0; k < p->depth; ++k) {
        total += (int64_t)rhs[k * p->rhs_k + n * p->rhs_col] *
                 (int64_t)lhs[m * p->lhs_row + k * p->lhs_k];
      }
      v = tflm_multiply_by_quantized_multiplier_64(total, p->multiplier, p->shift);
      out[m * p->cols + n] = (int16_t)(v < p->qmin ? p->qmin : (v > p->qmax ? p->qmax : v));
    }
  }
}

static tflm_status_t matmul_eval(tflm_context_t *ctx, tflm_node_t *node) {
  const tflm_batch_matmul_params_t *p = (const tflm_batch_matmul_params_t *)node->user_data;
  const uint8_t *lhs = (const uint8_t *)tflm_node_input_data(ctx, node, 0);
  const uint8_t *rhs = (const uint8_t *)tflm_node_input_data(ctx, node, 1);
  uint8_t *out = (uint8_t *)tflm_node_output_data(ctx, node, 0);
  int32_t b0, b1, b2, size, index = 0;
  TFLM_KERNEL_CHECK(ctx, node, p != NULL && lhs != NULL && rhs != NULL && out != NULL,
                    TFLM_ERR_NOT_READY);
  size = p->type == TFLM_TYPE_FLOAT32 ? 4 : (p->type == TFLM_TYPE_INT16 ? 2 : 1);
  for (b0 = 0; b0 < p->batch[0]; ++b0) {
    for (b1 = 0; b1 < p->batch[1]; ++b1) {
      for (b2 = 0; b2 < p->batch[2]; ++b2, ++index) {
        const ptrdiff_t l = (ptrdiff_t)(b0 * p->lhs_step[0] + b1 * p->lhs_step[1] +
                                        b2 * p->lhs_step[2]) * size;
        const ptrdiff_t r = (ptrdiff_t)(b0 * p->rhs_step[0] + b1 * p->rhs_step[1] +
                                        b2 * p->rhs_step[2]) * size;
        uint8_t *o = out + (ptrdiff_t)index * p->rows * p->cols * size;
        if (p->type == TFLM_TYPE_FLOAT32) {
          matmul_float(p, (const float *)(const void *)(lhs + l),
                       (const float *)(const void *)(rhs + r), (float *)(void *)o);
        } else if (p->type == TFLM_TYPE_INT8) {
          matmul_int8(p, (const int8_t *)(lhs + l), (const int8_t *)(rhs + r), (int8_t *)o);
        } else {
          matmul_int16(p, (const int16_t *)(const void *)(lhs + l),
                       (const int16_t *)(const void *)(rhs + r), (int16_t *)(void *)o);
        }
      }
    }
  }
  return TFLM_OK;
}

const tflm_registration_t tflm_op_batch_matmul = {
    NULL, TFLM_BUILTIN_BATCH_MATMUL, NULL, matmul_prepare, matmul_eval, NULL,
    NULL};
