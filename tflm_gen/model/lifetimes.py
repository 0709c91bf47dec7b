"""When each activation tensor is alive, and the least arena any plan of them can use.

Steps are operator indices of one subgraph. A tensor lives from the op that writes it (step 0
for graph inputs) to the last op that reads it; graph outputs and variable tensors live to
the last step, variables also from step 0. Constant tensors live in flash and are not counted.
"""

from __future__ import annotations

from tflm_gen.model import ir


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
