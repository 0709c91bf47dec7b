/* The one function a port must provide: write a NUL-terminated string somewhere a person
 * can read it (a UART, semihosting, stderr).  It must not add a newline. */
#ifndef TFLM_DEBUG_LOG_H
#define TFLM_DEBUG_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

void tflm_debug_log(const char *text);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_DEBUG_LOG_H */
