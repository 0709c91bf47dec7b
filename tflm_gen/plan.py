"""The generator's memory planner: finds a tight placement of every activation tensor in
the head and embeds it in the model as `OfflineMemoryAllocation` metadata, so the device
does not plan (and plans better than its greedy planner could).

Two ideas beyond greedy first-fit-decreasing:
  * several orders are tried and the smallest head is kept;
  * tensors share memory where semantics allow: a RESHAPE/SQUEEZE/EXPAND_DIMS output is the
    same bytes as its input, and an elementwise op may write over an input that dies there.

Tensors of all subgraphs are planned together, by global index (tflm_gen.model.lifetimes):
a subgraph's tensors live while the operator that runs it does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tflm_gen.model import ir
from tflm_gen.model.lifetimes import model_lifetimes, tensor_bases

OFFLINE_PLAN_NAME = "OfflineMemoryAllocation"
ALIGN = 8  # runtime_c/tflm_arena.h TFLM_ARENA_ALIGN
ALIAS_OPS = {"RESHAPE", "SQUEEZE", "EXPAND_DIMS"}
# Ops whose kernels (ours and TFLM's) read element i before writing element i, with no
# other reads of that input element afterwards: safe to compute in place.
IN_PLACE_OPS = {"ADD", "SUB", "MUL", "RELU", "RELU6", "RELU_N1_TO_1", "LOGISTIC", "TANH",
                "LEAKY_RELU", "HARD_SWISH", "ABS", "NEG"}
ORDER_TRIALS = 64


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


@dataclass
class Plan:
    buffers: list[Buffer] = field(default_factory=list)
    head_bytes: int = 0
    lower_bound_bytes: int = 0  # tensors counted separately, no sharing

    def tensor_offsets(self, tensor_count: int) -> list[int]:
        offsets = [-1] * tensor_count
        for buffer in self.buffers:
            for tensor in buffer.tensors:
                offsets[tensor] = buffer.offset
        return offsets


def all_tensors(model: ir.Model) -> list[ir.Tensor]:
    """The tensors of every subgraph, by global index."""
    return [tensor for graph in model.subgraphs for tensor in graph.tensors]


def planned_lifetimes(model: ir.Model) -> dict[int, tuple[int, int]]:
    """Lifetimes of the tensors the runtime places in the head, by global index (variables
    and resource handles live in the tail)."""
    tensors = all_tensors(model)
    return {t: span for t, span in model_lifetimes(model)[0].items()
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


def share_buffers(model: ir.Model, lifetimes: dict[int, tuple[int, int]]) -> list[list[int]]:
    """Groups of tensors (global indices) that can live in one buffer."""
    groups = _Groups(model, lifetimes)
    op_spans = model_lifetimes(model)[1]
    for s, (graph, base) in enumerate(zip(model.subgraphs, tensor_bases(model))):
        for position, op in enumerate(graph.operators):
            out = base + op.outputs[0] if len(op.outputs) == 1 and op.outputs[0] >= 0 else -1
            if out not in groups.parent or not op.inputs:
                continue
            if op.opcode in ALIAS_OPS and op.inputs[0] >= 0 and base + op.inputs[0] in groups.parent:
                groups.merge(base + op.inputs[0], out)
            elif op.opcode in IN_PLACE_OPS:
                source = _in_place_input(graph, base, op, op_spans[(s, position)][1], groups)
                if source is not None:
                    groups.merge(source, out)
    return groups.members()


def _first_fit(placed: list[Buffer], buffer: Buffer) -> int:
    """Lowest offset where `buffer` fits beside the placed buffers live at the same time."""
    offset = 0
    live = sorted((b for b in placed if b.first <= buffer.last and buffer.first <= b.last),
                  key=lambda b: b.offset)
    for other in live:
        if other.offset - offset >= buffer.size:
            break
        offset = max(offset, other.offset + other.size)
    return offset


def _place(buffers: list[Buffer], order: list[int]) -> int:
    placed: list[Buffer] = []
    for index in order:
        buffers[index].offset = _first_fit(placed, buffers[index])
        placed.append(buffers[index])
    return max((b.offset + b.size for b in buffers), default=0)


def _peak(buffers: list[Buffer]) -> int:
    """Most bytes live at one step: no placement of these buffers can use less."""
    steps = max((b.last for b in buffers), default=-1) + 1
    return max((sum(b.size for b in buffers if b.first <= s <= b.last) for s in range(steps)),
               default=0)


def _orders(buffers: list[Buffer], trials: int):
    """Candidate placement orders: classic heuristics, then seeded perturbations."""
    indices = range(len(buffers))
    yield sorted(indices, key=lambda i: (-buffers[i].size, buffers[i].first))
    yield sorted(indices, key=lambda i: (-buffers[i].size * (buffers[i].last - buffers[i].first + 1), i))
    yield sorted(indices, key=lambda i: (-(buffers[i].last - buffers[i].first), -buffers[i].size))
    yield sorted(indices, key=lambda i: (buffers[i].first, -buffers[i].size))
    rng = random.Random(0)
    for _ in range(trials):
        noise = {i: rng.uniform(0.7, 1.3) for i in indices}
        yield sorted(indices, key=lambda i: -buffers[i].size * noise[i])


def make_plan(model: ir.Model, trials: int = ORDER_TRIALS) -> Plan:
    """The smallest head found over several orders, with buffer sharing."""
    lifetimes = planned_lifetimes(model)
    tensors = all_tensors(model)
    buffers = []
    for group in share_buffers(model, lifetimes):
        spans = [lifetimes[t] for t in group]
        size = max(aligned(ir.tensor_bytes(tensors[t])) for t in group)
        buffers.append(Buffer(group, size, min(s[0] for s in spans), max(s[1] for s in spans)))
    bound = _peak(buffers)
    best_head, best_offsets = None, []
    for order in _orders(buffers, trials):
        head = _place(buffers, order)
        if best_head is None or head < best_head:
            best_head, best_offsets = head, [b.offset for b in buffers]
        if head <= bound:
            break
    for buffer, offset in zip(buffers, best_offsets):
        buffer.offset = offset
    separate = [Buffer([t], aligned(ir.tensor_bytes(tensors[t])), *lifetimes[t]) for t in lifetimes]
    return Plan(buffers, best_head or 0, _peak(separate))


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


def plan_model_bytes(model_bytes: bytes) -> tuple[bytes, Plan]:
    """The model with an offline plan embedded, and the plan."""
    from tflm_gen.model.reader import read_model
    from tflm_gen.model.writer import write_model

    model = read_model(model_bytes)
    plan = make_plan(model)
    return write_model(embed_plan(model, plan)), plan
