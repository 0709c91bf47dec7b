/* No timer on a generic platform: profiles then count nothing but stay callable. Boards
 * replace this file through a tag (e.g. runtime_c/cortexm/tflm_timer.c). */
#include "tflm_timer.h"

uint32_t tflm_timer_ticks(void) { return 0; }
