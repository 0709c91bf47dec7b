"""`tflm-gen inspect`: what a model holds, what it costs, and whether we can run it."""

from __future__ import annotations

import math
from pathlib import Path

from tflm_gen.compress import candidates, choices, model_table, tensor_report
from tflm_gen.errors import ModelError, TflmGenError, ToolchainError
from tflm_gen.kernels import supported_ops
from tflm_gen.model import ir
from tflm_gen.model.lifetimes import activation_lower_bound
from tflm_gen.model.partition_op import partition_subgraph
from tflm_gen.model.reader import read_model
from tflm_gen.op_descriptors import describe
from tflm_gen.support import (
    activation_tensor,
    hybrid_problem,
    is_accelerator_op,
    limit_problem,
)


def read_model_bytes(path: Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ModelError(f"cannot read model {path}: {error.strerror}") from None


def inspect_model(path: str | Path) -> dict:
    """A summary of the model's main subgraph as a JSON-ready dict (see `inspect_command`)."""
    data = read_model_bytes(path)
    model = read_model(data)
    graph = model.subgraph
    operators = [_operator_row(model, index, op) for index, op in enumerate(graph.operators)]
    return {
        "model": Path(path).name,
        "inputs": [_io_row(graph.tensors[index]) for index in graph.inputs],
        "outputs": [_io_row(graph.tensors[index]) for index in graph.outputs],
        "operators": operators,
        "tensor_count": len(graph.tensors),
        "total_macs": sum(row["macs"] for row in operators) + sum(
            row["macs"] for row in _partition_rows(model)),
        "weight_bytes": weight_bytes(model),
        "weight_coding": weight_coding(model),
        "activation_lower_bound_bytes": activation_lower_bound(model),
        "unsupported_ops": unsupported_ops(model),
        **support_verdict(data),
        "subgraphs": [_subgraph_row(model, index) for index in range(1, len(model.subgraphs))],
        "partitions": _partition_rows(model),
    }


def _partition_rows(model: ir.Model) -> list[dict]:
    """The accelerator ops of a partitioned model: which ops each runs, and their MACs."""
    rows = []
    for index, op in enumerate(model.subgraph.operators):
        called = partition_subgraph(op)
        if called is None:
            continue
        graph = model.subgraphs[called]
        rows.append({"index": index, "custom_op": op.custom_code or "", "subgraph": called,
                     "ops": [inner.opcode for inner in graph.operators],
                     "macs": sum(operator_macs(graph, inner) for inner in graph.operators)})
    return rows


def _subgraph_row(model: ir.Model, index: int) -> dict:
    """A subgraph other than the main one (run by IF, WHILE or CALL_ONCE)."""
    graph = model.subgraphs[index]
    return {"index": index, "name": graph.name, "inputs": graph.inputs, "outputs": graph.outputs,
            "operators": [_operator_row(model, position, op, graph)
                          for position, op in enumerate(graph.operators)]}


def _io_row(tensor: ir.Tensor) -> dict:
    quant = tensor.quantization
    return {
        "name": tensor.name,
        "shape": tensor.shape,
        "dtype": tensor.dtype,
        "scale": quant.scale[0] if quant and quant.scale else None,
        "zero_point": quant.zero_point[0] if quant and quant.zero_point else None,
    }


def _operator_row(model: ir.Model, index: int, op: ir.Operator,
                  graph: ir.SubGraph | None = None) -> dict:
    graph = graph or model.subgraph
    return {
        "index": index,
        "op": op.custom_code if op.opcode == "CUSTOM" else op.opcode,
        "version": op.version,
        "inputs": op.inputs,
        "outputs": op.outputs,
        "input_shapes": [_shape_of(graph, t) for t in op.inputs],
        "output_shapes": [_shape_of(graph, t) for t in op.outputs],
        "macs": operator_macs(graph, op),
    }


def _shape_of(graph: ir.SubGraph, index: int) -> list[int] | None:
    """The tensor's shape; None for an absent optional input (-1) or a bad index."""
    return list(graph.tensors[index].shape) if 0 <= index < len(graph.tensors) else None


def weight_coding(model: ir.Model) -> list[dict]:
    """Per filter `--compress` may code: bytes, sparsity, distinct values, each codec's
    coded size and the one chosen (tflm_gen/compress.py)."""
    rows, found = [], candidates(model)
    shared = model_table(found)
    chosen = choices(found, shared)  # as compress_model: SPARSE_CONV within the size goal
    for candidate in found:
        report = tensor_report(candidate, shared, chosen[candidate.tensor_index])
        rows.append({"tensor": report.name, "op": report.opcode, "bytes": report.bytes,
                     "sparsity": round(report.sparsity, 4), "distinct": report.distinct,
                     "codec_bytes": report.sizes, "coding": report.chosen,
                     "coded_bytes": report.coded_bytes})
    return rows


def weight_bytes(model: ir.Model) -> int:
    """Bytes of all constant data (buffers referenced by tensors of any subgraph)."""
    used = {t.buffer for graph in model.subgraphs for t in graph.tensors if t.buffer > 0}
    return sum(len(model.buffers[index].data) for index in sorted(used))


def operator_macs(graph: ir.SubGraph, op: ir.Operator) -> int:
    """Multiply-accumulates of the compute-heavy ops; 0 for the others."""

    def shape(position: int) -> list[int]:
        index = op.inputs[position] if position < len(op.inputs) else -1
        return graph.tensors[index].shape if index >= 0 else []

    if not op.outputs or op.outputs[0] < 0:
        return 0
    outputs = math.prod(graph.tensors[op.outputs[0]].shape)
    count = describe(op.opcode).macs
    return count(shape, outputs, op.builtin_options) if count else 0


def support_verdict(model_bytes: bytes) -> dict:
    """Whether `run` and `verify` take the model: `refused`, their reason in their words
    (None when they take it), after the step they take (optimize.supported_device_model:
    the operator, dtype and limit checks, then the device model) and, where a host C
    compiler exists (`kernels_checked`), the runtime's init of that device model, where each
    kernel's prepare checks its node's shapes and options (a malformed node is refused
    there)."""
    from tflm_gen.host import HostInterpreter
    from tflm_gen.measure import host_compiler_available
    from tflm_gen.optimize import supported_device_model

    checked = host_compiler_available()
    try:
        device = supported_device_model(model_bytes)[0]
        if checked:
            HostInterpreter(device)
    except ToolchainError:
        raise  # the host build failed: not a verdict on the model
    except TflmGenError as error:
        return {"refused": str(error), "kernels_checked": checked}
    return {"refused": None, "kernels_checked": checked}


def unsupported_ops(model: ir.Model) -> list[dict]:
    """Distinct (op, version, dtype) of all subgraphs that tflm-gen cannot run: ops without
    a kernel, activation dtypes the kernel lacks, hybrid ops and ops beyond TFLM's limits
    (the same checks as generation, tflm_gen.support)."""
    table, found = supported_ops(), set()
    for subgraph, graph in enumerate(model.subgraphs):
        for position, op in enumerate(graph.operators):
            if is_accelerator_op(op):
                continue
            name = op.custom_code if op.opcode == "CUSTOM" else op.opcode
            index = activation_tensor(model, op, graph)
            dtype = graph.tensors[index].dtype if index >= 0 else ""
            # An op without tensors (CALL_ONCE) has no dtype to check.
            if (name not in table or (table[name] and index >= 0 and dtype not in table[name])
                    or hybrid_problem(model, position, op, subgraph)
                    or limit_problem(position, op, graph, subgraph)):
                found.add((name, op.version, dtype))
    return [{"op": op, "version": v, "dtype": d} for op, v, d in sorted(found)]
