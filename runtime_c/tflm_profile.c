#include "tflm_profile.h"

#include <stddef.h>

#include "tflm_printf.h"
#include "tflm_timer.h"

static void profile_begin(void *user, int32_t node_index) {
  (void)node_index;
  ((tflm_op_profile_t *)user)->started = tflm_timer_ticks();
}

/* Unsigned subtraction gives the right span across one wrap of the timer. */
static void profile_end(void *user, int32_t node_index) {
  tflm_op_profile_t *profile = (tflm_op_profile_t *)user;
  uint32_t span = tflm_timer_ticks() - profile->started;
  if (node_index == TFLM_PROFILE_INIT) {
    profile->init_ticks += span;
  } else if (node_index >= 0 && node_index < profile->count) {
    profile->ticks[node_index] += span;
  }
}

void tflm_op_profile_start(tflm_op_profile_t *profile, uint32_t *ticks, int32_t count) {
  int32_t i;
  for (i = 0; i < count; ++i) ticks[i] = 0;
  profile->ticks = ticks;
  profile->count = count;
  profile->init_ticks = 0;
  profile->started = 0;
  profile->hooks.begin = profile_begin;
  profile->hooks.end = profile_end;
  profile->hooks.user = profile;
}

const tflm_profiler_t *tflm_op_profile_hooks(tflm_op_profile_t *profile) {
  return &profile->hooks;
}

void tflm_op_profile_print(const tflm_op_profile_t *profile) {
  int32_t i;
  tflm_printf("profile: init %lu ticks\n", (unsigned long)profile->init_ticks);
  for (i = 0; i < profile->count; ++i) {
    tflm_printf("profile: op %d %lu ticks\n", (int)i, (unsigned long)profile->ticks[i]);
  }
}
