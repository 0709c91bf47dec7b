"""Patch-based execution (issue 13, docs/patch_execution.md): the leading operators of a
CNN run as one *stage*, band of output rows by band of output rows, so that the tensors
inside the stage never exist whole.

A stage is a chain of operators `first..last` from a tensor S (a graph input) to a tensor
E, each a convolution, depthwise convolution or 2-D pooling with one activation input and
one output; the last may instead be a residual join, an ADD of the previous output and S
itself (a ResNet block: S is whole, so band b's join reads S's rows b as a view, and the
halo grows along the convolution path only), or a reduction, a FULLY_CONNECTED over the
previous output whose bands sum into running sums (micro_speech: the 25x20x8 output of its
convolution never exists whole).  For a band of E's rows, walking the chain backwards gives the rows every
stage tensor must hold (`input_rows`); rows shared by two bands (the halo) are computed
twice.  S and E stay whole; every tensor between them is a tile buffer holding the most
rows any band needs, reused from band to band.  The planner sees the stage as one
operator: S, E and the tiles are live over all its steps.

The stage travels in the device model as metadata `tflm_gen.stage` (`Stage.words`), read by
runtime_c/tflm_stage.c, which calls each operator's own kernel on views of the band's rows
with the band's own top padding (`BandStep.pad_top`).  TFLM ignores the metadata.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
from dataclasses import dataclass

import numpy as np

from tflm_gen.errors import InputError, ModelError
from tflm_gen.inspect import operator_macs
from tflm_gen.instructions import call_instructions, model_instructions
from tflm_gen.model import ir
from tflm_gen.overlap import pad_before, window_size

STAGE_METADATA = "tflm_gen.stage"
STAGE_FORMAT = 1  # first word of the metadata; runtime_c/tflm_stage.c TFLM_STAGE_FORMAT
STEP_WORDS = 5  # words per (band, operator): BandStep's fields in order
STAGE_OPS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D"})
# Elementwise ops that may end a stage as a residual join: the previous operator's output
# combined with the stage input S, row for row (runtime_c/tflm_stage.c join_valid).
JOIN_OPS = frozenset({"ADD"})
# Ops that may end a stage as a reduction: every band adds its rows' products to running
# sums, the last band writes the output (kernels_c/fully_connected_common.h
# tflm_fully_connected_band), so the tensor they read is only ever a tile.
REDUCE_OPS = frozenset({"FULLY_CONNECTED"})
# Ops whose input rows below the tensor may be rows of its zero point (Rows.zero_rows).
ZERO_ROW_OPS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D"})
MEMORY_CHOICES = ("small", "balanced", "fast")
# The default trade (the issue's): a patch stage only where it costs at most
# BALANCED_EXTRA_INSTRUCTIONS more instructions than the model, as tflm_gen.instructions
# estimates them (halo rows recomputed, one kernel call per band; docs/patch_execution.md
# has the measured figures).
DEFAULT_MEMORY = "balanced"
BALANCED_EXTRA_INSTRUCTIONS = 0.10


@dataclass(frozen=True)
class Rows:
    """How one operator maps output rows to input rows (the height axis only)."""

    stride: int
    extent: int  # rows one window spans: (filter - 1) * dilation + 1
    pad: int  # implicit rows above the input (TFLM's SAME rule)
    input_height: int
    output_height: int
    # Rows below the input may be real rows of its zero point rather than implicit padding
    # (an int8 convolution: each padded tap then adds 0 to the sum, as TFLM's skipped tap).
    zero_rows: bool = False

    def input_rows(self, start: int, stop: int) -> tuple[int, int]:
        """Input rows [a, b) that output rows [start, stop) read, clipped to the input."""
        first = start * self.stride - self.pad
        return max(0, first), min(self.input_height, self.unclipped_stop(stop))

    def unclipped_stop(self, stop: int) -> int:
        """The input row after the last one output rows [., stop) read, padding included."""
        return (stop - 1) * self.stride - self.pad + self.extent


@dataclass(frozen=True)
class BandStep:
    """One operator in one band: its input and output rows, and the padding rows the kernel
    must assume above the input view so its windows land where they would on the whole
    tensor (0 inside the image)."""

    in_start: int
    in_rows: int
    out_start: int
    out_rows: int
    pad_top: int


@dataclass(frozen=True)
class Stage:
    first: int  # first operator (index in subgraph 0)
    last: int  # last operator, inclusive
    band_rows: int  # rows of E per band (the last band may have fewer)
    tensors: tuple[int, ...]  # S, the tensors between, E (subgraph 0 indices)
    bands: tuple[tuple[BandStep, ...], ...]  # per band, one step per operator
    tile_bytes: tuple[tuple[int, int], ...]  # (tensor, bytes) of every tile buffer
    macs: int  # MACs of the stage's operators with the halos recomputed
    plain_macs: int  # the same operators run whole
    sums: int = 0  # running sums of a reduction ending the stage (its output elements)
    ending: str = "chain"  # the last operator: "chain", "residual join" or "reduction"
    rolling: bool = False  # tiles keep shared rows, zero-point rows below (band_steps)
    leading: int = 0  # rows of E in the first band when not band_rows (band_spans)

    def words(self) -> list[int]:
        """The metadata: format, first op, op count, band count, then per band and
        operator the BandStep fields."""
        steps = [value for band in self.bands for step in band for value in (
            step.in_start, step.in_rows, step.out_start, step.out_rows, step.pad_top)]
        return [STAGE_FORMAT, self.first, self.last - self.first + 1, len(self.bands), *steps]

    def tiles(self) -> dict[int, int]:
        """Bytes of each tile: the most rows a band needs of that tensor."""
        return dict(self.tile_bytes)

    def tile_owner(self, tensor: int) -> int:
        """The tile whose buffer `tensor` shares: operators k and k + 2 never hold their
        tiles at once (operator k + 1 reads the first before k + 2 writes the second), so
        the tiles alternate between two buffers, each placed for its first tile."""
        order = [t for t, _ in self.tile_bytes]
        return order[order.index(tensor) % 2]

    def buffer_bytes(self) -> dict[int, int]:
        """Bytes of each of the (at most two) tile buffers, by owner tile."""
        sizes: dict[int, int] = {}
        for tensor, size in self.tile_bytes:
            owner = self.tile_owner(tensor)
            sizes[owner] = max(sizes.get(owner, 0), size)
        return sizes

    def shared_tiles(self) -> set[int]:
        """Tiles that live in another tile's buffer (the planner places no buffer for them)."""
        return {t for t, _ in self.tile_bytes if self.tile_owner(t) != t}


def operator_rows(graph: ir.SubGraph, op: ir.Operator) -> Rows | None:
    """The row arithmetic of a stage operator, or None when the op cannot join a stage."""
    window = window_size(graph, op)
    if op.opcode not in STAGE_OPS or window is None or len(op.outputs) != 1:
        return None
    source, out = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if len(source.shape) != 4 or len(out.shape) != 4 or source.shape[0] != 1 or \
            out.shape[0] != 1 or source.dtype != out.dtype:
        return None
    options = op.builtin_options
    stride = int(options.get("stride_h", 1))
    dilation = int(options.get("dilation_h_factor", 1))
    if stride < 1 or dilation < 1:  # its kernel's prepare refuses it, naming the operator
        return None
    pad = pad_before(int(options.get("padding", 0)), stride, dilation, source.shape[1],
                      window[0], out.shape[1])
    zero_rows = op.opcode in ZERO_ROW_OPS and source.dtype == "int8"
    return Rows(stride, (window[0] - 1) * dilation + 1, pad, source.shape[1], out.shape[1],
                zero_rows)


def stage_chain(model: ir.Model, first: int) -> list[Rows]:
    """Row arithmetic of operators first, first + 1, ... while they form a chain: each reads
    the previous one's output, which no other operator reads and which is no graph output
    (a stage tensor between two operators never exists whole).  Operator `first` may read
    any activation tensor: a graph input or an earlier operator's output."""
    if len(model.subgraphs) != 1:
        return []  # control flow: a stage is only planned in the one-graph timeline
    graph, chain = model.subgraph, []
    readers: dict[int, int] = {}
    for op in graph.operators:
        for t in set(op.inputs):
            readers[t] = readers.get(t, 0) + 1
    ops = graph.operators[first:]
    expected = ops[0].inputs[0] if ops and ops[0].inputs else -1
    if expected < 0 or ir.is_constant(model, graph.tensors[expected]):
        return []
    source = expected
    for op in ops:
        rows = operator_rows(graph, op)
        joined = rows is None and chain and join_input(graph, op, source) == expected
        ends = joined or (rows is None and chain and reduces(model, op, expected))
        if ends:
            rows = Rows(1, 1, 0, chain[-1].output_height, chain[-1].output_height)
        elif rows is None or not op.inputs or op.inputs[0] != expected:
            break
        if chain and (readers.get(expected, 0) != 1 or expected in graph.outputs):
            break  # the previous output would have to stay whole
        chain.append(rows)
        expected = op.outputs[0]
        if ends:
            break  # a join's or reduction's output is E, written band by band or at the end
    return chain


def reduces(model: ir.Model, op: ir.Operator, source: int) -> bool:
    """True when `op` may end a stage as a reduction over `source`, its input 0: an int8
    FULLY_CONNECTED of one batch, its plain int8 filter [outputs, source's elements]."""
    graph = model.subgraph
    if op.opcode not in REDUCE_OPS or len(op.inputs) < 2 or op.inputs[0] != source or \
            len(op.outputs) != 1 or op.inputs[1] < 0:
        return False
    data, out = graph.tensors[source], graph.tensors[op.outputs[0]]
    filters = graph.tensors[op.inputs[1]]
    bias = graph.tensors[op.inputs[2]] if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
    return (data.dtype == out.dtype == filters.dtype == "int8" and len(data.shape) == 4 and
            data.shape[0] == 1 and len(out.shape) == 2 and out.shape[0] == 1 and
            filters.shape == [out.shape[1], ir.element_count(data)] and
            ir.is_constant(model, filters) and op.inputs[1] not in ir.compressed_tensors(model)
            and op.inputs[1] not in ir.filter_layout_tensors(model)  # int16 stream, not int8
            and (bias is None or bias.dtype == "int32"))


def join_input(graph: ir.SubGraph, op: ir.Operator, source: int) -> int | None:
    """The chain input of a residual join: the input of an elementwise `op` that is not
    the stage input `source`, when the other one is and both have the output's shape and
    type (no broadcast, so band rows map one to one); else None."""
    if op.opcode not in JOIN_OPS or len(op.inputs) != 2 or len(op.outputs) != 1 or \
            source not in op.inputs or op.inputs[0] == op.inputs[1]:
        return None
    out = graph.tensors[op.outputs[0]]
    same = all(graph.tensors[t].shape == out.shape and graph.tensors[t].dtype == out.dtype
               for t in op.inputs)
    if not same or len(out.shape) != 4 or out.shape[0] != 1:
        return None
    return op.inputs[1] if op.inputs[0] == source else op.inputs[0]


def chain_input(graph: ir.SubGraph, op: ir.Operator, source: int) -> int:
    """The input of a stage operator the chain feeds (a join's other one is S)."""
    joined = join_input(graph, op, source)
    return op.inputs[0] if joined is None else joined


def carried_tiles(operators: int) -> set[int]:
    """Operators whose tile may keep rows from band to band: those whose tile has a buffer
    of its own (Stage.tile_owner: no tile two operators before or after it)."""
    return {k for k in range(operators - 1) if k < 2 and k + 2 > operators - 2}


def band_spans(height: int, band_rows: int, leading: int = 0) -> list[tuple[int, int]]:
    """[start, stop) of each band of `height` rows: `band_rows` each, the last one the rest;
    or, with `leading`, the first one `leading` rows and every later one `band_rows`."""
    starts = [0, *range(leading, height, band_rows)] if leading else range(0, height, band_rows)
    return [(start, min(height, start + (leading if leading and start == 0 else band_rows)))
            for start in starts]


def band_steps(chain: list[Rows], band_rows: int, rolling: bool = False,
               leading: int = 0) -> list[list[BandStep]]:
    """Per band of the last operator's output rows (band_spans), the step of every operator.
    `rolling`: an operator whose tile has a buffer of its own (carried_tiles) computes only
    rows no earlier band computed, the rows its reader shares with the previous band kept
    at the top of the tile (runtime_c/tflm_stage.c moves them there), and a convolution
    reading a tile reads rows below the tensor as zero-point rows the runtime writes
    (Rows.zero_rows), so a last band may have the other bands' shape (one prepare less)."""
    carried = carried_tiles(len(chain)) if rolling else set()
    computed: dict[int, int] = {}  # operator -> the row after the last one it computed
    bands = []
    for out_start, out_stop in band_spans(chain[-1].output_height, band_rows, leading):
        steps = []
        for k in reversed(range(len(chain))):
            rows = chain[k]
            if k in carried and out_start < computed.get(k, 0) < out_stop:
                out_start = computed[k]  # the rows above are in the tile already
            computed[k] = out_stop
            in_start, in_stop = rows.input_rows(out_start, out_stop)
            if rolling and k > 0 and rows.zero_rows:
                # no more rows than the tensor has (runtime_c/tflm_stage.c steps_valid)
                in_stop = max(in_stop, min(rows.unclipped_stop(out_stop),
                                           in_start + rows.input_height))
            pad_top = rows.pad + in_start - out_start * rows.stride
            steps.append(BandStep(in_start, in_stop - in_start, out_start,
                                  out_stop - out_start, pad_top))
            out_start, out_stop = in_start, min(in_stop, rows.input_height)
        bands.append(steps[::-1])
    return bands


def _row_bytes(tensor: ir.Tensor) -> int:
    return ir.tensor_bytes(tensor) // max(1, tensor.shape[1])


def make_stage(model: ir.Model, last: int, band_rows: int, first: int = 0,
               rolling: bool = False, leading: int = 0) -> Stage:
    """The stage of operators first..last run in bands of `band_rows` rows of its output
    (band_steps: `rolling`, `leading`)."""
    graph = model.subgraph
    chain = stage_chain(model, first)[:last + 1 - first]
    ops = graph.operators[first:last + 1]
    tensors = (ops[0].inputs[0], *(op.outputs[0] for op in ops))
    bands = band_steps(chain, band_rows, rolling, leading)
    tiles = tuple((tensors[k], max(band[k].in_rows for band in bands) *
                   _row_bytes(graph.tensors[tensors[k]])) for k in range(1, len(ops)))
    plain = [operator_macs(graph, op) for op in ops]
    computed = sum(plain[k] * sum(band[k].out_rows for band in bands) // chain[k].output_height
                   for k in range(len(ops)))
    end = graph.tensors[tensors[-1]]
    sums = ir.element_count(end) if ops[-1].opcode in REDUCE_OPS else 0
    ending = "reduction" if sums else "residual join" if ops[-1].opcode in JOIN_OPS else "chain"
    return Stage(first, last, band_rows, tensors, tuple(tuple(b) for b in bands), tiles,
                 computed, sum(plain), sums, ending, rolling, leading)


def candidates(model: ir.Model, spans=lambda first, last: True):
    """Every stage worth planning: two operators or more of a chain whose (first, last)
    operators `spans` accepts, bands up to half the end tensor's height (one band per
    distinct band count)."""
    for first in range(len(model.subgraph.operators) if len(model.subgraphs) == 1 else 0):
        chain = stage_chain(model, first)
        for last in range(1, len(chain)):
            if not spans(first, first + last):
                continue
            height = chain[last].output_height
            counts = set()
            for band_rows in range(1, height // 2 + 1):
                if math.ceil(height / band_rows) not in counts:
                    counts.add(math.ceil(height / band_rows))
                    yield from _variants(model, make_stage(model, first + last, band_rows, first))


def _variants(model: ir.Model, stage: Stage):
    """The stage, and its forms with the first band the rest (its last band may then have
    the middle bands' shape, so the operators are prepared no more often) and rolling ones
    (band_steps), each whose bands differ from those before."""
    height = sum(band[-1].out_rows for band in stage.bands)
    rest = height - stage.band_rows * (len(stage.bands) - 1)
    seen = [stage.bands]
    yield stage
    for leading, rolling in itertools.product((0, rest) if 0 < rest < stage.band_rows else (0,),
                                              (False, True)):
        other = make_stage(model, stage.last, stage.band_rows, stage.first, rolling, leading)
        if other.bands not in seen:
            seen.append(other.bands)
            yield other


def model_macs(model: ir.Model) -> int:
    return sum(operator_macs(graph, op) for graph in model.subgraphs for op in graph.operators)


@dataclass(frozen=True)
class Choice:
    stage: Stage | None
    arena_bytes: int  # the cost of the choice (the arena, or the head when not modelled)
    arena_without: int  # the same without a stage
    extra_macs: int  # MACs recomputed in the halos


# Counted in (first, last operator, band count) groups: a group's forms (_variants) differ
# in their arena by a few tail bytes at most, so they go through together.
SHORTLIST = 4  # groups with the smallest planned heads whose whole arena is computed
PLANNED = 12  # groups with the smallest head bounds that are planned


def extra_instructions(model: ir.Model, stage: Stage, kernels: str) -> float:
    """Estimated instructions the stage adds to its operators run whole: the halo rows
    each band recomputes, each band's own kernel calls (tflm_gen.instructions), and a
    reduction's plain loop in place of a tag's kernel."""
    graph, extra = model.subgraph, 0.0
    for k, op in enumerate(graph.operators[stage.first:stage.last + 1]):
        reduction = op.opcode in REDUCE_OPS
        # A reduction's bands run the plain loop of tflm_fully_connected_band on every tag.
        banded = "reference" if reduction else kernels
        height = graph.tensors[op.inputs[0] if reduction else op.outputs[0]].shape[1]
        extra -= call_instructions(graph, op, kernels)
        extra += sum(call_instructions(graph, op, banded, band[k].out_rows / height)
                     for band in stage.bands)
    return extra


def choose_stage(model: ir.Model, memory: str, arena_of=None,
                 kernels: str = "reference") -> Choice:
    """The stage `--memory` asks for: small, the smallest arena; balanced, the smallest
    whose estimated instructions on `kernels` are at most 10% above the model's; fast,
    none; of equal arenas, the fewest estimated extra instructions.  Candidates are ranked by their head bound (plan.head_profile: no placement,
    cheap), the best PLANNED by their planned head, then the shortlist by
    `arena_of(stage or None)` (the whole arena: a stage also costs tail bytes, each band
    shape's kernel parameters), so a stage that does not lower the arena is never taken."""
    from tflm_gen.plan import head_profile, make_plan

    if memory not in MEMORY_CHOICES:
        raise InputError(f"--memory must be one of {', '.join(MEMORY_CHOICES)}, not {memory!r}")
    if memory == "fast":
        return Choice(None, 0, 0, 0)  # no stage: nothing is computed
    arena_of = arena_of or (lambda stage: make_plan(model, stage=stage).head_bytes)
    # Ties (the same arena) go to the fewest estimated extra instructions: of the rolling
    # forms, which recompute nothing, the fewest kernel calls.
    bounded = sorted((max(head_profile(model, stage=stage), default=0) + stage_data_bytes(stage),
                      extra_instructions(model, stage, kernels), index, stage)
                     for index, stage in enumerate(_allowed(model, memory, kernels)))
    ranked = sorted((make_plan(model, stage=stage).head_bytes + stage_data_bytes(stage),
                     extra, index, stage) for _, extra, index, stage in _groups(bounded, PLANNED))
    without = arena_of(None)
    best, best_extra = Choice(None, without, without, 0), 0.0
    for _, extra, _, stage in _groups(ranked, SHORTLIST):
        cost = arena_of(stage)
        if (cost, extra) < (best.arena_bytes, best_extra):
            best, best_extra = Choice(stage, cost, without, stage.macs - stage.plain_macs), extra
    return best


def _groups(ranked: list[tuple], count: int) -> list[tuple]:
    """The entries (..., stage) of the first `count` (first, last, band count) groups in
    `ranked`'s order."""
    keys: list[tuple[int, int, int]] = []
    for *_, stage in ranked:
        key = (stage.first, stage.last, len(stage.bands))
        if key not in keys and len(keys) < count:
            keys.append(key)
    return [entry for entry in ranked
            if (entry[-1].first, entry[-1].last, len(entry[-1].bands)) in keys]


def _allowed(model: ir.Model, memory: str, kernels: str) -> list[Stage]:
    """The candidates `memory` allows that hold a step of the model's highest need (a stage
    changes nothing outside its steps, so no other can lower the head)."""
    from tflm_gen.plan import head_profile

    profile = head_profile(model)
    peak = max(profile, default=0)
    budget = BALANCED_EXTRA_INSTRUCTIONS * model_instructions(model, kernels)
    # A reduction's bands run a plain loop: on a tag with its own FULLY_CONNECTED, QEMU
    # counts far more than the estimate (micro_speech, cmsis: +30%), so balanced skips it.
    # A residual join on such a tag measured +9.9% on ResNet (12.5 M -> 13.8 M instructions
    # on the M4; reference +3.7%): inside the budget, but a tag is chosen for speed (issue
    # #18's ResNet goal is 13.5 M), so balanced leaves joins to the reference kernels and
    # `small`.
    return [stage for stage in candidates(
        model, lambda first, last: max(profile[first:last + 1], default=0) == peak)
            if memory == "small" or (extra_instructions(model, stage, kernels) <= budget and
                                     not ((stage.sums or stage.ending == "residual join")
                                          and kernels != "reference"))]


def read_stage(model: ir.Model) -> Stage | None:
    """The stage a device model carries in its metadata (as make_stage wrote it), or None."""
    for name, buffer in model.metadata:
        if name == STAGE_METADATA:
            words = np.frombuffer(model.buffers[buffer].data, "<i4").tolist()
            if len(words) < 4 or words[0] != STAGE_FORMAT:
                raise ModelError(f"{STAGE_METADATA}: format {words[:1]} is not ours")
            first, count, bands = words[1:4]
            in_range = 0 <= first < len(model.subgraph.operators)
            if not in_range or not 1 <= count <= len(stage_chain(model, first)):
                raise ModelError(f"{STAGE_METADATA}: operators {first}+{count} are no chain")
            if bands < 1 or len(words) != 4 + STEP_WORDS * count * bands:
                raise ModelError(f"{STAGE_METADATA}: {len(words)} words for {bands} bands")
            return _stage_of_words(model, first, first + count - 1, words)
    return None


def _stage_of_words(model: ir.Model, first: int, last: int, words: list[int]) -> Stage:
    """The stage whose metadata is `words`: make_stage's of E's rows per band (the first
    band's own count when it differs: `leading`), plain or rolling; when none is (a model
    not of ours), the plain one of band 0's rows, whose words the runtime checks."""
    ops = last - first + 1
    rows = [words[4 + STEP_WORDS * (band * ops + ops - 1) + 3] for band in range(words[3])]
    shapes = [(rows[0], 0), *([(rows[1], rows[0])] if len(rows) > 1 else [])]
    for (band_rows, leading), rolling in itertools.product(shapes, (False, True)):
        stage = make_stage(model, last, band_rows, first, rolling, leading)
        if stage.words() == words:
            return stage
    return make_stage(model, last, rows[0], first)


def stage_clearance(model: ir.Model, stage: Stage) -> int:
    """Bytes of E that must lie below S's offset when E is placed below S: the stage
    writes band b's rows of E after its first operator has read band b's rows of S, and
    only later bands read S again (from their first input row on); as for one convolution
    (tflm_gen.overlap), E may run up into the rows of S no later band reads."""
    graph = model.subgraph
    if stage.sums:
        return 0  # a reduction writes E in the last band, after every read of S
    source, end = graph.tensors[stage.tensors[0]], graph.tensors[stage.tensors[-1]]
    needed = [band[0].in_start for band in stage.bands[1:]] + [source.shape[1]]
    written = [band[-1].out_start + band[-1].out_rows for band in stage.bands]
    return max(0, max(rows * _row_bytes(end) - start * _row_bytes(source)
                      for rows, start in zip(written, needed)))


def embed_stage(model: ir.Model, stage: Stage | None) -> ir.Model:
    return model.with_metadata_words(STAGE_METADATA, stage.words() if stage else None)


def prepared_bands(stage: Stage) -> list[tuple[int, BandStep]]:
    """(operator, step) of every band the runtime prepares, in its order: per band, per
    operator, only a shape (input rows, output rows, top padding) not prepared before
    (runtime_c/tflm_stage.c same_shape_band)."""
    seen, prepared = set(), []
    for band in stage.bands:
        for k, step in enumerate(band):
            reduction = stage.sums and k == len(band) - 1  # prepared once, whole
            key = (k,) if reduction else (k, step.in_rows, step.out_rows, step.pad_top)
            if key not in seen:
                seen.add(key)
                prepared.append((stage.first + k, step))
    return prepared


def band_graph(graph: ir.SubGraph, op: ir.Operator, step: BandStep) -> ir.SubGraph:
    """A copy of the graph whose op input 0 (both inputs of a join) and output hold only the
    band's rows: what the op's prepare sees while the stage prepares that band (a reduction
    is prepared on whole tensors)."""
    if op.opcode in REDUCE_OPS:
        return graph
    view = copy.copy(graph)
    view.tensors = list(graph.tensors)
    inputs = op.inputs if op.opcode in JOIN_OPS else op.inputs[:1]  # a join's S too
    for t, rows in (*((t, step.in_rows) for t in inputs), (op.outputs[0], step.out_rows)):
        shape = list(graph.tensors[t].shape)
        view.tensors[t] = dataclasses.replace(graph.tensors[t], shape=[shape[0], rows, *shape[2:]])
    return view


def stage_data_bytes(stage: Stage | None) -> int:
    """The stage's tail record: one user-data offset per (band, operator), then a
    reduction's running sums."""
    if stage is None:
        return 0
    return 4 * (len(stage.bands) * (stage.last - stage.first + 1) + stage.sums)


def widen_lifetimes(lifetimes: dict[int, tuple[int, int]],
                    stage: Stage | None) -> dict[int, tuple[int, int]]:
    """The stage seen as one operator: every stage tensor lives over all its steps (steps
    are operator indices: a stage is only made for one-subgraph models)."""
    if stage is None:
        return lifetimes
    widened = dict(lifetimes)
    for t in stage.tensors:
        first, last = widened.get(t, (stage.first, stage.last))
        widened[t] = (min(first, stage.first), max(last, stage.last))
    return widened
