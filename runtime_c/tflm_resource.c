/* Resource variables (tflm_kernel.h): values that VAR_HANDLE names, ASSIGN_VARIABLE writes
 * and READ_VARIABLE reads, kept in the arena tail across invokes.  Semantics are TFLM's
 * MicroResourceVariables: ids in order of creation, memory given by the first
 * ASSIGN_VARIABLE prepared for a variable, filled with a reset byte then and at reset. */
#include <stddef.h>

#include "tflm_model.h"

/* True when the model string at `position` (0: absent) equals the given bytes. */
static int same_string(tflm_context_t *ctx, uint32_t position, uint32_t length,
                       const uint8_t *text, uint32_t text_length) {
  uint32_t i;
  if (position == 0 || text == NULL) return position == 0 && text == NULL;
  if (length != text_length) return 0;
  for (i = 0; i < length; ++i) {
    if (ctx->fb.data[position + i] != text[i]) return 0;
  }
  return 1;
}

static uint32_t model_position(tflm_context_t *ctx, const uint8_t *text) {
  return text != NULL ? (uint32_t)(text - ctx->fb.data) : 0;
}

int32_t tflm_resource_id(tflm_context_t *ctx, const uint8_t *container,
                         uint32_t container_length, const uint8_t *name, uint32_t name_length) {
  tflm_resource_t *resource;
  uint32_t r;
  for (r = 0; r < ctx->resources_count; ++r) {
    resource = &ctx->resources[r];
    /* As TFLM's FindId: an absent container matches any. */
    if ((container == NULL || same_string(ctx, resource->container, resource->container_length,
                                          container, container_length)) &&
        same_string(ctx, resource->name, resource->name_length, name, name_length)) {
      return (int32_t)r;
    }
  }
  if (!ctx->in_prepare || ctx->resources_count >= ctx->resources_capacity) return -1;
  resource = &ctx->resources[ctx->resources_count];
  resource->container = model_position(ctx, container);
  resource->container_length = container_length;
  resource->name = model_position(ctx, name);
  resource->name_length = name_length;
  resource->data = TFLM_NO_DATA;
  resource->bytes = 0;
  resource->fill = 0;
  return (int32_t)ctx->resources_count++;
}

tflm_status_t tflm_resource_allocate(tflm_context_t *ctx, int32_t id, uint32_t bytes,
                                     uint8_t fill) {
  tflm_resource_t *resource;
  uint8_t *data;
  uint32_t i;
  if (id < 0 || (uint32_t)id >= ctx->resources_count) return TFLM_ERR_BAD_INDEX;
  resource = &ctx->resources[id];
  if (resource->data != TFLM_NO_DATA) return TFLM_OK;
  if (!ctx->in_prepare) return TFLM_ERR_NOT_READY;
  data = (uint8_t *)tflm_arena_alloc_tail(&ctx->arena, bytes);
  if (data == NULL) return TFLM_ERR_ARENA_TOO_SMALL;
  ctx->variable_bytes += tflm_arena_align(bytes);
  resource->data = (uint32_t)(data - ctx->arena.base);
  resource->bytes = bytes;
  resource->fill = fill;
  for (i = 0; i < bytes; ++i) data[i] = fill;
  return TFLM_OK;
}

void *tflm_resource_data(tflm_context_t *ctx, int32_t id, uint32_t *bytes) {
  const tflm_resource_t *resource;
  *bytes = 0;
  if (id < 0 || (uint32_t)id >= ctx->resources_count) return NULL;
  resource = &ctx->resources[id];
  if (resource->data == TFLM_NO_DATA) return NULL;
  *bytes = resource->bytes;
  return ctx->arena.base + resource->data;
}
