/* DebugLog for Mbed OS 6: the text goes to the console UART (CONSOLE_TX/CONSOLE_RX) at
 * platform.stdio-baud-rate, written directly so that it needs no stdio retargeting.
 * C++ for the Mbed API; C linkage for the runtime. */
#include <string.h>

#include "mbed.h"

#include "tflm_debug_log.h"

extern "C" void tflm_debug_log(const char *text) {
  static mbed::BufferedSerial console(CONSOLE_TX, CONSOLE_RX, MBED_CONF_PLATFORM_STDIO_BAUD_RATE);
  console.write(text, strlen(text));
}
