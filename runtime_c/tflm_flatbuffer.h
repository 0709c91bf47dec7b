/* A bounds-checked reader of FlatBuffers, used to read the model in place from flash.
 *
 * Every position is a uint32 byte offset from the start of the buffer; 0 means "absent"
 * (offset 0 is the root offset, never a table, vector or string).  Any read that would
 * leave the buffer returns 0 or the default and sets fb->corrupt, so a corrupt model
 * yields an error code, never an out-of-bounds read.  Values are little-endian. */
#ifndef TFLM_FLATBUFFER_H
#define TFLM_FLATBUFFER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const uint8_t *data; /* the serialized buffer (the model) */
  uint32_t size;       /* its length in bytes */
  uint8_t corrupt;     /* set by the first out-of-range read; sticky */
} tflm_fb_t;

uint32_t tflm_fb_read_u32(const uint8_t *p);
uint16_t tflm_fb_read_u16(const uint8_t *p);

/* The root table, after checking the 4-byte file identifier (NULL skips the check). */
uint32_t tflm_fb_root(tflm_fb_t *fb, const char *identifier);
/* Position of a scalar field of `width` bytes, or 0 when absent or out of range. */
uint32_t tflm_fb_field(tflm_fb_t *fb, uint32_t table, int32_t slot, uint32_t width);
int32_t tflm_fb_int(tflm_fb_t *fb, uint32_t table, int32_t slot, uint32_t width,
                    int32_t default_value);
/* A sub-table, vector or string field: the position it points to, or 0. */
uint32_t tflm_fb_table(tflm_fb_t *fb, uint32_t table, int32_t slot);
/* A vector field: position of its first element and its length (0, 0 when absent).
 * Checks that length * element_size bytes fit in the buffer. */
uint32_t tflm_fb_vector(tflm_fb_t *fb, uint32_t table, int32_t slot, uint32_t element_size,
                        uint32_t *length);
/* Element i of a vector of tables (as returned by tflm_fb_vector with element size 4). */
uint32_t tflm_fb_vector_table(tflm_fb_t *fb, uint32_t elements, uint32_t length, uint32_t i);
/* A string field: position of its bytes and their count (no terminator is assumed). */
uint32_t tflm_fb_string(tflm_fb_t *fb, uint32_t table, int32_t slot, uint32_t *length);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_FLATBUFFER_H */
