"""`tflm-gen doctor`: the tool table of tflm_gen/toolchains.py, found or missing."""

from __future__ import annotations

import json

import click

from tflm_gen.table import format_table
from tflm_gen.text import examples
from tflm_gen.toolchains import doctor_rows, tool_named


def format_doctor(rows: list[dict]) -> str:
    lines = [format_table(["tool", "status", "needed for"],
                          [[row["tool"], row["version"] if row["found"] else "MISSING",
                            row["needed_for"]] for row in rows])]
    for row in rows:
        tool = tool_named(row["tool"])
        if not row["found"]:
            lines += ["", f"{tool.name} is missing; install it with:",
                      f"  Debian/Ubuntu: {tool.debian}", f"  macOS:         {tool.macos}",
                      f"  Windows:       {tool.windows}"]
        if tool.note:
            lines += ["", f"note on {tool.name}: {tool.note}"]
    missing = [tool_named(row["tool"]) for row in rows if not row["found"]]
    lines += ["", f"{len(rows) - len(missing)} of {len(rows)} tools found"]
    if missing:
        packages = " ".join(dict.fromkeys(
            package for tool in missing for package in tool.debian.split("install", 1)[1].split()))
        lines.append(f"all missing ones on Debian/Ubuntu: sudo apt-get install {packages}")
    return "\n".join(lines)


@click.command("doctor", epilog=examples("tflm-gen doctor", "tflm-gen doctor --json"))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
def doctor_command(as_json: bool) -> None:
    """Check which compilers and emulators are installed, and how to install the others."""
    rows = doctor_rows()
    click.echo(json.dumps({"tools": rows}, indent=2) if as_json else format_doctor(rows))
