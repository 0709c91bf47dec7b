/* libFuzzer entry point: every input is a model (see harness.c). */
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tflm_status_t invoke_status;
  tflm_fuzz_one(data, size, &invoke_status);
  return 0;
}
