#include "tflm_arena.h"

#include <stddef.h>

/* Alignment the platform needs for any scalar: the offset of a max-aligned member. */
typedef struct {
  char c;
  tflm_max_align_t member;
} alignment_probe_t;
#define PLATFORM_ALIGN ((uintptr_t)offsetof(alignment_probe_t, member))

uint32_t tflm_arena_align(uint32_t bytes) {
  return (bytes + (TFLM_ARENA_ALIGN - 1u)) & ~(TFLM_ARENA_ALIGN - 1u);
}

int tflm_arena_init(tflm_arena_t *arena, void *base, uint32_t size) {
  arena->base = (uint8_t *)base;
  arena->top = size & ~(TFLM_ARENA_ALIGN - 1u);
  arena->tail_start = arena->top;
  arena->bottom = 0;
  arena->peak = 0;
  arena->shortfall = 0;
  return base != NULL && ((uintptr_t)base % PLATFORM_ALIGN) == 0;
}

uint32_t tflm_arena_tail_bytes(const tflm_arena_t *arena) {
  return arena->top - arena->tail_start;
}

static void note_usage(tflm_arena_t *arena) {
  uint32_t used = arena->bottom + tflm_arena_tail_bytes(arena);
  if (used > arena->peak) arena->peak = used;
}

/* True when `bytes` more fit between bottom and tail; records the shortfall otherwise. */
static int fits(tflm_arena_t *arena, uint32_t bytes) {
  uint32_t free_bytes = arena->tail_start - arena->bottom;
  if (bytes <= free_bytes) return 1;
  if (arena->shortfall == 0) arena->shortfall = bytes - free_bytes;
  return 0;
}

void *tflm_arena_alloc_tail(tflm_arena_t *arena, uint32_t bytes) {
  bytes = tflm_arena_align(bytes);
  if (!fits(arena, bytes)) return NULL;
  arena->tail_start -= bytes;
  note_usage(arena);
  return arena->base + arena->tail_start;
}

void *tflm_arena_alloc_temp(tflm_arena_t *arena, uint32_t bytes) {
  uint8_t *start;
  bytes = tflm_arena_align(bytes);
  if (!fits(arena, bytes)) return NULL;
  start = arena->base + arena->bottom;
  arena->bottom += bytes;
  note_usage(arena);
  return start;
}

int tflm_arena_set_head(tflm_arena_t *arena, uint32_t head_bytes) {
  arena->bottom = 0;
  head_bytes = tflm_arena_align(head_bytes);
  if (!fits(arena, head_bytes)) return 0;
  arena->bottom = head_bytes;
  note_usage(arena);
  return 1;
}

uint32_t tflm_arena_mark(const tflm_arena_t *arena) { return arena->bottom; }

void tflm_arena_reset_temp(tflm_arena_t *arena, uint32_t mark) { arena->bottom = mark; }
