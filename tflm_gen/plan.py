"""The generator's memory planner: finds a tight placement of every activation tensor in
the head and embeds it in the model as `OfflineMemoryAllocation` metadata, so the device
does not plan (and plans better than its greedy planner could).

Beyond greedy first-fit-decreasing:
  * several orders are tried and the smallest head is kept; when it is above the lower
    bound, a bottom-up search with a node-count limit (deterministic) looks for a lower one;
  * tensors share memory where semantics allow: a RESHAPE/SQUEEZE/EXPAND_DIMS output is the
    same bytes as its input, and an elementwise op may write over an input that dies there;
  * an output may partly overlap the consumed part of its input (convolutions, pooling,
    QUANTIZE/DEQUANTIZE: tflm_gen.overlap), modelled per pair of buffers as the bytes of
    the output that must stay below the input's offset (Buffer.clearance).

Tensors of all subgraphs are planned together, by global index (tflm_gen.model.lifetimes):
a subgraph's tensors live while the operator that runs it does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tflm_gen.c_headers import ARENA_ALIGN
from tflm_gen.compress import keeps_pixel_order
from tflm_gen.model import ir
from tflm_gen.model.lifetimes import model_lifetimes, tensor_bases
from tflm_gen.op_descriptors import ops_with
from tflm_gen.overlap import backward_start
from tflm_gen.overlap import clearance as overlap_clearance

OFFLINE_PLAN_NAME = "OfflineMemoryAllocation"
ALIGN = ARENA_ALIGN  # runtime_c/tflm_arena.h TFLM_ARENA_ALIGN
ALIAS_OPS = ops_with("alias")
# Ops whose kernels (ours and TFLM's) read element i before writing element i, with no
# other reads of that input element afterwards: safe to compute in place.
IN_PLACE_OPS = ops_with("in_place")
ORDER_TRIALS = 64
# First-fit placements the bottom-up search may try after the greedy orders (a count, not a time:
# the same model always gets the same plan).
SEARCH_NODES = 10000


def aligned(size: int) -> int:
    return (size + ALIGN - 1) // ALIGN * ALIGN


@dataclass
class Buffer:
    """One block of the head: a group of tensors that share bytes."""

    tensors: list[int]
    size: int
    first: int
    last: int
    offset: int = -1
    # Other buffer (position in the plan) -> bytes of this one that must stay below that
    # one's offset when this one is placed lower: a partial overlap (tflm_gen.overlap).
    clearance: dict[int, int] = field(default_factory=dict)
    # Other buffer -> the fewest bytes this one's offset may lie above that one's when it
    # runs over that one's end: an output written backwards over its consumed input
    # (tflm_gen.overlap.backward_start).
    above: dict[int, int] = field(default_factory=dict)

    def extent_below(self, other: int) -> int:
        return self.clearance.get(other, self.size)

    def lowest_above(self, other: Buffer, index: int) -> int:
        """Offset relative to `other`'s from which this buffer may lie above it
        (`index`: other's position in the plan)."""
        return min(other.size, self.above.get(index, other.size))


@dataclass
class Plan:
    buffers: list[Buffer] = field(default_factory=list)
    head_bytes: int = 0
    # The op-by-op bound: tensors counted separately, every operator keeping its whole input
    # and output; partial overlaps (tflm_gen.overlap) go below it.
    lower_bound_bytes: int = 0
    # Tensors whose offset the runtime chooses (-1 in the offline plan): a patch stage's
    # tiles, so that TFLM, which knows no stage, gives them their whole size elsewhere.
    online: frozenset[int] = frozenset()

    def tensor_offsets(self, tensor_count: int) -> list[int]:
        offsets = [-1] * tensor_count
        for buffer in self.buffers:
            for tensor in buffer.tensors:
                offsets[tensor] = -1 if tensor in self.online else buffer.offset
        return offsets


def all_tensors(model: ir.Model) -> list[ir.Tensor]:
    """The tensors of every subgraph, by global index."""
    return [tensor for graph in model.subgraphs for tensor in graph.tensors]


def planned_lifetimes(model: ir.Model, stage=None) -> dict[int, tuple[int, int]]:
    """Lifetimes of the tensors the runtime places in the head, by global index (variables
    and resource handles live in the tail); a patch stage's tensors live over all its
    operators (tflm_gen.patches)."""
    from tflm_gen.patches import widen_lifetimes

    tensors = all_tensors(model)
    lifetimes = widen_lifetimes(model_lifetimes(model)[0], stage)
    return {t: span for t, span in lifetimes.items()
            if not tensors[t].is_variable and tensors[t].dtype != "resource"}


class _Groups:
    """Union-find over tensors; each root keeps its group's lifetime and size."""

    def __init__(self, model: ir.Model, lifetimes: dict[int, tuple[int, int]]):
        tensors = all_tensors(model)
        self.parent = {t: t for t in lifetimes}
        self.span = {t: list(span) for t, span in lifetimes.items()}
        self.size = {t: aligned(ir.tensor_bytes(tensors[t])) for t in lifetimes}

    def root(self, t: int) -> int:
        while self.parent[t] != t:
            t = self.parent[t]
        return t

    def merge(self, a: int, b: int) -> None:
        a, b = self.root(a), self.root(b)
        if a == b:
            return
        self.parent[b] = a
        self.span[a] = [min(self.span[a][0], self.span[b][0]), max(self.span[a][1], self.span[b][1])]
        self.size[a] = max(self.size[a], self.size[b])

    def members(self) -> list[list[int]]:
        groups: dict[int, list[int]] = {}
        for t in sorted(self.parent):
            groups.setdefault(self.root(t), []).append(t)
        return list(groups.values())


def _in_place_input(graph: ir.SubGraph, base: int, op: ir.Operator, step: int,
                    groups: _Groups) -> int | None:
    """A (global) input of `op` whose bytes the output may take over, or None."""
    out = graph.tensors[op.outputs[0]]
    inputs = [t for t in op.inputs if t >= 0 and base + t in groups.parent]
    for t in inputs:
        tensor = graph.tensors[t]
        same_layout = tensor.shape == out.shape and tensor.dtype == out.dtype
        dies_here = groups.span[groups.root(base + t)][1] == step
        shared = sum(groups.root(base + u) == groups.root(base + t) for u in inputs) > 1
        # A graph input or output "dies" at the last step only because lifetimes end
        # there; the caller reads it after invoke, so neither it nor a tensor aliasing its
        # bytes (a RESHAPE of it, or that it is a RESHAPE of) may be overwritten.
        boundary = any(groups.root(base + u) == groups.root(base + t)
                       for u in [*graph.inputs, *graph.outputs] if base + u in groups.parent)
        if same_layout and dies_here and not shared and not boundary:
            return base + t
    return None


def share_buffers(model: ir.Model, lifetimes: dict[int, tuple[int, int]],
                  stage=None) -> list[list[int]]:
    """Groups of tensors (global indices) that can live in one buffer.  No operator of a
    patch stage writes in place: its join's inputs are a tile and S, which later bands
    still read (tflm_gen.patches)."""
    groups = _Groups(model, lifetimes)
    op_spans = model_lifetimes(model)[1]
    for s, (graph, base) in enumerate(zip(model.subgraphs, tensor_bases(model))):
        for position, op in enumerate(graph.operators):
            out = base + op.outputs[0] if len(op.outputs) == 1 and op.outputs[0] >= 0 else -1
            if out not in groups.parent or not op.inputs:
                continue
            if op.opcode in ALIAS_OPS and op.inputs[0] >= 0 and base + op.inputs[0] in groups.parent:
                groups.merge(base + op.inputs[0], out)
            elif op.opcode in IN_PLACE_OPS and not (
                    stage is not None and s == 0 and stage.first <= position <= stage.last):
                source = _in_place_input(graph, base, op, op_spans[(s, position)][1], groups)
                if source is not None:
                    groups.merge(source, out)
    return groups.members()


def _merge_tiles(groups: list[list[int]], stage) -> list[list[int]]:
    """The groups with a patch stage's tiles of one buffer together (Stage.tile_owner)."""
    if stage is None:
        return groups
    merged: dict[int, list[int]] = {}
    for group in groups:
        owner = next((stage.tile_owner(t) for t in group if t in stage.tiles()), None)
        merged.setdefault(group[0] if owner is None else -1 - owner, []).extend(group)
    return [sorted(group) for group in merged.values()]


def _forbidden(buffers: list[Buffer], placed: list[int], index: int) -> list[tuple[int, int]]:
    """Open ranges of offsets where buffer `index` would clash with a placed buffer live at
    the same time (narrowed where the two may partly overlap)."""
    buffer = buffers[index]
    ranges = []
    for other in placed:
        b = buffers[other]
        if b.first <= buffer.last and buffer.first <= b.last:
            # Below `b`: whole, or by a partial overlap of either kind; above it likewise.
            low = b.offset - min(buffer.extent_below(other), b.lowest_above(buffer, index))
            high = b.offset + min(b.extent_below(index), buffer.lowest_above(b, other))
            ranges.append((low, high))
    return ranges


def _first_fit(buffers: list[Buffer], placed: list[int], index: int) -> int:
    """Lowest offset where buffer `index` fits beside the placed buffers."""
    ranges = _forbidden(buffers, placed, index)
    for candidate in sorted({0, *(high for _, high in ranges)}):
        if candidate >= 0 and all(not low < candidate < high for low, high in ranges):
            return candidate
    return 0  # unreachable: the highest end is always free


def _place(buffers: list[Buffer], order: list[int]) -> int:
    placed: list[int] = []
    for index in order:
        buffers[index].offset = _first_fit(buffers, placed, index)
        placed.append(index)
    return max((b.offset + b.size for b in buffers), default=0)


def _peak(buffers: list[Buffer]) -> int:
    """Most bytes live at one step, less what partial overlaps may save there: no placement
    of these buffers can use less."""
    return max(step_bytes(buffers), default=0)


def step_bytes(buffers: list[Buffer]) -> list[int]:
    """Per step, the bytes live there less what partial overlaps may save there."""
    steps = max((b.last for b in buffers), default=-1) + 1
    saved = [0] * steps
    for buffer in buffers:
        # The bytes an output and its input span together, placed below it or above it.
        unions = [(buffers[o], max(buffer.size, buffers[o].size + c))
                  for o, c in buffer.clearance.items()]
        unions += [(buffers[o], max(buffers[o].size, start + buffer.size))
                   for o, start in buffer.above.items()]
        for source, union in unions:
            # One step for an operator's input and output; every step of a patch stage.
            for step in range(max(buffer.first, source.first), min(buffer.last, source.last) + 1):
                saved[step] = max(saved[step], buffer.size + source.size - union)
    return [sum(b.size for b in buffers if b.first <= s <= b.last) - saved[s]
            for s in range(steps)]


def _orders(buffers: list[Buffer], trials: int):
    """Candidate placement orders: classic heuristics, then seeded perturbations."""
    indices = range(len(buffers))
    yield sorted(indices, key=lambda i: (-buffers[i].size, buffers[i].first))
    yield sorted(indices, key=lambda i: (-buffers[i].size * (buffers[i].last - buffers[i].first + 1), i))
    yield sorted(indices, key=lambda i: (-(buffers[i].last - buffers[i].first), -buffers[i].size))
    yield sorted(indices, key=lambda i: (buffers[i].first, -buffers[i].size))
    # Later buffers first: an output placed below its input's offset (a partial overlap)
    # must be placed before the input, and chains of them descend.
    yield sorted(indices, key=lambda i: (-buffers[i].size, -buffers[i].last))
    yield sorted(indices, key=lambda i: (-buffers[i].last, -buffers[i].size))
    rng = random.Random(0)
    for _ in range(trials):
        noise = {i: rng.uniform(0.7, 1.3) for i in indices}
        yield sorted(indices, key=lambda i: -buffers[i].size * noise[i])


def _caller_visible(model: ir.Model, positions: dict[int, int], step: int,
                    last_step: int) -> set[int]:
    """Buffers no operator may write over at `step`: those holding a graph output, a
    subgraph's inputs, or the model's inputs at the last step (the caller reads them after
    invoke).  The model's inputs are reused after their last reader anyway, by any plan."""
    visible = set()
    for s, (graph, base) in enumerate(zip(model.subgraphs, tensor_bases(model))):
        held = [*graph.outputs, *(graph.inputs if s > 0 or step == last_step else [])]
        visible |= {positions[base + t] for t in held if base + t in positions}
    return visible


def _coded_keeps_order(model: ir.Model, graph: ir.SubGraph, base: int, op: ir.Operator,
                       coded: set[int]) -> bool:
    """False when the op decodes a compressed filter in passes over every pixel (several
    blocks, or dead channels skipped): each pass reads the whole input again, so its output
    may not overlap it (kernels_c/tflm_decode.h)."""
    return all(keeps_pixel_order(op.opcode, model.buffers[graph.tensors[t].buffer].data)
               for t in op.inputs if t >= 0 and base + t in coded)


def add_partial_overlaps(model: ir.Model, buffers: list[Buffer], backward: bool = True,
                         stage=None) -> None:
    """Records in each output buffer how little of it must lie below its input's buffer
    (and, with `backward`, how far above its start it may begin), for the operators
    tflm_gen.overlap allows to write over their consumed input (not inside a patch stage,
    whose input and output stay whole while it runs)."""
    position = {t: i for i, buffer in enumerate(buffers) for t in buffer.tensors}
    op_spans = model_lifetimes(model)[1]
    last_step = max((last for _, last in op_spans.values()), default=0)
    coded = ir.compressed_tensors(model)
    for s, (graph, base) in enumerate(zip(model.subgraphs, tensor_bases(model))):
        for index, op in enumerate(graph.operators):
            clearance = overlap_clearance(graph, op)
            in_stage = stage is not None and s == 0 and stage.first <= index <= stage.last
            if (clearance is None or in_stage
                    or not _coded_keeps_order(model, graph, base, op, coded)):
                continue
            source, out = base + op.inputs[0], base + op.outputs[0]
            if source not in position or out not in position:
                continue
            below, above = position[out], position[source]
            step = op_spans[(s, index)][1]
            consumed = buffers[above].last == step and buffers[below].first == step
            if consumed and below != above and \
                    above not in _caller_visible(model, position, step, last_step):
                buffers[below].clearance[above] = min(buffers[below].size, aligned(clearance))
                start = backward_start(graph, op) if backward else None
                if start is not None:
                    buffers[below].above[above] = aligned(start)
    if stage is not None:
        _add_stage_overlap(model, buffers, position, stage, last_step)


def _add_stage_overlap(model: ir.Model, buffers: list[Buffer], position: dict[int, int],
                       stage, last_step: int) -> None:
    """A patch stage's output may run up into the rows of its input no later band reads
    (tflm_gen.patches.stage_clearance), unless the input lives on after the stage (a later
    reader, or the caller after invoke)."""
    from tflm_gen.patches import stage_clearance

    source, end = position[stage.tensors[0]], position[stage.tensors[-1]]
    consumed = buffers[source].last == stage.last and buffers[end].first == stage.first
    visible = _caller_visible(model, position, stage.last, last_step)
    if consumed and source not in visible and source != end:
        buffers[end].clearance[source] = min(buffers[end].size,
                                             aligned(stage_clearance(model, stage)))


def _bottom_up_keys(buffers: list[Buffer]):
    """Tie-breaks among the buffers that fit lowest: classic ones, then seeded noise."""
    yield lambda i: (not buffers[i].clearance, buffers[i].size)
    yield lambda i: (not buffers[i].clearance, -buffers[i].size)
    yield lambda i: (buffers[i].size, buffers[i].first)
    yield lambda i: (-buffers[i].size, buffers[i].first)
    yield lambda i: (-buffers[i].last, buffers[i].size)
    rng = random.Random(0)
    while True:
        noise = [rng.random() for _ in buffers]
        yield lambda i, noise=noise: noise[i]


def _bottom_up(buffers: list[Buffer], key, best: int) -> tuple[int, int]:
    """Grows a plan from offset 0 up: each time, of the buffers left, the one whose first
    fit is lowest (ties by `key`).  Any plan, its buffers placed by increasing offset, is
    rebuilt this way at or below its head, so good tie-breaks find near-optimal plans.
    Returns the head (or `best` once it cannot beat it) and the first fits it cost."""
    placed: list[int] = []
    unplaced = list(range(len(buffers)))
    head = cost = 0
    while unplaced:
        cost += len(unplaced)
        offset, index = min((_first_fit(buffers, placed, i), key(i), i) for i in unplaced)[::2]
        head = max(head, offset + buffers[index].size)
        if head >= best:
            return best, cost
        buffers[index].offset = offset
        placed.append(index)
        unplaced.remove(index)
    return head, cost


def _search(buffers: list[Buffer], bound: int, best: int, node_limit: int) -> list[int] | None:
    """Bottom-up constructions with several tie-breaks, keeping the smallest head below
    `best` (the greedy result): the offsets found, or None.  Deterministic: it stops after
    `node_limit` first-fit placements or at the lower bound, never on a clock."""
    found: list[int] | None = None
    nodes = 0
    for key in _bottom_up_keys(buffers):
        if nodes >= node_limit or best <= bound:
            break
        head, cost = _bottom_up(buffers, key, best)
        nodes += cost
        if head < best:
            best, found = head, [b.offset for b in buffers]
    return found


def _planned_bytes(tensors: list[ir.Tensor], tiles: dict[int, int], t: int) -> int:
    """The head bytes of tensor t: its tile's within a patch stage, else its own."""
    return aligned(tiles.get(t, ir.tensor_bytes(tensors[t])))


def head_buffers(model: ir.Model, lifetimes: dict[int, tuple[int, int]], overlaps: bool = True,
                 backward: bool = True, stage=None) -> list[Buffer]:
    """The buffers to place (tensors that share bytes grouped), with their partial
    overlaps; a patch stage's tiles take their rows' bytes."""
    tensors = all_tensors(model)
    tiles = stage.tiles() if stage is not None else {}
    buffers = []
    for group in _merge_tiles(share_buffers(model, lifetimes, stage), stage):
        spans = [lifetimes[t] for t in group]
        size = max(_planned_bytes(tensors, tiles, t) for t in group)
        buffers.append(Buffer(group, size, min(s[0] for s in spans), max(s[1] for s in spans)))
    if overlaps:
        add_partial_overlaps(model, buffers, backward, stage)
    return buffers


def head_profile(model: ir.Model, backward: bool = True, stage=None) -> list[int]:
    """Per step, the fewest head bytes any placement needs there (step_bytes); its maximum
    bounds the head: cheap, no placement."""
    lifetimes = planned_lifetimes(model, stage)
    return step_bytes(head_buffers(model, lifetimes, True, backward, stage))


def make_plan(model: ir.Model, trials: int = ORDER_TRIALS, overlaps: bool = True,
              search_nodes: int = SEARCH_NODES, backward: bool = True, stage=None) -> Plan:
    """The smallest head found: buffer sharing and partial overlaps, the best of several
    greedy orders, then a bounded branch and bound below it.  `backward=False` for a plan
    TFLM's kernels run: they never walk an output backwards over its input.  With a patch
    stage (tflm_gen.patches.Stage), the tensors inside it take only their tile's bytes."""
    lifetimes = planned_lifetimes(model, stage)
    tensors = all_tensors(model)
    tiles = stage.tiles() if stage is not None else {}
    buffers = head_buffers(model, lifetimes, overlaps, backward, stage)
    bound = _peak(buffers)
    best_head, best_offsets = None, []
    for order in _orders(buffers, trials):
        head = _place(buffers, order)
        if best_head is None or head < best_head:
            best_head, best_offsets = head, [b.offset for b in buffers]
        if head <= bound:
            break
    if best_head is not None and best_head > bound and search_nodes > 0:
        better = _search(buffers, bound, best_head, search_nodes)
        if better is not None:
            best_offsets = better
            best_head = max(o + b.size for o, b in zip(better, buffers))
    for buffer, offset in zip(buffers, best_offsets):
        buffer.offset = offset
    _walk_forward(buffers, best_head or 0)
    separate = [Buffer([t], _planned_bytes(tensors, tiles, t), *lifetimes[t]) for t in lifetimes]
    return Plan(buffers, best_head or 0, _peak(separate), frozenset(tiles))


def _walk_forward(buffers: list[Buffer], head: int) -> None:
    """Moves each output the placement put inside its input's buffer (an output written
    backwards, tflm_gen.overlap.backward_start) to the lowest offset where it fits without
    that overlap, when the head stays `head`: the kernels then walk it forwards, on their
    faster paths (vww op 25, DEPTHWISE 3x3 at 3x3: 80,381 -> 70,461 est. cycles on the M4),
    and the overlap stays only where the peak needs it."""
    for index, buffer in enumerate(buffers):
        inside = [other for other in buffer.above
                  if buffers[other].offset < buffer.offset < buffers[other].offset + buffers[other].size]
        if not inside:
            continue
        above, buffer.above = buffer.above, {}
        offset = _first_fit(buffers, [i for i in range(len(buffers)) if i != index], index)
        if offset + buffer.size <= head:
            buffer.offset = offset
        buffer.above = above


def offline_plan_words(plan: Plan, tensor_count: int) -> list[int]:
    """The metadata buffer: format version 1, subgraph 0, n, then n offsets (-1: online)
    for the tensors of all subgraphs in order (TFLM's format)."""
    return [1, 0, tensor_count, *plan.tensor_offsets(tensor_count)]


def embed_plan(model: ir.Model, plan: Plan) -> ir.Model:
    """A copy of the model whose metadata carries the plan (replacing an earlier one)."""
    import copy

    import numpy as np

    planned = copy.deepcopy(model)
    words = offline_plan_words(plan, len(all_tensors(planned)))
    planned.buffers.append(ir.Buffer(np.asarray(words, dtype="<i4").tobytes()))
    planned.metadata = [m for m in planned.metadata if m[0] != OFFLINE_PLAN_NAME]
    planned.metadata.append((OFFLINE_PLAN_NAME, len(planned.buffers) - 1))
    return planned
