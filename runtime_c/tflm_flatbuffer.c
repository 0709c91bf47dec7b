#include "tflm_flatbuffer.h"

uint32_t tflm_fb_read_u32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
         ((uint32_t)p[3] << 24);
}

uint16_t tflm_fb_read_u16(const uint8_t *p) {
  return (uint16_t)((uint16_t)p[0] | (uint16_t)((uint16_t)p[1] << 8));
}

/* True when [position, position + bytes) lies inside the buffer; marks corruption if not. */
static int fb_fits(tflm_fb_t *fb, uint32_t position, uint32_t bytes) {
  if (position <= fb->size && bytes <= fb->size - position) return 1;
  fb->corrupt = 1;
  return 0;
}

uint32_t tflm_fb_root(tflm_fb_t *fb, const char *identifier) {
  uint32_t root;
  int32_t i;
  if (!fb_fits(fb, 0, 8)) return 0;
  for (i = 0; identifier != 0 && i < 4; ++i) {
    if (fb->data[4 + i] != (uint8_t)identifier[i]) {
      fb->corrupt = 1;
      return 0;
    }
  }
  root = tflm_fb_read_u32(fb->data);
  if (root < 8 || !fb_fits(fb, root, 4)) {
    fb->corrupt = 1;
    return 0;
  }
  return root;
}

/* The vtable of a table, after checking that the vtable and the table object fit. */
static uint32_t fb_vtable(tflm_fb_t *fb, uint32_t table, uint16_t *vtable_bytes) {
  int64_t vtable;
  uint16_t object_bytes;
  if (table == 0 || !fb_fits(fb, table, 4)) return 0;
  vtable = (int64_t)table - (int64_t)(int32_t)tflm_fb_read_u32(fb->data + table);
  if (vtable < 0 || !fb_fits(fb, (uint32_t)vtable, 4)) {
    fb->corrupt = 1;
    return 0;
  }
  *vtable_bytes = tflm_fb_read_u16(fb->data + vtable);
  object_bytes = tflm_fb_read_u16(fb->data + vtable + 2);
  if (*vtable_bytes < 4 || !fb_fits(fb, (uint32_t)vtable, *vtable_bytes) ||
      !fb_fits(fb, table, object_bytes)) {
    fb->corrupt = 1;
    return 0;
  }
  return (uint32_t)vtable;
}

uint32_t tflm_fb_field(tflm_fb_t *fb, uint32_t table, int32_t slot, uint32_t width) {
  uint16_t vtable_bytes = 0, field;
  uint32_t vtable = fb_vtable(fb, table, &vtable_bytes);
  uint32_t entry = 4u + 2u * (uint32_t)slot;
  if (vtable == 0 || slot < 0 || entry + 2u > vtable_bytes) return 0;
  field = tflm_fb_read_u16(fb->data + vtable + entry);
  if (field == 0) return 0;
  if (field + width > tflm_fb_read_u16(fb->data + vtable + 2) || !fb_fits(fb, table, field + width)) {
    fb->corrupt = 1;
    return 0;
  }
  return table + field;
}

int32_t tflm_fb_int(tflm_fb_t *fb, uint32_t table, int32_t slot, uint32_t width,
                    int32_t default_value) {
  uint32_t position = tflm_fb_field(fb, table, slot, width);
  const uint8_t *p;
  if (position == 0) return default_value;
  p = fb->data + position;
  if (width == 1) return (int32_t)(int8_t)p[0];
  if (width == 2) return (int32_t)(int16_t)tflm_fb_read_u16(p);
  return (int32_t)tflm_fb_read_u32(p);
}

uint32_t tflm_fb_table(tflm_fb_t *fb, uint32_t table, int32_t slot) {
  uint32_t position = tflm_fb_field(fb, table, slot, 4);
  uint32_t target;
  if (position == 0) return 0;
  target = tflm_fb_read_u32(fb->data + position);
  if (target == 0 || target > fb->size - position || !fb_fits(fb, position + target, 4)) {
    fb->corrupt = 1;
    return 0;
  }
  return position + target;
}

uint32_t tflm_fb_vector(tflm_fb_t *fb, uint32_t table, int32_t slot, uint32_t element_size,
                        uint32_t *length) {
  uint32_t vector = tflm_fb_table(fb, table, slot);
  *length = 0;
  if (vector == 0) return 0;
  *length = tflm_fb_read_u32(fb->data + vector);
  if (element_size != 0 && *length > (fb->size - vector - 4) / element_size) {
    fb->corrupt = 1;
    *length = 0;
    return 0;
  }
  return vector + 4;
}

uint32_t tflm_fb_vector_table(tflm_fb_t *fb, uint32_t elements, uint32_t length, uint32_t i) {
  uint32_t position, target;
  if (elements == 0 || i >= length) return 0;
  position = elements + 4u * i;
  target = tflm_fb_read_u32(fb->data + position);
  if (target == 0 || target > fb->size - position || !fb_fits(fb, position + target, 4)) {
    fb->corrupt = 1;
    return 0;
  }
  return position + target;
}

uint32_t tflm_fb_string(tflm_fb_t *fb, uint32_t table, int32_t slot, uint32_t *length) {
  return tflm_fb_vector(fb, table, slot, 1, length);
}
