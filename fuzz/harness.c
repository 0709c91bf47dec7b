/* One fuzz case: the bytes are a model; open it, and when that succeeds fill the inputs
 * with finite values and invoke twice (the second invoke reads state the first wrote).
 * Shared by the libFuzzer entry (fuzz_main.c) and the replay tool (replay.c). */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#include "model_model_ops.h"

#define ARENA_BYTES (2u << 20)

static union {
  tflm_max_align_t align;
  unsigned char bytes[ARENA_BYTES];
} arena;

/* Finite inputs only: a NaN fed by the caller is the caller's business, not the loader's. */
static void fill_input(tflm_tensor_t *view) {
  int32_t i;
  if (view->data == NULL || view->bytes <= 0) return;
  if (view->type == TFLM_TYPE_FLOAT32) {
    float *values = (float *)view->data;
    for (i = 0; i < view->bytes / 4; ++i) values[i] = (float)((i * 37) % 17 - 8) * 0.25f;
    return;
  }
  for (i = 0; i < view->bytes; ++i) ((unsigned char *)view->data)[i] = (unsigned char)(i * 91);
}

static void fill_inputs(tflm_interpreter_t *it) {
  int32_t i;
  for (i = 0; i < tflm_interpreter_inputs_count(it); ++i) {
    tflm_tensor_t view;
    if (tflm_interpreter_input(it, i, &view) == TFLM_OK) fill_input(&view);
  }
}

/* The arena starts all-zero for every case, so a case replays the same way alone. */
static void clear_arena(uint32_t used) {
  uint32_t n = used < ARENA_BYTES ? used : ARENA_BYTES;
  memset(arena.bytes, 0, n);
  memset(arena.bytes + ARENA_BYTES - n, 0, n);
}

tflm_status_t tflm_fuzz_one(const uint8_t *data, size_t size, tflm_status_t *invoke_status) {
  static tflm_interpreter_t it;
  unsigned char *model;
  tflm_status_t status;
  *invoke_status = TFLM_ERR_NOT_READY;
  if (size > 0x7FFFFFFFu) return TFLM_ERR_MODEL;
  /* An exact-size heap copy: AddressSanitizer then sees any read past the model's end,
   * and the copy is aligned as a model in flash is. */
  model = (unsigned char *)malloc(size > 0 ? size : 1);
  if (model == NULL) return TFLM_ERROR;
  if (size > 0) memcpy(model, data, size);
  status = tflm_interpreter_init(&it, model, (uint32_t)size, &model_resolver, arena.bytes,
                                 ARENA_BYTES);
  if (status == TFLM_OK) {
    fill_inputs(&it);
    *invoke_status = tflm_interpreter_invoke(&it);
    if (*invoke_status == TFLM_OK) *invoke_status = tflm_interpreter_invoke(&it);
  }
  clear_arena(tflm_interpreter_arena_used_bytes(&it));
  free(model);
  return status;
}
