"""The rules a graph must follow before anything plans, generates or runs it.

The C runtime walks the operator list in order and reads whatever the arena holds: an
operator that reads a tensor nobody wrote yet (a self-loop, operators out of order, a bias
whose constant data is missing) gives outputs that change from one invoke to the next
rather than an error.  So every operator input must be ready when the operator runs: a
constant with all its data, a graph input, a variable, or the output of an earlier
operator.  Each subgraph (IF/WHILE bodies too) is checked against its own inputs.

Indices are already known to be in range (the reader checks them first).
"""

from __future__ import annotations

import math

from tflm_gen.errors import ModelError
from tflm_gen.model import ir
from tflm_gen.text import printable

MAX_ELEMENTS = (1 << 31) - 1  # the runtime counts elements and bytes in int32
MAX_BYTES = (1 << 31) - 1  # tensor sizes and arena offsets (the offline plan) are int32
PLAN_ALIGNMENT = 16  # the planner may round each buffer up to this
INTEGER_BOUNDS = {"int4": (-8, 7), "int8": (-128, 127), "uint8": (0, 255),
                  "int16": (-32768, 32767), "uint16": (0, 65535)}  # a zero point must fit
# TFLite ops that legitimately write no tensor (they act on resource variables or subgraphs).
OPS_WITHOUT_OUTPUTS = frozenset({"ASSIGN_VARIABLE", "CALL_ONCE"})


def graph_problems(model: ir.Model):
    """Yields one message per broken rule, the first one most useful."""
    if not model.subgraphs[0].operators:
        yield "model has no operators (nothing to run)"
    for number, graph in enumerate(model.subgraphs):
        where = f"subgraph {number}"
        zeros = _zero_tensors(model, graph)
        for index, tensor in enumerate(graph.tensors):
            yield from _tensor_problems(tensor, f"{where} tensor {index} {_quoted(tensor)}",
                                        index in zeros)
        yield from _arena_problems(model, graph, where)
        yield from _dataflow_problems(model, graph, where)


def _quoted(tensor: ir.Tensor) -> str:
    return f"'{printable(tensor.name)}'"


def _zero_tensors(model: ir.Model, graph: ir.SubGraph) -> set[int]:
    """Tensors that can only hold zeros: constants whose data are all zero bytes, and
    FILL outputs of such a value.  Converters give them NaN, infinite or zero scales
    (Keras int16x8 GRUs: all-zero weights, the zeros of an initial state); any product
    with them is zero whatever the scale, so those scales are allowed there."""
    zeros = {index for index, tensor in enumerate(graph.tensors)
             if ir.is_constant(model, tensor) and not any(model.buffers[tensor.buffer].data)}
    for op in graph.operators:
        if op.opcode == "FILL" and len(op.inputs) == 2 and op.inputs[1] in zeros:
            zeros.update(op.outputs)
    return zeros


def _scale_problem(scale: float, only_zeros: bool) -> bool:
    if only_zeros:
        return scale < 0  # NaN, inf and 0 are the converter's; negative is corrupt
    return not (math.isfinite(scale) and scale > 0)


def _tensor_problems(tensor: ir.Tensor, where: str, only_zeros: bool):
    if ir.element_count(tensor) > MAX_ELEMENTS:
        yield f"{where} has {ir.element_count(tensor)} elements (shape {tensor.shape}); " \
              f"the limit is 2^31 - 1"
    elif ir.tensor_bytes(tensor) > MAX_BYTES:
        yield f"{where} takes {ir.tensor_bytes(tensor)} bytes; the limit is 2^31 - 1"
    quant = tensor.quantization
    for scale in quant.scale if quant else []:
        if _scale_problem(scale, only_zeros):
            yield f"{where} has quantization scale {scale}; scales must be finite and positive"
            return
    if quant and len(quant.zero_point) not in (0, 1, len(quant.scale)):
        yield (f"{where} has {len(quant.scale)} quantization scales but "
               f"{len(quant.zero_point)} zero points")
    bounds = INTEGER_BOUNDS.get(tensor.dtype)
    if quant and bounds and any(not bounds[0] <= zero <= bounds[1] for zero in quant.zero_point):
        yield f"{where} has a zero point outside the range of {tensor.dtype}"


def _arena_problems(model: ir.Model, graph: ir.SubGraph, where: str):
    """All activations together, each rounded as the planner may, must stay addressable
    by int32 offsets: no plan of them can then overflow."""
    sizes = [ir.tensor_bytes(tensor) for tensor in graph.tensors
             if not ir.is_constant(model, tensor)]
    total = sum(size + PLAN_ALIGNMENT for size in sizes)
    if total > MAX_BYTES:
        yield (f"{where}: its activation tensors take {total} bytes together; the limit is "
               "2^31 - 1 (arena offsets are int32)")


def _ready_without_producer(model: ir.Model, tensor: ir.Tensor) -> bool:
    """A constant (its size was checked by the reader), a variable, or a tensor of no
    elements: readable before any operator has run."""
    return tensor.is_variable or ir.is_constant(model, tensor) or ir.element_count(tensor) == 0


def _producers(graph: ir.SubGraph) -> dict[int, int]:
    """Tensor -> the first operator that writes it."""
    found: dict[int, int] = {}
    for number, op in enumerate(graph.operators):
        for index in op.outputs:
            found.setdefault(index, number)
    return found


def _input_problems(model: ir.Model, graph: ir.SubGraph, where: str):
    """A graph input is written by the caller: it must not also be a constant (the data
    would land on the weights) nor be listed twice."""
    for position, index in enumerate(graph.inputs):
        named = f"tensor {index} {_quoted(graph.tensors[index])}"
        if index in graph.inputs[:position]:
            yield f"{where}: graph input {named} is listed twice"
        elif ir.is_constant(model, graph.tensors[index]):
            yield f"{where}: graph input {named} is a constant"


def _dataflow_problems(model: ir.Model, graph: ir.SubGraph, where: str):
    yield from _input_problems(model, graph, where)
    producers, written = _producers(graph), set(graph.inputs)
    for number, op in enumerate(graph.operators):
        here = f"{where} operator {number} ({_op_name(op)})"
        if not op.outputs and op.opcode not in OPS_WITHOUT_OUTPUTS:
            yield f"{here} has no outputs"
        for index in op.inputs:
            if index >= 0 and index not in written:
                yield from _unready_input(model, graph, (number, here), index, producers.get(index))
        for index in op.outputs:
            yield from _output_problems(model, graph, here, index, written)
            written.add(index)
        yield from _requant_problems(graph, here, op)
    for index in graph.outputs:
        if index not in written and not _ready_without_producer(model, graph.tensors[index]):
            tensor = graph.tensors[index]
            yield f"{where}: graph output tensor {index} {_quoted(tensor)} is never written"


def _requant_problems(graph: ir.SubGraph, here: str, op: ir.Operator):
    """A requantisation needing a left shift above 30 bits (an output scale 2^30 times
    below input scale * filter scale): TFLM then shifts an int32 by 31 or more, whose
    result is undefined in C++ and differs between CPUs (x86 masks the count, Arm does
    not), so no answer would be TFLM's: refused, not guessed."""
    from tflm_gen.requant import channel_multipliers  # requant imports this package
    try:
        pairs = channel_multipliers(graph, op) or []
    except ModelError:
        return  # per-channel scales that disagree: the kernel's prepare says so
    shift = max((shift for _, shift in pairs), default=0)
    if shift > 30:
        yield (f"{here} requantises with a left shift of {shift} bits (output scale far "
               "below input scale x filter scale); TFLM's arithmetic is defined up to 30")


def _op_name(op: ir.Operator) -> str:
    return printable(op.custom_code or op.opcode) if op.opcode == "CUSTOM" else op.opcode


def _unready_input(model, graph, op: tuple[int, str], index: int, producer: int | None):
    number, here = op
    tensor = graph.tensors[index]
    if _ready_without_producer(model, tensor):
        return
    named = f"tensor {index} {_quoted(tensor)}"
    if producer is None:
        yield (f"{here} reads {named}, which is not a constant with data, a graph input, a "
               "variable, nor the output of any operator")
    elif producer == number:
        yield f"{here} reads its own output {named}"
    else:
        yield f"{here} reads {named} before operator {producer} writes it (operators out of order)"


def _output_problems(model, graph, here: str, index: int, written: set[int]):
    tensor = graph.tensors[index]
    named = f"tensor {index} {_quoted(tensor)}"
    if index in graph.inputs:
        yield f"{here} writes {named}, which is a graph input"
    elif index in written:
        yield f"{here} writes {named}, which an earlier operator (or this one) already writes"
    elif ir.is_constant(model, tensor):
        yield f"{here} writes {named}, which is a constant"
