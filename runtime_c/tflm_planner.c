#include "tflm_planner.h"

static int lifetimes_overlap(const tflm_plan_buffer_t *a, const tflm_plan_buffer_t *b) {
  return a->first <= b->last && b->first <= a->last;
}

/* Fixed buffers first, then larger before smaller; ties keep the model's order so the
 * plan is deterministic. */
static int comes_before(const tflm_plan_buffer_t *buffers, int32_t a, int32_t b) {
  int a_fixed = buffers[a].offset != TFLM_PLAN_ONLINE;
  int b_fixed = buffers[b].offset != TFLM_PLAN_ONLINE;
  if (a_fixed != b_fixed) return a_fixed;
  if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
  return a < b;
}

static void sort_by_priority(const tflm_plan_buffer_t *buffers, int32_t count, uint16_t *order) {
  int32_t i, j;
  for (i = 0; i < count; ++i) {
    for (j = i; j > 0 && comes_before(buffers, i, order[j - 1]); --j) order[j] = order[j - 1];
    order[j] = (uint16_t)i;
  }
}

/* Lowest offset where `candidate` fits beside the placed buffers that are live with it.
 * placed[0..placed_count) is sorted by offset, so one pass finds the first gap. */
static uint32_t first_fit(const tflm_plan_buffer_t *buffers, const uint16_t *placed,
                          int32_t placed_count, const tflm_plan_buffer_t *candidate) {
  uint32_t gap_start = 0;
  int32_t i;
  for (i = 0; i < placed_count; ++i) {
    const tflm_plan_buffer_t *other = &buffers[placed[i]];
    if (!lifetimes_overlap(other, candidate)) continue;
    if (other->offset >= gap_start && other->offset - gap_start >= candidate->bytes) break;
    if (other->offset + other->bytes > gap_start) gap_start = other->offset + other->bytes;
  }
  return gap_start;
}

/* Inserts buffer `index` into the offset-sorted placed list (which reuses `order`). */
static void insert_placed(const tflm_plan_buffer_t *buffers, uint16_t *placed, int32_t count,
                          uint16_t index) {
  int32_t j = count;
  while (j > 0 && buffers[placed[j - 1]].offset > buffers[index].offset) {
    placed[j] = placed[j - 1];
    --j;
  }
  placed[j] = index;
}

uint32_t tflm_plan(tflm_plan_buffer_t *buffers, int32_t count, uint16_t *order) {
  uint32_t head = 0;
  int32_t i;
  sort_by_priority(buffers, count, order);
  /* order[i] is consumed at step i, so the placed list can grow in order[0..i). */
  for (i = 0; i < count; ++i) {
    uint16_t index = order[i];
    tflm_plan_buffer_t *buffer = &buffers[index];
    if (buffer->offset == TFLM_PLAN_ONLINE) buffer->offset = first_fit(buffers, order, i, buffer);
    insert_placed(buffers, order, i, index);
    if (buffer->offset + buffer->bytes > head) head = buffer->offset + buffer->bytes;
  }
  return head;
}
