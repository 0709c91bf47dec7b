/* DebugLog over semihosting SYS_WRITE0: the text goes to the debugger or emulator's console
 * (QEMU: -semihosting-config enable=on,...).  The board's startup file provides the trap,
 * tflm_semihost_call, because its instruction differs between architectures. */
#include <stdint.h>

#include "tflm_debug_log.h"

#define TFLM_SEMIHOST_WRITE0 0x04 /* write a NUL-terminated string */

int32_t tflm_semihost_call(int32_t operation, const void *argument);

void tflm_debug_log(const char *text) { (void)tflm_semihost_call(TFLM_SEMIHOST_WRITE0, text); }
