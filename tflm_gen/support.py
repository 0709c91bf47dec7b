"""What tflm-gen can run: checks a model before generation and names everything it cannot
run, so the user sees the whole list at once (in one line: the CLI prints it as one).

Three kinds of problem, each listed per operator:
- operators without a kernel (with their versions);
- hybrid operators: float32 activations with int8/int4 constant weights.  TFLM refuses
  them ("Hybrid models are not supported on TFLite Micro"); we run those whose kernel
  declares `litert: hybrid` with int8 weights, bit-exact with LiteRT's reference kernels
  (the oracle then), and refuse the rest (int4 weights, other ops);
- operators whose activation dtype is not among the kernel's declared dtypes
  (the `types:` of its marker line, see tflm_gen.kernels);
- operators beyond a limit of TFLM's kernels that ours do not have (TFLM refuses the model
  there, so it has no oracle and nobody could check our answer).
"""

from __future__ import annotations

from tflm_gen.accelerator import IDENTIFIER
from tflm_gen.errors import UnsupportedModelError
from tflm_gen.kernels import kernel_catalogue
from tflm_gen.model import ir
from tflm_gen.model.partition_op import partition_subgraph
from tflm_gen.op_descriptors import DESCRIPTORS
from tflm_gen.text import printable

HYBRID_WEIGHT_DTYPES = ("int8", "int4")


def _is_constant(model: ir.Model, tensor: ir.Tensor) -> bool:
    return tensor.buffer > 0 and bool(model.buffers[tensor.buffer].data)


# Op -> the input whose dtype selects its kernel, where that is not the first non-constant
# input (the op descriptors say why for each).
DATA_INPUT = {name: d.data_input for name, d in DESCRIPTORS.items() if d.data_input is not None}


def _where(position: int, subgraph: int) -> str:
    """`op 3`, or `op 3 of subgraph 2` outside the main subgraph."""
    return f"op {position}" if subgraph == 0 else f"op {position} of subgraph {subgraph}"


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
    name = printable(" ".join(tensor.name.split()))
    if len(name) > NAME_CHARS:
        name = name[: NAME_CHARS - 3] + "..."
    return f"#{index} '{name}'" if name else f"#{index}"


def hybrid_weights(model: ir.Model, op: ir.Operator, graph: ir.SubGraph | None = None) -> list[int]:
    """The op's constant int8/int4 inputs when its activation is float32 (a hybrid op)."""
    graph = graph or model.subgraph
    activation = activation_tensor(model, op, graph)
    if activation < 0 or graph.tensors[activation].dtype != "float32":
        return []
    return [
        index for index in op.inputs
        if index >= 0 and _is_constant(model, graph.tensors[index])
        and graph.tensors[index].dtype in HYBRID_WEIGHT_DTYPES
    ]  # fmt: skip


def _runs_hybrid(model: ir.Model, op: ir.Operator, weights: list[int],
                 graph: ir.SubGraph | None = None) -> bool:
    """Our kernel runs this hybrid op: it declares `litert: hybrid`, the weights are int8."""
    spec = kernel_catalogue().get(op.opcode)
    dtypes = {(graph or model.subgraph).tensors[index].dtype for index in weights}
    return spec is not None and "hybrid" in spec.litert and dtypes == {"int8"}


def hybrid_problem(model: ir.Model, position: int, op: ir.Operator, subgraph: int = 0) -> str | None:
    graph = model.subgraphs[subgraph]
    indices = hybrid_weights(model, op, graph)
    if not indices or _runs_hybrid(model, op, indices, graph):
        return None
    activation = activation_tensor(model, op, graph)
    weights = [f"{_name(graph.tensors[index], index)} {graph.tensors[index].dtype}"
               for index in indices]  # fmt: skip
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


# TFLM's structural limits, read from its kernels (the op descriptors' tflm_limit): op ->
# (what is counted, the most TFLM takes).
TFLM_LIMITS = {name: d.tflm_limit for name, d in DESCRIPTORS.items() if d.tflm_limit}


def limit_problem(position: int, op: ir.Operator, graph: ir.SubGraph,
                   subgraph: int) -> str | None:
    if op.opcode not in TFLM_LIMITS:
        return None
    what, most = TFLM_LIMITS[op.opcode]
    if op.opcode == "STRIDED_SLICE":
        count = len(graph.tensors[op.inputs[0]].shape) if op.inputs else 0
    else:
        count = len([index for index in op.inputs if index >= 0])
    if count <= most:
        return None
    return f"{op.opcode} {_where(position, subgraph)} ({count} {what}; TFLM takes {most})"


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
    limit = limit_problem(position, op, model.subgraphs[subgraph], subgraph)
    if limit:
        report["limits"].append(limit)


def litert_only(model: ir.Model) -> list[str]:
    """The operators only LiteRT's reference kernels can check (TFLM lacks the op, the
    dtype or hybrid support), e.g. "GELU op 3 (int8)"; empty when TFLM can be the oracle."""
    catalogue, found = kernel_catalogue(), []
    for subgraph, graph in enumerate(model.subgraphs):
        for position, op in enumerate(graph.operators):
            spec = catalogue.get(op.opcode)
            if spec is None or not spec.litert:
                continue
            weights = hybrid_weights(model, op, graph)
            if weights and _runs_hybrid(model, op, weights, graph):
                found.append(f"{op.opcode} {_where(position, subgraph)} (hybrid)")
                continue
            activation = activation_tensor(model, op, graph)
            dtype = graph.tensors[activation].dtype if activation >= 0 else ""
            if dtype in spec.litert:
                found.append(f"{op.opcode} {_where(position, subgraph)} ({dtype})")
    return found


def is_accelerator_op(op: ir.Operator) -> bool:
    """A partitioned model's custom op (its name becomes a C registration)."""
    return (partition_subgraph(op) is not None
            and IDENTIFIER.fullmatch(op.custom_code or "") is not None)


def unsupported_report(model: ir.Model) -> dict[str, list[str]]:
    """Problems by kind ("operators", "hybrid", "dtypes", "limits"); empty lists when all
    is well."""
    catalogue = kernel_catalogue()
    report: dict[str, list[str]] = {"operators": [], "hybrid": [], "dtypes": [], "limits": []}
    missing: dict[tuple[str, int], list[str]] = {}
    for subgraph, graph in enumerate(model.subgraphs):
        for position, op in enumerate(graph.operators):
            if op.opcode in catalogue:
                _operator_problem(model, subgraph, position, op, report)
            elif not is_accelerator_op(op):
                key = (printable(op.custom_code or op.opcode), op.version)
                missing.setdefault(key, []).append(_where(position, subgraph))
    report["operators"] = [f"{name} (version {version}, {_places(missing[name, version])})"
                           for name, version in sorted(missing)]
    return report


PLACES_SHOWN = 3  # a model may use a missing op a hundred times: the first ones find it


def _places(wheres: list[str]) -> str:
    """`op 2`, `op 2, op 7`, or the first PLACES_SHOWN and how many more."""
    more = len(wheres) - PLACES_SHOWN
    return ", ".join(wheres[:PLACES_SHOWN]) + (f" and {more} more" if more > 0 else "")


def unsupported_message(report: dict[str, list[str]]) -> str:
    """One line naming every problem, or "" when there is none."""
    parts = []
    if report["operators"]:
        parts.append("model uses operators tflm-gen does not support: "
                     + ", ".join(report["operators"]))  # fmt: skip
    if report["hybrid"]:
        parts.append("hybrid operators (float32 activations with int8/int4 weights) that "
                     "tflm-gen does not run (TFLM runs none; convert the model fully quantised "
                     "or float): "
                     + "; ".join(report["hybrid"]))  # fmt: skip
    if report["dtypes"]:
        parts.append("operators with unsupported activation types: " + "; ".join(report["dtypes"]))
    if report["limits"]:
        parts.append("operators beyond TFLM's limits: " + "; ".join(report["limits"]))
    return " | ".join(parts)


def subgraph_problem(model: ir.Model) -> str:
    """Why the subgraphs' calls cannot run ("" when they can): a subgraph that calls itself,
    directly or not (TFLM would never return), calls nested too deep, or an index out of
    range."""
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
