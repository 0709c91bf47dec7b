"""`tflm-gen partition`: moves the maximal groups of operators an accelerator runs into
subgraphs, each called by one CUSTOM op (format: accelerators/README.md).

A group grows in operator order: an op the accelerator runs joins the groups of its
producers (unless the tensor between them is a `--cut`) when no path leaves a group and
comes back into it, so contracting every group keeps the graph acyclic."""

from __future__ import annotations

import copy
import heapq
from dataclasses import dataclass, field

from tflm_gen.accelerator import Accelerator, op_refusal
from tflm_gen.errors import InputError, UnsupportedModelError
from tflm_gen.model import ir
from tflm_gen.model.partition_op import partition_options, partition_subgraph
from tflm_gen.text import printable

PLAN_METADATA = ("OfflineMemoryAllocation",)  # metadata naming tensors of the original


@dataclass
class PartitionPlan:
    groups: list[list[int]]  # op indices of subgraph 0, one list per custom op
    refusals: dict[int, str] = field(default_factory=dict)  # CPU op -> the failed constraint


def check_not_partitioned(model: ir.Model) -> None:
    for graph in model.subgraphs:
        for index, op in enumerate(graph.operators):
            if partition_subgraph(op) is not None:
                raise UnsupportedModelError(
                    f"model is partitioned already (op {index} is accelerator op "
                    f"'{printable(op.custom_code or '')}'); partition the original model")


def plan_partition(model: ir.Model, accelerator: Accelerator,
                   cuts: tuple[str, ...] = ()) -> PartitionPlan:
    """Which ops of subgraph 0 go to the accelerator, in which groups, and why the others
    stay on the CPU."""
    check_not_partitioned(model)
    graph = model.subgraph
    refusals = {index: op_refusal(accelerator, model, graph, op)
                for index, op in enumerate(graph.operators)}
    for index, op in enumerate(graph.operators):
        if not refusals[index] and _reads_variable(graph, op):
            refusals[index] = "reads a variable tensor (state stays on the CPU)"
    cut_tensors = _cut_indices(graph, cuts)
    supported = {index for index, why in refusals.items() if not why}
    groups = _Grouping(graph, supported, cut_tensors).run()
    return PartitionPlan(groups, {index: why for index, why in refusals.items() if why})


def _reads_variable(graph: ir.SubGraph, op: ir.Operator) -> bool:
    return any(index >= 0 and graph.tensors[index].is_variable for index in op.inputs)


def _cut_indices(graph: ir.SubGraph, cuts: tuple[str, ...]) -> set[int]:
    by_name = {tensor.name: index for index, tensor in enumerate(graph.tensors)}
    unknown = [name for name in cuts if name not in by_name]
    if unknown:
        raise InputError(f"--cut names no tensor of subgraph 0: "
                         f"{', '.join(repr(printable(name)) for name in unknown)}")
    return {by_name[name] for name in cuts}


class _Grouping:
    """Union-find over groups; per op, the groups with a path to it (`reach`) and those
    whose path to it leaves the group first (`tainted`): such a group may not take the op."""

    def __init__(self, graph: ir.SubGraph, supported: set[int], cuts: set[int]):
        self.graph, self.supported, self.cuts = graph, supported, cuts
        self.producer = {t: i for i, op in enumerate(graph.operators) for t in op.outputs}
        self.parent: dict[int, int] = {}
        self.group_of: dict[int, int] = {}
        self.group_taint: dict[int, set[int]] = {}
        self.reach: list[set[int]] = []
        self.tainted: list[set[int]] = []

    def find(self, group: int) -> int:
        while self.parent[group] != group:
            self.parent[group] = self.parent[self.parent[group]]
            group = self.parent[group]
        return group

    def run(self) -> list[list[int]]:
        for index, op in enumerate(self.graph.operators):
            reach, taint = self._incoming(op)
            if index in self.supported:
                self._place(index, op, taint)
                own = self.find(self.group_of[index])
                reach = reach | {own}
                self.group_taint[own] |= {g for g in taint if g != own}
            self.reach.append(reach)
            self.tainted.append(taint)
        members: dict[int, list[int]] = {}
        for index in sorted(self.group_of):
            members.setdefault(self.find(self.group_of[index]), []).append(index)
        return sorted(members.values())

    def _producers(self, op: ir.Operator) -> list[int]:
        return sorted({self.producer[t] for t in op.inputs if t in self.producer})

    def _incoming(self, op: ir.Operator) -> tuple[set[int], set[int]]:
        reach, taint = set(), set()
        for p in self._producers(op):
            own = self.find(self.group_of[p]) if p in self.group_of else None
            groups = {self.find(g) for g in self.reach[p]}
            reach |= groups
            taint |= {self.find(g) for g in self.tainted[p]} | (groups - {own})
        return reach, taint

    def _place(self, index: int, op: ir.Operator, taint: set[int]) -> None:
        candidates = sorted({self.find(self.group_of[self.producer[t]]) for t in op.inputs
                             if t in self.producer and t not in self.cuts
                             and self.producer[t] in self.group_of})
        self.parent[index] = index
        self.group_taint[index] = set()
        chosen = index
        for group in candidates:
            if group in taint or self._taints_each_other(group, chosen):
                continue
            self.parent[group] = chosen
            self.group_taint[chosen] |= self.group_taint.pop(group)
        self.group_of[index] = index

    def _taints_each_other(self, first: int, second: int) -> bool:
        taint_first = {self.find(g) for g in self.group_taint[first]}
        taint_second = {self.find(g) for g in self.group_taint[second]}
        return second in taint_first or first in taint_second


def partition_model(model: ir.Model, accelerator: Accelerator, plan: PartitionPlan) -> ir.Model:
    """A new model: each group of `plan` one CUSTOM op running a new subgraph."""
    result = copy.deepcopy(model)
    graph = model.subgraph
    rewriter = _MainGraph(model)
    first_new = len(model.subgraphs)
    for unit in _unit_order(graph, plan.groups):
        if isinstance(unit, int):
            rewriter.add_cpu_op(graph.operators[unit])
            continue
        subgraph, inputs, outputs = _group_subgraph(model, unit)
        subgraph.name = f"{accelerator.name}_{len(result.subgraphs) - first_new}"
        index = len(result.subgraphs)
        result.subgraphs.append(subgraph)
        rewriter.add_custom_op(accelerator.custom_op, index, inputs, outputs)
    result.subgraphs[0] = rewriter.finish()
    _remap_signatures(result, rewriter.remap)
    result.metadata = [(name, buffer) for name, buffer in result.metadata
                       if name not in PLAN_METADATA and not name.startswith("tflm_gen")]
    _compact_buffers(result)
    return result


def _unit_order(graph: ir.SubGraph, groups: list[list[int]]) -> list:
    """CPU op indices and groups (lists) in an order that respects every dependency."""
    unit_of = {index: i for i, group in enumerate(groups) for index in group}
    units: list = [list(group) for group in groups]
    for index in range(len(graph.operators)):
        if index not in unit_of:
            unit_of[index] = len(units)
            units.append(index)
    producer = {t: unit_of[i] for i, op in enumerate(graph.operators) for t in op.outputs}
    needs: list[set[int]] = [set() for _ in units]
    for index, op in enumerate(graph.operators):
        needs[unit_of[index]] |= {producer[t] for t in op.inputs if t in producer}
    for unit, wanted in enumerate(needs):
        wanted.discard(unit)
    return [units[u] for u in _topological(units, needs)]


def _topological(units: list, needs: list[set[int]]) -> list[int]:
    def first(unit) -> int:
        return min(unit) if isinstance(unit, list) else unit

    users: list[list[int]] = [[] for _ in units]
    for unit, wanted in enumerate(needs):
        for other in wanted:
            users[other].append(unit)
    waiting = [len(wanted) for wanted in needs]
    ready = [(first(units[u]), u) for u in range(len(units)) if waiting[u] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, unit = heapq.heappop(ready)
        order.append(unit)
        for user in users[unit]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, (first(units[user]), user))
    assert len(order) == len(units), "grouping created a cycle"
    return order


def _group_subgraph(model: ir.Model, group: list[int]) -> tuple[ir.SubGraph, list, list]:
    """The group's ops as a subgraph, and the original tensor indices of its inputs and
    outputs (in the custom op's order)."""
    graph = model.subgraph
    members = set(group)
    produced = {t for i in group for t in graph.operators[i].outputs}
    used_outside = set(graph.outputs) | {
        t for i, op in enumerate(graph.operators) if i not in members for t in op.inputs}
    inputs = list(dict.fromkeys(
        t for i in group for t in graph.operators[i].inputs
        if t >= 0 and t not in produced and not ir.is_constant(model, graph.tensors[t])))
    outputs = [t for i in group for t in graph.operators[i].outputs if t in used_outside]
    subgraph = ir.SubGraph()
    tensor = _tensor_copier(graph, subgraph, {})
    subgraph.inputs = [tensor(t) for t in inputs]
    for i in group:
        subgraph.operators.append(_remapped(graph.operators[i], tensor))
    subgraph.outputs = [tensor(t) for t in outputs]
    return subgraph, inputs, outputs


def _tensor_copier(source: ir.SubGraph, target: ir.SubGraph, local: dict[int, int]):
    """A function giving each tensor index of `source` its index in `target`, copying the
    tensor there on first use; `local` holds the indices known already (-1 stays -1)."""

    def tensor(t: int) -> int:
        if t < 0:
            return t
        if t not in local:
            local[t] = len(target.tensors)
            target.tensors.append(copy.deepcopy(source.tensors[t]))
        return local[t]

    return tensor


def _remapped(op: ir.Operator, tensor) -> ir.Operator:
    result = copy.deepcopy(op)
    result.inputs = [tensor(t) for t in op.inputs]
    result.outputs = [tensor(t) for t in op.outputs]
    result.intermediates = [tensor(t) for t in op.intermediates]
    return result


class _MainGraph:
    """Subgraph 0 rebuilt: the CPU ops and the custom ops, holding only the tensors they
    and the model's inputs and outputs use."""

    def __init__(self, model: ir.Model):
        self.original = model.subgraph
        self.graph = ir.SubGraph(name=self.original.name)
        self.remap: dict[int, int] = {}
        self.tensor = _tensor_copier(self.original, self.graph, self.remap)

    def add_cpu_op(self, op: ir.Operator) -> None:
        self.graph.operators.append(_remapped(op, self.tensor))

    def add_custom_op(self, name: str, subgraph: int, inputs: list, outputs: list) -> None:
        self.graph.operators.append(ir.Operator(
            "CUSTOM", [self.tensor(t) for t in inputs], [self.tensor(t) for t in outputs],
            custom_code=name, custom_options=partition_options(subgraph)))

    def finish(self) -> ir.SubGraph:
        self.graph.inputs = [self.tensor(t) for t in self.original.inputs]
        self.graph.outputs = [self.tensor(t) for t in self.original.outputs]
        return self.graph


def _remap_signatures(model: ir.Model, remap: dict[int, int]) -> None:
    for signature in model.signature_defs:
        if signature.subgraph_index == 0:
            signature.inputs = [(name, remap[t]) for name, t in signature.inputs if t in remap]
            signature.outputs = [(name, remap[t]) for name, t in signature.outputs if t in remap]


def _compact_buffers(model: ir.Model) -> None:
    """Drops buffers no tensor or metadata uses (buffer 0, the empty sentinel, stays)."""
    used = [0] + sorted({tensor.buffer for graph in model.subgraphs for tensor in graph.tensors}
                        | {buffer for _, buffer in model.metadata}
                        | set(model.metadata_buffer) - {0})
    new_index = {old: new for new, old in enumerate(used)}
    model.buffers = [model.buffers[old] for old in used]
    for graph in model.subgraphs:
        for tensor in graph.tensors:
            tensor.buffer = new_index[tensor.buffer]
    model.metadata = [(name, new_index[buffer]) for name, buffer in model.metadata]
    model.metadata_buffer = [new_index[buffer] for buffer in model.metadata_buffer]


def partition_rows(model: ir.Model, plan: PartitionPlan, accelerator: Accelerator) -> list:
    """One row per op of subgraph 0: index, op, MACs, where it runs, why it stays."""
    from tflm_gen.inspect import operator_macs

    graph = model.subgraph
    group_of = {index: g for g, group in enumerate(plan.groups) for index in group}
    rows = []
    for index, op in enumerate(graph.operators):
        where = (f"{accelerator.name} #{group_of[index]}" if index in group_of else "cpu")
        rows.append([index, printable(op.custom_code or op.opcode),
                     operator_macs(graph, op), where, printable(plan.refusals.get(index, ""))])
    return rows


def partition_summary(model: ir.Model, plan: PartitionPlan,
                      accelerator: Accelerator | None = None) -> dict:
    """Subgraphs made, ops offloaded, the share of MACs they hold and, when the spec has a
    [cost] table, the accelerator cycles it estimates (MACs / macs_per_cycle plus
    cycles_per_call for each custom op)."""
    from tflm_gen.inspect import operator_macs

    graph = model.subgraph
    macs = [operator_macs(graph, op) for op in graph.operators]
    offloaded = [index for group in plan.groups for index in group]
    total = sum(macs)
    summary = {"subgraphs": len(plan.groups), "ops_offloaded": len(offloaded),
               "ops": len(graph.operators),
               "mac_share": (sum(macs[i] for i in offloaded) / total) if total else 0.0}
    cost = accelerator.cost if accelerator is not None else {}
    if cost.get("macs_per_cycle"):
        summary["estimated_cycles"] = (sum(macs[i] for i in offloaded) // cost["macs_per_cycle"]
                                       + cost.get("cycles_per_call", 0) * len(plan.groups))
    return summary


def summary_line(summary: dict) -> str:
    line = (f"{summary['subgraphs']} accelerator subgraph(s); {summary['ops_offloaded']} of "
            f"{summary['ops']} ops offloaded; {summary['mac_share']:.1%} of MACs")
    if "estimated_cycles" in summary:
        line += f"; about {summary['estimated_cycles']:,} accelerator cycles (spec's [cost])"
    return line


def inline_partitions(model: ir.Model) -> ir.Model:
    """The model with every accelerator op replaced by its subgraph's ops (what the
    reference runtimes can run: they know no accelerator op); the model itself when it has
    none.  The outputs are those of the partitioned model, bit for bit."""
    calls = {partition_subgraph(op) for op in model.subgraph.operators} - {None}
    if not calls:
        return model
    result = copy.deepcopy(model)
    main = result.subgraph
    operators, main.operators = main.operators, []
    for op in operators:
        called = partition_subgraph(op)
        if called is None:
            main.operators.append(op)
        else:
            _inline(main, model.subgraphs[called], op)
    if calls == set(range(min(calls), len(model.subgraphs))):
        result.subgraphs = result.subgraphs[:min(calls)]  # partition() appends them last
    return result


def _inline(main: ir.SubGraph, subgraph: ir.SubGraph, call: ir.Operator) -> None:
    local = dict(zip(subgraph.inputs, call.inputs)) | dict(zip(subgraph.outputs, call.outputs))
    tensor = _tensor_copier(subgraph, main, local)
    main.operators += [_remapped(op, tensor) for op in subgraph.operators]
