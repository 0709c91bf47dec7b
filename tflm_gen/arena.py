"""The arena a model needs, computed in Python without compiling or running anything: the
number the C runtime measures (tflm_interpreter_arena_used_bytes) for the device model, so
a project can be generated where no host C compiler exists (IDE users).

The runtime's arena (runtime_c/tflm_arena.h) holds a head planned from the model's
offline plan plus the kernels' scratch buffers, a tail of persistent allocations (the
interpreter's tables, variable tensors, each kernel's parameters) and, during init, a
temporary section for the planner.  Each part is rebuilt here from the model alone: the
runtime's tables from the tensor and operator counts, the kernels' allocations per op
from shapes and types (KERNELS below, from each op descriptor's `arena`, each mirroring its
C prepare), the
head by the C planner's own first-fit rule.  tests/test_arena.py proves the result equals
the C measurement for every model of the corpus and of the zoo.

An op missing from KERNELS, or a node its entry cannot describe (an omitted input or a
rank the kernel's prepare refuses: each entry's `Reads`, checked before it runs), makes
`arena_sizes` raise NotModelled with the reason: the caller then needs the host run.  An
error raised inside an entry is a bug of this module, and is left to surface.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tflm_gen.compress import decode_scratch_bytes
from tflm_gen.compress_rows import is_sparse_rows
from tflm_gen.compress_sparse_conv import is_sparse_conv
from tflm_gen.compress_sparse_conv import scratch_bytes as sparse_conv_scratch_bytes
from tflm_gen.layout import DW_CODED_TAP_STEPS, node_record
from tflm_gen.model import ir
from tflm_gen.model.lifetimes import model_lifetimes, tensor_bases
from tflm_gen.op_descriptors import DESCRIPTORS
from tflm_gen.patches import (
    band_graph,
    prepared_bands,
    read_stage,
    stage_data_bytes,
    widen_lifetimes,
)
from tflm_gen.plan import ALIGN, OFFLINE_PLAN_NAME
from tflm_gen.requant import _real_multipliers
from tflm_gen.resources import resource_dir

# Sizes of the runtime's fixed-width records (runtime_c/tflm_interpreter.h, tflm_planner.h)
SUBGRAPH_BYTES = 40  # tflm_subgraph_t
NODE_STATE_BYTES = 20  # tflm_node_state_t
RESOURCE_BYTES = 28  # tflm_resource_t
PLAN_BUFFER_BYTES = 12  # tflm_plan_buffer_t
SCRATCH_REQUEST_BYTES = 8  # two words per request, in temporary memory until planning
RESOURCE_TENSOR_BYTES = 4  # a resource tensor holds a variable's id
ONLINE = -1  # a buffer the planner places (TFLM_PLAN_ONLINE)
LSTM_OUTPUT_STATE = 18  # UNIDIRECTIONAL_SEQUENCE_LSTM's hidden state input


class NotModelled(Exception):
    """An op or case whose allocations this module does not know."""


def aligned(size: int) -> int:
    return (size + ALIGN - 1) // ALIGN * ALIGN


@dataclass
class NodeView:
    """What a kernel's prepare sees of one operator."""

    model: ir.Model
    graph: ir.SubGraph
    op: ir.Operator

    def input(self, k: int) -> ir.Tensor | None:
        index = self.op.inputs[k] if k < len(self.op.inputs) else -1
        return self.graph.tensors[index] if index >= 0 else None

    def output(self, k: int) -> ir.Tensor | None:
        index = self.op.outputs[k] if k < len(self.op.outputs) else -1
        return self.graph.tensors[index] if index >= 0 else None

    def input_type(self) -> str:
        return self.input(0).dtype


# Ranks an allocation model takes for a tensor it reads (Reads below).
MANY = 1 << 31


def rank(count: int) -> range:
    return range(count, count + 1)


def rank_from(count: int) -> range:
    return range(count, MANY)


PRESENT = rank_from(0)  # read, but not its shape


@dataclass(frozen=True)
class Reads:
    """The inputs and outputs an allocation model reads, by position, with the ranks it
    takes: the ranks the kernel's prepare checks, so that a node short of them (an
    omitted input, a filter of another rank) is one the runtime refuses, and is not
    modelled (kernel_allocations checks them first) rather than a crash here."""

    inputs: dict[int, range] = field(default_factory=dict)
    outputs: dict[int, range] = field(default_factory=dict)


def _reads(inputs: dict[int, range], outputs: dict[int, range] | None = None):
    """Marks an allocation model with what it reads of its node (output 0, present, unless
    told)."""
    def mark(describe):
        describe.reads = Reads(inputs, {0: PRESENT} if outputs is None else outputs)
        return describe
    return mark


def _ranks_text(ranks: range) -> str:
    return f"rank {ranks.start}" if len(ranks) == 1 else f"rank {ranks.start} or more"


def _unread(node: NodeView, reads: Reads) -> str | None:
    """Why the node lacks what `reads` says its allocation model reads, or None."""
    for kind, tensor_at, wanted in (("input", node.input, reads.inputs),
                                    ("output", node.output, reads.outputs)):
        for position, ranks in wanted.items():
            tensor = tensor_at(position)
            if tensor is None:
                return f"{kind} {position} omitted"
            if len(tensor.shape) not in ranks:
                return (f"{kind} {position} of rank {len(tensor.shape)} (its kernel takes "
                        f"{_ranks_text(ranks)})")
    return None


@dataclass
class Allocations:
    """A kernel's persistent blocks and scratch requests, in bytes as requested."""

    persistent: list[int] = field(default_factory=list)
    scratch: list[int] = field(default_factory=list)


# Sizes of the kernels' parameter records (kernels_c/, fixed-width fields only, so the same
# on every target); a changed record shows up as a mismatch in tests/test_arena.py.
PARAMS_BYTES = {
    "act": 44, "add": 96, "add_n": 32, "arg": 24, "batch_matmul": 96, "cast": 12,
    "cmp": 84, "control": 8, "conv": 108, "cumsum": 48, "dequantize": 16, "div": 76,
    "elu": 264, "embedding_lookup": 24, "fill": 8, "fc": 56, "gather": 24, "gather_nd": 60,
    "gelu": 1296, "hard_swish": 32, "l2_pool": 56, "l2norm": 16, "log_softmax": 32,
    "binary": 56, "sigmoid": 24, "lstm": 232, "mirror_pad": 108,
    "mul": 76, "pad": 100, "pool": 68, "prelu": 84, "quantize": 40, "reduce": 72,
    "reduce_all": 36, "reduce_min": 40, "reshape": 4, "resize": 52, "var_handle": 4,
    "floor": 40, "select": 36, "shape": 36, "softmax": 32, "softmax_int16": 2084,
    "space_batch": 68, "sqdiff": 96, "sub": 96, "svdf": 72, "transpose_conv": 92,
    "unary": 44, "layout_view": 84, "layout_pieces": 20, "hybrid": 32,
}

def _requant_in_model(node: NodeView, channels: int) -> bool:
    """tflm_weighted_requant_in_model: the generator stored `channels` multipliers and
    shifts for this op in the model (tflm_gen.requant), so the kernel keeps none."""
    multipliers = _real_multipliers(node.graph, node.op)
    return channels > 0 and multipliers is not None and len(multipliers) == channels


def _hybrid(node: NodeView) -> bool:
    filter_tensor = node.input(1)
    return node.input_type() == "float32" and filter_tensor.dtype == "int8"


def _requant_arrays(node: NodeView, channels: int) -> int:
    return 0 if _requant_in_model(node, channels) else channels * 8


def _hybrid_allocations(node: NodeView, record: str, channels: int, batches: int,
                        batch_size: int) -> Allocations:
    """A hybrid kernel keeps a float scale per channel and requests room to quantise its
    input (one byte per value, rounded to 8) plus two words per batch."""
    values = batches * batch_size
    return Allocations([PARAMS_BYTES[record] + PARAMS_BYTES["hybrid"] + 4 * channels],
                       [aligned(values) + 8 * batches])


def _decode_scratch(node: NodeView) -> list[int]:
    """The scratch decoding a compressed filter (tflm_gen/compress.py), requested by the
    shared prepare of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED."""
    # The subgraph holding the operator (a patch stage's band graph is a reshaped copy).
    graph_index = next(i for i, g in enumerate(node.model.subgraphs)
                       if any(op is node.op for op in g.operators))
    base = sum(len(g.tensors) for g in node.model.subgraphs[:graph_index])
    if len(node.op.inputs) < 2 or base + node.op.inputs[1] not in ir.compressed_tensors(node.model):
        return []
    stream = node.model.buffers[node.input(1).buffer].data
    if is_sparse_rows(stream):  # consumed in place by the FC kernel: no scratch
        return []
    if is_sparse_conv(stream):  # the pixels' inputs widened (kernels_c/conv_sparse.c)
        _, height, width, _ = node.output(0).shape
        return [sparse_conv_scratch_bytes(node.input(0).shape[3], height * width)]
    transposed = 0  # depthwise: room for the filter taps-major (tflm_weighted_transpose)
    if node.op.opcode == "DEPTHWISE_CONV_2D":
        channels, row, _ = np.frombuffer(stream[4:16], "<u4").tolist()
        transposed = channels * row
    return [decode_scratch_bytes(stream) + transposed]


@_reads({0: rank(4), 1: rank(4)}, {0: rank(4)})
def _conv(node: NodeView) -> Allocations:
    if _hybrid(node):
        batches, height, width, depth = node.input(0).shape
        return _hybrid_allocations(node, "conv", node.output(0).shape[3], batches,
                                   height * width * depth)
    channels = 0 if node.input_type() == "float32" else node.output(0).shape[3]
    return Allocations([PARAMS_BYTES["conv"] + _requant_arrays(node, channels)],
                       _decode_scratch(node))


@_reads({0: PRESENT, 1: rank_from(2)}, {0: rank_from(1)})
def _fully_connected(node: NodeView) -> Allocations:
    if _hybrid(node):
        output_depth, accum_depth = node.input(1).shape[0], node.input(1).shape[-1]
        batches = ir.element_count(node.output(0)) // output_depth
        return _hybrid_allocations(node, "fc", output_depth, batches, accum_depth)
    scales = node.input(1).quantization.scale if node.input(1).quantization else []
    channels = 0 if node.input_type() == "float32" else max(len(scales), 1)
    return Allocations([PARAMS_BYTES["fc"] + _requant_arrays(node, channels)],
                       _decode_scratch(node))


@_reads({1: rank(4), 2: rank(4)}, {0: rank(4)})
def _transpose_conv(node: NodeView) -> Allocations:
    data = node.input(2)  # inputs: output shape, filter, data
    channels = 0 if data.dtype == "float32" else node.output(0).shape[3]
    return Allocations([PARAMS_BYTES["transpose_conv"] + _requant_arrays(node, channels)])


@_reads({0: PRESENT})
def _softmax(node: NodeView) -> Allocations:
    record = "softmax_int16" if node.input_type() == "int16" else "softmax"
    return Allocations([PARAMS_BYTES[record]])


def _element_count(tensor: ir.Tensor) -> int:
    return ir.element_count(tensor)


@_reads({0: PRESENT})
def _reduce(node: NodeView) -> Allocations:
    """MEAN and SUM of quantised values keep an int32 accumulator per output element."""
    quantised = node.input_type() != "float32" and node.op.opcode != "REDUCE_MAX"
    scratch = [_element_count(node.output(0)) * 4] if quantised else []
    return Allocations([PARAMS_BYTES["reduce"]], scratch)


def _pieces(count: int) -> Allocations:
    return Allocations([PARAMS_BYTES["layout_pieces"] + 4 * count])


@_reads({0: rank(2), 1: rank(2), 2: rank(2)})
def _svdf(node: NodeView) -> Allocations:
    batches, filters = node.input(0).shape[0], node.input(1).shape[0]
    filters_per_unit = int(node.op.builtin_options.get("rank", 1))
    if filters_per_unit <= 0 or filters % filters_per_unit:  # kernels_c/svdf.c refuses it
        raise NotModelled(f"SVDF with rank {filters_per_unit} for {filters} filters")
    scratch = [batches * filters * 4]
    if node.input_type() == "int8":
        scratch.insert(0, batches * (filters // filters_per_unit) * 4)
    return Allocations([PARAMS_BYTES["svdf"]], scratch)


@_reads({0: rank(3), LSTM_OUTPUT_STATE: rank(2)})
def _lstm(node: NodeView) -> Allocations:
    """The gates' scratch: four int32 or float rows of batches x units (int16 cells for
    quantised models count two bytes each)."""
    time_major = bool(node.op.builtin_options.get("time_major", False))
    batches = node.input(0).shape[1 if time_major else 0]
    units = node.input(LSTM_OUTPUT_STATE).shape[1]
    cell_bytes = 4 if node.input_type() == "float32" else 2
    return Allocations([PARAMS_BYTES["lstm"]], [4 * batches * units * cell_bytes])


# The allocation models an op's descriptor may name (tflm_gen.op_descriptors `arena`) besides
# one fixed record of PARAMS_BYTES.
ALLOCATION_MODELS = {
    "weighted_conv": _conv, "weighted_fc": _fully_connected,
    "weighted_transpose_conv": _transpose_conv, "softmax_tables": _softmax,
    "reduce_scratch": _reduce, "svdf_state": _svdf, "lstm_cells": _lstm,
    "input_pieces": lambda node: _pieces(len(node.op.inputs)),
    "output_pieces": lambda node: _pieces(len(node.op.outputs)),
    "none": lambda node: Allocations(),
}


def _allocation_model(name: str):
    """The named model, else a prepare that allocates the one fixed record `name` (an
    unknown name fails at import, not when a model first uses the op)."""
    if name in ALLOCATION_MODELS:
        return ALLOCATION_MODELS[name]
    record_bytes = PARAMS_BYTES[name]
    return lambda node: Allocations([record_bytes])


# Op -> its allocations, one entry per op that has a kernel, from the op descriptors.
KERNELS = {op: _allocation_model(d.arena) for op, d in DESCRIPTORS.items() if d.arena}


CMSIS_NODE_BYTES = 16  # the cmsis tag's block beside the reference one (cmsis_*_node_t)
CMSIS_ADD_TABLE_MIN = 512  # kernels_c/cmsis/add.c: elements from which ADD uses tables
CMSIS_SOFTMAX_TABLE_MIN = 256  # kernels_c/cmsis/softmax.c CMSIS_SOFTMAX_TABLE_MIN_ELEMENTS


def _round4(count: int) -> int:
    return (count + 3) // 4 * 4


def _beside(reference: Allocations, scratch: list[int]) -> Allocations:
    """The reference prepare's allocations, then the tag's block and scratch requests."""
    return Allocations([*reference.persistent, CMSIS_NODE_BYTES], [*reference.scratch, *scratch])


@_reads({0: PRESENT, 1: PRESENT})
def _cmsis_add(node: NodeView) -> Allocations:
    """Two 256-entry int32 tables for int8 ADD of 512 elements or more whose inputs hold as
    many elements as the output (no broadcasting: tflm_broadcast_t.flat)."""
    count = ir.element_count(node.output(0))
    tables = (node.input_type() == "int8" and count >= CMSIS_ADD_TABLE_MIN
              and ir.element_count(node.input(0)) == ir.element_count(node.input(1)) == count)
    return _beside(KERNELS["ADD"](node), [2 * 256 * 4] if tables else [])


@_reads({0: rank(4), 1: rank(4)}, {0: rank(4)})
def _cmsis_conv(node: NodeView) -> Allocations:
    """Six rows of an im2col patch (rounded to 4) for int8 convolution that is not grouped,
    eight for a 1x1 filter (kernels_c/cmsis/conv.c scratch_rows)."""
    filter_shape, input_channels = node.input(1).shape, node.input(0).shape[3]
    patch = filter_shape[1] * filter_shape[2] * filter_shape[3]
    ungrouped = node.input_type() == "int8" and filter_shape[3] == input_channels
    reference = _conv(node)
    if not ungrouped:
        return _beside(reference, [])
    rows = 8 if filter_shape[1] == filter_shape[2] == 1 else 6
    return _beside(reference, [rows * _round4(patch) + _coded_block_layout(node, patch)])


def _coded_block_layout(node: NodeView, patch: int) -> int:
    """kernels_c/cmsis/conv.c block_layout_bytes: one decoded block of a compressed filter
    in the offline layout's form (folded constants, int16 channel pairs)."""
    if not _decode_scratch(node) or is_sparse_conv(node.model.buffers[node.input(1).buffer].data):
        return 0
    group = int(np.frombuffer(node.model.buffers[node.input(1).buffer].data[12:16], "<u4")[0])
    pairs = (group + 1) // 2
    return 8 * pairs + pairs * 2 * 8 * ((patch + 3) // 4)


@_reads({0: PRESENT, 1: rank_from(2)}, {0: rank_from(1)})
def _cmsis_fully_connected(node: NodeView) -> Allocations:
    """The tag's block only: the DSP loop widens the input on the fly (no scratch row)."""
    return _beside(_fully_connected(node), [])


@_reads({0: PRESENT})
def _cmsis_softmax(node: NodeView) -> Allocations:
    """An exp table of 256 int32 for an int8 input of CMSIS_SOFTMAX_TABLE_MIN elements or more."""
    table = (node.input_type() == "int8"
             and ir.element_count(node.input(0)) >= CMSIS_SOFTMAX_TABLE_MIN)
    return Allocations([*_softmax(node).persistent, CMSIS_NODE_BYTES + (256 * 4 if table else 0)])


# Kernel tags: the ops whose prepare a tag's kernels_c/<tag>/ file changes (the others keep
# the reference prepare, as MUL and the pools do under cmsis).
@_reads({0: rank(4), 1: rank(4)}, {0: rank(4)})
def _cmsis_depthwise(node: NodeView) -> Allocations:
    """The reference prepare's, the tag's block, plus the DW_TAP_PAIRS blocks (38 words per
    4 channels) of a coded filter with a DW_CODED_TAP_STEPS record
    (kernels_c/cmsis/depthwise_conv.c)."""
    reference = KERNELS["DEPTHWISE_CONV_2D"](node)
    record = node_record(node.model, node.op) if _decode_scratch(node) else None
    if record is None or record[0] != DW_CODED_TAP_STEPS:
        return _beside(reference, [])
    return _beside(reference, [4 * 38 * (record[1] // 4)])


TAG_KERNELS = {"cmsis": {"ADD": _cmsis_add, "CONV_2D": _cmsis_conv,
                         "DEPTHWISE_CONV_2D": _cmsis_depthwise,
                         "FULLY_CONNECTED": _cmsis_fully_connected, "SOFTMAX": _cmsis_softmax}}


def kernel_allocations(node: NodeView, tags: tuple[str, ...] = ()) -> Allocations:
    """The node's allocations with the kernels of `tags` (the last tag that has the op
    wins, as for the files)."""
    describe = KERNELS.get(node.op.opcode)
    for tag in tags:
        describe = TAG_KERNELS.get(tag, {}).get(node.op.opcode, describe)
    if describe is None:
        raise NotModelled(node.op.opcode)
    # Nodes the kernel's prepare refuses (a filter of the wrong rank, an omitted input)
    # reach this model first when it chooses the patch stage: not modelled, so that the
    # runtime's prepare names the operator and the check that failed.
    problem = _unread(node, getattr(describe, "reads", Reads()))
    if problem:
        raise NotModelled(f"{node.op.opcode} with {problem}")
    return describe(node)


def _global_nodes(model: ir.Model) -> list[NodeView]:
    """Every operator of every subgraph, in the runtime's global order."""
    return [NodeView(model, graph, op) for graph in model.subgraphs for op in graph.operators]


def _used_tensors(graph: ir.SubGraph) -> set[int]:
    """Tensors the runtime's lifetime pass touches: graph inputs and outputs, operator
    inputs and outputs (not intermediates)."""
    used = {*graph.inputs, *graph.outputs}
    for op in graph.operators:
        used.update(op.inputs)
        used.update(op.outputs)
    used.discard(-1)
    return used


def _is_resource(model: ir.Model, tensor: ir.Tensor) -> bool:
    return tensor.dtype == "resource" and not ir.is_constant(model, tensor)


def _is_variable(model: ir.Model, tensor: ir.Tensor) -> bool:
    return tensor.is_variable and not ir.is_constant(model, tensor) and not \
        _is_resource(model, tensor)


def _planned_tensors(model: ir.Model, stage=None) -> list[int]:
    """Global indices of the tensors the head holds, in index order (is_planned): not the
    patch stage's tiles that share another tile's buffer."""
    planned, shared = [], stage.shared_tiles() if stage is not None else set()
    for base, graph in zip(tensor_bases(model), model.subgraphs):
        used = _used_tensors(graph)
        for t, tensor in enumerate(graph.tensors):
            if t in used and not _fixed(model, tensor) and base + t not in shared:
                planned.append(base + t)
    return planned


def _fixed(model: ir.Model, tensor: ir.Tensor) -> bool:
    """Tensors placed before the head is planned (tflm_allocate_fixed_tensors)."""
    return ir.is_constant(model, tensor) or tensor.is_variable or _is_resource(model, tensor)


def _offline_head(model: ir.Model, scratch: list, stage) -> int | None:
    """The head when the offline plan places every tensor left for the head and there is
    no scratch buffer and no stage: its highest end, planned with no temporary memory
    (runtime_c/tflm_allocator.c place_offline); else None."""
    tensors = _all_tensors(model)
    if stage is not None or scratch or not any(name == OFFLINE_PLAN_NAME
                                               for name, _ in model.metadata):
        return None
    offsets = _offline_offsets(model, len(tensors))
    free = [t for t, tensor in enumerate(tensors) if not _fixed(model, tensor)]
    if any(offsets[t] == ONLINE for t in free):
        return None
    return max((offsets[t] + aligned(ir.tensor_bytes(tensors[t])) for t in free), default=0)


def _all_tensors(model: ir.Model) -> list[ir.Tensor]:
    return [tensor for graph in model.subgraphs for tensor in graph.tensors]


def _variable_resources(model: ir.Model) -> int:
    """Tail bytes of resource variables: each distinct variable gets the bytes of the first
    ASSIGN_VARIABLE prepared for it whose handle a VAR_HANDLE of its subgraph wrote."""
    handles: dict[tuple[int, int], tuple[str, str]] = {}  # (subgraph, tensor) -> name
    sized: dict[tuple[str, str], int] = {}
    for s, graph in enumerate(model.subgraphs):
        for op in graph.operators:
            options = op.builtin_options
            if op.opcode == "VAR_HANDLE":
                handles[s, op.outputs[0]] = (options.get("container") or "",
                                             options.get("shared_name") or "")
            elif op.opcode == "ASSIGN_VARIABLE" and (s, op.inputs[0]) in handles:
                name = handles[s, op.inputs[0]]
                sized.setdefault(name, aligned(ir.tensor_bytes(graph.tensors[op.inputs[1]])))
    return sum(sized.values())


def runtime_tail_bytes(model: ir.Model) -> int:
    """The interpreter's own persistent tables, resource tensors, variables."""
    tensors, nodes = _all_tensors(model), _global_nodes(model)
    var_handles = sum(node.op.opcode == "VAR_HANDLE" for node in nodes)
    return (aligned(SUBGRAPH_BYTES * len(model.subgraphs)) + aligned(4 * len(tensors))
            + aligned(NODE_STATE_BYTES * len(nodes)) + aligned(RESOURCE_BYTES * var_handles)
            + sum(aligned(RESOURCE_TENSOR_BYTES) for t in tensors if _is_resource(model, t))
            + sum(aligned(ir.tensor_bytes(t)) for t in tensors if _is_variable(model, t))
            + _variable_resources(model))


@dataclass
class PlanBuffer:
    """One buffer of the runtime's planner (tflm_plan_buffer_t)."""

    bytes: int
    offset: int  # ONLINE until placed
    first: int
    last: int


def _overlap(a: PlanBuffer, b: PlanBuffer) -> bool:
    return a.first <= b.last and b.first <= a.last


def _first_fit(placed: list[PlanBuffer], candidate: PlanBuffer) -> int:
    """tflm_planner.c first_fit: the lowest gap among the live placed buffers (sorted by
    offset) that holds the candidate."""
    gap_start = 0
    for other in placed:
        if not _overlap(other, candidate):
            continue
        if other.offset >= gap_start and other.offset - gap_start >= candidate.bytes:
            break
        gap_start = max(gap_start, other.offset + other.bytes)
    return gap_start


def plan_head(buffers: list[PlanBuffer]) -> int:
    """tflm_plan: fixed buffers first, then larger before smaller (ties in order), each
    at its first fit; returns the head size."""
    order = sorted(range(len(buffers)), key=lambda i: (buffers[i].offset == ONLINE,
                                                       -buffers[i].bytes, i))
    placed: list[PlanBuffer] = []
    head = 0
    for index in order:
        buffer = buffers[index]
        if buffer.offset == ONLINE:
            buffer.offset = _first_fit(placed, buffer)
        position = len(placed)
        while position > 0 and placed[position - 1].offset > buffer.offset:
            position -= 1
        placed.insert(position, buffer)
        head = max(head, buffer.offset + buffer.bytes)
    return head


def _offline_offsets(model: ir.Model, tensor_count: int) -> list[int]:
    """The offsets of the model's OfflineMemoryAllocation (ONLINE where none)."""
    for name, buffer in model.metadata:
        if name != OFFLINE_PLAN_NAME:
            continue
        words = list(np.frombuffer(model.buffers[buffer].data, "<i4"))
        if len(words) >= 3 + tensor_count and words[:3] == [1, 0, tensor_count]:
            return [int(word) if word >= 0 else ONLINE for word in words[3:3 + tensor_count]]
    return [ONLINE] * tensor_count


def _single_graph_spans(graph: ir.SubGraph) -> dict[int, tuple[int, int]]:
    """Tensor spans of a model with one subgraph, as compute_lifetimes marks them: inputs
    from step 0, operator i's tensors at step i, outputs to the last step."""
    spans: dict[int, list[int]] = {}

    def touch(t: int, step: int) -> None:
        if t >= 0:
            span = spans.setdefault(t, [step, step])
            span[0], span[1] = min(span[0], step), max(span[1], step)

    for t in graph.inputs:
        touch(t, 0)
    for step, op in enumerate(graph.operators):
        for t in [*op.inputs, *op.outputs]:
            touch(t, step)
    for t in graph.outputs:
        touch(t, max(len(graph.operators), 1) - 1)
    return {t: (span[0], span[1]) for t, span in spans.items()}


def _spans(model: ir.Model) -> tuple[dict[int, tuple[int, int]], list[tuple[int, int]]]:
    """Tensor spans by global index and each global node's span of steps.  Several
    subgraphs take the runtime's shared timeline (tflm_gen.model.lifetimes), which also
    spans intermediates; the runtime ignores those, and so does one subgraph here."""
    if len(model.subgraphs) == 1:
        graph = model.subgraphs[0]
        return _single_graph_spans(graph), [(i, i) for i in range(len(graph.operators))]
    tensor_spans, op_spans = model_lifetimes(model)
    return tensor_spans, [op_spans[s, i] for s, graph in enumerate(model.subgraphs)
                          for i in range(len(graph.operators))]


def head_bytes(model: ir.Model, scratch: list[tuple[int, int]], stage=None) -> int:
    """The head the runtime plans: planned tensors at their offline offsets (or placed),
    then scratch buffers (bytes, node) live over their node's steps; a patch stage's
    tensors and nodes span all its steps, its tiles hold their rows."""
    tensors, planned = _all_tensors(model), _planned_tensors(model, stage)
    offsets = _offline_offsets(model, len(tensors))
    spans, node_spans = _spans(model)
    spans = widen_lifetimes(spans, stage)
    tiles = stage.buffer_bytes() if stage is not None else {}
    if stage is not None:
        node_spans = [(stage.first, stage.last) if stage.first <= n <= stage.last else span
                      for n, span in enumerate(node_spans)]
    buffers = [PlanBuffer(aligned(tiles.get(t, ir.tensor_bytes(tensors[t]))), offsets[t], *spans[t])
               for t in planned]
    buffers += [PlanBuffer(aligned(size), ONLINE, *node_spans[node]) for size, node in scratch]
    return plan_head(buffers)


def _planning_temp_bytes(model: ir.Model, scratch_count: int, stage=None) -> int:
    """Temporary bytes while planning: scratch requests, lifetime arrays, plan buffers."""
    tensors, nodes = len(_all_tensors(model)), len(_global_nodes(model))
    subgraphs = len(model.subgraphs)
    count = len(_planned_tensors(model, stage)) + scratch_count
    return (SCRATCH_REQUEST_BYTES * scratch_count + 2 * aligned(2 * tensors)
            + 2 * aligned(2 * nodes) + 2 * aligned(2 * subgraphs) + aligned(subgraphs)
            + aligned(PLAN_BUFFER_BYTES * count) + aligned(2 * count))


def arena_sizes(model: ir.Model, tags: tuple[str, ...] = ()) -> tuple[int, int]:
    """The arena the runtime needs for `model` (a device model: offline plan and
    requantisation embedded) and its persistent tail, in bytes; raises NotModelled for
    what this module does not know (kernels a tag replaces)."""
    unknown = [tag for tag in tags
               if (resource_dir("kernels_c") / tag).is_dir() and tag not in TAG_KERNELS]
    if unknown:
        raise NotModelled(f"the {', '.join(unknown)} kernels")
    stage = read_stage(model)
    kernel_tail, scratch = aligned(stage_data_bytes(stage)), []
    for index, allocations in _prepared(model, stage, tags):
        kernel_tail += sum(aligned(size) for size in allocations.persistent)
        scratch += [(size, index) for size in allocations.scratch]
    tail = runtime_tail_bytes(model) + kernel_tail + aligned(4 * len(scratch))
    offline = _offline_head(model, scratch, stage)
    if offline is not None:
        return tail + offline, tail
    used = tail + max(_planning_temp_bytes(model, len(scratch), stage),
                      head_bytes(model, scratch, stage))
    return used, tail


def _prepared(model: ir.Model, stage, tags: tuple[str, ...]):
    """(global node, allocations) of every prepare the runtime runs, in its order: a patch
    stage prepares its operators at its first one, once per distinct band shape."""
    nodes = _global_nodes(model)
    for index, node in enumerate(nodes):
        if stage is None or not stage.first <= index <= stage.last:
            yield index, kernel_allocations(node, tags)
        elif index == stage.first:
            for op, step in prepared_bands(stage):
                view = NodeView(model, band_graph(nodes[op].graph, nodes[op].op, step), nodes[op].op)
                yield op, kernel_allocations(view, tags)


def arena_bytes(model: ir.Model, tags: tuple[str, ...] = ()) -> int:
    return arena_sizes(model, tags)[0]
