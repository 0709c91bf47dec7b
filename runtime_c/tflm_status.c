#include "tflm_status.h"

/* Defining TFLM_NO_MESSAGES strips the texts from the smallest builds. */
#ifdef TFLM_NO_MESSAGES
#define TFLM_STATUS_TEXT_ENTRY(name, text) "",
#else
#define TFLM_STATUS_TEXT_ENTRY(name, text) text,
#endif

static const char *const status_texts[] = {TFLM_STATUS_LIST(TFLM_STATUS_TEXT_ENTRY)};

const char *tflm_status_text(tflm_status_t status) {
  if ((unsigned)status >= (unsigned)TFLM_STATUS_COUNT) return "unknown status";
  return status_texts[status];
}
