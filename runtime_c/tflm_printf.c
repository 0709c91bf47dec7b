#include "tflm_printf.h"

#include <stdint.h>

#include "tflm_debug_log.h"

/* Characters collected before they go to tflm_debug_log in one call. */
typedef struct {
  char text[TFLM_PRINTF_BUFFER + 1];
  int32_t used;
} printf_buffer_t;

static void buffer_flush(printf_buffer_t *buffer) {
  if (buffer->used == 0) return;
  buffer->text[buffer->used] = '\0';
  tflm_debug_log(buffer->text);
  buffer->used = 0;
}

static void buffer_put(printf_buffer_t *buffer, char c) {
  if (buffer->used == TFLM_PRINTF_BUFFER) buffer_flush(buffer);
  buffer->text[buffer->used++] = c;
}

static void put_string(printf_buffer_t *buffer, const char *s) {
  while (s != 0 && *s != '\0') buffer_put(buffer, *s++);
}

static void put_unsigned(printf_buffer_t *buffer, uint32_t value, uint32_t base) {
  char digits[11];
  int32_t count = 0;
  do {
    uint32_t digit = value % base;
    digits[count++] = (char)(digit < 10 ? '0' + digit : 'a' + digit - 10);
    value /= base;
  } while (value != 0);
  while (count > 0) buffer_put(buffer, digits[--count]);
}

static void put_signed(printf_buffer_t *buffer, int32_t value) {
  if (value < 0) {
    buffer_put(buffer, '-');
    put_unsigned(buffer, 0u - (uint32_t)value, 10);
  } else {
    put_unsigned(buffer, (uint32_t)value, 10);
  }
}

/* Fixed-point with six decimals; enough for diagnostics, not a full %f. */
static void put_float(printf_buffer_t *buffer, double value) {
  uint32_t whole, fraction, scale;
  if (value != value) {
    put_string(buffer, "nan");
    return;
  }
  if (value < 0) {
    buffer_put(buffer, '-');
    value = -value;
  }
  if (value > 4294967295.0) {
    put_string(buffer, "inf");
    return;
  }
  whole = (uint32_t)value;
  fraction = (uint32_t)((value - (double)whole) * 1000000.0 + 0.5);
  if (fraction >= 1000000u) {
    whole += 1;
    fraction -= 1000000u;
  }
  put_unsigned(buffer, whole, 10);
  buffer_put(buffer, '.');
  for (scale = 100000u; scale > 0; scale /= 10) buffer_put(buffer, (char)('0' + (fraction / scale) % 10));
}

static void put_conversion(printf_buffer_t *buffer, char kind, int is_long, va_list *args) {
  switch (kind) {
    case 'd':
    case 'i':
      put_signed(buffer, is_long ? (int32_t)va_arg(*args, long) : (int32_t)va_arg(*args, int));
      break;
    case 'u':
    case 'x':
      put_unsigned(buffer,
                   is_long ? (uint32_t)va_arg(*args, unsigned long)
                           : (uint32_t)va_arg(*args, unsigned int),
                   kind == 'u' ? 10u : 16u);
      break;
    case 's': put_string(buffer, va_arg(*args, const char *)); break;
    case 'c': buffer_put(buffer, (char)va_arg(*args, int)); break;
    case 'f': put_float(buffer, va_arg(*args, double)); break;
    default: buffer_put(buffer, kind); break;
  }
}

void tflm_vprintf(const char *format, va_list args) {
  printf_buffer_t buffer;
  va_list copy;
  buffer.used = 0;
  va_copy(copy, args);
  while (*format != '\0') {
    if (*format != '%') {
      buffer_put(&buffer, *format++);
      continue;
    }
    ++format;
    while (*format >= '0' && *format <= '9') ++format; /* widths are accepted, not used */
    if (*format == 'l') {
      ++format;
      put_conversion(&buffer, *format, 1, &copy);
    } else if (*format != '\0') {
      put_conversion(&buffer, *format, 0, &copy);
    }
    if (*format != '\0') ++format;
  }
  va_end(copy);
  buffer_flush(&buffer);
}

void tflm_printf(const char *format, ...) {
  va_list args;
  va_start(args, format);
  tflm_vprintf(format, args);
  va_end(args);
}
