/* The platform timer the profiler reads: a tag specialisation (runtime_c/<tag>/tflm_timer.c)
 * provides a real one; the reference file has none and always returns 0. */
#ifndef TFLM_TIMER_H
#define TFLM_TIMER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A free-running tick count (cycles where the core has a cycle counter); wraps at 2^32. */
uint32_t tflm_timer_ticks(void);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_TIMER_H */
