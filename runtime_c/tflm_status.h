/* Status codes of the runtime and kernels: one X-macro list gives the enum and the names.
 * tflm_gen/ reads this list to name codes in Python, so the two never drift. */
#ifndef TFLM_STATUS_H
#define TFLM_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

#define TFLM_STATUS_LIST(X)                                                      \
  X(TFLM_OK, "ok")                                                              \
  X(TFLM_ERROR, "error")                                                        \
  X(TFLM_ERR_MODEL, "model is not a valid TFLite flatbuffer")                   \
  X(TFLM_ERR_MODEL_VERSION, "unsupported model schema version")                 \
  X(TFLM_ERR_UNSUPPORTED_OP, "operator not registered in the resolver")         \
  X(TFLM_ERR_UNSUPPORTED_TYPE, "tensor type not supported by the kernel")       \
  X(TFLM_ERR_BAD_SHAPE, "tensor shape not supported by the kernel")             \
  X(TFLM_ERR_BAD_PARAMS, "operator parameters not supported")                   \
  X(TFLM_ERR_ARENA_TOO_SMALL, "arena too small")                                \
  X(TFLM_ERR_ARENA_ALIGNMENT, "arena is not aligned")                           \
  X(TFLM_ERR_TOO_MANY, "a fixed runtime limit was exceeded")                    \
  X(TFLM_ERR_NOT_READY, "interpreter not initialised")                          \
  X(TFLM_ERR_BAD_INDEX, "input or output index out of range")                   \
  X(TFLM_ERR_MODEL_UNWRITTEN_INPUT, "operator input not written before it is read") \
  X(TFLM_ERR_MODEL_TWO_PRODUCERS, "tensor written twice or a fixed tensor written") \
  X(TFLM_ERR_MODEL_NO_OUTPUTS, "operator without outputs")                      \
  X(TFLM_ERR_MODEL_SCALE, "quantization scale not finite and positive")         \
  X(TFLM_ERR_MODEL_TOO_LARGE, "tensor of 2^31 or more elements or bytes")       \
  X(TFLM_ERR_MODEL_CONSTANT_SIZE, "constant data smaller than its tensor")      \
  X(TFLM_ERR_MODEL_ALIGNMENT, "constant data not aligned for its type") \
  X(TFLM_ERR_MODEL_WEIGHTS, "constant data outside the model and its weights")

#define TFLM_STATUS_ENUM_ENTRY(name, text) name,
typedef enum { TFLM_STATUS_LIST(TFLM_STATUS_ENUM_ENTRY) TFLM_STATUS_COUNT } tflm_status_t;
#undef TFLM_STATUS_ENUM_ENTRY

/* A short English description of a status (empty strings when messages are compiled out). */
const char *tflm_status_text(tflm_status_t status);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_STATUS_H */
