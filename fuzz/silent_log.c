/* The fuzzer's DebugLog: formats as a port would, then drops the text (libFuzzer's own
 * output stays readable and the runs stay fast). */
#include "tflm_debug_log.h"

void tflm_debug_log(const char *text) { (void)text; }
