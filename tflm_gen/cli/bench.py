"""`tflm-gen bench`: the figures of tflm_gen/bench.py (instructions, estimated cycles,
arena, stack, code size) as text, and with --json as a file."""

from __future__ import annotations

import json
from pathlib import Path

import click

from tflm_gen import qemu
from tflm_gen.bench import OPT_FLAGS, bench, compare_with_reference
from tflm_gen.inspect import read_model_bytes
from tflm_gen.options import compress_option, memory_option, tags_option, weights_option
from tflm_gen.output import write_file
from tflm_gen.table import format_table
from tflm_gen.text import examples


def _percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def _split_lines(ops: list[dict], invoke: int) -> list[str]:
    """The accelerator's share of the invoke, for a partitioned model."""
    offloaded = sum(op["instructions"] for op in ops if op["runs_on"] != "cpu")
    cpu = sum(op["instructions"] for op in ops) - offloaded
    if not offloaded:
        return []
    return [(f"accelerator ops {_percent(offloaded, invoke)} of invoke (here the "
             f"reference backend: the subgraph on the CPU), cpu ops {_percent(cpu, invoke)}")]


def _cycles_line(result: dict, clock_mhz: float | None) -> str:
    cycles = result["cycles_per_invoke"]
    if cycles is None:
        return f"no cycle estimate for {result['target']} (no cycle table for its core)"
    timing = (f" = {cycles / (1000.0 * clock_mhz):.3f} ms at {clock_mhz:g} MHz"
              if clock_mhz else "")
    return (f"estimated cycles per invoke {cycles:,}{timing} ({result['core']} table, "
            f"zero wait states: docs/cycles.md)")


def format_bench(result: dict, clock_mhz: float | None = None) -> str:
    """The text of `tflm-gen bench`: one row per operator, then the totals."""
    invoke, cycles = result["instructions_per_invoke"], result["cycles_per_invoke"]
    rows = [[op["index"], op["op"], op["runs_on"], op["instructions"],
             _percent(op["instructions"], invoke)]
            + ([op["cycles"]] if cycles is not None else []) for op in result["ops"]]
    headers = (["#", "op", "runs on", "instructions", "of invoke"]
               + (["est. cycles"] if cycles else []))
    lines = [format_table(headers, rows, indent="  "), *_split_lines(result["ops"], invoke)]
    lines.append(f"instructions per invoke {invoke:,}; init {result['init_instructions']:,}; "
                 f"interpreter overhead {result['interpreter_overhead_pct']:.2f}%")
    lines.append(_cycles_line(result, clock_mhz))
    lines.append(f"arena {result['arena_bytes']:,} B; stack {result['stack_bytes']:,} B "
                 f"(high-water mark of init and invoke); text {result['text']:,} B (runtime "
                 f"{result['text_runtime']:,}, kernels {result['text_kernels']:,}, model "
                 f"{result['model_bytes']:,}, other {result['text_other']:,}); data "
                 f"{result['data']:,} B; bss {result['bss']:,} B")
    lines.append(f"outputs {'bit-exact' if result['bit_exact'] else 'NOT bit-exact'} with the "
                 f"reference on {result['target']} ({result['machine']}, {result['opt']})")
    return "\n".join(lines)


def format_reference(tagged: dict, reference: dict) -> str:
    """The reference kernels' paragraph: totals and the per-op instruction ratio."""
    tags = ",".join(tagged["tags"])
    ratio = reference["instructions_per_invoke"] / max(tagged["instructions_per_invoke"], 1)
    rows = [[mine["index"], mine["op"], theirs["instructions"], mine["instructions"],
             f"{theirs['instructions'] / max(mine['instructions'], 1):.2f}x"]
            for mine, theirs in zip(tagged["ops"], reference["ops"])]
    return "\n".join([
        (f"reference kernels: instructions per invoke {reference['instructions_per_invoke']:,}; "
         f"kernels text {reference['text_kernels']:,} B; tags {tags}: {ratio:.2f}x fewer "
         "instructions"),
        format_table(["#", "op", "reference", tags, "ratio"], rows, indent="  ")])


@click.command("bench", epilog=examples(
    "tflm-gen bench model.tflite",
    "tflm-gen bench model.tflite --target qemu-cortex-m55 --tags cmsis --json figures.json"))
@click.argument("model_path", type=click.Path(dir_okay=False, exists=True))
@click.option("--target", type=click.Choice(qemu.qemu_targets()), default="qemu-cortex-m4",
              show_default=True, help="the QEMU board (`tflm-gen targets`)")
@tags_option()
@click.option("--opt", type=click.Choice(OPT_FLAGS), default=qemu.DEFAULT_OPT,
              show_default=True, help="optimisation flag")
@click.option("--json", "json_path", help="also write the figures to this JSON file")
@click.option("--compare/--no-compare", default=True, show_default=True,
              help="with --tags, also run the reference kernels and report the ratio")
@click.option("--clock-mhz", type=click.FloatRange(min=0.001, max=100000.0), default=None,
              help="also print the estimated cycles as milliseconds at this clock")
@weights_option()
@memory_option()
@compress_option()
def bench_command(model_path, target, tags, opt, json_path, compare, clock_mhz, weights, memory,
                  compress):
    """Count the instructions MODEL executes on a QEMU board, per invoke and per operator,
    and estimate its cycles."""
    model = read_model_bytes(Path(model_path))
    result = bench(model, target, tags, opt, weights, memory, compress)
    if clock_mhz and result["cycles_per_invoke"] is not None:
        result["clock_mhz"] = clock_mhz
        result["ms_per_invoke"] = round(result["cycles_per_invoke"] / (1000.0 * clock_mhz), 6)
    click.echo(format_bench(result, clock_mhz))
    if compare and tags:
        result["reference"] = compare_with_reference(model, target, opt, result)
        click.echo(format_reference(result, result["reference"]))
    if json_path:
        write_file(json_path, (json.dumps(result, indent=2) + "\n").encode())
    exact = result["bit_exact"] and result.get("reference", {}).get("bit_exact", True)
    raise SystemExit(0 if exact else 1)
