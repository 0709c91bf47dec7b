/* Memory planner: places buffers with known lifetimes in the head section so that buffers
 * alive at the same operator never overlap.  Greedy first-fit over buffers taken in
 * decreasing size; buffers with a fixed offset (an offline plan) are placed first. */
#ifndef TFLM_PLANNER_H
#define TFLM_PLANNER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TFLM_PLAN_ONLINE 0xFFFFFFFFu /* offset value: the planner chooses */

typedef struct {
  uint32_t bytes;  /* size, already rounded to TFLM_ARENA_ALIGN */
  uint32_t offset; /* TFLM_PLAN_ONLINE on input unless fixed; the chosen offset on output */
  int16_t first;   /* first operator step at which the buffer is live */
  int16_t last;    /* last operator step at which it is live (inclusive) */
} tflm_plan_buffer_t;

/* Places the buffers; `order` is caller-provided scratch of `count` entries (count is at
 * most 65535).  Fixed offsets may overlap each other (an offline plan can share memory
 * between tensors it knows are never live together).
 * Returns the head size: the highest end offset of any buffer. */
uint32_t tflm_plan(tflm_plan_buffer_t *buffers, int32_t count, uint16_t *order);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_PLANNER_H */
