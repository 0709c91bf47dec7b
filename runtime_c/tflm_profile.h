/* A ready-made profiler: ticks of the platform timer (tflm_timer.h) spent in init and in
 * each operator's eval, accumulated over invokes, printed through DebugLog.
 *
 *   static uint32_t ticks[OPERATOR_COUNT];
 *   static tflm_op_profile_t profile;
 *   tflm_op_profile_start(&profile, ticks, OPERATOR_COUNT);
 *   tflm_interpreter_init_profiled(&it, ..., tflm_op_profile_hooks(&profile));
 *   tflm_interpreter_invoke(&it);
 *   tflm_op_profile_print(&profile);
 */
#ifndef TFLM_PROFILE_H
#define TFLM_PROFILE_H

#include <stdint.h>

#include "tflm_interpreter.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  uint32_t *ticks;          /* per operator, caller-owned */
  int32_t count;            /* entries in ticks */
  uint32_t init_ticks;      /* spent in tflm_interpreter_init */
  uint32_t started;         /* timer value at the last begin */
  tflm_profiler_t hooks;    /* what the interpreter calls */
} tflm_op_profile_t;

void tflm_op_profile_start(tflm_op_profile_t *profile, uint32_t *ticks, int32_t count);
const tflm_profiler_t *tflm_op_profile_hooks(tflm_op_profile_t *profile);
void tflm_op_profile_print(const tflm_op_profile_t *profile);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_PROFILE_H */
