/* Default DebugLog for hosted builds: standard error.  Ports replace this file through a
 * tag (runtime_c/<tag>/tflm_debug_log.c), e.g. semihosting or an Arduino Serial port. */
#include <stdio.h>

#include "tflm_debug_log.h"

void tflm_debug_log(const char *text) { fputs(text, stderr); }
