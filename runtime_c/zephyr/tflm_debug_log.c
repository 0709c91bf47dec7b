/* DebugLog for Zephyr: printk, which reaches the console on every board. */
#include <zephyr/sys/printk.h>

#include "tflm_debug_log.h"

void tflm_debug_log(const char *text) { printk("%s", text); }
