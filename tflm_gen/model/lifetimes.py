"""When each activation tensor is alive, and the least arena any plan of them can use.

Steps are operator indices of one subgraph. A tensor lives from the op that writes it (step 0
for graph inputs) to the last op that reads it; graph outputs and variable tensors live to
the last step, variables also from step 0. Constant tensors live in flash and are not counted.
"""

from __future__ import annotations

from tflm_gen.model import ir
from tflm_gen.model.partition_op import partition_subgraph


def tensor_lifetimes(model: ir.Model, subgraph_index: int = 0) -> dict[int, tuple[int, int]]:
    """Tensor index -> (first step, last step) for every non-constant tensor the graph uses."""
    graph = model.subgraphs[subgraph_index]
    last_step = max(len(graph.operators) - 1, 0)
    ranges: dict[int, list[int]] = {}

    def touch(index: int, step: int) -> None:
        if index < 0 or ir.is_constant(model, graph.tensors[index]):
            return
        span = ranges.setdefault(index, [step, step])
        span[0], span[1] = min(span[0], step), max(span[1], step)

    for index in graph.inputs:
        touch(index, 0)
    for step, op in enumerate(graph.operators):
        for index in [*op.inputs, *op.outputs, *op.intermediates]:
            touch(index, step)
    for index in graph.outputs:
        touch(index, last_step)
    for index, tensor in enumerate(graph.tensors):
        if tensor.is_variable and not ir.is_constant(model, tensor):
            touch(index, 0)
            touch(index, last_step)
    return {index: (span[0], span[1]) for index, span in sorted(ranges.items())}


def live_bytes_per_step(model: ir.Model, subgraph_index: int = 0) -> list[int]:
    """Total bytes of the tensors alive at each step."""
    graph = model.subgraphs[subgraph_index]
    totals = [0] * max(len(graph.operators), 1)
    for index, (first, last) in tensor_lifetimes(model, subgraph_index).items():
        size = ir.tensor_bytes(graph.tensors[index])
        for step in range(first, last + 1):
            totals[step] += size
    return totals


def activation_lower_bound(model: ir.Model, subgraph_index: int = 0) -> int:
    """The largest total of live tensor bytes over all steps: no arena plan can be smaller."""
    return max(live_bytes_per_step(model, subgraph_index))


# Ops that run other subgraphs, and the options naming them.
SUBGRAPH_OPTIONS = {
    "IF": ("then_subgraph_index", "else_subgraph_index"),
    "WHILE": ("cond_subgraph_index", "body_subgraph_index"),
    "CALL_ONCE": ("init_subgraph_index",),
}


def called_subgraphs(op: ir.Operator) -> list[int]:
    """The subgraphs an operator runs (IF's branches, WHILE's cond and body, CALL_ONCE's init)."""
    partition = partition_subgraph(op)
    if partition is not None:  # an accelerator's custom op runs its subgraph
        return [partition]
    return [int(op.builtin_options.get(name, 0)) for name in SUBGRAPH_OPTIONS.get(op.opcode, ())]


def tensor_bases(model: ir.Model) -> list[int]:
    """Global index of each subgraph's tensor 0: tensors of all subgraphs numbered in order
    (the runtime's numbering, and that of TFLM's offline plans)."""
    bases, total = [], 0
    for graph in model.subgraphs:
        bases.append(total)
        total += len(graph.tensors)
    return bases


class RecursiveSubgraphError(ValueError):
    """A subgraph that calls itself, directly or not (TFLM would never return), calls
    nested deeper than the runtime allows, or a subgraph index out of range."""


MAX_CALL_DEPTH = 16  # runtime_c/tflm_allocator.c TFLM_MAX_CALL_DEPTH


class _Timeline:
    """One timeline of steps for all subgraphs, as runtime_c/tflm_allocator.c builds it:
    a subgraph's operators take the steps right after the operator that calls it, the
    caller's inputs and outputs span those steps, and a subgraph run from several call sites
    spans all of them (its window)."""

    def __init__(self, model: ir.Model):
        self.model, self.bases, self.step = model, tensor_bases(model), 0
        self.spans: dict[int, list[int]] = {}
        self.op_spans: dict[tuple[int, int], list[int]] = {}
        self.windows: dict[int, list[int]] = {}
        self.state = [0] * len(model.subgraphs)  # 0 new, 1 being marked, 2 marked

    @staticmethod
    def _extend(spans: dict, key, step: int) -> None:
        span = spans.setdefault(key, [step, step])
        span[0], span[1] = min(span[0], step), max(span[1], step)

    def touch(self, s: int, local: int, step: int) -> None:
        graph = self.model.subgraphs[s]
        if local >= 0 and not ir.is_constant(self.model, graph.tensors[local]):
            self._extend(self.spans, self.bases[s] + local, step)

    def widen(self, s: int, low: int, high: int) -> None:
        window = self.windows.get(s)
        if window and window[0] <= low and window[1] >= high:
            return  # passed on to the callees already
        self._extend(self.windows, s, low)
        self._extend(self.windows, s, high)
        for op in self.model.subgraphs[s].operators:
            for called in called_subgraphs(op):
                self.widen(called, low, high)

    def mark_op(self, s: int, position: int, op: ir.Operator) -> None:
        first, again = self.step, []
        self.step += 1
        for called in called_subgraphs(op):
            if not 0 <= called < len(self.state) or self.state[called] == 1:
                raise RecursiveSubgraphError(f"{op.opcode} op {position} of subgraph {s} calls "
                                             f"subgraph {called} recursively or out of range")
            if self.state[called] == 2:
                again.append(called)
            else:
                self.mark(called)
        last = self.step - 1
        for called in again:
            self.widen(called, first, last)
        self.op_spans[(s, position)] = [first, last]
        for index in [*op.inputs, *op.outputs, *op.intermediates]:
            self.touch(s, index, first)
            self.touch(s, index, last)

    def mark(self, s: int) -> None:
        graph, start = self.model.subgraphs[s], self.step
        if self.state.count(1) >= MAX_CALL_DEPTH:
            raise RecursiveSubgraphError(f"subgraph calls nest deeper than {MAX_CALL_DEPTH}")
        self.state[s] = 1
        for index in graph.inputs:
            self.touch(s, index, start)
        for position, op in enumerate(graph.operators):
            self.mark_op(s, position, op)
        self.step += 0 if graph.operators else 1
        for index in graph.outputs:
            self.touch(s, index, self.step - 1)
        self.state[s] = 2

    def apply_windows(self) -> None:
        for s, (low, high) in self.windows.items():
            graph, base = self.model.subgraphs[s], self.bases[s]
            for index in range(base, base + len(graph.tensors)):
                if index in self.spans:
                    self._extend(self.spans, index, low)
                    self._extend(self.spans, index, high)
            for position in range(len(graph.operators)):
                self._extend(self.op_spans, (s, position), low)
                self._extend(self.op_spans, (s, position), high)


def model_lifetimes(model: ir.Model) -> tuple[dict[int, tuple[int, int]], dict]:
    """Lifetimes of every non-constant tensor of every subgraph by global index, and the
    steps each operator spans ((subgraph, op) -> (first, last)), in the runtime's timeline:
    subgraph 0 first, then each subgraph that nothing calls."""
    timeline = _Timeline(model)
    for s in range(len(model.subgraphs)):
        if timeline.state[s] == 0:
            timeline.mark(s)
    timeline.apply_windows()
    spans = {index: (span[0], span[1]) for index, span in sorted(timeline.spans.items())}
    return spans, {key: tuple(span) for key, span in timeline.op_spans.items()}
