/* Allocation of an interpreter's arena at init, in the order init calls these:
 *   tail: the tensor-location and node-state tables, the resource-variable table, variable
 *         tensors (reset to their initial state) and resource tensors; kernels' persistent
 *         data follows during init and prepare (tflm_kernel_api.c);
 *   head: every activation tensor and scratch buffer, placed by the memory planner
 *         (tflm_planner.h) from their lifetimes over all subgraphs, keeping the offsets of an
 *         offline plan in the model.
 * The interpreter (tflm_interpreter.c) resolves, prepares and runs the operators; this file
 * only decides where things live. */
#ifndef TFLM_ALLOCATOR_H
#define TFLM_ALLOCATOR_H

#include <stdint.h>

#include "tflm_interpreter.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Logs why init failed (compiled out with TFLM_NO_MESSAGES) and returns the status. */
tflm_status_t tflm_init_fail(tflm_status_t status, const char *what, int32_t index);

/* The per-tensor location and per-node state tables, in the tail. */
tflm_status_t tflm_allocate_tables(tflm_interpreter_t *it);

/* Room for one resource variable per VAR_HANDLE, in the tail. */
tflm_status_t tflm_allocate_resources(tflm_interpreter_t *it);

/* Constants point into the model; variable and resource tensors get tail memory. */
tflm_status_t tflm_allocate_fixed_tensors(tflm_interpreter_t *it);

/* Plans every non-persistent buffer (after prepare, when the scratch requests are known)
 * and reserves the head. */
tflm_status_t tflm_allocate_head(tflm_interpreter_t *it);

/* Puts variable tensor t back to its initial state (init and tflm_interpreter_reset). */
void tflm_allocator_reset_variable(tflm_interpreter_t *it, int32_t t);

/* Sets `count` bytes at p to `value`. */
void tflm_allocator_fill(uint8_t *p, uint32_t count, uint8_t value);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_ALLOCATOR_H */
