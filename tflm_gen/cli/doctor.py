"""`tflm-gen doctor`: the tool table of tflm_gen/toolchains.py, found or missing."""

from __future__ import annotations

import json

import click

from tflm_gen.text import examples
from tflm_gen.toolchains import doctor_rows, format_doctor


@click.command("doctor", epilog=examples("tflm-gen doctor", "tflm-gen doctor --json"))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
def doctor_command(as_json: bool) -> None:
    """Check which compilers and emulators are installed, and how to install the others."""
    rows = doctor_rows()
    click.echo(json.dumps({"tools": rows}, indent=2) if as_json else format_doctor(rows))
