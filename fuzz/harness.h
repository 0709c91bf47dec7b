#ifndef TFLM_FUZZ_HARNESS_H
#define TFLM_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "tflm_interpreter.h"

/* Opens `data` as a model, then (when init succeeds) invokes it twice with fixed inputs.
 * Returns init's status; *invoke_status is the invokes' (TFLM_ERR_NOT_READY if none ran). */
tflm_status_t tflm_fuzz_one(const uint8_t *data, size_t size, tflm_status_t *invoke_status);

#endif
