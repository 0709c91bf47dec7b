"""`tflm-gen ops`: the (op, dtype) matrix of tflm_gen/ops_table.py, as text or JSON."""

from __future__ import annotations

import json

import click

from tflm_gen.ops_table import format_ops, ops_rows, summary
from tflm_gen.text import examples


@click.command("ops", epilog=examples("tflm-gen ops", "tflm-gen ops --tflm-only",
                                      "tflm-gen ops --json"))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@click.option("--tflm-only", is_flag=True, help="Only the builtins TFLM registers.")
def ops_command(as_json: bool, tflm_only: bool) -> None:
    """List every TFLite builtin: the dtypes tflm-gen supports beside TFLM's support."""
    every = ops_rows()
    rows = [row for row in every if row["tflm"] or not tflm_only]
    if as_json:
        click.echo(json.dumps({"ops": rows, "summary": summary(every)}, indent=2))
    else:
        click.echo(format_ops(rows, summary(every)))
