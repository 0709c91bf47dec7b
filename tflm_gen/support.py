"""What tflm-gen can run: checks a model before generation and names everything it cannot
run, so the user sees the whole list at once (in one line: the CLI prints it as one).

Three kinds of problem, each listed per operator:
- operators without a kernel (with their versions);
- hybrid operators: float32 activations with int8/int4 constant weights.  We refuse them
  rather than run them: TFLM (our oracle, and the runtime users compare against) refuses
  them too ("Hybrid models are not supported on TFLite Micro"), so there is nothing to be
  bit-exact with; the fix is a fully quantised (or a float) conversion of the model;
- operators whose activation dtype is not among the kernel's declared dtypes
  (the `types:` of its marker line, see tflm_gen.kernels).
"""

from __future__ import annotations

from tflm_gen.errors import UnsupportedModelError
from tflm_gen.kernels import kernel_catalogue
from tflm_gen.model import ir
from tflm_gen.text import printable

HYBRID_WEIGHT_DTYPES = ("int8", "int4")


def _is_constant(model: ir.Model, tensor: ir.Tensor) -> bool:
    return tensor.buffer > 0 and bool(model.buffers[tensor.buffer].data)


# Ops whose data input is not the first one (TRANSPOSE_CONV: output_shape, weights, input;
# SELECT_V2: condition, x, y; EMBEDDING_LOOKUP: ids, table).
DATA_INPUT = {"TRANSPOSE_CONV": 2, "SELECT_V2": 1, "EMBEDDING_LOOKUP": 1}


def activation_tensor(model: ir.Model, op: ir.Operator) -> int:
    """The tensor whose dtype selects the kernel: the op's data input where it is not the
    first, else the first non-constant input, else the first input, else the first
    output; -1 when the op has no tensors."""
    graph = model.subgraph
    position = DATA_INPUT.get(op.opcode)
    if position is not None and position < len(op.inputs) and op.inputs[position] >= 0:
        return op.inputs[position]
    inputs = [index for index in op.inputs if index >= 0]
    for index in inputs:
        if not _is_constant(model, graph.tensors[index]):
            return index
    candidates = inputs + [index for index in op.outputs if index >= 0]
    return candidates[0] if candidates else -1


NAME_CHARS = 40  # converter names of fused tensors run to hundreds of characters


def _name(tensor: ir.Tensor, index: int) -> str:
    """`#index 'name'`, the name on one line and cut to NAME_CHARS."""
    name = printable(" ".join(tensor.name.split()))
    if len(name) > NAME_CHARS:
        name = name[: NAME_CHARS - 3] + "..."
    return f"#{index} '{name}'" if name else f"#{index}"


def hybrid_problem(model: ir.Model, position: int, op: ir.Operator) -> str | None:
    graph, activation = model.subgraph, activation_tensor(model, op)
    if activation < 0 or graph.tensors[activation].dtype != "float32":
        return None
    weights = [
        f"{_name(graph.tensors[index], index)} {graph.tensors[index].dtype}"
        for index in op.inputs
        if index >= 0 and _is_constant(model, graph.tensors[index])
        and graph.tensors[index].dtype in HYBRID_WEIGHT_DTYPES
    ]  # fmt: skip
    if not weights:
        return None
    return (f"{op.opcode} op {position} (input {_name(graph.tensors[activation], activation)} "
            f"float32, weights {', '.join(weights)})")  # fmt: skip


def _dtype_problem(model: ir.Model, position: int, op: ir.Operator) -> str | None:
    spec = kernel_catalogue()[op.opcode]
    activation = activation_tensor(model, op)
    if activation < 0 or not spec.dtypes:
        return None
    tensor = model.subgraph.tensors[activation]
    if tensor.dtype in spec.dtypes:
        return None
    return (f"{op.opcode} op {position} ({tensor.dtype} input {_name(tensor, activation)}; "
            f"supported: {', '.join(sorted(spec.dtypes))})")  # fmt: skip


def unsupported_report(model: ir.Model) -> dict[str, list[str]]:
    """Problems by kind ("operators", "hybrid", "dtypes"); empty lists when all is well."""
    catalogue = kernel_catalogue()
    report: dict[str, list[str]] = {"operators": [], "hybrid": [], "dtypes": []}
    missing = set()
    for position, op in enumerate(model.subgraph.operators):
        if op.opcode not in catalogue:
            missing.add((printable(op.custom_code or op.opcode), op.version))
            continue
        hybrid = hybrid_problem(model, position, op)
        if hybrid:
            report["hybrid"].append(hybrid)
            continue
        dtype = _dtype_problem(model, position, op)
        if dtype:
            report["dtypes"].append(dtype)
    report["operators"] = [f"{name} (version {version})" for name, version in sorted(missing)]
    return report


def unsupported_message(report: dict[str, list[str]]) -> str:
    """One line naming every problem, or "" when there is none."""
    parts = []
    if report["operators"]:
        parts.append("model uses operators tflm-gen does not support: "
                     + ", ".join(report["operators"]))  # fmt: skip
    if report["hybrid"]:
        parts.append("hybrid operators (float32 activations with int8/int4 weights; TFLM does "
                     "not run them either, convert the model fully quantised or float): "
                     + "; ".join(report["hybrid"]))  # fmt: skip
    if report["dtypes"]:
        parts.append("operators with unsupported activation types: " + "; ".join(report["dtypes"]))
    return " | ".join(parts)


def check_supported(model: ir.Model) -> None:
    """Raises UnsupportedModelError naming every op, hybrid op and dtype we cannot run."""
    message = unsupported_message(unsupported_report(model))
    if message:
        raise UnsupportedModelError(message)
