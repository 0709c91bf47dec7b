/* tflm-gen's instruction- and cycle-counting plugin for QEMU (system mode, one vCPU).
 *
 * Counts every executed guest instruction and its estimated cycles, with a second pair of
 * counters for blocks that lie in "frame" address ranges (the interpreter's own loop and
 * the profiler hooks).  Each time execution enters a marker address, it appends
 * "<marker index> <total> <frame> <cycles> <frame cycles>" to the output file: the counts
 * before that entry.  Deterministic run to run: there are no interrupts in the benchmarked
 * programs, and every block runs to its end (semihosting traps end a block).
 *
 * Cycles (tflm_gen/cycles.py writes the table): every instruction adds its cost; when the
 * block that runs next does not start where the previous one ended, the previous block's
 * last instruction was a taken branch and adds its refill penalty.  Without a table every
 * instruction costs one cycle and no penalty.
 *
 * Arguments (QEMU -plugin lib.so,name=value,...):
 *   out=PATH            file to write the records to (required)
 *   mark<N>=ADDR        marker N at ADDR (hex), N = 0..15
 *   frame<N>=LO-HI      frame range [LO, HI) (hex), N = 0..15
 *   cycles=PATH         lines "ADDR COST TAKEN" (hex address), sorted by address
 *
 * QEMU ships no plugin header on Debian; the declarations below are the few functions of
 * the stable plugin C ABI this file uses. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef uint64_t plugin_id_t;
struct qemu_plugin_tb;
enum { CB_NO_REGS = 0 };      /* enum qemu_plugin_cb_flags */

typedef void (*tb_trans_cb_t)(plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*udata_cb_t)(plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(plugin_id_t id, tb_trans_cb_t cb);
struct qemu_plugin_insn;
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, vcpu_udata_cb_t cb,
                                          int flags, void *userdata);
void qemu_plugin_register_atexit_cb(plugin_id_t id, udata_cb_t cb, void *userdata);

#ifndef TFLM_PLUGIN_API_VERSION
#define TFLM_PLUGIN_API_VERSION 1 /* QEMU 7.2 */
#endif
EXPORT int qemu_plugin_version = TFLM_PLUGIN_API_VERSION;

#define MAX_RANGES 16

/* One translated block: what it adds when it runs, where it falls through to. */
typedef struct {
  int marker;             /* marker index, -1 for none */
  int in_frame;
  uint64_t instructions;
  uint64_t cycles;        /* sum of the instructions' costs */
  uint64_t start, end;    /* address of the first instruction, and past the last */
  uint64_t taken;         /* penalty when the next block does not start at `end` */
} block_t;

typedef struct {
  uint64_t address;
  uint32_t cost, taken;
} cycle_row_t;

static uint64_t total_count, frame_count, total_cycles, frame_cycles;
static uint64_t markers[MAX_RANGES];
static int marker_count;
static uint64_t frame_low[MAX_RANGES], frame_high[MAX_RANGES];
static int frame_ranges;
static FILE *out;
static cycle_row_t *cycle_rows;
static size_t cycle_count;
static const block_t *previous; /* the block that ran last */

static int in_frame(uint64_t pc) {
  int i;
  for (i = 0; i < frame_ranges; ++i) {
    if (pc >= frame_low[i] && pc < frame_high[i]) return 1;
  }
  return 0;
}

static int marker_index(uint64_t pc) {
  int i;
  for (i = 0; i < marker_count; ++i) {
    if (markers[i] == pc) return i;
  }
  return -1;
}

/* The table row of `address`, or NULL (binary search over the sorted rows). */
static const cycle_row_t *cycle_row(uint64_t address) {
  size_t low = 0, high = cycle_count;
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    if (cycle_rows[middle].address == address) return &cycle_rows[middle];
    if (cycle_rows[middle].address < address) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return NULL;
}

/* Runs on entry to every block: the previous block's branch penalty, the record of a
 * marker (counts before this block), then this block's counts. */
static void on_block(unsigned int vcpu, void *userdata) {
  const block_t *block = userdata;
  (void)vcpu;
  if (previous != NULL && block->start != previous->end) {
    total_cycles += previous->taken;
    if (previous->in_frame) frame_cycles += previous->taken;
  }
  previous = block;
  if (block->marker >= 0) {
    fprintf(out, "%d %llu %llu %llu %llu\n", block->marker, (unsigned long long)total_count,
            (unsigned long long)frame_count, (unsigned long long)total_cycles,
            (unsigned long long)frame_cycles);
  }
  total_count += block->instructions;
  total_cycles += block->cycles;
  if (block->in_frame) {
    frame_count += block->instructions;
    frame_cycles += block->cycles;
  }
}

static void on_translate(plugin_id_t id, struct qemu_plugin_tb *tb) {
  size_t i, count = qemu_plugin_tb_n_insns(tb);
  /* Translation can repeat (cache flush); a few bytes per translation are fine. */
  block_t *block = calloc(1, sizeof *block);
  (void)id;
  if (block == NULL) abort();
  block->start = qemu_plugin_tb_vaddr(tb);
  block->marker = marker_index(block->start);
  block->in_frame = in_frame(block->start);
  block->instructions = count;
  for (i = 0; i < count; ++i) {
    const struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
    const uint64_t address = qemu_plugin_insn_vaddr(insn);
    const cycle_row_t *row = cycle_row(address);
    block->cycles += row != NULL ? row->cost : 1u;
    block->taken = row != NULL ? row->taken : 0u;
    block->end = address + qemu_plugin_insn_size(insn);
  }
  qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, CB_NO_REGS, block);
}

/* Reads the cycle table; returns 0 when the file cannot be read. */
static int read_cycles(const char *path) {
  FILE *file = fopen(path, "r");
  unsigned long long address;
  unsigned cost, taken;
  size_t capacity = 0;
  if (file == NULL) return 0;
  while (fscanf(file, "%llx %u %u", &address, &cost, &taken) == 3) {
    if (cycle_count == capacity) {
      capacity = capacity ? 2 * capacity : 4096;
      cycle_rows = realloc(cycle_rows, capacity * sizeof *cycle_rows);
      if (cycle_rows == NULL) abort();
    }
    cycle_rows[cycle_count].address = address;
    cycle_rows[cycle_count].cost = cost;
    cycle_rows[cycle_count].taken = taken;
    cycle_count++;
  }
  fclose(file);
  return 1;
}

static void on_qemu_exit(plugin_id_t id, void *userdata) {
  (void)id;
  (void)userdata;
  fprintf(out, "end %llu %llu %llu %llu\n", (unsigned long long)total_count,
          (unsigned long long)frame_count, (unsigned long long)total_cycles,
          (unsigned long long)frame_cycles);
  fflush(out);
}

/* Parses one "name=value" argument; returns 0 when it is not understood. */
static int parse_argument(const char *argument) {
  unsigned index;
  unsigned long long low, high;
  if (strncmp(argument, "out=", 4) == 0) {
    out = fopen(argument + 4, "w");
    return out != NULL;
  }
  if (strncmp(argument, "cycles=", 7) == 0) return read_cycles(argument + 7);
  if (sscanf(argument, "mark%u=%llx", &index, &low) == 2 && index < MAX_RANGES) {
    markers[index] = low;
    if ((int)index >= marker_count) marker_count = (int)index + 1;
    return 1;
  }
  if (sscanf(argument, "frame%u=%llx-%llx", &index, &low, &high) == 3 &&
      frame_ranges < MAX_RANGES) {
    frame_low[frame_ranges] = low;
    frame_high[frame_ranges] = high;
    frame_ranges++;
    return 1;
  }
  return 0;
}

EXPORT int qemu_plugin_install(plugin_id_t id, const void *info, int argc, char **argv) {
  int i;
  (void)info;
  for (i = 0; i < argc; ++i) {
    if (!parse_argument(argv[i])) {
      fprintf(stderr, "tflm_count: bad argument '%s'\n", argv[i]);
      return -1;
    }
  }
  if (out == NULL) {
    fprintf(stderr, "tflm_count: needs out=PATH\n");
    return -1;
  }
  for (i = 0; i < marker_count; ++i) {
    if (markers[i] == 0) markers[i] = UINT64_MAX; /* unused slot never matches */
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
  return 0;
}
