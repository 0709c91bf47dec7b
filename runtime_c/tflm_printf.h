/* A small formatted printer over tflm_debug_log that needs no libc.
 * Supports %d %i %u %x %s %c %% and %f (fixed, 6 decimals), with an optional `l`
 * length (long/unsigned long, ignored width otherwise).  Output longer than
 * TFLM_PRINTF_BUFFER bytes per call is flushed in pieces. */
#ifndef TFLM_PRINTF_H
#define TFLM_PRINTF_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TFLM_PRINTF_BUFFER 64

void tflm_printf(const char *format, ...);
void tflm_vprintf(const char *format, va_list args);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_PRINTF_H */
