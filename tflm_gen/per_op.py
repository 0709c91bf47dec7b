"""`verify --per-op`: the first operator whose output differs from the oracle's.

The model is rewritten so that every tensor an operator writes is also a graph output;
both runtimes run the rewrite on the same inputs as `verify` did, and the outputs are
compared in operator order.  Keeping every intermediate alive changes our memory plan (no
in-place or shared buffers for them), so the rewrite's final outputs are also compared with
the original model's in each runtime: should they differ, the values depend on memory
sharing, and that is reported as the finding.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from tflm_gen.compare import Difference
from tflm_gen.host import DEFAULT_ARENA_BYTES, HostInterpreter
from tflm_gen.model import ir
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.optimize import device_model
from tflm_gen.oracle import Oracle, arena_upper_bound
from tflm_gen.patches import Stage, make_stage
from tflm_gen.plan import OFFLINE_PLAN_NAME
from tflm_gen.progress import tracked
from tflm_gen.schedule import memory_order


@dataclass
class OperatorDifference:
    """The first operator (in execution order) with an output that differs."""

    invoke: int  # 1-based, in the order of the samples
    index: int  # operator index in subgraph 0
    outputs: dict[int, Difference]  # position in the op's outputs -> its difference


@dataclass
class PerOpReport:
    operators: int
    tensors: int  # tensors compared per invoke
    invokes: int  # invokes compared (all, or up to the first with a difference)
    first: OperatorDifference | None = None
    notes: list[str] = field(default_factory=list)  # a rewrite that changed final outputs
    stage: tuple[int, int, int] | None = None  # patch stage: first, last op, inner tensors


def expose_intermediates(model: ir.Model, hidden=frozenset()) -> tuple[ir.Model, list[int]]:
    """A copy whose graph outputs are the original ones followed by every other tensor an
    operator writes (numpy-readable types only, not the `hidden` ones: a patch stage's
    inner tensors, which never exist whole), and that list of tensor indices.  An offline
    plan is dropped: it was made for the original lifetimes."""
    expanded = copy.deepcopy(model)
    graph = expanded.subgraph
    outputs = list(graph.outputs)
    for op in graph.operators:
        for index in op.outputs:
            readable = index >= 0 and ir.dtype_info(graph.tensors[index].dtype).numpy
            if readable and index not in outputs and index not in hidden:
                outputs.append(index)
    graph.outputs = outputs
    expanded.metadata = [m for m in expanded.metadata if m[0] != OFFLINE_PLAN_NAME]
    return expanded, outputs


def first_difference(model: ir.Model, tensors: list[int], ours: list[np.ndarray],
                     theirs: list[np.ndarray], against: str,
                     invoke: int = 1) -> OperatorDifference | None:
    """Walks the operators in order; `ours[k]` and `theirs[k]` hold tensor `tensors[k]`."""
    position = {tensor: k for k, tensor in enumerate(tensors)}
    for op_index, op in enumerate(model.subgraph.operators):
        differing = {}
        for slot, tensor in enumerate(op.outputs):
            if tensor not in position:
                continue
            difference = Difference()
            difference.add(ours[position[tensor]], theirs[position[tensor]], against)
            if not difference.bit_exact:
                differing[slot] = difference
        if differing:
            return OperatorDifference(invoke, op_index, differing)
    return None


def _final_output_notes(runtime: str, expanded: list, original: list, against: str) -> list[str]:
    notes = []
    for index, (kept, plain) in enumerate(zip(expanded, original)):
        difference = Difference()
        difference.add(kept, plain, against)
        if not difference.bit_exact:
            notes.append(f"{runtime}: output_{index} changes when every intermediate is kept "
                         f"alive ({difference.summary()}): its values depend on memory sharing")
    return notes


def per_op(model_bytes: bytes, samples: list, against: str, tags=(),
           original: list | None = None, stage: Stage | None = None,
           compress: bool = False) -> PerOpReport:
    """Runs the rewrite on every sample in turn and stops at the first invoke with a
    differing operator.  `original[k]` is (ours, theirs) final outputs of the original
    model on sample k, from the same sequence of invokes (for the memory-sharing check).
    With the patch `stage` our device model runs, the rewrite runs it too: every tensor but
    the stage's inner ones is compared.  Operators are in the order the device model runs
    them (tflm_gen.schedule), which the stage's indices refer to."""
    model = memory_order(read_model(model_bytes))
    inner = frozenset(stage.tensors[1:-1]) if stage else frozenset()
    expanded, tensors = expose_intermediates(model, inner)
    data = write_model(expanded)
    room = arena_upper_bound(expanded)  # every intermediate is alive at once
    tags = tuple(tags)
    same_stage = (lambda m: make_stage(m, stage.last, stage.band_rows, stage.first, stage.rolling,
                                       stage.leading)) if stage \
        else (lambda m: None)
    ours = HostInterpreter(device_model(data, tags, compress=compress, stage_of=same_stage)[0],
                           tags,
                           max(DEFAULT_ARENA_BYTES, room))
    theirs = Oracle(data, against, arena_bytes=room)
    report = PerOpReport(len(model.subgraph.operators), len(tensors), 0,
                         stage=(stage.first, stage.last, len(inner)) if stage else None)
    count = len(model.subgraph.outputs)
    for invoke, inputs in enumerate(tracked(samples, "comparing every tensor"), start=1):
        mine, reference = ours.run(inputs), theirs.run(inputs)
        report.invokes = invoke
        if original is not None:
            report.notes += _final_output_notes("ours", mine[:count], original[invoke - 1][0],
                                                "original")
            report.notes += _final_output_notes(against, reference[:count],
                                                original[invoke - 1][1], "original")
        report.first = first_difference(model, tensors, mine, reference, against, invoke)
        if report.first or report.notes:
            break
    return report


def _quantization_text(quantization: ir.Quantization | None) -> str:
    if quantization is None or not quantization.scale:
        return ""
    if len(quantization.scale) == 1:
        zero = quantization.zero_point[0] if quantization.zero_point else 0
        return f" scale {quantization.scale[0]:.6g} zero point {zero}"
    scales = quantization.scale
    return (f" {len(scales)} scales on axis {quantization.quantized_dimension} "
            f"({min(scales):.6g} to {max(scales):.6g})")


def tensor_text(model: ir.Model, index: int) -> str:
    """'name' dtype [shape], quantisation, and whether it is a constant."""
    if index < 0:
        return "(omitted)"
    tensor = model.subgraph.tensors[index]
    constant = " constant" if ir.is_constant(model, tensor) else ""
    return (f"'{tensor.name}' {tensor.dtype} {tensor.shape}"
            f"{_quantization_text(tensor.quantization)}{constant}")


def describe_difference(model: ir.Model, found: OperatorDifference, against: str) -> list[str]:
    """Lines naming the operator, its tensors and options, and how each output differs."""
    op = model.subgraph.operators[found.index]
    name = op.custom_code if op.opcode == "CUSTOM" else op.opcode
    heading = f"first operator that differs from {against}: #{found.index} {name}"
    lines = [f"{heading} (invoke {found.invoke})"]
    lines += [f"  input {k}: {tensor_text(model, t)}" for k, t in enumerate(op.inputs)]
    for slot, tensor in enumerate(op.outputs):
        difference = found.outputs.get(slot)
        verdict = difference.summary() if difference else "bit-exact"
        lines.append(f"  output {slot}: {tensor_text(model, tensor)}: {verdict}")
    options = {**op.builtin_options, **op.builtin_options2}
    if options:
        lines.append("  options: " + ", ".join(f"{k}={v}" for k, v in sorted(options.items())))
    return lines
