"""`tflm-gen inspect`: the model summary, `--memory` (the arena and head plan) and
`--accelerator` (where each op would run), printed as text or JSON."""

from __future__ import annotations

import json
from pathlib import Path

import click

from tflm_gen.errors import InputError
from tflm_gen.inspect import format_report, inspect_model, read_model_bytes
from tflm_gen.model.reader import read_model
from tflm_gen.options import tags_option, target_choice
from tflm_gen.output import write_file
from tflm_gen.table import format_table
from tflm_gen.text import examples, printable


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
