"""Offline weight layout: per weighted node, the filter reordered in the order a kernel's
inner loop reads it and the per-channel constants folded at generation time, stored in
the model as `tflm_gen.layout` metadata (flash), read by kernels through
`tflm_node_layout` (runtime_c/tflm_kernel.h).  The host build reads the same records.

Words (little-endian int32): version 1, operator count N (all subgraphs, in order), N
record positions (word index from the start, 0 = none); a record is its length L in words,
then L words whose meaning belongs to the op.  Kernels check a record's fields against the
node's shapes and run on the plain filter when they disagree or the record is absent.

CONV_2D, int8 activations and filter, ungrouped (kernels_c/cmsis/conv.c), kind
CONV_INT16_PAIRS:
  kind, channels (Cout), patch K = FH * FW * Cin,
  folded[round2(Cout)] = bias[c] + input_offset * sum(filter[c]) (wrapping int32, as
    TFLM's accumulator; input_offset = -input zero point; an odd last channel repeated),
    so that the kernel multiplies raw input bytes and starts every sum at this constant;
  the filter as int16, output channels in pairs (an odd last channel paired with itself),
  rows padded with zero weights to G = ceil(K / 4) groups of 4 inputs (the kernel reads
  round4(K) patch bytes, the last ones multiplied by 0), each pair's stream: per group,
  channel a's (w0, w2, w1, w3) then channel b's (the order cmsis_widen_pair gives the
  input: one SMLAD per word); 16 * G bytes per pair.

CONV_INT16_PAIRS_REQUANT: the same fields with the filter stream's weights doubled (2w
  fits int16), then per channel pair (a, b) the 8 words
  2 * folded a, 2 * folded b, right shift b, multiplier a, b, constant a, b, right shift a
  (the order one LDM fills r0, r8-r12 with)
  so that the DSP kernel's sums are 2 * acc, requantised without branches
  (cmsis_requantize_folded): byte = SSAT8((SMMLAR(2 * acc, multiplier, constant)
  - [acc < 0]) >> right).  The plain folded constants stay as they are (the MVE kernel
  reads them with the int8 filter).  Written only for a node whose clamp is the whole int8
  range, and only when that equals TFLM's MultiplyByQuantizedMultiplier + output offset for every
  input: |acc| < 2^30 for every int8 input (bound from the filter and folded constant),
  shifts right, and constant + the rounded high product never leaving int32; or the
  channel's output is one value v for every input (multiplier 0, constant 1 + 2v, shift 1)
  (_channel_requant).

CONV_PAIR_RECORDS, for a 1x1 layer whose requantisation tail exists and whose K is a
  multiple of 4 (kernels_c/cmsis/conv.c, the DSP kernels four pixels at a time and one
  alone; not the 8 -> 16, 16 -> 32 and 32 -> 32 channels of stride 1 that conv_narrow.h
  runs on CONV_INT16_PAIRS_REQUANT): kind, channels, K, the plain folded constants, then
  per channel pair one record, so that the kernels read it with the weights' pointer:
    2 * folded a, 2 * folded b, the pair's 16 * G bytes of doubled weights (as
    CONV_INT16_PAIRS_REQUANT's), then constant b, right shift a | PAIR_MARK (bit 30: the
    second word after the weights is no weight word, whose int32 value lies within
    +-2^24: the kernel's loop ends on it), multiplier a, constant a, right shift b |
    channels << 8 | the last pair's bit 31, multiplier b (the same proof as the tail's).

CONV_RGB_BAND, for a first layer over RGB images (3x3x3 -> 8 channels, stride 2, dilation
  1: vww's op 0) with a requantisation tail, in a build for a DSP core only (embed_layout,
  _rgb_bands; portable, MVE and generic builds keep CONV_INT16_PAIRS_REQUANT): its fields,
  the doubled weights re-laid as kernels_c/cmsis/conv_narrow.h's band kernel reads them
  (rgb_band_stream) and the tail right after them, so that the kernel reads both through
  one pointer from flash instead of re-laying them onto its stack every invoke (576 B).
  The same size as the record it replaces; CONV_RGB_BAND_IN_FILTER when the filter's
  buffer holds the weights and tail (a DSP project's form), the record the rest.

CONV_CODED_REQUANT, for a filter `--compress` coded (tflm_gen/compress.py; the kernel
  decodes it a block of channels at a time and widens each block into the doubled int16
  stream itself): kind, channels, patch K, then CONV_INT16_PAIRS_REQUANT's tail (8 words
  per channel pair, the same proof), so that the decoded blocks run the same requantising
  kernel as the plain filter; the kernel checks the doubled folded constants against the
  sums of the weights it decoded.

DEPTHWISE_CONV_2D, int8, 3x3 filter of depth multiplier 1 whose every channel has a right
shift r = -shift in [1, DW_MAX_SHIFT] and sums below 2^30 whatever the input
(kernels_c/cmsis/depthwise_conv.c), kind DW_TAP_PAIRS:
  kind, channels C, then per block of 4 channels (C // 4 blocks; the C % 4 last channels
  run on the plain filter), 38 words, every sum doubled (2 * acc fits in int32):
  folded[4] = 2 * (bias[c] + input_offset * sum(filter[c])): every pixel is summed over
    all 9 taps of raw input bytes, the taps outside the input reading the zero point
    (which adds zp * w + input_offset * w = 0, as TFLM's skipped taps do);
  22 words of int16 pairs of doubled weights: for each tap pair (k, j) of DW_PAIRS (taps
    row-major, ky * 3 + kx), channels 0..3's (2 w_k, 2 w_j): the columns' row 0 and 1
    taps (1, 4), (2, 5), (0, 3), then (7, 8) of row 2 (SMLAD with the pair PKHBT / PKHTB
    + SXTB16 make of the two taps' input words), the single tap DW_SINGLE's (2 w[c0],
    2 w[c2]), (2 w[c1], 2 w[c3]) (SXTB16 order: one pixel's), then (6, 7) of row 2 (two
    pixels' pair runs);
  per channel (multiplier, 2^(r-1) + output zero point * 2^r, r): the high word of the
    64-bit start (SMMLAR adds the 2^31 of its low word) and the shift that give TFLM's
    requantisation plus the output zero point in one SMMLAR and one shift of the doubled
    sum, floor((2 acc m + 2^31 + 2^(31+r) - [acc < 0] 2^32) / 2^(32+r))
    (cmsis_requantize_strict's identity, doubled); the kernel checks them against its own
    multipliers, shifts and output offset.
  The column pairs let a run of two neighbouring pixels (stride 1) unpack each column's
  rows 0 and 1 once for both pixels and share every weight and requantisation word.

DW_CODED_TAP_STEPS, for a filter `--compress` coded, on the DW_TAP_PAIRS conditions: kind,
  channels C (8 bytes of flash): the kernel decodes the filter and builds the DW_TAP_PAIRS
  blocks in a scratch buffer of 38 words per block, the folded constants from the decoded
  weights and the bias, the requantisation steps from the node's multipliers and shifts.

FULLY_CONNECTED whose filter `--compress` coded row-sparse (SPARSE_GROUPS or SPARSE_NARROW,
tflm_gen/compress_rows.py), int8, kind FC_SPARSE_FOLDED: kind, rows, depth K, folded[rows] (as FC_INT16_QUADS's), so
that the DSP loop multiplies raw input bytes and starts each row's sum there (4 bytes of
flash per row, as the plain filter's FC_QUADS_IN_FILTER record holds).

DEPTHWISE_CONV_2D, int8, one input channel and a depth multiplier C divisible by 4, at most
DW_QUAD_BYTES filter bytes with rows padded to whole words (any stride; the kernel checks
dilation 1), kind DW_ROW_QUADS:
  kind, channels C, filter_h FH, filter_w FW, quads Q = ceil(FW / 4), then per block of 4
  channels (C // 4 blocks), per filter row, per group of 4 taps (4q .. 4q + 3, the taps
  past FW weighing 0), per channel of the block, 2 words of int16 weight pairs
  (w[4q], w[4q + 2]), (w[4q + 1], w[4q + 3]): the order SXTAB16 and SXTAB16 ROR #8 give 4
  input bytes, the input offset added, so one SMLAD per word; no folded constant (the
  sums start at the bias, requantised as the node's channels are).

To add an op: write a `_<op>_record(graph, op)`
returning its words (or None) and add it to RECORDS; read it in the kernel's prepare or
eval with tflm_node_layout and validate its fields there.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from tflm_gen.compress import decoded_filter
from tflm_gen.compress_rows import grouped_filter
from tflm_gen.model import ir
from tflm_gen.requant import channel_multipliers

METADATA_NAME = ir.LAYOUT_METADATA
CONV_INT16_PAIRS = 1  # kind of the CONV_2D record above
CONV_INT16_PAIRS_REQUANT = 2  # CONV_INT16_PAIRS plus the requantisation tail
# The same records without their int16 stream, which the filter's buffer holds instead of
# its int8 bytes (embed_layout's `in_filter`; the model carries the weights once, as int16).
FC_QUADS_IN_FILTER = 40
CONV_PAIRS_IN_FILTER = 41
CONV_PAIRS_REQUANT_IN_FILTER = 42
# A CONV_INT16_PAIRS(_REQUANT) record cut to kind, channels, K and the folded constants:
# all the MVE loops read (embed_layout's `form` "folded"); other builds ignore it.
CONV_FOLDED = 43
CONV_PAIR_RECORDS = 70  # CONV_2D 1x1: per channel pair its folded, weights and tail words
CONV_PAIR_RECORDS_IN_FILTER = 71
CONV_RGB_BAND = 80  # CONV_2D 3x3x3 -> 8 at stride 2: the band kernel's weights, then the tail
CONV_RGB_BAND_IN_FILTER = 81  # the same, its weights and tail in the filter's buffer
PAIR_MARK = 1 << 30  # in the word after a pair's weights: above any weight word
NARROW_SHAPES = ((8, 16), (16, 32), (32, 32))  # (K, Cout) conv_narrow.h runs at stride 1
ACCUMULATOR_LIMIT = 1 << 30  # |acc| below it: 2 * acc fits int32 (SMMLAR's operand)
DW_TAP_PAIRS = 55  # kind of the DEPTHWISE_CONV_2D record above (column pairs; 3 was row pairs)
# The tap pairs in the order the kernel's one-pixel assembly reads them: each row pointer is
# advanced by the last tap read through it (taps 0, 3 and then DW_SINGLE); the pair runs'
# (6, 7) after the single tap's words.
DW_PAIRS = ((1, 4), (2, 5), (0, 3), (7, 8))
DW_SINGLE = 6
DW_ROW2_PAIR = (6, 7)
DW_MAX_SHIFT = 22  # 2^(r-1) + 127 * 2^r and the doubled high word stay inside int32
CONV_CODED_REQUANT = 20  # CONV_2D, coded filter: CONV_INT16_PAIRS_REQUANT's tail alone
DW_CODED_TAP_STEPS = 21  # DEPTHWISE_CONV_2D, coded filter: DW_TAP_PAIRS built by the kernel
DW_ROW_QUADS = 4  # kind of the one-input-channel DEPTHWISE_CONV_2D record above
DW_QUAD_BYTES = 256  # FH * 4Q at most: the kernel copies a border window of that size


def _constant(model: ir.Model, tensor: ir.Tensor) -> np.ndarray | None:
    """The tensor's constant data shaped as declared, or None when it has none or its buffer
    is not the dense array (a compressed tensor keeps its plain layout: no record)."""
    data = model.buffers[tensor.buffer].data if tensor.buffer else b""
    count = int(np.prod(tensor.shape)) if tensor.shape else 1
    dtype = ir.DTYPE_BY_NAME[tensor.dtype].numpy
    if not data or dtype is None or len(data) != count * np.dtype(dtype).itemsize:
        return None
    return np.frombuffer(data, dtype=np.dtype(dtype).newbyteorder("<")).reshape(tensor.shape)


def fold_constants(filter_rows: np.ndarray, bias: np.ndarray | None,
                   input_offset: int) -> np.ndarray:
    """bias + input_offset * sum(row) per output channel, wrapping in int32."""
    sums = filter_rows.astype(np.int64).sum(axis=1)
    start = bias.astype(np.int64) if bias is not None else np.zeros(len(sums), np.int64)
    folded = (start + input_offset * sums) & 0xFFFFFFFF
    return folded.astype(np.uint32).view(np.int32)


def _tflm_requantize(acc: int, multiplier: int, shift: int) -> int:
    """TFLM's MultiplyByQuantizedMultiplier for a right shift (shift <= 0), exact integers:
    the doubling high product rounded, then divided by 2^-shift half away from zero."""
    if acc == multiplier == -(1 << 31):
        return (1 << 31) - 1
    high = (acc * multiplier + (1 << 30)) >> 31
    right = -shift
    return (high + (1 << (right - 1)) - (high < 0)) >> right if right else high


def _channel_requant(bound: int, folded: int, multiplier: int, shift: int,
                     offset: int) -> tuple[int, int, int] | None:
    """(multiplier, constant, right shift) of cmsis_requantize_folded for one channel whose
    accumulator stays within folded +- bound, or None when no such triple is exact.  With
    h = TFLM's rounded doubling high product, |h| <= high; rounding h / 2^r half away from
    zero and adding offset is (h + 2^(r-1) + offset * 2^r - [acc < 0]) >> r while that sum
    fits int32 ([h < 0] and [acc < 0] differ only where both give 0).  A channel whose
    output is one value v for every accumulator (the requantisation is monotonic: its ends
    agree) takes multiplier 0: (1 + 2 * v - [acc < 0]) >> 1 is v, whatever acc."""
    low, top = folded - bound, folded + bound
    if shift <= 0 and multiplier >= 0 and -(1 << 31) <= low and top < (1 << 31):
        value = _tflm_requantize(low, multiplier, shift) + offset
        if value == _tflm_requantize(top, multiplier, shift) + offset and abs(value) < 1 << 29:
            return 0, 1 + 2 * value, 1
    if max(abs(low), abs(top)) >= ACCUMULATOR_LIMIT or shift > -1:
        return None
    if not (1 << 30) <= multiplier < (1 << 31):
        return None
    right = -shift
    high = (max(abs(low), abs(top)) * multiplier + (1 << 30)) >> 31
    constant = (1 << (right - 1)) + offset * (1 << right)
    if -(1 << 31) <= constant - high - 1 and constant + high < (1 << 31):
        return multiplier, constant, right
    return None


def _wrap32(value: int) -> int:
    """value as the int32 of its low 32 bits (a constant channel's doubled sum may wrap)."""
    return (value + (1 << 31)) % (1 << 32) - (1 << 31)


def requant_tail(filter_rows: np.ndarray, exact_folded: list[int],
                 requant: list[tuple[int, int]], offset: int) -> list[int] | None:
    """The CONV_INT16_PAIRS_REQUANT tail for an even number of channels, or None."""
    if len(exact_folded) % 2:
        return None
    bounds = [128 * int(np.abs(row.astype(np.int64)).sum()) for row in filter_rows]
    channels = [_channel_requant(bound, folded, multiplier, shift, offset)
                for bound, folded, (multiplier, shift) in zip(bounds, exact_folded, requant)]
    if any(c is None for c in channels):
        return None
    tail = []
    for a in range(0, len(channels), 2):
        (multiplier_a, constant_a, shift_a), (multiplier_b, constant_b, shift_b) = \
            channels[a:a + 2]
        tail += [_wrap32(2 * f) for f in exact_folded[a:a + 2]]
        tail += [shift_b, multiplier_a, multiplier_b, constant_a, constant_b, shift_a]
    return tail


def int16_pairs(filter_rows: np.ndarray) -> np.ndarray:
    """The CONV_INT16_PAIRS stream of filter rows [Cout, K] (int16 values)."""
    channels, patch = filter_rows.shape
    groups = (patch + 3) // 4
    rows = np.zeros((channels + channels % 2, 4 * groups), np.int16)
    rows[:channels, :patch] = filter_rows
    if channels % 2:
        rows[-1] = rows[-2]
    pairs = len(rows) // 2
    body = rows.reshape(pairs, 2, groups, 4)[..., [0, 2, 1, 3]]
    return body.transpose(0, 2, 1, 3).reshape(-1)


def pair_records(stream: np.ndarray, tail: list[int], channels: int) -> list[int]:
    """The CONV_PAIR_RECORDS words after the folded constants, from the doubled
    CONV_INT16_PAIRS_REQUANT stream (int16) and its tail (8 words per pair)."""
    pairs = len(tail) // 8
    weights = np.frombuffer(stream.astype("<i2").tobytes(), "<i4").reshape(pairs, -1)
    words = []
    for j in range(pairs):
        folded_a, folded_b, shift_b, multiplier_a, multiplier_b, constant_a, constant_b, \
            shift_a = tail[8 * j: 8 * j + 8]
        last = (1 << 31) if j == pairs - 1 else 0
        shift_word = _wrap32(shift_b | channels << 8 | last)
        words += [folded_a, folded_b, *weights[j].tolist(), constant_b, shift_a | PAIR_MARK,
                  multiplier_a, constant_a, shift_word, multiplier_b]
    return words


def _pair_records_apply(weights: ir.Tensor, op: ir.Operator) -> bool:
    """Whether a CONV_2D with a requantisation tail takes CONV_PAIR_RECORDS: a 1x1 filter
    over K a multiple of 4 input channels, not a shape conv_narrow.h runs."""
    cout, height, width, k = weights.shape
    stride = (op.builtin_options.get("stride_h", 1), op.builtin_options.get("stride_w", 1))
    narrow = (k, cout) in NARROW_SHAPES and stride == (1, 1)
    return height == width == 1 and k % 4 == 0 and not narrow


def int16_quads(filter_rows: np.ndarray) -> np.ndarray:
    """The FC_INT16_QUADS stream of filter rows [rows, K] (int16 values)."""
    count, depth = filter_rows.shape
    groups = (depth + 3) // 4
    rows = np.zeros((-(-count // 4) * 4, 4 * groups), np.int16)
    rows[:count, :depth] = filter_rows
    body = rows.reshape(-1, 4, groups, 4)[..., [0, 2, 1, 3]]
    return body.transpose(0, 2, 1, 3).reshape(-1)


def _weighted_tensors(model: ir.Model, graph: ir.SubGraph, op: ir.Operator,
                      read: Callable | None = None):
    """(input, filter data, bias data or None) of an int8 op with a dense constant filter
    (`read`: the filter as that function reads it, e.g. decoded_filter for a filter
    compress.py coded) and an int32 bias (or none) and a quantised input, else None."""
    tensors = graph.tensors
    if len(op.inputs) < 2 or op.inputs[1] < 0 or op.inputs[0] < 0:
        return None
    source, weights = tensors[op.inputs[0]], tensors[op.inputs[1]]
    bias_tensor = tensors[op.inputs[2]] if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
    if source.dtype != "int8" or weights.dtype != "int8":
        return None
    if not (source.quantization and source.quantization.zero_point):
        return None
    filter_data = read(model, graph, op) if read else _constant(model, weights)
    bias = _constant(model, bias_tensor) if bias_tensor is not None else None
    if filter_data is None or (bias_tensor is not None and
                               (bias is None or bias_tensor.dtype != "int32")):
        return None
    return source, filter_data, bias


FC_INT16_QUADS = 10  # kind of the FULLY_CONNECTED record (conv kinds are below 10)
FC_SPARSE_FOLDED = 26  # FULLY_CONNECTED over a row-sparse filter: the folded constants


def _sparse_fc_record(model: ir.Model, graph: ir.SubGraph,
                      op: ir.Operator) -> list[int] | None:
    """The FC_SPARSE_FOLDED record of a FULLY_CONNECTED whose filter is row-sparse."""
    found = _weighted_tensors(model, graph, op, read=grouped_filter)
    if found is None:
        return None
    source, rows, bias = found
    folded = fold_constants(rows, bias, -int(source.quantization.zero_point[0]))
    return [FC_SPARSE_FOLDED, rows.shape[0], rows.shape[1], *folded.tolist()]


def _fc_record(model: ir.Model, graph: ir.SubGraph, op: ir.Operator) -> list[int] | None:
    """The record of an int8 FULLY_CONNECTED with weights of zero point 0, read by
    kernels_c/cmsis/fully_connected.c, kind FC_INT16_QUADS:
      kind, rows (output_depth), depth K (accum_depth),
      folded[round4(rows)] = bias[c] + input_offset * sum(filter[c]) as for CONV_2D (missing
        rows of the last quad 0);
      the filter as int16, rows in quads (the last one completed with zero rows), each quad's
      stream per group of 4 inputs (G = ceil(K / 4), the last group padded with zero weights):
      row a's (w0, w2, w1, w3), then rows b, c and d; 32 * G bytes per quad.  The kernel
      widens each input word once (SXTB16 into (x0, x2) and (x1, x3)) for the four rows: one
      SMLAD per weight word, no SXTB16 on weights, no scratch.
    Kind FC_QUADS_IN_FILTER: the same record without the stream, which the filter tensor's
    buffer holds instead (embed_layout's `in_filter`); every build of the kernel then reads
    the stream, and a node whose record disagrees fails rather than read it as int8."""
    found = _weighted_tensors(model, graph, op)
    weights = graph.tensors[op.inputs[1]] if found else None
    if found is None or len(weights.shape) != 2:
        return None
    q = weights.quantization
    if q is not None and any(int(z) != 0 for z in q.zero_point):
        return None  # the kernel's fast path is for symmetric weights only
    source, rows, bias = found
    folded = fold_constants(rows, bias, -int(source.quantization.zero_point[0]))
    folded = np.concatenate([folded, np.zeros(-len(folded) % 4, np.int32)])
    stream = int16_quads(rows).astype("<i2").tobytes()
    words = np.frombuffer(stream, dtype="<i4").tolist()
    return [FC_INT16_QUADS, rows.shape[0], rows.shape[1], *folded.tolist(), *words]


def _rgb_band_applies(weights: ir.Tensor, op: ir.Operator) -> bool:
    """Whether a CONV_2D is the RGB first layer conv_narrow_rgb_bands runs: 3x3x3 -> 8
    channels, stride 2 both ways, dilation 1."""
    options = op.builtin_options
    steps = [int(options.get(name, 1)) for name in
             ("stride_h", "stride_w", "dilation_h_factor", "dilation_w_factor")]
    return list(weights.shape) == [8, 3, 3, 3] and steps == [2, 2, 1, 1]


def rgb_band_stream(stream: list[int]) -> list[int]:
    """CONV_RGB_BAND's weight words from the CONV_INT16_PAIRS_REQUANT stream of a 3x3x3 ->
    8 filter (4 pairs of 7 groups): per pair j, word k and channel s (int16 offset 56j +
    4k + 2s) the doubled weights (w k, w 9+k) for k < 9 (the band's rows 0 and 1 of an
    element), (w 2k, w 2k+1) for k >= 9 (row 2; w 27 the stream's zero)."""
    pairs = np.frombuffer(np.asarray(stream, "<i4").tobytes(), "<i2").reshape(4, 7, 2, 4)
    rows = np.zeros((4, 2, 28), np.int16)  # [pair, channel, element]
    for position, element in enumerate((0, 2, 1, 3)):
        rows[:, :, element::4] = pairs[:, :, :, position].transpose(0, 2, 1)
    first = [k if k < 9 else 2 * k for k in range(14)]
    second = [9 + k if k < 9 else 2 * k + 1 for k in range(14)]
    laid = np.stack([rows[:, :, first], rows[:, :, second]], axis=-1)  # [j, s, k, 2]
    words = laid.transpose(0, 2, 1, 3).astype("<i2").tobytes()
    return np.frombuffer(words, "<i4").tolist()


def _rgb_bands(records: dict) -> dict:
    """`records` whose CONV_INT16_PAIRS_REQUANT record of an RGB first layer of stride 2
    (_rgb_band_applies) is CONV_RGB_BAND: its stream re-laid, the tail after it."""
    def relaying(make):
        def record(model: ir.Model, graph: ir.SubGraph, op: ir.Operator) -> list[int] | None:
            words = make(model, graph, op)
            if (words is None or words[0] != CONV_INT16_PAIRS_REQUANT or
                    not _rgb_band_applies(graph.tensors[op.inputs[1]], op)):
                return words
            start, end = _conv_stream(words)
            return [CONV_RGB_BAND, *words[1:start], *rgb_band_stream(words[start:end]),
                    *words[end:]]
        return record
    return {opcode: relaying(make) if opcode == "CONV_2D" else make
            for opcode, make in records.items()}


def _conv_record(model: ir.Model, graph: ir.SubGraph, op: ir.Operator) -> list[int] | None:
    found = _weighted_tensors(model, graph, op)
    if found is None:
        return None
    source, filter_data, bias = found
    weights = graph.tensors[op.inputs[1]]
    if len(weights.shape) != 4 or len(source.shape) != 4 or weights.shape[3] != source.shape[3]:
        return None  # not 2-D, or grouped
    rows = filter_data.reshape(weights.shape[0], -1)
    input_offset = -int(source.quantization.zero_point[0])
    folded = fold_constants(rows, bias, input_offset)
    tail = _requant_tail_of(graph, op, rows, bias, input_offset)
    if len(folded) % 2:
        folded = np.concatenate([folded, folded[-1:]])
    kind = CONV_INT16_PAIRS if tail is None else CONV_INT16_PAIRS_REQUANT
    stream = int16_pairs(rows if tail is None else 2 * rows.astype(np.int16))
    if tail is not None and _pair_records_apply(weights, op):
        return [CONV_PAIR_RECORDS, rows.shape[0], rows.shape[1], *folded.tolist(),
                *pair_records(stream, tail, rows.shape[0])]
    words = np.frombuffer(stream.astype("<i2").tobytes(), dtype="<i4").tolist()
    return [kind, rows.shape[0], rows.shape[1], *folded.tolist(), *words, *(tail or [])]


def _coded_conv_record(model: ir.Model, graph: ir.SubGraph,
                       op: ir.Operator) -> list[int] | None:
    """The CONV_CODED_REQUANT record of a CONV_2D whose filter compress.py coded."""
    found = _weighted_tensors(model, graph, op, read=decoded_filter)
    if found is None:
        return None
    source, filter_data, bias = found
    if len(filter_data.shape) != 4 or len(source.shape) != 4 or \
            filter_data.shape[3] != source.shape[3]:
        return None
    rows = filter_data.reshape(filter_data.shape[0], -1)
    tail = _requant_tail_of(graph, op, rows, bias, -int(source.quantization.zero_point[0]))
    return None if tail is None else [CONV_CODED_REQUANT, rows.shape[0], rows.shape[1], *tail]


def _clamps_to_int8(op: ir.Operator, quantization: ir.Quantization) -> bool:
    """True when the fused activation's clamp range is the whole int8 range (SSAT's): none,
    or RELU / RELU6 from a zero point of -128 whose 6.0 quantises to 127 or more (in float32,
    rounded half away from zero, as tflm_activation_range_quantized; the runtime checks the
    range it computes too, tail_agrees)."""
    activation = op.builtin_options.get("fused_activation_function", 0)
    zero_point, scale = int(quantization.zero_point[0]), np.float32(quantization.scale[0])
    if activation == 1:  # RELU
        return zero_point == -128
    if activation == 3:  # RELU6
        six = float(np.float32(6.0) / scale) if scale > 0 else 0.0
        return zero_point == -128 and math.floor(abs(six) + 0.5) + zero_point >= 127
    return activation != 2  # RELU_N1_TO_1 clamps; the others keep the type's range


def _requant_tail_of(graph: ir.SubGraph, op: ir.Operator, rows: np.ndarray,
                     bias: np.ndarray | None, input_offset: int) -> list[int] | None:
    """requant_tail of a CONV_2D node, from the requantisation the runtime reads
    (tflm_gen.requant) and the exact (unwrapped) folded constants."""
    requant = channel_multipliers(graph, op)
    output = graph.tensors[op.outputs[0]]
    if requant is None or not (output.quantization and output.quantization.zero_point and
                               _clamps_to_int8(op, output.quantization)):
        return None
    sums = rows.astype(np.int64).sum(axis=1).tolist()
    starts = bias.astype(np.int64).tolist() if bias is not None else [0] * len(sums)
    exact = [int(start) + input_offset * int(total) for start, total in zip(starts, sums)]
    return requant_tail(rows, exact, requant, int(output.quantization.zero_point[0]))


def depthwise_tap_pairs(taps: np.ndarray, folded: np.ndarray, requant: list[tuple[int, int]],
                        output_zero_point: int) -> np.ndarray:
    """The DW_TAP_PAIRS blocks [C // 4, 38] (int32 words) of taps [9, C] (C a multiple of
    4), the folded constants [C] and the (multiplier, shift) of each channel."""
    blocks = taps.shape[1] // 4
    w = 2 * taps.astype(np.int16).reshape(9, blocks, 4).transpose(1, 0, 2)  # [block, tap, ch]
    pairs = np.stack([np.stack([w[:, k], w[:, j]], axis=-1)
                      for k, j in (*DW_PAIRS, DW_ROW2_PAIR)], axis=1)
    single = w[:, DW_SINGLE][:, [0, 2, 1, 3]].reshape(blocks, 1, 2, 2)
    halves = np.concatenate([pairs[:, :4].reshape(blocks, -1), single.reshape(blocks, -1),
                             pairs[:, 4:].reshape(blocks, -1)], axis=1)
    weights = halves.astype("<i2").view("<i4")  # [block, 22]
    steps = np.array([(m, (1 << (-shift - 1)) + output_zero_point * (1 << -shift), -shift)
                      for m, shift in requant], np.int64)
    return np.concatenate([2 * folded.reshape(blocks, 4).astype(np.int64), weights,
                           steps.reshape(blocks, 12)], axis=1)


def _depthwise_requant(graph: ir.SubGraph, op: ir.Operator,
                       channels: int) -> list[tuple[int, int]] | None:
    """The first `channels` channels' (multiplier, shift), when every shift of the node
    is a right shift in [1, DW_MAX_SHIFT] (the requantisation of the kernel's layout path)."""
    pairs = channel_multipliers(graph, op)
    if not pairs or any(m <= 0 or not -DW_MAX_SHIFT <= shift <= -1 for m, shift in pairs):
        return None
    return pairs[:channels]


def _sums_fit(taps: np.ndarray, bias: np.ndarray | None) -> bool:
    """Whether every channel's sum stays below 2^30 in magnitude for any input (each input
    plus its offset is within +-255), so that doubling it cannot overflow int32."""
    bound = 255 * np.abs(taps.astype(np.int64)).sum(axis=0)
    if bias is not None:
        bound = bound + np.abs(bias.astype(np.int64))
    return bool((bound < (1 << 30)).all())


def _depthwise_record(model: ir.Model, graph: ir.SubGraph, op: ir.Operator,
                      coded: bool = False) -> list[int] | None:
    """DW_ROW_QUADS or DW_TAP_PAIRS; `coded`: DW_CODED_TAP_STEPS of a coded filter."""
    quads = None if coded else _depthwise_quads_record(model, graph, op)
    if quads is not None:
        return quads
    found = _weighted_tensors(model, graph, op, read=decoded_filter if coded else None)
    if found is None:
        return None
    source, filter_data, bias = found
    weights = graph.tensors[op.inputs[1]]
    out = graph.tensors[op.outputs[0]]
    if len(source.shape) != 4 or list(weights.shape[:3]) != [1, 3, 3] or \
            weights.shape[3] != source.shape[3] or weights.shape[3] < 4:
        return None  # not 3x3, a depth multiplier other than 1, or no block of 4
    channels = weights.shape[3] // 4 * 4
    requant = _depthwise_requant(graph, op, channels)
    taps = filter_data.reshape(9, -1)[:, :channels]
    bias = bias[:channels] if bias is not None else None
    if requant is None or not _sums_fit(taps, bias) or \
            not (out.quantization and out.quantization.zero_point):
        return None
    folded = fold_constants(taps.T, bias, -int(source.quantization.zero_point[0]))
    blocks = depthwise_tap_pairs(taps, folded, requant, int(out.quantization.zero_point[0]))
    if coded:  # the kernel builds the blocks from the decoded filter and the node
        return [DW_CODED_TAP_STEPS, int(weights.shape[3])]
    return [DW_TAP_PAIRS, int(weights.shape[3]), *blocks.reshape(-1).tolist()]


def depthwise_row_quads(weights: np.ndarray) -> np.ndarray:
    """The DW_ROW_QUADS blocks [C // 4, FH * Q * 8] (int32 words) of the filter
    [FH, FW, C] (C a multiple of 4)."""
    fh, fw, channels = weights.shape
    quads = (fw + 3) // 4
    padded = np.zeros((fh, 4 * quads, channels), np.int16)
    padded[:, :fw] = weights
    w = padded.reshape(fh, quads, 4, channels // 4, 4)  # [row, quad, tap, block, channel]
    halves = w[:, :, [0, 2, 1, 3]].transpose(3, 0, 1, 4, 2)  # [block, row, quad, ch, tap]
    return halves.astype("<i2").reshape(channels // 4, -1).view("<i4")


def _depthwise_quads_record(model: ir.Model, graph: ir.SubGraph,
                            op: ir.Operator) -> list[int] | None:
    found = _weighted_tensors(model, graph, op)
    if found is None:
        return None
    source, filter_data, _ = found
    weights = graph.tensors[op.inputs[1]]
    if len(source.shape) != 4 or source.shape[3] != 1 or len(weights.shape) != 4 or \
            weights.shape[0] != 1 or weights.shape[3] % 4 or weights.shape[3] < 4:
        return None
    fh, fw, channels = (int(v) for v in weights.shape[1:])
    quads = (fw + 3) // 4
    if fh * 4 * quads > DW_QUAD_BYTES:
        return None
    blocks = depthwise_row_quads(filter_data.reshape(fh, fw, channels))
    return [DW_ROW_QUADS, channels, fh, fw, quads, *blocks.reshape(-1).tolist()]


RECORDS: dict[str, Callable[[ir.Model, ir.SubGraph, ir.Operator], list[int] | None]] = {
    "FULLY_CONNECTED": lambda *node: _fc_record(*node) or _sparse_fc_record(*node),
    "CONV_2D": lambda *node: _conv_record(*node) or _coded_conv_record(*node),
    "DEPTHWISE_CONV_2D": lambda *node: (_depthwise_record(*node)
                                        or _depthwise_record(*node, coded=True)),
}


def _record_kinds(keep: Callable[[int], bool] | None):
    """RECORDS with the records of a kind that `keep` refuses left out (None: all kept)."""
    if keep is None:
        return RECORDS

    def kept(make):
        def record(model, graph, op):
            words = make(model, graph, op)
            return words if words is not None and keep(words[0]) else None
        return record
    return {opcode: kept(make) for opcode, make in RECORDS.items()}


def layout_words(model: ir.Model, keep: Callable[[int], bool] | None = None,
                 records: dict | None = None) -> list[int] | None:
    """The metadata words for the operators of all subgraphs, or None when none has one;
    only the records whose kind `keep` accepts (all by default)."""
    records = records or _record_kinds(keep)
    ops = [(graph, op) for graph in model.subgraphs for op in graph.operators]
    header = [1, len(ops)]
    positions, words = [0] * len(ops), []
    next_word = len(header) + len(positions)
    for index, (graph, op) in enumerate(ops):
        make = records.get(op.opcode)
        record = make(model, graph, op) if make else None
        if record is None:
            continue
        positions[index] = next_word
        words += [len(record), *record]
        next_word += len(record) + 1
    return header + positions + words if words else None


def node_record(model: ir.Model, op: ir.Operator) -> list[int] | None:
    """The layout record (kind first) the metadata holds for `op`, None when none."""
    ops = [o for graph in model.subgraphs for o in graph.operators]
    index = next((i for i, o in enumerate(ops) if o is op), None)
    return None if index is None else ir.layout_records(model)[index]


def _sole_reader(model: ir.Model, graph: ir.SubGraph, op: ir.Operator) -> bool:
    """Whether op's filter (input 1) is a constant no other tensor, operator or graph
    input / output reads, so that its buffer may change form."""
    tensor = op.inputs[1]
    buffer = graph.tensors[tensor].buffer
    owners = [t for g in model.subgraphs for t in g.tensors if t.buffer == buffer]
    readers = [o for o in graph.operators if tensor in o.inputs]
    return (len(owners) == 1 and readers == [op] and op.inputs.count(tensor) == 1 and
            tensor not in graph.inputs and tensor not in graph.outputs)


def _fc_stream(record: list[int]) -> tuple[int, int]:
    """(start, end) words of an FC_INT16_QUADS record's stream: after kind, rows, depth and
    folded[round4(rows)], to the end."""
    return 3 + -(-record[1] // 4) * 4, len(record)


def _conv_stream(record: list[int]) -> tuple[int, int]:
    """(start, end) words of a CONV_INT16_PAIRS(_REQUANT) record's stream: after kind,
    channels, K and folded[round2(channels)], 4 * ceil(K / 4) words per channel pair; of a
    CONV_PAIR_RECORDS record: its pairs' records, to the end."""
    pairs, groups = -(-record[1] // 2), -(-record[2] // 4)
    if record[0] in (CONV_PAIR_RECORDS, CONV_RGB_BAND):  # CONV_RGB_BAND: weights and tail
        return 3 + 2 * pairs, len(record)
    return 3 + 2 * pairs, 3 + 2 * pairs + 4 * groups * pairs


# kind -> (the kind of the same record whose stream the filter's buffer holds instead of
# its int8 bytes, where the stream lies in the record)
IN_FILTER = {FC_INT16_QUADS: (FC_QUADS_IN_FILTER, _fc_stream),
             CONV_INT16_PAIRS: (CONV_PAIRS_IN_FILTER, _conv_stream),
             CONV_INT16_PAIRS_REQUANT: (CONV_PAIRS_REQUANT_IN_FILTER, _conv_stream),
             CONV_PAIR_RECORDS: (CONV_PAIR_RECORDS_IN_FILTER, _conv_stream),
             CONV_RGB_BAND: (CONV_RGB_BAND_IN_FILTER, _conv_stream)}


def _streams_in_filters(records: dict, moved: dict[int, bytes]) -> dict:
    """`records` whose records of an IN_FILTER kind, for a filter only their node reads,
    leave their stream in `moved` (buffer index -> bytes) and take its in-filter kind."""
    def moving(make):
        def record(model: ir.Model, graph: ir.SubGraph, op: ir.Operator) -> list[int] | None:
            words = make(model, graph, op)
            if words is None or words[0] not in IN_FILTER or not _sole_reader(model, graph, op):
                return words
            kind, stream = IN_FILTER[words[0]]
            start, end = stream(words)
            moved[graph.tensors[op.inputs[1]].buffer] = \
                np.asarray(words[start:end], "<i4").tobytes()
            return [kind, *words[1:start], *words[end:]]
        return record
    return {opcode: moving(make) for opcode, make in records.items()}


def _folded_only(records: dict) -> dict:
    """`records` whose CONV_2D records keep only their folded constants (CONV_FOLDED)."""
    def folding(make):
        def record(model: ir.Model, graph: ir.SubGraph, op: ir.Operator) -> list[int] | None:
            words = make(model, graph, op)
            if words is None or words[0] not in (CONV_INT16_PAIRS, CONV_INT16_PAIRS_REQUANT,
                                                 CONV_PAIR_RECORDS):
                return words
            return [CONV_FOLDED, *words[1:_conv_stream(words)[0]]]
        return record
    return {opcode: folding(make) for opcode, make in records.items()}


def embed_layout(model: ir.Model, keep: Callable[[int], bool] | None = None,
                 form: str = "whole") -> ir.Model:
    """A copy of the model carrying the layout metadata (replacing an older one), with the
    records whose kind `keep` accepts (all by default).  `form` "in_filter": a filter only
    its node reads holds the int16 stream of its record instead of its int8 bytes, and
    the record takes the in-filter kind (IN_FILTER), for builds whose every path reads the
    stream; "folded": conv records keep their folded constants only (CONV_FOLDED), for
    the MVE build (tflm_gen.layout_cores).  A build whose `keep` accepts CONV_RGB_BAND (a
    DSP core's: no other build reads it) gets it for its RGB first layer (_rgb_bands)."""
    moved: dict[int, bytes] = {}
    records = _record_kinds(keep)
    if keep is not None and keep(CONV_RGB_BAND):
        records = _rgb_bands(records)
    if form == "in_filter":
        records = _streams_in_filters(records, moved)
    elif form == "folded":
        records = _folded_only(records)
    result = model.with_metadata_words(METADATA_NAME, layout_words(model, records=records))
    for buffer, stream in moved.items():
        result.buffers[buffer] = ir.Buffer(stream)
    return result


def layout_bytes(model: ir.Model) -> int:
    """Flash the layout metadata adds to the model (the report's flash growth)."""
    words = layout_words(model)
    return 4 * len(words) if words else 0
