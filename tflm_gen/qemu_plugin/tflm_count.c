/* tflm-gen's instruction-counting plugin for QEMU (system mode, one vCPU).
 *
 * Counts every executed guest instruction with one inline add per translation block, and
 * a second counter for blocks that lie in "frame" address ranges (the interpreter's own
 * loop and the profiler hooks).  Each time execution enters a marker address, it appends
 * "<marker index> <total> <frame>" to the output file: the counts of the instructions
 * executed before that entry.  Deterministic run to run: there are no interrupts in the
 * benchmarked programs, and every block runs to its end (semihosting traps end a block).
 *
 * Arguments (QEMU -plugin lib.so,name=value,...):
 *   out=PATH            file to write the records to (required)
 *   mark<N>=ADDR        marker N at ADDR (hex), N = 0..15
 *   frame<N>=LO-HI      frame range [LO, HI) (hex), N = 0..15
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
enum { INLINE_ADD_U64 = 0 };  /* enum qemu_plugin_op */
enum { CB_NO_REGS = 0 };      /* enum qemu_plugin_cb_flags */

typedef void (*tb_trans_cb_t)(plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*udata_cb_t)(plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(plugin_id_t id, tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, int op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, vcpu_udata_cb_t cb,
                                          int flags, void *userdata);
void qemu_plugin_register_atexit_cb(plugin_id_t id, udata_cb_t cb, void *userdata);

#ifndef TFLM_PLUGIN_API_VERSION
#define TFLM_PLUGIN_API_VERSION 1 /* QEMU 7.2 */
#endif
EXPORT int qemu_plugin_version = TFLM_PLUGIN_API_VERSION;

#define MAX_RANGES 16

/* A marker block seen at translation: which marker, and how many instructions it has. */
typedef struct {
  int marker;
  uint64_t instructions;
  int in_frame;
} marker_block_t;

static uint64_t total_count, frame_count;
static uint64_t markers[MAX_RANGES];
static int marker_count;
static uint64_t frame_low[MAX_RANGES], frame_high[MAX_RANGES];
static int frame_ranges;
static FILE *out;

static int in_frame(uint64_t pc) {
  int i;
  for (i = 0; i < frame_ranges; ++i) {
    if (pc >= frame_low[i] && pc < frame_high[i]) return 1;
  }
  return 0;
}

/* Runs on entry to a marker block: record first, then count the block itself. */
static void on_marker(unsigned int vcpu, void *userdata) {
  const marker_block_t *block = userdata;
  (void)vcpu;
  fprintf(out, "%d %llu %llu\n", block->marker, (unsigned long long)total_count,
          (unsigned long long)frame_count);
  total_count += block->instructions;
  if (block->in_frame) frame_count += block->instructions;
}

static int marker_index(uint64_t pc) {
  int i;
  for (i = 0; i < marker_count; ++i) {
    if (markers[i] == pc) return i;
  }
  return -1;
}

static void on_translate(plugin_id_t id, struct qemu_plugin_tb *tb) {
  uint64_t pc = qemu_plugin_tb_vaddr(tb);
  uint64_t count = qemu_plugin_tb_n_insns(tb);
  int marker = marker_index(pc);
  (void)id;
  if (marker >= 0) {
    /* Translation can repeat (cache flush); a few bytes per translation are fine. */
    marker_block_t *block = malloc(sizeof *block);
    if (block == NULL) abort();
    block->marker = marker;
    block->instructions = count;
    block->in_frame = in_frame(pc);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_marker, CB_NO_REGS, block);
    return;
  }
  qemu_plugin_register_vcpu_tb_exec_inline(tb, INLINE_ADD_U64, &total_count, count);
  if (in_frame(pc)) {
    qemu_plugin_register_vcpu_tb_exec_inline(tb, INLINE_ADD_U64, &frame_count, count);
  }
}

static void on_qemu_exit(plugin_id_t id, void *userdata) {
  (void)id;
  (void)userdata;
  fprintf(out, "end %llu %llu\n", (unsigned long long)total_count,
          (unsigned long long)frame_count);
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
