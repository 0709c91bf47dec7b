"""A memory-aware operator order (issue 13): the device model may run its operators in any
order that computes every tensor before its readers, and every output is the same bytes
(each operator still runs once, on the same inputs, with the same kernel).  A branch that
reads a block's input (ResNet's 1x1 shortcut convolution) run first lets the block's
input die at the main path's first convolution, which may then write over it
(tflm_gen.overlap), instead of staying whole beside the main path's two tensors.

The search hoists one operator at a time to just after the last operator it depends on,
and keeps a move when the per-step head bytes (plan.head_profile), largest first, get
lexicographically smaller: the highest step decides the head, but a patch stage
(tflm_gen.patches) may then lower the highest one, so the next ones count too.
"""

from __future__ import annotations

import copy

from tflm_gen.model import ir

MAX_OPERATORS = 400  # larger models keep their order
MAX_TRIALS = 2000  # head profiles tried at most (each accepted hoist restarts the scan)


def _producers(graph: ir.SubGraph, order: list[ir.Operator], position: int) -> int:
    """Index in `order` of the last operator that writes an input of order[position]
    (-1: none)."""
    needed = {t for t in order[position].inputs if t >= 0}
    return max((k for k in range(position) if needed & set(order[k].outputs)), default=-1)


def _readers_before(order: list[ir.Operator], position: int, target: int) -> bool:
    """True when an operator between target and position reads or writes what
    order[position] writes (moving it above them would change what they see)."""
    writes = set(order[position].outputs)
    return any(writes & (set(op.inputs) | set(op.outputs)) for op in order[target:position])


def _with_order(model: ir.Model, order: list[ir.Operator]) -> ir.Model:
    graph = copy.copy(model.subgraph)
    graph.operators = list(order)
    moved = copy.copy(model)
    moved.subgraphs = [graph]
    return moved


def _key(model: ir.Model) -> list[int]:
    from tflm_gen.plan import head_profile

    return sorted(head_profile(model), reverse=True)


def memory_order(model: ir.Model) -> ir.Model:
    """The model with its operators in the order whose head bytes per step are lowest
    (the model itself when no hoist helps, with control flow: subgraphs run as a whole, or
    with variable tensors)."""
    if len(model.subgraphs) != 1 or not 2 < len(model.subgraph.operators) <= MAX_OPERATORS:
        return model
    if any(t.is_variable for t in model.subgraph.tensors):
        return model  # operators updating a state in place keep their order
    best, best_key = model, _key(model)
    improved, trials = True, 0
    while improved and trials < MAX_TRIALS:
        improved = False
        order = best.subgraph.operators
        for position in range(1, len(order)):
            target = _producers(best.subgraph, order, position) + 1
            if target >= position or _readers_before(order, position, target):
                continue
            if trials >= MAX_TRIALS:
                break
            trials += 1
            moved = _with_order(best, [*order[:target], order[position],
                                       *order[target:position], *order[position + 1:]])
            key = _key(moved)
            if key < best_key:
                best, best_key, improved = moved, key, True
                break
    return best
