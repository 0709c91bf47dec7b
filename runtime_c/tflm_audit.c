/* The allocation audit (opt-in): where the arena's bytes went, by category.  Apart from
 * the interpreter so that builds that never print it do not carry its strings. */
#include "tflm_interpreter.h"
#include "tflm_printf.h"

void tflm_interpreter_memory(const tflm_interpreter_t *it, tflm_memory_stats_t *stats) {
  stats->arena_bytes = it->arena.peak;
  stats->head_bytes = tflm_interpreter_arena_head_bytes(it);
  stats->tail_bytes = tflm_arena_tail_bytes(&it->arena);
  stats->kernel_bytes = it->kernel_bytes;
  stats->variable_bytes = it->variable_bytes;
  stats->runtime_bytes = stats->tail_bytes - it->kernel_bytes - it->variable_bytes;
  stats->scratch_count = it->scratch_count;
  stats->scratch_bytes = it->scratch_bytes;
}

void tflm_interpreter_print_memory(const tflm_interpreter_t *it) {
  tflm_memory_stats_t stats;
  tflm_interpreter_memory(it, &stats);
  tflm_printf("arena: %lu bytes (head %lu, tail %lu)\n", (unsigned long)stats.arena_bytes,
              (unsigned long)stats.head_bytes, (unsigned long)stats.tail_bytes);
  tflm_printf("  head: activations and %lu scratch buffers (%lu bytes): %lu bytes\n",
              (unsigned long)stats.scratch_count, (unsigned long)stats.scratch_bytes,
              (unsigned long)stats.head_bytes);
  tflm_printf("  tail: runtime state %lu, kernel data %lu, variable tensors %lu bytes\n",
              (unsigned long)stats.runtime_bytes, (unsigned long)stats.kernel_bytes,
              (unsigned long)stats.variable_bytes);
  tflm_printf("  init temporaries: %lu bytes above the tail at peak\n",
              (unsigned long)(stats.arena_bytes - stats.tail_bytes));
}
