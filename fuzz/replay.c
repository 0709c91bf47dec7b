/* Runs saved fuzz cases (one model per file) and prints, for each, the init status and the
 * invoke status: "<file> <init status name> <invoke status name>".  Built with the
 * sanitizers by tests/test_fuzz.py, so a case that crashed once fails the test again. */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

static const char *status_name(tflm_status_t status) {
#define TFLM_FUZZ_NAME(name, text) if (status == name) return #name;
  TFLM_STATUS_LIST(TFLM_FUZZ_NAME)
#undef TFLM_FUZZ_NAME
  return "unknown";
}

static int replay(const char *path) {
  FILE *f = fopen(path, "rb");
  long size;
  unsigned char *data;
  tflm_status_t init_status, invoke_status;
  if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0) return 1;
  rewind(f);
  data = (unsigned char *)malloc(size > 0 ? (size_t)size : 1);
  if (data == NULL || fread(data, 1, (size_t)size, f) != (size_t)size) return 1;
  fclose(f);
  init_status = tflm_fuzz_one(data, (size_t)size, &invoke_status);
  printf("%s %s %s\n", path, status_name(init_status), status_name(invoke_status));
  free(data);
  return 0;
}

int main(int argc, char **argv) {
  int i;
  for (i = 1; i < argc; ++i) {
    if (replay(argv[i]) != 0) {
      fprintf(stderr, "cannot read %s\n", argv[i]);
      return 2;
    }
  }
  return 0;
}
