"""`tflm-gen inspect`: what a model holds, what it costs, and whether we can run it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import click

from tflm_gen.errors import InputError, ModelError
from tflm_gen.kernels import supported_ops
from tflm_gen.model import ir
from tflm_gen.model.lifetimes import activation_lower_bound
from tflm_gen.model.partition_op import partition_subgraph
from tflm_gen.model.reader import read_model
from tflm_gen.op_descriptors import describe
from tflm_gen.options import tags_option, target_choice
from tflm_gen.output import write_file
from tflm_gen.support import (
    activation_tensor,
    hybrid_problem,
    is_accelerator_op,
    limit_problem,
)
from tflm_gen.table import format_table
from tflm_gen.text import examples, printable


def read_model_bytes(path: Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ModelError(f"cannot read model {path}: {error.strerror}") from None


def inspect_model(path: str | Path) -> dict:
    """A summary of the model's main subgraph as a JSON-ready dict (see `inspect_command`)."""
    model = read_model(path)
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
        "activation_lower_bound_bytes": activation_lower_bound(model),
        "unsupported_ops": unsupported_ops(model),
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


def format_report(report: dict) -> str:
    """The human-readable text of `tflm-gen inspect`."""
    lines = [f"model: {printable(report['model'])}"]
    for kind in ("inputs", "outputs"):
        lines.append(f"{kind}:")
        lines += [f"  {_io_text(row)}" for row in report[kind]]
    lines.append(f"operators ({len(report['operators'])}):")
    lines.append(_operator_table(report["operators"]))
    for sub in report["subgraphs"]:
        lines.append(f"subgraph {sub['index']} '{printable(sub['name'])}': inputs "
                     f"{sub['inputs']}, outputs {sub['outputs']}, "
                     f"{len(sub['operators'])} operators")
        lines.append(_operator_table(sub["operators"]))
    for row in report["partitions"]:
        lines.append(f"accelerator op #{row['index']} '{printable(row['custom_op'])}' runs "
                     f"subgraph {row['subgraph']}: {len(row['ops'])} ops ({_op_counts(row['ops'])})"
                     f", {row['macs']:,} MACs")
    lines.append(f"tensors: {report['tensor_count']:,}")
    lines.append(f"total MACs: {report['total_macs']:,}")
    lines.append(f"weight bytes: {report['weight_bytes']:,}")
    lines.append(f"activation lower bound: {report['activation_lower_bound_bytes']:,} bytes")
    lines += _support_text(report["unsupported_ops"])
    return "\n".join(lines)


def _op_counts(names: list[str]) -> str:
    counts = {name: names.count(name) for name in dict.fromkeys(names)}
    return ", ".join(f"{name} x{count}" for name, count in counts.items())


def _operator_table(rows: list[dict]) -> str:
    """One line per operator; tensors as `index:shape` (`-` for an absent optional input)."""
    def tensors(indices: list[int], shapes: list) -> str:
        return " ".join("-" if shape is None else f"{index}:{_shape_text(shape)}"
                        for index, shape in zip(indices, shapes))

    table = [[row["index"], printable(row["op"]), row["version"], row["macs"],
              tensors(row["inputs"], row["input_shapes"]),
              tensors(row["outputs"], row["output_shapes"])] for row in rows]
    return format_table(["#", "op", "ver", "MACs", "inputs (tensor:shape)", "outputs"], table,
                        indent="  ")


def _shape_text(shape: list[int]) -> str:
    return "x".join(str(dim) for dim in shape) or "scalar"


def _io_text(row: dict) -> str:
    text = f"{printable(row['name'])}: {_shape_text(row['shape'])} {row['dtype']}"
    if row["scale"] is not None:
        text += f" scale={row['scale']:.9g} zero_point={row['zero_point']}"
    return text


def _support_text(unsupported: list[dict]) -> list[str]:
    if not unsupported:
        return ["supported: all operators"]
    lines = ["unsupported operators:"]
    for row in unsupported:
        lines.append(f"  {printable(row['op'])} version {row['version']} "
                     f"({row['dtype'] or 'no tensors'})")
    return lines


@click.command("inspect", epilog=examples(
    "tflm-gen inspect model.tflite",
    "tflm-gen inspect model.tflite --json",
    "tflm-gen inspect model.tflite --memory --target qemu-cortex-m4 --tags cmsis",
    "tflm-gen inspect model.tflite --accelerator conv_only"))
@click.argument("model", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@click.option("--memory", is_flag=True, help="Show the arena, its sections and the head plan.")
@click.option("--svg", "svg_path", type=click.Path(dir_okay=False, path_type=Path),
              help="With --memory: write a picture of the plan here.")
@click.option("--target", type=target_choice(), default=None,
              help="With --memory: the target, for the tags it implies (the arena is the same "
                   "on every target for the same kernels).")
@tags_option("With --memory: kernel/runtime tags, as `project --tags` (`tflm-gen tags`).")
@click.option("--accelerator", "spec", default=None,
              help="Show which ops `partition --accelerator SPEC` would offload, and why the "
                   "others stay on the CPU.")
def inspect_command(model: Path, as_json: bool, memory: bool, svg_path, target, tags,
                    spec) -> None:
    """Show a model's inputs, outputs, operators, memory needs and unsupported ops."""
    if spec is not None:
        _inspect_partition(model, spec, as_json)
        return
    if memory:
        _inspect_memory(model, as_json, svg_path, target, tags)
        return
    if svg_path:
        raise click.UsageError("--svg needs --memory (the picture is of the memory plan)")
    if tags:
        raise InputError("--tags applies to --memory (the arena the kernels need)")
    report = inspect_model(model)
    click.echo(json.dumps(report, indent=2) if as_json else format_report(report))


def _inspect_partition(path: Path, spec: str, as_json: bool) -> None:
    from tflm_gen.accelerator import load_accelerator
    from tflm_gen.partition import partition_rows, partition_summary, plan_partition, summary_line

    model = read_model(read_model_bytes(path))
    accelerator = load_accelerator(spec)
    plan = plan_partition(model, accelerator)
    rows = partition_rows(model, plan, accelerator)
    summary = partition_summary(model, plan, accelerator)
    if as_json:
        keys = ["index", "op", "macs", "runs_on", "reason"]
        click.echo(json.dumps({"accelerator": accelerator.name, **summary, "groups": plan.groups,
                               "operators": [dict(zip(keys, row)) for row in rows]}, indent=2))
        return
    click.echo(f"accelerator: {printable(accelerator.name)} (custom op "
               f"{accelerator.custom_op}): {printable(accelerator.description)}")
    click.echo(format_table(["#", "op", "MACs", "runs on", "why it stays on the CPU"], rows,
                            indent="  "))
    click.echo(summary_line(summary))


def _inspect_memory(model: Path, as_json: bool, svg_path, target, tags) -> None:
    from tflm_gen.charts import memory_plan_svg
    from tflm_gen.kernels import host_tags
    from tflm_gen.memory import format_memory, memory_report
    from tflm_gen.targets import load_target

    # A board's runtime files (semihosting, Serial) do not build on the host and change no
    # arena byte: the host run keeps the kernel tags only, as `project` does.
    all_tags = (load_target(target).tags if target else ()) + tuple(tags)
    report = memory_report(read_model_bytes(model), host_tags(all_tags))
    report["target"] = target or "host"
    report["tags"] = list(all_tags)
    if svg_path:
        write_file(svg_path, memory_plan_svg(report).encode())
    click.echo(json.dumps(report, indent=2) if as_json else format_memory(report))
    if svg_path:  # on stderr, so that --json output stays one JSON object
        click.echo(f"wrote the memory plan picture to {svg_path}", err=True)
