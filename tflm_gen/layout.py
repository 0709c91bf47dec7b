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

To add an op (DEPTHWISE_CONV_2D, FULLY_CONNECTED): write a `_<op>_record(graph, op)`
returning its words (or None) and add it to RECORDS; read it in the kernel's prepare or
eval with tflm_node_layout and validate its fields there.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tflm_gen.model import ir

METADATA_NAME = "tflm_gen.layout"
CONV_INT16_PAIRS = 1  # kind of the CONV_2D record above


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


def int16_quads(filter_rows: np.ndarray) -> np.ndarray:
    """The FC_INT16_QUADS stream of filter rows [rows, K] (int16 values)."""
    count, depth = filter_rows.shape
    groups = (depth + 3) // 4
    rows = np.zeros((-(-count // 4) * 4, 4 * groups), np.int16)
    rows[:count, :depth] = filter_rows
    body = rows.reshape(-1, 4, groups, 4)[..., [0, 2, 1, 3]]
    return body.transpose(0, 2, 1, 3).reshape(-1)


def _weighted_tensors(model: ir.Model, graph: ir.SubGraph, op: ir.Operator):
    """(input, filter data, bias data or None) of an int8 op with a dense constant filter
    and an int32 bias (or none) and a quantised input, else None."""
    tensors = graph.tensors
    if len(op.inputs) < 2 or op.inputs[1] < 0 or op.inputs[0] < 0:
        return None
    source, weights = tensors[op.inputs[0]], tensors[op.inputs[1]]
    bias_tensor = tensors[op.inputs[2]] if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
    if source.dtype != "int8" or weights.dtype != "int8":
        return None
    if not (source.quantization and source.quantization.zero_point):
        return None
    filter_data = _constant(model, weights)
    bias = _constant(model, bias_tensor) if bias_tensor is not None else None
    if filter_data is None or (bias_tensor is not None and
                               (bias is None or bias_tensor.dtype != "int32")):
        return None
    return source, filter_data, bias


FC_INT16_QUADS = 10  # kind of the FULLY_CONNECTED record (conv kinds are below 10)


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
      SMLAD per weight word, no SXTB16 on weights, no scratch."""
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


def _conv_record(model: ir.Model, graph: ir.SubGraph, op: ir.Operator) -> list[int] | None:
    found = _weighted_tensors(model, graph, op)
    if found is None:
        return None
    source, filter_data, bias = found
    weights = graph.tensors[op.inputs[1]]
    if len(weights.shape) != 4 or len(source.shape) != 4 or weights.shape[3] != source.shape[3]:
        return None  # not 2-D, or grouped
    rows = filter_data.reshape(weights.shape[0], -1)
    folded = fold_constants(rows, bias, -int(source.quantization.zero_point[0]))
    if len(folded) % 2:
        folded = np.concatenate([folded, folded[-1:]])
    stream = int16_pairs(rows).astype("<i2").tobytes()
    words = np.frombuffer(stream, dtype="<i4").tolist()
    return [CONV_INT16_PAIRS, rows.shape[0], rows.shape[1], *folded.tolist(), *words]


RECORDS: dict[str, Callable[[ir.Model, ir.SubGraph, ir.Operator], list[int] | None]] = {
    "FULLY_CONNECTED": _fc_record,
    "CONV_2D": _conv_record,
}


def layout_words(model: ir.Model) -> list[int] | None:
    """The metadata words for the operators of all subgraphs, or None when none has one."""
    ops = [(graph, op) for graph in model.subgraphs for op in graph.operators]
    header = [1, len(ops)]
    positions, records = [0] * len(ops), []
    next_word = len(header) + len(positions)
    for index, (graph, op) in enumerate(ops):
        make = RECORDS.get(op.opcode)
        record = make(model, graph, op) if make else None
        if record is None:
            continue
        positions[index] = next_word
        records += [len(record), *record]
        next_word += len(record) + 1
    return header + positions + records if records else None


def embed_layout(model: ir.Model) -> ir.Model:
    """A copy of the model carrying the layout metadata (replacing an older one)."""
    return model.with_metadata_words(METADATA_NAME, layout_words(model))


def layout_bytes(model: ir.Model) -> int:
    """Flash the layout metadata adds to the model (the report's flash growth)."""
    words = layout_words(model)
    return 4 * len(words) if words else 0
