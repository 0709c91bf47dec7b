/* The arena: one caller-owned byte array split into three sections.
 *
 *   [0, head)                 head: planned non-persistent buffers (activations, scratch)
 *   [0, temp)                 temporary: scoped allocations during init, released after
 *   [tail_start, top)         tail: persistent allocations, growing down from the top
 *
 * Offsets are relative to the arena start and every allocation is a multiple of
 * TFLM_ARENA_ALIGN bytes, so the bytes used do not depend on where the arena sits in
 * memory or on the pointer width: the generator computes the same number the device uses.
 * The arena start must be aligned for any scalar type (tflm_max_align_t). */
#ifndef TFLM_ARENA_H
#define TFLM_ARENA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TFLM_ARENA_ALIGN 8u

/* Declare arenas as a union with this type to get a valid start address. */
typedef union {
  int64_t i64;
  double f64;
  void *pointer;
  float f32;
} tflm_max_align_t;

typedef struct {
  uint8_t *base;        /* first byte of the caller's arena */
  uint32_t top;         /* usable size: the arena size rounded down to TFLM_ARENA_ALIGN */
  uint32_t tail_start;  /* lowest byte of the tail; top - tail_start bytes are persistent */
  uint32_t bottom;      /* end of the head or of the temporary section, whichever is live */
  uint32_t peak;        /* most bytes ever in use at once: the smallest arena that works */
  uint32_t shortfall;   /* bytes missing at the first failed allocation (0 if none) */
} tflm_arena_t;

/* Sets up the sections; 0 when the start address is misaligned. */
int tflm_arena_init(tflm_arena_t *arena, void *base, uint32_t size);
/* Persistent bytes from the tail (NULL when they do not fit). */
void *tflm_arena_alloc_tail(tflm_arena_t *arena, uint32_t bytes);
/* Temporary bytes above the head (NULL when they do not fit); released all at once. */
void *tflm_arena_alloc_temp(tflm_arena_t *arena, uint32_t bytes);
/* Releases the temporary section and reserves `head_bytes` at the bottom (0 if no room). */
int tflm_arena_set_head(tflm_arena_t *arena, uint32_t head_bytes);
/* Current bottom mark; tflm_arena_reset_temp returns to it (for nested temporaries). */
uint32_t tflm_arena_mark(const tflm_arena_t *arena);
void tflm_arena_reset_temp(tflm_arena_t *arena, uint32_t mark);
uint32_t tflm_arena_tail_bytes(const tflm_arena_t *arena);
uint32_t tflm_arena_align(uint32_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_ARENA_H */
