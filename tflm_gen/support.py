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

HYBRID_WEIGHT_DTYPES = ("int8", "int4")


def _where(position: int, subgraph: int) -> str:
    """`op 3`, or `op 3 of subgraph 2` outside the main subgraph."""
    return f"op {position}" if subgraph == 0 else f"op {position} of subgraph {subgraph}"


def _is_constant(model: ir.Model, tensor: ir.Tensor) -> bool:
    return tensor.buffer > 0 and bool(model.buffers[tensor.buffer].data)


# Ops whose data input is not the first non-constant one (TRANSPOSE_CONV: output_shape,
# weights, input; SELECT_V2: condition, x, y; EMBEDDING_LOOKUP: ids, table;
# ASSIGN_VARIABLE: the handle, which may be a constant int32 id, then the value).
DATA_INPUT = {"TRANSPOSE_CONV": 2, "SELECT_V2": 1, "EMBEDDING_LOOKUP": 1, "ASSIGN_VARIABLE": 0}


def activation_tensor(model: ir.Model, op: ir.Operator, graph: ir.SubGraph | None = None) -> int:
    """The tensor (of `graph`, the main subgraph by default) whose dtype selects the kernel:
    the op's data input where it is not the first, else the first non-constant input, else
    the first input, else the first output; -1 when the op has no tensors."""
    graph = graph or model.subgraph
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
    name = " ".join(tensor.name.split())
    if len(name) > NAME_CHARS:
        name = name[: NAME_CHARS - 3] + "..."
    return f"#{index} '{name}'" if name else f"#{index}"


def hybrid_problem(model: ir.Model, position: int, op: ir.Operator, subgraph: int = 0) -> str | None:
    graph = model.subgraphs[subgraph]
    activation = activation_tensor(model, op, graph)
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
    return (f"{op.opcode} {_where(position, subgraph)} (input "
            f"{_name(graph.tensors[activation], activation)} float32, weights {', '.join(weights)})")  # fmt: skip


def _dtype_problem(model: ir.Model, position: int, op: ir.Operator, subgraph: int) -> str | None:
    spec, graph = kernel_catalogue()[op.opcode], model.subgraphs[subgraph]
    activation = activation_tensor(model, op, graph)
    if activation < 0 or not spec.dtypes:
        return None
    tensor = graph.tensors[activation]
    if tensor.dtype in spec.dtypes:
        return None
    return (f"{op.opcode} {_where(position, subgraph)} ({tensor.dtype} input "
            f"{_name(tensor, activation)}; supported: {', '.join(sorted(spec.dtypes))})")  # fmt: skip


def _operator_problem(model: ir.Model, subgraph: int, position: int, op: ir.Operator,
                      report: dict[str, list[str]]) -> None:
    """Adds what stops `op` from running to the report (kernels known to exist)."""
    hybrid = hybrid_problem(model, position, op, subgraph)
    if hybrid:
        report["hybrid"].append(hybrid)
        return
    dtype = _dtype_problem(model, position, op, subgraph)
    if dtype:
        report["dtypes"].append(dtype)


def unsupported_report(model: ir.Model) -> dict[str, list[str]]:
    """Problems by kind ("operators", "hybrid", "dtypes"); empty lists when all is well."""
    catalogue = kernel_catalogue()
    report: dict[str, list[str]] = {"operators": [], "hybrid": [], "dtypes": []}
    missing = set()
    for subgraph, graph in enumerate(model.subgraphs):
        for position, op in enumerate(graph.operators):
            if op.opcode in catalogue:
                _operator_problem(model, subgraph, position, op, report)
            else:
                missing.add((op.custom_code or op.opcode, op.version))
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


def subgraph_problem(model: ir.Model) -> str:
    """Why the subgraphs' calls cannot run ("" when they can): a subgraph that calls itself,
    directly or not (TFLM would never return), or an index out of range."""
    from tflm_gen.model.lifetimes import RecursiveSubgraphError, model_lifetimes

    try:
        model_lifetimes(model)
    except RecursiveSubgraphError as error:
        return str(error)
    return ""


def check_supported(model: ir.Model) -> None:
    """Raises UnsupportedModelError naming every op, hybrid op and dtype we cannot run."""
    message = unsupported_message(unsupported_report(model)) or subgraph_problem(model)
    if message:
        raise UnsupportedModelError(message)
