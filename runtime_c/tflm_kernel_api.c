/* The kernel-facing half of the runtime (tflm_kernel.h). */
#include <stddef.h>

#include "tflm_model.h"
#include "tflm_printf.h"
#include "tflm_stage.h"

/* The global index of entry i of a node's tensor list: -1 for an omitted tensor, -2 for
 * i out of range. */
static int32_t list_tensor(tflm_context_t *ctx, int32_t subgraph, const uint8_t *list,
                           int32_t count, int32_t i) {
  int32_t local;
  if (i < 0 || i >= count) return -2;
  local = (int32_t)tflm_fb_read_u32(list + 4 * i);
  return local < 0 ? -1 : local + (int32_t)ctx->subgraphs[subgraph].first_tensor;
}

/* A view of a node's tensor t (narrowed to a stage band's rows while one runs). */
static tflm_status_t node_view(tflm_context_t *ctx, int32_t t, tflm_tensor_t *view) {
  tflm_status_t status;
  if (t == -2) {
    view->data = NULL;
    view->ndims = 0;
    return TFLM_ERR_BAD_INDEX;
  }
  status = tflm_model_view(ctx, t, view);
  tflm_stage_view(ctx, t, view);
  return status;
}

tflm_status_t tflm_node_input(tflm_context_t *ctx, const tflm_node_t *node, int32_t i,
                              tflm_tensor_t *view) {
  return node_view(ctx, list_tensor(ctx, node->subgraph, node->inputs_, node->inputs_count, i),
                   view);
}

tflm_status_t tflm_node_output(tflm_context_t *ctx, const tflm_node_t *node, int32_t i,
                               tflm_tensor_t *view) {
  return node_view(ctx, list_tensor(ctx, node->subgraph, node->outputs_, node->outputs_count, i),
                   view);
}

void *tflm_node_input_data(tflm_context_t *ctx, const tflm_node_t *node, int32_t i) {
  int32_t t = list_tensor(ctx, node->subgraph, node->inputs_, node->inputs_count, i);
  return tflm_stage_data(ctx, t, tflm_model_tensor_data(ctx, t));
}

void *tflm_node_output_data(tflm_context_t *ctx, const tflm_node_t *node, int32_t i) {
  int32_t t = list_tensor(ctx, node->subgraph, node->outputs_, node->outputs_count, i);
  return tflm_stage_data(ctx, t, tflm_model_tensor_data(ctx, t));
}

int tflm_node_band_pad(tflm_context_t *ctx, const tflm_node_t *node, int32_t *pad_top) {
  if (ctx->band == NULL || node->subgraph != 0 || node->index != ctx->band->node) return 0;
  *pad_top = ctx->band->pad_top;
  return 1;
}

int tflm_node_band_sum(tflm_context_t *ctx, const tflm_node_t *node, int32_t **sums,
                       int32_t *offset, int32_t *first, int32_t *last) {
  const tflm_band_t *band = ctx->band;
  if (band == NULL || band->sums == NULL || node->subgraph != 0 || node->index != band->node) {
    return 0;
  }
  *sums = band->sums;
  *offset = band->sum_offset;
  *first = band->sum_first;
  *last = band->sum_last;
  return 1;
}

int tflm_node_reduces(tflm_context_t *ctx, const tflm_node_t *node) {
  return node->subgraph == 0 && tflm_stage_reduction(ctx, node->index);
}

int32_t tflm_subgraph_count(tflm_context_t *ctx) { return (int32_t)ctx->subgraphs_count; }

static const tflm_subgraph_t *subgraph_at(tflm_context_t *ctx, int32_t s) {
  return s >= 0 && (uint32_t)s < ctx->subgraphs_count ? &ctx->subgraphs[s] : NULL;
}

int32_t tflm_subgraph_inputs_count(tflm_context_t *ctx, int32_t s) {
  const tflm_subgraph_t *g = subgraph_at(ctx, s);
  return g != NULL ? (int32_t)g->inputs_count : -1;
}

int32_t tflm_subgraph_outputs_count(tflm_context_t *ctx, int32_t s) {
  const tflm_subgraph_t *g = subgraph_at(ctx, s);
  return g != NULL ? (int32_t)g->outputs_count : -1;
}

tflm_status_t tflm_subgraph_input(tflm_context_t *ctx, int32_t s, int32_t i,
                                  tflm_tensor_t *view) {
  const tflm_subgraph_t *g = subgraph_at(ctx, s);
  int32_t t = g != NULL ? list_tensor(ctx, s, ctx->fb.data + g->inputs, (int32_t)g->inputs_count, i)
                        : -2;
  view->data = NULL;
  view->ndims = 0;
  return t < 0 ? TFLM_ERR_BAD_INDEX : tflm_model_view(ctx, t, view);
}

tflm_status_t tflm_subgraph_output(tflm_context_t *ctx, int32_t s, int32_t i,
                                   tflm_tensor_t *view) {
  const tflm_subgraph_t *g = subgraph_at(ctx, s);
  int32_t t = g != NULL ? list_tensor(ctx, s, ctx->fb.data + g->outputs,
                                      (int32_t)g->outputs_count, i)
                        : -2;
  view->data = NULL;
  view->ndims = 0;
  return t < 0 ? TFLM_ERR_BAD_INDEX : tflm_model_view(ctx, t, view);
}

float tflm_tensor_scale(const tflm_tensor_t *view, int32_t c) {
  union {
    uint32_t bits;
    float value;
  } scale;
  if (view->scales_le == NULL || view->nscales == 0) return 0.0f;
  if (c < 0 || c >= view->nscales) c = 0;
  scale.bits = tflm_fb_read_u32(view->scales_le + 4 * c);
  return scale.value;
}

int32_t tflm_tensor_zero_point(const tflm_tensor_t *view, int32_t c) {
  if (view->zero_points_le == NULL || view->nscales == 0) return 0;
  if (c < 0 || c >= view->nscales) c = 0;
  /* Zero points are int64 in the schema; every quantised type fits in the low word. */
  return (int32_t)tflm_fb_read_u32(view->zero_points_le + 8 * c);
}

int32_t tflm_type_size(int32_t type) {
  switch (type) {
    case TFLM_TYPE_INT8: case TFLM_TYPE_UINT8: case TFLM_TYPE_BOOL: return 1;
    case TFLM_TYPE_INT16: case TFLM_TYPE_UINT16: case TFLM_TYPE_FLOAT16: return 2;
    case TFLM_TYPE_FLOAT32: case TFLM_TYPE_INT32: case TFLM_TYPE_UINT32: return 4;
    case TFLM_TYPE_RESOURCE: return 4; /* a resource variable's id, as in TFLM */
    case TFLM_TYPE_INT64: case TFLM_TYPE_UINT64: case TFLM_TYPE_FLOAT64:
    case TFLM_TYPE_COMPLEX64: return 8;
    default: return 0;
  }
}

int32_t tflm_tensor_elements(const tflm_tensor_t *view) {
  int32_t i, count = 1;
  for (i = 0; i < view->ndims; ++i) count *= view->dims[i];
  return count;
}

/* TFLM's ValidateAndGetTensorSizes: the byte sizes must match. */
tflm_status_t tflm_tensor_copy(const tflm_tensor_t *dst, const tflm_tensor_t *src) {
  uint8_t *to = (uint8_t *)dst->data;
  const uint8_t *from = (const uint8_t *)src->data;
  int32_t i;
  if (dst->bytes != src->bytes) return TFLM_ERR_BAD_SHAPE;
  if (to == from || dst->bytes == 0) return TFLM_OK;
  if (to == NULL || from == NULL) return TFLM_ERROR;
  for (i = 0; i < dst->bytes; ++i) to[i] = from[i];
  return TFLM_OK;
}

/* A type outside 0..31 is in no set (and must not be shifted by). */
static int type_in(int32_t type, uint32_t types) {
  return type >= 0 && type < 32 && ((types >> type) & 1u) != 0 && tflm_type_size(type) > 0;
}

tflm_status_t tflm_node_check_io(tflm_context_t *ctx, const tflm_node_t *node, int32_t inputs,
                                 uint32_t types, int32_t shape, tflm_tensor_t *in,
                                 tflm_tensor_t *out) {
  TFLM_KERNEL_CHECK(ctx, node, node->inputs_count == inputs && node->outputs_count == 1,
                    TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 0, in) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_output(ctx, node, 0, out) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, types == 0 || (in->type == out->type && type_in(in->type, types)),
                    TFLM_ERR_UNSUPPORTED_TYPE);
  TFLM_KERNEL_CHECK(ctx, node,
                    shape != TFLM_IO_SAME_COUNT ||
                        tflm_tensor_elements(in) == tflm_tensor_elements(out),
                    TFLM_ERR_BAD_SHAPE);
  return TFLM_OK;
}

tflm_status_t tflm_node_constant_input(tflm_context_t *ctx, const tflm_node_t *node, int32_t i,
                                       uint32_t types, tflm_tensor_t *view) {
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, i, view) == TFLM_OK, TFLM_ERROR);
  TFLM_KERNEL_CHECK(ctx, node, view->data != NULL && view->is_constant, TFLM_ERR_BAD_PARAMS);
  TFLM_KERNEL_CHECK(ctx, node, types == 0 || type_in(view->type, types),
                    TFLM_ERR_UNSUPPORTED_TYPE);
  return TFLM_OK;
}

void *tflm_alloc_persistent(tflm_context_t *ctx, uint32_t bytes) {
  void *memory;
  if (!ctx->in_prepare) return NULL;
  memory = tflm_arena_alloc_tail(&ctx->arena, bytes);
  if (memory != NULL) ctx->kernel_bytes += tflm_arena_align(bytes);
  return memory;
}

tflm_status_t tflm_request_scratch(tflm_context_t *ctx, uint32_t bytes, int32_t *handle) {
  uint32_t *request;
  if (!ctx->in_prepare) return TFLM_ERR_NOT_READY;
  /* Requests stack up in temporary memory, two words each, until planning. */
  request = (uint32_t *)tflm_arena_alloc_temp(&ctx->arena, 2 * sizeof(uint32_t));
  if (request == NULL) return TFLM_ERR_ARENA_TOO_SMALL;
  if (ctx->scratch_request == NULL) ctx->scratch_request = request;
  request[0] = tflm_arena_align(bytes);
  ctx->scratch_bytes += request[0];
  request[1] = (uint32_t)ctx->current_node;
  *handle = (int32_t)ctx->scratch_count++;
  return TFLM_OK;
}

void *tflm_get_scratch(tflm_context_t *ctx, int32_t handle) {
  if (handle < 0 || (uint32_t)handle >= ctx->scratch_count || ctx->scratch_location == NULL) {
    return NULL;
  }
  return ctx->arena.base + ctx->scratch_location[handle];
}

const int32_t *tflm_node_requant(tflm_context_t *ctx, const tflm_node_t *node, int32_t *channels) {
  uint32_t record, count;
  *channels = 0;
  if (ctx->requant == 0 || node->index < 0) return NULL;
  /* Records are numbered by global operator index. */
  record = (uint32_t)tflm_model_int_at(
      ctx, ctx->requant, 2u + ctx->subgraphs[node->subgraph].first_node + (uint32_t)node->index);
  if (record < 2u || record >= ctx->requant_words) return NULL;
  count = (uint32_t)tflm_model_int_at(ctx, ctx->requant, record);
  if (count > (ctx->requant_words - record - 1u) / 2u) return NULL;
  *channels = (int32_t)count;
  return (const int32_t *)(const void *)tflm_model_at(ctx, ctx->requant + 4u * (record + 1u));
}

const int32_t *tflm_node_layout(tflm_context_t *ctx, const tflm_node_t *node, int32_t *words) {
  uint32_t record;
  *words = 0;
  if (ctx->layout == 0 || node->index < 0) return NULL;
  record = (uint32_t)tflm_model_int_at(
      ctx, ctx->layout, 2u + ctx->subgraphs[node->subgraph].first_node + (uint32_t)node->index);
  if (record < 2u || record >= ctx->layout_words) return NULL; /* bounds: tflm_model_layout */
  *words = tflm_model_int_at(ctx, ctx->layout, record);
  return (const int32_t *)(const void *)tflm_model_at(ctx, ctx->layout + 4u * (record + 1u));
}

int32_t tflm_node_coded_input(tflm_context_t *ctx, const tflm_node_t *node, int32_t i,
                              tflm_coded_t *coded) {
  const int32_t t = list_tensor(ctx, node->subgraph, node->inputs_, node->inputs_count, i);
  tflm_tensor_t view;
  uint32_t table;
  if (t < 0 || !tflm_model_compressed(ctx, t) || tflm_model_view(ctx, t, &view) != TFLM_OK ||
      view.data == NULL) {
    return 0;
  }
  coded->data = view.data;
  coded->bytes = tflm_model_constant_length(ctx, tflm_model_tensor(ctx, t));
  table = tflm_model_compress_table(ctx, &coded->table_bytes);
  coded->table = table != 0 ? tflm_model_at(ctx, table) : NULL;
  return 1;
}

/* Position of an option field inside the options table, NULL when absent. */
static const uint8_t *option_field(const tflm_node_t *node, int32_t field) {
  const uint8_t *table = node->options, *vtable;
  uint32_t slot = (uint32_t)field & 0xFFu, width = ((uint32_t)field >> 8) & 0xFFu;
  uint16_t vtable_bytes, offset;
  if (table == NULL) return NULL;
  vtable = table - (int32_t)tflm_fb_read_u32(table);
  vtable_bytes = tflm_fb_read_u16(vtable);
  if (4u + 2u * slot + 2u > vtable_bytes) return NULL;
  offset = tflm_fb_read_u16(vtable + 4 + 2 * slot);
  if (offset == 0 || offset + width > tflm_fb_read_u16(vtable + 2)) return NULL;
  return table + offset;
}

int32_t tflm_opt_int(const tflm_node_t *node, int32_t field, int32_t default_value) {
  const uint8_t *p = option_field(node, field);
  uint32_t width = ((uint32_t)field >> 8) & 0xFFu;
  if (p == NULL) return default_value;
  if (width == 1) return (int32_t)(int8_t)p[0];
  if (width == 2) return (int32_t)(int16_t)tflm_fb_read_u16(p);
  return (int32_t)tflm_fb_read_u32(p);
}

float tflm_opt_float(const tflm_node_t *node, int32_t field, float default_value) {
  const uint8_t *p = option_field(node, field);
  union {
    uint32_t bits;
    float value;
  } number;
  if (p == NULL) return default_value;
  number.bits = tflm_fb_read_u32(p);
  return number.value;
}

int32_t tflm_opt_int_vector(const tflm_node_t *node, int32_t field, int32_t *out, int32_t max) {
  const uint8_t *p = option_field(node, field), *vector;
  uint32_t length, i, target;
  if (p == NULL) return -1;
  target = tflm_fb_read_u32(p);
  if (target > (uint32_t)(node->model_end_ - p) || (uint32_t)(node->model_end_ - p) - target < 4) {
    return -1;
  }
  vector = p + target;
  length = tflm_fb_read_u32(vector);
  if (length > (uint32_t)(node->model_end_ - vector - 4) / 4u) return -1;
  for (i = 0; i < length && (int32_t)i < max; ++i) out[i] = (int32_t)tflm_fb_read_u32(vector + 4 + 4 * i);
  return (int32_t)length;
}

const uint8_t *tflm_opt_string(const tflm_node_t *node, int32_t field, uint32_t *length) {
  const uint8_t *p = option_field(node, field), *string;
  uint32_t target;
  *length = 0;
  if (p == NULL) return NULL;
  target = tflm_fb_read_u32(p);
  if (target > (uint32_t)(node->model_end_ - p) || (uint32_t)(node->model_end_ - p) - target < 4) {
    return NULL;
  }
  string = p + target;
  *length = tflm_fb_read_u32(string);
  if (*length > (uint32_t)(node->model_end_ - string - 4)) {
    *length = 0;
    return NULL;
  }
  return string + 4;
}

void tflm_kernel_check_failed(tflm_context_t *ctx, const tflm_node_t *node, int32_t line) {
  (void)ctx;
#ifndef TFLM_NO_MESSAGES
  tflm_printf("tflm: op %d: check failed (line %d)\n", (int)node->index, (int)line);
#else
  (void)node;
  (void)line;
#endif
}

void tflm_kernel_log(tflm_context_t *ctx, const tflm_node_t *node, const char *message) {
  (void)ctx;
#ifndef TFLM_NO_MESSAGES
  tflm_printf("tflm: op %d: %s\n", (int)node->index, message);
#else
  (void)node;
  (void)message;
#endif
}
