/* Patch-based execution: the stage loop over bands (tflm_stage.h). */
#include "tflm_stage.h"

#include <stddef.h>

#include "tflm_allocator.h"
#include "tflm_compiler.h"
#include "tflm_model.h"

/* Word `field` of the step of operator k (0-based inside the stage) in band b. */
static int32_t step_word(const tflm_interpreter_t *it, int32_t b, int32_t k, int32_t field) {
  int32_t ops = tflm_model_int_at(it, it->stage, 2);
  return tflm_model_int_at(it, it->stage,
                           (uint32_t)(4 + (b * ops + k) * TFLM_STAGE_STEP_WORDS + field));
}

enum { STEP_IN_START, STEP_IN_ROWS, STEP_OUT_START, STEP_OUT_ROWS, STEP_PAD_TOP };

/* Global index of entry i of node n's input (outputs: 1) list, -1 when absent. */
static int32_t node_tensor(const tflm_interpreter_t *it, int32_t n, int outputs, uint32_t i) {
  uint32_t list = outputs ? it->nodes[n].outputs : it->nodes[n].inputs;
  if (list == 0 || tflm_fb_read_u32(it->fb.data + list) <= i) return -1;
  return (int32_t)tflm_fb_read_u32(it->fb.data + list + 4u + 4u * i);
}

static int32_t stage_int(const tflm_interpreter_t *it, uint32_t i) {
  return it->stage != 0 ? tflm_model_int_at(it, it->stage, i) : 0;
}

int tflm_stage_span(const tflm_interpreter_t *it, int32_t *first, int32_t *count) {
  *first = stage_int(it, 1);
  *count = stage_int(it, 2);
  return it->stage != 0;
}

/* Height (dims[1]) of a 4-D tensor of batch 1 whose bytes divide into rows, else 0. */
static int32_t tensor_height(tflm_interpreter_t *it, int32_t t) {
  tflm_tensor_t view;
  if (t < 0 || tflm_model_view(it, t, &view) != TFLM_OK || view.ndims != 4 ||
      view.dims[0] != 1 || view.dims[1] < 1 || view.bytes % view.dims[1] != 0) {
    return 0;
  }
  return view.dims[1];
}

/* True when tensor t is read by no operator but stage operator `reader`, and is no graph
 * input or output: the head then only holds its tile. */
static int only_inside(tflm_interpreter_t *it, int32_t t, int32_t reader) {
  uint32_t n, i;
  for (n = 0; n < it->operators_count; ++n) {
    uint32_t list = it->nodes[n].inputs;
    uint32_t count = list != 0 ? tflm_fb_read_u32(it->fb.data + list) : 0;
    for (i = 0; i < count; ++i) {
      if ((int32_t)n != reader && node_tensor(it, (int32_t)n, 0, i) == t) return 0;
    }
  }
  for (i = 0; i < it->outputs_count; ++i) {
    if (tflm_model_int_at(it, it->outputs, i) == t) return 0;
  }
  for (i = 0; i < it->inputs_count; ++i) {
    if (tflm_model_int_at(it, it->inputs, i) == t) return 0;
  }
  return 1;
}

/* The input of stage operator k the chain feeds: input 0, or a join's input that is the
 * previous operator's output (its other input being S); -1 when neither. */
static int32_t chain_input(const tflm_interpreter_t *it, int32_t k) {
  int32_t n = stage_int(it, 1) + k, previous;
  if (k == 0) return node_tensor(it, n, 0, 0);
  previous = node_tensor(it, n - 1, 1, 0);
  if (node_tensor(it, n, 0, 0) == previous) return previous;
  return node_tensor(it, n, 0, 1) == previous ? previous : -1;
}

/* S when stage operator k is a residual join, else -1: the last operator, of exactly two
 * inputs, the chain input and S, with S's and the output's bytes and heights equal (so a
 * band's output rows are S's same rows). */
static int32_t join_skip(tflm_interpreter_t *it, int32_t k) {
  int32_t n = stage_int(it, 1) + k, source = node_tensor(it, stage_int(it, 1), 0, 0);
  int32_t output = node_tensor(it, n, 1, 0), chained = chain_input(it, k);
  uint32_t inputs = it->nodes[n].inputs;
  if (k == 0 || k + 1 != stage_int(it, 2) || inputs == 0 ||
      tflm_fb_read_u32(it->fb.data + inputs) != 2 || output < 0 || chained < 0 ||
      chained == source) {
    return -1;
  }
  if (node_tensor(it, n, 0, chained == node_tensor(it, n, 0, 0) ? 1u : 0u) != source) return -1;
  if (tensor_height(it, source) == 0 || tensor_height(it, source) != tensor_height(it, output) ||
      tflm_model_tensor_bytes(it, tflm_model_tensor(it, source)) !=
          tflm_model_tensor_bytes(it, tflm_model_tensor(it, output))) {
    return -1;
  }
  return source;
}

/* True when stage operator k is a reduction: the last, after another, a FULLY_CONNECTED. */
static int reduces(const tflm_interpreter_t *it, int32_t k) {
  int32_t n = stage_int(it, 1) + k;
  return k > 0 && k + 1 == stage_int(it, 2) &&
         it->resolver->ops[it->nodes[n].registration]->builtin_code == TFLM_BUILTIN_FULLY_CONNECTED;
}

int tflm_stage_reduction(const tflm_interpreter_t *it, int32_t node) {
  int32_t first, count;
  return tflm_stage_span(it, &first, &count) && node == first + count - 1 && reduces(it, count - 1);
}

/* Elements of tensor t (0 when it has none or is not valid). */
static int32_t tensor_elements(tflm_interpreter_t *it, int32_t t) {
  tflm_tensor_t view;
  int32_t i, count = 1;
  if (t < 0 || tflm_model_view(it, t, &view) != TFLM_OK) return 0;
  for (i = 0; i < view.ndims; ++i) count *= view.dims[i];
  return count;
}

/* 1 when tile k (operator k's output, k + 1 < ops) has a buffer of its own: no tile two
 * operators before or after it (tflm_stage_tile_owner), so it may keep rows across bands. */
static int tile_alone(const tflm_interpreter_t *it, int32_t k) {
  return k < 2 && k + 2 > stage_int(it, 2) - 2;
}

/* True when the input rows of operator k (k > 0) in band b follow from operator k - 1's
 * output rows: the same rows; or rows above them kept in the tile from band b - 1 (the
 * tile its own buffer, the previous band's rows ending where these start, its input rows
 * never moving up); or zero-point rows below the tensor's last row, for an int8
 * convolution (its padded taps add 0, as TFLM's skipped ones). */
static int follows(tflm_interpreter_t *it, int32_t b, int32_t k) {
  int32_t n = stage_int(it, 1) + k, code;
  int32_t start = step_word(it, b, k, STEP_IN_START);
  int32_t stop = start + step_word(it, b, k, STEP_IN_ROWS);
  int32_t made = step_word(it, b, k - 1, STEP_OUT_START);
  int32_t made_stop = made + step_word(it, b, k - 1, STEP_OUT_ROWS);
  tflm_tensor_t view;
  if (made < start || made_stop > stop) return 0;
  if (made > start &&
      (b == 0 || !tile_alone(it, k - 1) || step_word(it, b - 1, k, STEP_IN_START) > start ||
       step_word(it, b - 1, k - 1, STEP_OUT_START) + step_word(it, b - 1, k - 1, STEP_OUT_ROWS) != made)) {
    return 0;
  }
  if (made_stop == stop) return 1;
  code = it->resolver->ops[it->nodes[n].registration]->builtin_code;
  return made_stop == tensor_height(it, node_tensor(it, n, 0, 0)) &&
         (code == TFLM_BUILTIN_CONV_2D || code == TFLM_BUILTIN_DEPTHWISE_CONV_2D) &&
         tflm_model_view(it, node_tensor(it, n, 0, 0), &view) == TFLM_OK &&
         view.type == TFLM_TYPE_INT8;
}

/* The rows of operator k's every step lie inside its tensors (an input tile's zero-point
 * rows below) and follow on from k - 1. */
static int steps_valid(tflm_interpreter_t *it, int32_t k, int32_t bands) {
  int32_t n = stage_int(it, 1) + k, b;
  int32_t in_h = tensor_height(it, node_tensor(it, n, 0, 0));
  /* A reduction's steps name its input rows as output rows too. */
  int32_t out_h = reduces(it, k) ? in_h : tensor_height(it, node_tensor(it, n, 1, 0));
  if (in_h == 0 || out_h == 0) return 0;
  for (b = 0; b < bands; ++b) {
    int32_t in_start = step_word(it, b, k, STEP_IN_START), in_rows = step_word(it, b, k, STEP_IN_ROWS);
    int32_t out_start = step_word(it, b, k, STEP_OUT_START);
    int32_t out_rows = step_word(it, b, k, STEP_OUT_ROWS), pad = step_word(it, b, k, STEP_PAD_TOP);
    /* A tile's view may run below the tensor (zero-point rows, follows), by less than its
     * height (so no sum overflows). */
    if (in_start < 0 || in_rows < 1 || in_start > in_h - (k == 0 ? in_rows : 1) ||
        in_rows > in_h || out_start < 0 ||
        out_rows < 1 || out_start > out_h - out_rows || pad < 0 || pad > in_h) {
      return 0;
    }
    if (k > 0 && !follows(it, b, k)) return 0;
    if ((join_skip(it, k) >= 0 || reduces(it, k)) &&
        (in_start != out_start || in_rows != out_rows || pad != 0)) {
      return 0; /* a join or a reduction maps rows one to one */
    }
  }
  return 1;
}

/* Operator k of the stage: one output, input 0 the previous operator's only output. */
static int link_valid(tflm_interpreter_t *it, int32_t k) {
  int32_t n = stage_int(it, 1) + k;
  uint32_t outputs = it->nodes[n].outputs;
  if (outputs == 0 || tflm_fb_read_u32(it->fb.data + outputs) != 1) return 0;
  if (k == 0) return 1;
  if (node_tensor(it, n, 0, 0) != chain_input(it, k) && join_skip(it, k) < 0) return 0;
  return chain_input(it, k) >= 0 && only_inside(it, chain_input(it, k), n);
}

tflm_status_t tflm_stage_open(tflm_interpreter_t *it) {
  int32_t first, ops, bands, k;
  it->stage_skip = -1;
  it->stage = tflm_model_stage(it, &it->stage_words);
  if (it->stage == 0) return TFLM_OK;
  first = stage_int(it, 1);
  ops = stage_int(it, 2);
  bands = stage_int(it, 3);
  if (it->stage_words < 4u || stage_int(it, 0) != TFLM_STAGE_FORMAT || it->subgraphs_count != 1 ||
      first < 0 || (uint32_t)first >= it->operators_count || ops < 1 ||
      (uint32_t)ops > it->operators_count - (uint32_t)first ||
      bands < 1 || (uint32_t)bands > (it->stage_words - 4u) / (TFLM_STAGE_STEP_WORDS * (uint32_t)ops) ||
      it->stage_words != 4u + TFLM_STAGE_STEP_WORDS * (uint32_t)(ops * bands)) {
    return tflm_init_fail(TFLM_ERR_MODEL, "stage metadata", 0);
  }
  for (k = 0; k < ops; ++k) {
    if (!link_valid(it, k) || !steps_valid(it, k, bands)) {
      return tflm_init_fail(TFLM_ERR_MODEL, "stage operator", first + k);
    }
  }
  it->stage_skip = join_skip(it, ops - 1); /* checked once: each band's views ask for it */
  return TFLM_OK;
}

/* Position k of the stage operator whose output tile t is (not the last operator: its
 * output is the stage output), or -1. */
static int32_t tile_position(tflm_interpreter_t *it, int32_t t) {
  int32_t first, ops, k;
  if (!tflm_stage_span(it, &first, &ops)) return -1;
  for (k = 0; k + 1 < ops; ++k) {
    if (node_tensor(it, first + k, 1, 0) == t) return k;
  }
  return -1;
}

/* Bytes of operator k's tile: the most input rows a band of operator k + 1 reads from it
 * (kept and zero-point rows included). */
static uint32_t tile_bytes(tflm_interpreter_t *it, int32_t k) {
  int32_t t = node_tensor(it, stage_int(it, 1) + k, 1, 0), b, rows = 0;
  for (b = 0; b < stage_int(it, 3); ++b) {
    int32_t in_rows = step_word(it, b, k + 1, STEP_IN_ROWS);
    rows = in_rows > rows ? in_rows : rows;
  }
  return tflm_model_tensor_bytes(it, tflm_model_tensor(it, t)) / (uint32_t)tensor_height(it, t) *
         (uint32_t)rows;
}

int32_t tflm_stage_tile_owner(tflm_interpreter_t *it, int32_t t) {
  int32_t k = tile_position(it, t);
  return k < 2 ? -1 : node_tensor(it, stage_int(it, 1) + k % 2, 1, 0);
}

uint32_t tflm_stage_head_bytes(tflm_interpreter_t *it, int32_t t, uint32_t bytes) {
  int32_t k = tile_position(it, t), j;
  uint32_t most = 0;
  if (k < 0) return bytes;
  for (j = k % 2; j + 1 < stage_int(it, 2); j += 2) {
    uint32_t size = tile_bytes(it, j);
    most = size > most ? size : most;
  }
  return most;
}

/* Bytes of one row (dims[1]) of tensor t, a 4-D tensor whose rows tflm_stage_open checked:
 * read from its shape alone, since every band of every invoke asks. */
static uint32_t row_bytes(tflm_interpreter_t *it, int32_t t) {
  uint32_t tensor = tflm_model_tensor(it, t), count;
  uint32_t shape = tflm_fb_vector(&it->fb, tensor, TENSOR_SHAPE, 4, &count);
  return tflm_model_tensor_bytes(it, tensor) / (uint32_t)tflm_model_int_at(it, shape, 1);
}

/* Elements of one row of tensor t (its dims after the first two). */
static int32_t row_elements(tflm_interpreter_t *it, int32_t t) {
  uint32_t count, i;
  uint32_t shape = tflm_fb_vector(&it->fb, tflm_model_tensor(it, t), TENSOR_SHAPE, 4, &count);
  int32_t elements = 1;
  for (i = 2; i < count; ++i) elements *= tflm_model_int_at(it, shape, i);
  return elements;
}

static uint32_t *stage_data(tflm_interpreter_t *it) {
  return (uint32_t *)(void *)(it->arena.base + it->stage_data);
}

/* The band of operator k in band b; data pointers only when the head is placed (`rows`
 * then holds the bytes of a row of S and of operator k's output). */
static void make_band(tflm_interpreter_t *it, int32_t b, int32_t k, const uint32_t *rows,
                      tflm_band_t *band) {
  int32_t ops = stage_int(it, 2);
  band->node = stage_int(it, 1) + k;
  band->input = chain_input(it, k);
  band->output = node_tensor(it, band->node, 1, 0);
  band->skip = k + 1 == ops ? it->stage_skip : -1;
  band->in_rows = step_word(it, b, k, STEP_IN_ROWS);
  band->out_rows = step_word(it, b, k, STEP_OUT_ROWS);
  band->pad_top = step_word(it, b, k, STEP_PAD_TOP);
  band->in_data = band->out_data = band->skip_data = NULL;
  band->sums = NULL;
  if (rows == NULL) return;
  band->in_data = (uint8_t *)tflm_model_tensor_data(it, band->input);
  band->out_data = (uint8_t *)tflm_model_tensor_data(it, band->output);
  /* Only S and E are whole tensors; a tile holds the band's rows from its start. */
  if (k == 0) band->in_data += rows[0] * (uint32_t)step_word(it, b, k, STEP_IN_START);
  if (reduces(it, k)) { /* the whole output, written by the last band */
    band->sums = (int32_t *)(void *)(stage_data(it) + ops * stage_int(it, 3));
    band->sum_offset = row_elements(it, band->input) * step_word(it, b, k, STEP_IN_START);
    band->sum_first = b == 0;
    band->sum_last = b + 1 == stage_int(it, 3);
  } else if (k == ops - 1) {
    band->out_data += rows[1] * (uint32_t)step_word(it, b, k, STEP_OUT_START);
  } else { /* a tile: its new rows after those kept from the previous band */
    band->out_data += rows[1] * (uint32_t)(step_word(it, b, k, STEP_OUT_START) -
                                           step_word(it, b, k + 1, STEP_IN_START));
  }
  if (band->skip >= 0) { /* S's rows of the band's output rows: S is whole */
    band->skip_data = (uint8_t *)tflm_model_tensor_data(it, band->skip) +
                      (band->out_data - (uint8_t *)tflm_model_tensor_data(it, band->output));
  }
}

/* An earlier band whose operator k had the same shape and padding (its prepared data
 * serves again), or -1. */
static int32_t same_shape_band(const tflm_interpreter_t *it, int32_t b, int32_t k) {
  int32_t earlier, field;
  if (reduces(it, k)) return b > 0 ? 0 : -1; /* prepared once, on whole tensors */
  for (earlier = 0; earlier < b; ++earlier) {
    int same = 1;
    for (field = STEP_IN_ROWS; field <= STEP_PAD_TOP; field += 1) {
      if (field != STEP_OUT_START) same &= step_word(it, earlier, k, field) == step_word(it, b, k, field);
    }
    if (same) return earlier;
  }
  return -1;
}

/* Prepares operator k for band b (or reuses an earlier band's preparation). */
static tflm_status_t prepare_step(tflm_interpreter_t *it, int32_t b, int32_t k) {
  int32_t ops = stage_int(it, 2), earlier = same_shape_band(it, b, k);
  tflm_band_t band;
  tflm_node_t node;
  tflm_status_t status;
  const tflm_registration_t *reg;
  if (earlier >= 0) {
    stage_data(it)[b * ops + k] = stage_data(it)[earlier * ops + k];
    return TFLM_OK;
  }
  make_band(it, b, k, NULL, &band);
  reg = it->resolver->ops[it->nodes[band.node].registration];
  tflm_node_build(it, band.node, &node);
  it->current_node = band.node;
  it->band = reduces(it, k) ? NULL : &band;
  status = reg->prepare != NULL ? reg->prepare(it, &node) : TFLM_OK;
  it->band = NULL;
  stage_data(it)[b * ops + k] = node.user_data == NULL
                                    ? TFLM_NO_DATA
                                    : (uint32_t)((uint8_t *)node.user_data - it->arena.base);
  if (it->arena.shortfall != 0) status = TFLM_ERR_ARENA_TOO_SMALL;
  return status != TFLM_OK ? tflm_init_fail(status, "stage prepare", band.node) : TFLM_OK;
}

tflm_status_t tflm_stage_prepare(tflm_interpreter_t *it) {
  int32_t first, ops, b, k;
  uint8_t *data;
  tflm_status_t status = TFLM_OK;
  if (!tflm_stage_span(it, &first, &ops)) return TFLM_OK;
  /* Per (band, operator) user data, then a reduction's running sums. */
  data = (uint8_t *)tflm_arena_alloc_tail(
      &it->arena, 4u * (uint32_t)(ops * stage_int(it, 3) +
                                  (reduces(it, ops - 1) ? tensor_elements(it, node_tensor(it, first + ops - 1, 1, 0)) : 0)));
  if (data == NULL) return tflm_init_fail(TFLM_ERR_ARENA_TOO_SMALL, "stage", first);
  it->stage_data = (uint32_t)(data - it->arena.base);
  for (b = 0; b < stage_int(it, 3) && status == TFLM_OK; ++b) {
    for (k = 0; k < ops && status == TFLM_OK; ++k) status = prepare_step(it, b, k);
  }
  return status;
}

/* Copies n bytes from src down to dst (dst <= src: forward is safe where they overlap). */
static void copy_down(uint8_t *dst, const uint8_t *src, uint32_t n) {
  if ((((uintptr_t)dst | (uintptr_t)src | n) & 3u) == 0) {
    uint32_t *d = (uint32_t *)(void *)dst;
    const uint32_t *s = (const uint32_t *)(const void *)src;
    for (n /= 4u; n > 0; --n) *d++ = *s++;
  } else {
    while (n-- > 0) *dst++ = *src++;
  }
}

/* Before operator k writes its tile in band b at `out` (after the kept rows): moves the rows
 * the next operator reads again from where band b - 1 left them to the tile's top. */
static TFLM_NOINLINE void keep_rows(tflm_interpreter_t *it, int32_t b, int32_t k, uint32_t row, uint8_t *out) {
  int32_t kept = step_word(it, b, k, STEP_OUT_START) - step_word(it, b, k + 1, STEP_IN_START);
  uint8_t *tile = out - (uint32_t)kept * row;
  if (kept <= 0) return;
  copy_down(tile, tile + row * (uint32_t)(step_word(it, b, k + 1, STEP_IN_START) -
                                         step_word(it, b - 1, k + 1, STEP_IN_START)),
            (uint32_t)kept * row);
}

/* Before operator k reads its input tile `in` in band b: its rows below the tensor's last
 * one hold the input's zero point (an int8 convolution's, tflm_stage_open checked). */
static TFLM_NOINLINE void zero_rows(tflm_interpreter_t *it, int32_t b, int32_t k, uint8_t *in) {
  int32_t made = step_word(it, b, k - 1, STEP_OUT_START) + step_word(it, b, k - 1, STEP_OUT_ROWS);
  int32_t start = step_word(it, b, k, STEP_IN_START);
  int32_t zeros = start + step_word(it, b, k, STEP_IN_ROWS) - made;
  tflm_tensor_t view;
  uint32_t row;
  if (zeros <= 0) return;
  tflm_model_view(it, node_tensor(it, stage_int(it, 1) + k - 1, 1, 0), &view);
  row = (uint32_t)(view.bytes / view.dims[1]);
  tflm_allocator_fill(in + row * (uint32_t)(made - start), row * (uint32_t)zeros,
                      (uint8_t)(int8_t)view.zero_point);
}

/* Bytes of a row of S (k 0) or of operator k - 1's output, kept in `cached` for the first
 * TFLM_STAGE_CACHED_ROWS: reading them from the model costs more than a band's other work. */
#define TFLM_STAGE_CACHED_ROWS 5
static uint32_t stage_rows(tflm_interpreter_t *it, int32_t k, const uint32_t *cached) {
  int32_t n = stage_int(it, 1) + (k > 0 ? k - 1 : 0);
  if (k < TFLM_STAGE_CACHED_ROWS && cached != NULL) return cached[k];
  return k == 0 ? row_bytes(it, node_tensor(it, n, 0, 0)) : row_bytes(it, node_tensor(it, n, 1, 0));
}

tflm_status_t tflm_stage_invoke(tflm_interpreter_t *it) {
  int32_t ops = stage_int(it, 2), b, k;
  uint32_t cached[TFLM_STAGE_CACHED_ROWS];
  tflm_status_t status = TFLM_OK;
  for (k = 0; k < TFLM_STAGE_CACHED_ROWS && k <= ops; ++k) {
    /* a reduction's output is never addressed by rows */
    cached[k] = k > 0 && reduces(it, k - 1) ? 0 : stage_rows(it, k, NULL);
  }
  for (b = 0; b < stage_int(it, 3) && status == TFLM_OK; ++b) {
    for (k = 0; k < ops && status == TFLM_OK; ++k) {
      uint32_t user_data = stage_data(it)[b * ops + k], rows[2];
      tflm_band_t band;
      tflm_node_t node;
      const tflm_registration_t *reg;
      rows[0] = k == 0 ? stage_rows(it, 0, cached) : 0;
      rows[1] = reduces(it, k) ? 0 : stage_rows(it, k + 1, cached);
      make_band(it, b, k, rows, &band);
      if (k + 1 < ops) keep_rows(it, b, k, rows[1], band.out_data);
      if (k > 0) zero_rows(it, b, k, band.in_data);
      reg = it->resolver->ops[it->nodes[band.node].registration];
      tflm_node_build(it, band.node, &node);
      it->current_node = band.node; /* errors name the operator that failed */
      node.user_data = user_data == TFLM_NO_DATA ? NULL : it->arena.base + user_data;
      it->band = &band;
      status = reg->eval != NULL ? reg->eval(it, &node) : TFLM_OK;
      it->band = NULL;
    }
  }
  return status;
}

void tflm_stage_view(const tflm_interpreter_t *it, int32_t t, tflm_tensor_t *view) {
  const tflm_band_t *band = it->band;
  int32_t rows;
  if (band == NULL || (t != band->input && t != band->output && t != band->skip) ||
      view->ndims != 4 || (t == band->output && band->sums != NULL)) {
    return; /* a reduction's output is whole */
  }
  rows = t == band->input ? band->in_rows : band->out_rows;
  view->bytes = view->bytes / view->dims[1] * rows;
  view->dims[1] = rows;
  view->data = tflm_stage_data(it, t, view->data);
}

void *tflm_stage_data(const tflm_interpreter_t *it, int32_t t, void *data) {
  const tflm_band_t *band = it->band;
  if (band == NULL || (t != band->input && t != band->output && t != band->skip)) return data;
  if (t == band->skip) return band->skip_data;
  return t == band->input ? band->in_data : band->out_data;
}
