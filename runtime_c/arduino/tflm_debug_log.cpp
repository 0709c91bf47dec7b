/* DebugLog for Arduino: the text goes to Serial, which the sketch must have begun
 * (Serial.begin) before the runtime logs.  C++ for Serial; C linkage for the runtime. */
#include <Arduino.h>

#include "tflm_debug_log.h"

extern "C" void tflm_debug_log(const char *text) { Serial.print(text); }
