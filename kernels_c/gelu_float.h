/* float32 GELU as LiteRT's reference kernel computes it (its oracle; TFLM has no GELU).
 *
 * LiteRT evaluates 0.5 * x * (1 + tanh(...)) and 0.5 * x * erfc(-x / sqrt(2)) as Eigen
 * array expressions, so tanh and erfc are Eigen's own float approximations (rational
 * functions, not libm's), in the arithmetic of LiteRT's x86-64 build: SSE, no fused
 * multiply-add (read from the installed ai-edge-litert 2.3.0 library).  Every step below
 * is one float operation in Eigen's order, so the result is bit-exact on any IEEE-754
 * single-precision FPU that does not contract (tflm_compiler.h forbids contraction).
 *
 * One platform dependence remains, and only in the exact form: Eigen vectorises 4 floats
 * at a time and computes the last (count % 4) elements one by one, where its erfc calls
 * the C library's expf instead of Eigen's own exp (LiteRT's output buffers are 16-byte
 * aligned, so no element comes before the vectorised ones).  Those elements, and only
 * for |x| > sqrt(2), depend on the platform libm's expf; glibc's is LiteRT's on the host.
 * NaN inputs are not specified. */
#ifndef TFLM_GELU_FLOAT_H
#define TFLM_GELU_FLOAT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* output[i] = GELU(input[i]) for count elements; approximate: the tanh form. */
void tflm_gelu_float(int32_t approximate, const float *input, float *output, int32_t count);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_GELU_FLOAT_H */
