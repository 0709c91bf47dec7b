"""`tflm-gen inspect`: the model summary, `--memory` (the arena and head plan) and
`--accelerator` (where each op would run), printed as text or JSON."""

from __future__ import annotations

import json
from pathlib import Path

import click

from tflm_gen.errors import InputError, UnsupportedModelError
from tflm_gen.inspect import inspect_model, read_model_bytes
from tflm_gen.model.reader import read_model
from tflm_gen.options import tags_option, target_choice
from tflm_gen.output import write_file
from tflm_gen.table import format_table
from tflm_gen.text import examples, printable


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
    lines += _coding_text(report["weight_coding"])
    lines.append(f"activation lower bound: {report['activation_lower_bound_bytes']:,} bytes")
    lines += _support_text(report)
    return "\n".join(lines)


def _coding_text(rows: list[dict]) -> list[str]:
    """The filters `--compress` codes: what each holds and its chosen coding."""
    if not rows:
        return []
    total, coded = sum(r["bytes"] for r in rows), sum(r["coded_bytes"] for r in rows)
    table = [[printable(r["tensor"])[:40], r["op"], f"{r['bytes']:,}", f"{r['sparsity']:.1%}",
              str(r["distinct"]), r["coding"], f"{r['coded_bytes']:,}"] for r in rows]
    return [f"filters with --compress: {total:,} -> {coded:,} bytes ({coded / total:.1%})",
            format_table(["tensor", "op", "bytes", "zeros", "distinct", "coding", "coded"],
                         table, indent="  ")]


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


def _support_text(report: dict) -> list[str]:
    """The verdict of `run` and `verify` (tflm_gen.inspect.support_verdict), after the
    operators they lack."""
    lines = ["unsupported operators:"] if report["unsupported_ops"] else []
    for row in report["unsupported_ops"]:
        lines.append(f"  {printable(row['op'])} version {row['version']} "
                     f"({row['dtype'] or 'no tensors'})")
    if report["refused"] is not None:
        return [*lines, f"refused by run and verify: {printable(report['refused'])}"]
    if not report["kernels_checked"]:
        return [*lines, ("supported: all operators (the kernels check shapes and options "
                         "when the runtime starts: no host C compiler here to run them)")]
    return [*lines, "supported: all operators"]


def format_memory(report: dict) -> str:
    """The text of `inspect --memory`: the arena's parts, then every head buffer and scratch."""
    where = report.get("target", "host")
    tags = ",".join(report.get("tags", [])) or "none"
    lines = [
        (f"arena: {report['arena_bytes']:,} bytes on {where}, tags {tags} (the exact size a "
         "project declares)"),
        (f"  head {report['head_bytes']:,} bytes (op-by-op bound {report['lower_bound_bytes']:,}"
         f", kernel scratch {report['scratch_bytes']:,})"),
        (f"  tail {report['tail_bytes']:,} bytes: runtime state {report['runtime_bytes']:,}, "
         f"kernel data {report['kernel_bytes']:,}, variable tensors "
         f"{report['variable_bytes']:,}"),
        (f"  bottom at peak: {report['arena_bytes'] - report['tail_bytes']:,} bytes "
         "(the head, or init temporaries where larger)"),
        "",
    ]
    rows = []
    for buffer in report["plan"]:
        names = printable(", ".join(buffer["tensors"]))
        names = names if len(names) <= 70 else names[:67] + "..."
        overlaps = ", ".join(f"{o['bytes']:,} over {o['offset']:,}"
                             + (" (backward)" if o["walk"] == "backward" else "")
                             for o in buffer["overlaps"])
        if buffer.get("tile"):
            overlaps = ", ".join(filter(None, ["stage tile", overlaps]))
        rows.append([buffer["offset"], buffer["bytes"],
                     f"{buffer['first_op']}-{buffer['last_op']}", overlaps, names])
    for scratch in report["scratch"]:
        rows.append([scratch["offset"], scratch["bytes"],
                     f"{scratch['first_op']}-{scratch['last_op']}",
                     "", f"(scratch of operator {scratch['node']} {printable(scratch['op'])})"])
    lines.append(format_table(["offset", "bytes", "ops", "overlap", "tensors"], rows))
    lines.append("overlap: bytes of an operator's output written over the consumed part of "
                 "its input (at that offset); backward: the kernel writes the last pixel first")
    if report.get("stage"):
        lines.append("stage in this plan: " + stage_text(report["stage"]))
    lines += [format_patch(row) for row in report.get("patches", [])]
    return "\n".join(lines)


def format_patch(row: dict) -> str:
    """One `--memory small|balanced` patch stage of `inspect --memory` (tile tensors by
    name in --json)."""
    return (f"project --memory {row['memory']}: {stage_text(row)}; arena "
            f"{row['arena_without']:,} -> {row['arena_bytes']:,} bytes")


def stage_text(row: dict) -> str:
    """A patch stage (tflm_gen.memory.stage_row) in one phrase."""
    tiles = " + ".join(f"{tile['bytes']:,}" for tile in row["tiles"])
    buffers = " + ".join(f"{size:,}" for size in row["buffers"])
    share = 100 * row["extra_macs"] / max(1, row["model_macs"])
    ending = "" if row["ending"] == "chain" else f" ending in a {row['ending']}"
    return (f"operators {row['first_op']}-{row['last_op']} as one stage{ending}, {row['bands']} bands "
            f"of {row['band_rows']} output rows, tiles {tiles} bytes in buffers {buffers}, "
            f"+{row['extra_macs']:,} MACs (+{share:.1f}%)")


@click.command("inspect", epilog=examples(
    "tflm-gen inspect model.tflite",
    "tflm-gen inspect model.tflite --json",
    "tflm-gen inspect model.tflite --memory --target qemu-cortex-m4 --tags cmsis",
    "tflm-gen inspect model.tflite --accelerator conv_only",
    "tflm-gen inspect model.tflite --weights --tags cmsis"))
@click.argument("model", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@click.option("--memory", is_flag=True, help="Show the arena, its sections and the head plan.")
@click.option("--svg", "svg_path", type=click.Path(dir_okay=False, path_type=Path),
              help="With --memory: write a picture of the plan here.")
@click.option("--target", type=target_choice(), default=None,
              help="With --memory: the target, for the tags it implies (the arena is the same "
                   "on every target for the same kernels).")
@tags_option("With --memory or --weights: kernel/runtime tags, as `project --tags` "
             "(`tflm-gen tags`).")
@click.option("--accelerator", "spec", default=None,
              help="Show which ops `partition --accelerator SPEC` would offload, and why the "
                   "others stay on the CPU.")
@click.option("--weights", "weights", is_flag=True,
              help="Show every constant tensor (bytes, sparsity, distinct values) and the "
                   "sizes of `--weights separate`.")
def inspect_command(model: Path, as_json: bool, memory: bool, svg_path, target, tags,
                    spec, weights) -> None:
    """Show a model's inputs, outputs, operators, memory needs and unsupported ops."""
    if spec is not None:
        _inspect_partition(model, spec, as_json)
        return
    if weights:
        if memory or svg_path:
            raise click.UsageError("--weights and --memory are two reports: ask for one")
        _inspect_weights(model, as_json, tags)
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


WEIGHT_HEADERS = ["tensor", "name", "dtype", "bytes", "zeros", "distinct", "coding", "compressed"]


def format_weights(report: dict) -> str:
    """The text of `inspect --weights`: one row per constant tensor, then the split."""
    def shown(value, text: str) -> str:
        return "-" if value is None else text

    rows = [[row["tensor"], printable(row["name"])[:40], row["dtype"], row["bytes"],
             f"{row['sparsity']:.1%}", row["distinct"], shown(row["coding"], str(row["coding"])),
             shown(row["compressed_bytes"], f"{row['compressed_bytes']}")]
            for row in report["tensors"]]
    split = report["separate"]
    if split is None:
        why = f"tflm-gen does not generate this model: {report['separate_refused']}"
        return "\n".join([format_table(WEIGHT_HEADERS, rows), f"--weights separate: no split, {why}"])
    return "\n".join([
        format_table(WEIGHT_HEADERS, rows),
        (f"--weights separate: mini flatbuffer {split['mini_bytes']:,} of "
         f"{split['whole_bytes']:,} bytes ({split['saving']:.1%} smaller), weight array "
         f"{split['weights_bytes']:,} bytes")])


def _inspect_weights(path: Path, as_json: bool, tags) -> None:
    """The constants of any model, as plain `inspect` describes any model; the split of
    `--weights separate` only for a model tflm-gen generates (it is the split of the
    device model a project embeds), else why not, in its place."""
    from tflm_gen.optimize import supported_device_model
    from tflm_gen.weights import separate_summary, weight_rows

    data = read_model_bytes(path)
    report = {"model": str(path), "tensors": weight_rows(read_model(data))}
    try:
        report["separate"] = separate_summary(supported_device_model(data, tuple(tags))[0])
    except UnsupportedModelError as error:
        report["separate"], report["separate_refused"] = None, str(error)
    click.echo(json.dumps(report, indent=2) if as_json else format_weights(report))


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
    from tflm_gen.memory import memory_report
    from tflm_gen.targets import load_target

    # A board's runtime files (semihosting, Serial) do not build on the host and change no
    # arena byte: the host run keeps the kernel tags only, as `project` does.
    all_tags = (load_target(target).tags if target else ()) + tuple(tags)
    report = memory_report(read_model_bytes(model), host_tags(all_tags), patches=True)
    report["target"] = target or "host"
    report["tags"] = list(all_tags)
    if svg_path:
        write_file(svg_path, memory_plan_svg(report).encode())
    click.echo(json.dumps(report, indent=2) if as_json else format_memory(report))
    if svg_path:  # on stderr, so that --json output stays one JSON object
        click.echo(f"wrote the memory plan picture to {svg_path}", err=True)
