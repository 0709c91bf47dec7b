"""Accelerator descriptions (`accelerators/*.toml`): which ops an NPU runs, under which
constraints, and the custom op that carries them.  `accelerators/README.md` documents the
keys; `op_refusal` says why an op stays on the CPU."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import tflite

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, as a package (pyproject.toml installs it there)
    import tomli as tomllib

from tflm_gen.errors import InputError
from tflm_gen.kernels import kernel_catalogue
from tflm_gen.model import ir
from tflm_gen.op_descriptors import ops_with
from tflm_gen.resources import resource_dir

CONSTRAINT_KEYS = {"dtypes", "max_kernel", "max_pool", "max_stride", "activations",
                   "max_tensor_bytes"}
SPEC_KEYS = {"name", "custom_op", "description", "exclude", "cost", "ops"}
KERNEL_OPS = ops_with("filter_window")
# Ops that run subgraphs or own resource variables never move into an offloaded subgraph.
NEVER_OFFLOADED = ops_with("cpu_only")
ACTIVATION_NAMES = {value: name for name, value in vars(tflite.ActivationFunctionType).items()
                    if not name.startswith("_")}
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


@dataclass(frozen=True)
class Accelerator:
    name: str
    custom_op: str  # the CUSTOM op code the partitioned model uses
    description: str = ""
    ops: dict = field(default_factory=dict)  # op name ("*" for any) -> constraints
    exclude: frozenset[str] = frozenset()
    cost: dict = field(default_factory=dict)  # macs_per_cycle, cycles_per_call


def shipped_accelerators() -> list[str]:
    return sorted(path.stem for path in resource_dir("accelerators").glob("*.toml"))


def _spec_path(spec: str) -> Path:
    if spec in shipped_accelerators():
        return resource_dir("accelerators") / f"{spec}.toml"
    return Path(spec)


def load_accelerator(spec: str) -> Accelerator:
    """The accelerator a TOML path (or a shipped spec's name) describes; InputError when
    the file is missing or malformed."""
    path = _spec_path(spec)
    try:
        values = tomllib.loads(path.read_text())
    except OSError as error:
        raise InputError(f"cannot read accelerator {spec}: {error.strerror} (shipped: "
                         f"{', '.join(shipped_accelerators())})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"accelerator {spec}: not valid TOML: {error}") from None
    return _accelerator(values, spec)


def _accelerator(values: dict, spec: str) -> Accelerator:
    def bad(why: str):
        return InputError(f"accelerator {spec}: {why}")

    unknown = set(values) - SPEC_KEYS
    if unknown:
        raise bad(f"unknown keys {sorted(unknown)}; known: {sorted(SPEC_KEYS)}")
    custom_op = values.get("custom_op", "")
    if not isinstance(custom_op, str) or not IDENTIFIER.fullmatch(custom_op):
        raise bad("custom_op must be a C identifier (the resolver registers it by name)")
    ops = values.get("ops", {})
    if not isinstance(ops, dict) or not ops:
        raise bad("needs at least one [ops.OP] table")
    for op, constraints in ops.items():
        if not isinstance(constraints, dict) or set(constraints) - CONSTRAINT_KEYS:
            raise bad(f"ops.{op}: constraints must be a table of {sorted(CONSTRAINT_KEYS)}")
    return Accelerator(str(values.get("name", custom_op)), custom_op,
                       str(values.get("description", "")), ops,
                       frozenset(values.get("exclude", [])), dict(values.get("cost", {})))


def _constraints(accelerator: Accelerator, op: ir.Operator) -> dict | None:
    if op.opcode in accelerator.exclude or op.opcode in NEVER_OFFLOADED:
        return None
    if op.opcode in accelerator.ops:
        return accelerator.ops[op.opcode]
    if "*" in accelerator.ops and op.opcode in kernel_catalogue():
        return accelerator.ops["*"]
    return None


def op_refusal(accelerator: Accelerator, model: ir.Model, graph: ir.SubGraph,
               op: ir.Operator) -> str:
    """Why the accelerator cannot run `op` ("" when it can): the first constraint that fails."""
    constraints = _constraints(accelerator, op)
    if constraints is None:
        return f"{op.opcode} is not an op of {accelerator.name}"
    for check in (_dtype_problem, _window_problem, _stride_problem, _activation_problem,
                  _bytes_problem):
        problem = check(constraints, model, graph, op)
        if problem:
            return problem
    return ""


def _activation_input(model: ir.Model, graph: ir.SubGraph, op: ir.Operator) -> ir.Tensor | None:
    for index in op.inputs:
        if index >= 0 and not ir.is_constant(model, graph.tensors[index]):
            return graph.tensors[index]
    return None


def _dtype_problem(constraints, model, graph, op) -> str:
    allowed = constraints.get("dtypes")
    tensor = _activation_input(model, graph, op)
    dtype = tensor.dtype if tensor is not None else graph.tensors[op.outputs[0]].dtype
    if allowed is not None and dtype not in allowed:
        return f"dtype {dtype} not in {allowed}"
    return ""


def _window(graph: ir.SubGraph, op: ir.Operator) -> tuple[str, list[int]] | None:
    options = op.builtin_options
    if op.opcode in KERNEL_OPS:
        weights = graph.tensors[op.inputs[1]]
        return "max_kernel", list(weights.shape[1:3])
    if "filter_height" in options:
        return "max_pool", [int(options["filter_height"]), int(options["filter_width"])]
    return None


def _window_problem(constraints, model, graph, op) -> str:
    window = _window(graph, op)
    if window is None or window[0] not in constraints:
        return ""
    key, (height, width) = window
    limit_h, limit_w = constraints[key]
    if height > limit_h or width > limit_w:
        return f"{key}: window {height}x{width} exceeds {limit_h}x{limit_w}"
    return ""


def _stride_problem(constraints, model, graph, op) -> str:
    limit = constraints.get("max_stride")
    strides = [int(op.builtin_options.get(key, 1)) for key in ("stride_h", "stride_w")]
    if limit is not None and max(strides) > limit:
        return f"max_stride: stride {strides[0]}x{strides[1]} exceeds {limit}"
    return ""


def _activation_problem(constraints, model, graph, op) -> str:
    allowed = constraints.get("activations")
    code = op.builtin_options.get("fused_activation_function")
    if allowed is None or code is None:
        return ""
    name = ACTIVATION_NAMES.get(int(code), str(code))
    return "" if name in allowed else f"activations: fused {name} not in {allowed}"


def _bytes_problem(constraints, model, graph, op) -> str:
    limit = constraints.get("max_tensor_bytes")
    if limit is None:
        return ""
    for index in [*op.inputs, *op.outputs]:
        tensor = graph.tensors[index] if index >= 0 else None
        if tensor is not None and not ir.is_constant(model, tensor):
            size = ir.tensor_bytes(tensor)
            if size > limit:
                return f"max_tensor_bytes: tensor '{tensor.name}' has {size} bytes > {limit}"
    return ""
