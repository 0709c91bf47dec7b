"""`tflm-gen report`: the HTML page of tflm_gen/report.py written to -o."""

from __future__ import annotations

from pathlib import Path

import click

from tflm_gen.options import (
    compress_option,
    memory_option,
    tags_option,
    target_choice,
    weights_option,
)
from tflm_gen.output import write_file
from tflm_gen.report import build_report, check_writable, render_html
from tflm_gen.text import examples


@click.command("report", epilog=examples(
    "tflm-gen report model.tflite -o report.html",
    "tflm-gen report model.tflite --target qemu-cortex-m4 --tags cmsis -o report.html",
    "tflm-gen report model.tflite --weights separate --compress -o report.html"))
@click.argument("model", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--target", type=target_choice(), default=None,
              help="a qemu-* target adds the per-operator profile and the linked code size")
@tags_option()
@weights_option()
@memory_option()
@compress_option()
@click.option("-o", "--output", "output_path", required=True,
              type=click.Path(dir_okay=False, path_type=Path), help="the HTML file to write")
def report_command(model: Path, target, tags, weights, memory, compress,
                   output_path: Path) -> None:
    """Write one self-contained HTML page: summary, memory plan, arena, profile, code size.

    Example: tflm-gen report model.tflite --target qemu-cortex-m4 -o report.html
    """
    check_writable(output_path)
    data = build_report(model, target, tags, weights, memory, compress)
    write_file(output_path, render_html(data).encode())
    click.echo(f"wrote {output_path}", err=True)
