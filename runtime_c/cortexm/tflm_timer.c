/* Cortex-M3/M4/M7/M33/M55: the DWT cycle counter, enabled on first use. (QEMU does not
 * model it and reads 0; count instructions with `tflm-gen bench` there instead.) */
#include "tflm_timer.h"

#define TFLM_DEMCR (*(volatile uint32_t *)0xE000EDFCu)     /* debug exception control */
#define TFLM_DWT_CTRL (*(volatile uint32_t *)0xE0001000u)  /* DWT control */
#define TFLM_DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u) /* cycle count */

uint32_t tflm_timer_ticks(void) {
  if ((TFLM_DWT_CTRL & 1u) == 0u) {
    TFLM_DEMCR |= 1u << 24; /* TRCENA: power the DWT */
    TFLM_DWT_CYCCNT = 0u;
    TFLM_DWT_CTRL |= 1u; /* CYCCNTENA */
  }
  return TFLM_DWT_CYCCNT;
}
