/* Patch-based execution (docs/patch_execution.md, tflm_gen/patches.py): the leading
 * operators first .. first + count - 1 of subgraph 0 run as one stage, band by band of
 * the stage output's rows.  For each band, each operator's own kernel runs on views of the
 * rows the band needs: the stage input S and output E are whole tensors in the head, each
 * tensor between two stage operators is a tile holding the most rows any band needs.  A
 * kernel is prepared once per distinct (input rows, output rows, top padding) of its
 * bands and reads the band's top padding through tflm_node_band_pad.  The last operator may
 * be a residual join: an elementwise op of two inputs, the previous operator's output and S
 * itself, of one shape; each band reads S's rows of its own output rows as a view.  Or it
 * may be a reduction: a FULLY_CONNECTED over the previous output (batch 1), whose bands
 * add their rows' products to running sums (tflm_node_band_sum) and whose last band writes
 * the output, so the tensor it reads is only ever a tile.  Its steps' output rows are its
 * input rows (no output row is a band's own); it is prepared once, on whole tensors.
 *
 * Metadata "tflm_gen.stage", little-endian int32 words:
 *   [0] TFLM_STAGE_FORMAT, [1] first operator, [2] operator count, [3] band count, then per
 *   band and per operator TFLM_STAGE_STEP_WORDS words: input start row, input rows, output
 *   start row, output rows, top padding rows (implicit zero rows above the input view).
 * Private to the runtime. */
#ifndef TFLM_STAGE_H
#define TFLM_STAGE_H

#include <stdint.h>

#include "tflm_interpreter.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFLM_STAGE_FORMAT 1
#define TFLM_STAGE_STEP_WORDS 5

/* The band one stage operator runs on (tflm_interpreter_t.band while it runs). */
struct tflm_band {
  int32_t node;            /* global index of the operator */
  int32_t input, output;   /* global indices of its chain input and output 0 */
  int32_t skip;            /* a join's other input, the stage input S; -1 otherwise */
  int32_t in_rows, out_rows;
  int32_t pad_top;         /* zero rows the kernel assumes above the input view */
  uint8_t *in_data;        /* the band's first input / output / S row; NULL during prepare */
  uint8_t *out_data;
  uint8_t *skip_data;
  int32_t *sums;           /* a reduction's running sums (tail); NULL for other operators */
  int32_t sum_offset;      /* input elements before the band's first row */
  int32_t sum_first, sum_last; /* 1 in the first / last band */
};
typedef struct tflm_band tflm_band_t;

/* Checks the stage metadata against the model (a chain of single-output operators whose
 * inner tensors nothing else reads, rows inside every tensor, each operator's input rows
 * the previous one's output rows); without metadata there is no stage.  Init only. */
tflm_status_t tflm_stage_open(tflm_interpreter_t *it);
/* The stage's first operator and operator count; 0 when the model has no stage. */
int tflm_stage_span(const tflm_interpreter_t *it, int32_t *first, int32_t *count);
/* 1 when global operator `node` is the stage's reduction (its last, a FULLY_CONNECTED
 * summing its bands); known from tflm_stage_open on, so prepare may ask. */
int tflm_stage_reduction(const tflm_interpreter_t *it, int32_t node);
/* Bytes the head holds for tensor t of `bytes` bytes: inside the stage, the buffer of its
 * tiles.  The tiles of operators k and k + 2 never live at once in a band (operator k + 1
 * reads the first before k + 2 writes the second), so even and odd operators' tiles take
 * turns in two buffers, each planned for the first such tile (its owner). */
uint32_t tflm_stage_head_bytes(tflm_interpreter_t *it, int32_t t, uint32_t bytes);
/* The tile whose buffer tile t shares (not planned itself), or -1. */
int32_t tflm_stage_tile_owner(tflm_interpreter_t *it, int32_t t);
/* Prepares every stage operator once per distinct band shape (user data in the tail), and
 * a reduction's running sums. */
tflm_status_t tflm_stage_prepare(tflm_interpreter_t *it);
/* Runs the stage: every band, every operator's eval on the band's views. */
tflm_status_t tflm_stage_invoke(tflm_interpreter_t *it);
/* Narrows a view (data pointer) of tensor t to the running band's rows, if any. */
void tflm_stage_view(const tflm_interpreter_t *it, int32_t t, tflm_tensor_t *view);
void *tflm_stage_data(const tflm_interpreter_t *it, int32_t t, void *data);

#ifdef __cplusplus
}
#endif

#endif /* TFLM_STAGE_H */
