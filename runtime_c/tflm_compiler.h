/* Compiler quirks, in one place.  Portable files use these macros, never compiler tests. */
#ifndef TFLM_COMPILER_H
#define TFLM_COMPILER_H

/* Alignment of data the runtime reads in place (the model array, arenas). */
#if defined(__GNUC__) || defined(__clang__) || defined(__CC_ARM) || defined(__ICCARM__)
#define TFLM_ALIGNED16 __attribute__((aligned(16)))
#elif defined(_MSC_VER)
#define TFLM_ALIGNED16 __declspec(align(16))
#else
#define TFLM_ALIGNED16 /* the enclosing union still gives scalar alignment */
#endif

/* A function that must be inlined into its caller, so that a loop nest shared by several
 * kernels (kernels_c/conv_walk.h) costs what a hand-written one costs: each kernel passes it
 * its own static function, which is then inlined too. */
#if defined(__GNUC__) || defined(__clang__)
#define TFLM_ALWAYS_INLINE inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define TFLM_ALWAYS_INLINE __forceinline
#else
#define TFLM_ALWAYS_INLINE inline
#endif

/* A hot loop kept out of its caller, so that the caller's live values do not crowd its
 * registers (kernels_c/conv_sparse.c). */
#if defined(__GNUC__) || defined(__clang__)
#define TFLM_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define TFLM_NOINLINE __declspec(noinline)
#else
#define TFLM_NOINLINE
#endif

/* Float kernels must add and multiply exactly as TFLM does, so a multiply-add must never
 * be fused into one rounding.  ISO modes (-std=c99) already forbid it; GNU dialects, the
 * default of many IDEs, fuse on FPUs with FMA (Cortex-M4F and up) unless told not to. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#endif /* TFLM_COMPILER_H */
