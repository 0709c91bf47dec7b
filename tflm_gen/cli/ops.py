"""`tflm-gen ops`: the (op, dtype) matrix of tflm_gen/ops_table.py, as text or JSON."""

from __future__ import annotations

import json

import click

from tflm_gen.ops_table import ops_rows, summary
from tflm_gen.table import format_table
from tflm_gen.text import examples


def _dtypes_text(row: dict) -> str:
    """"float32,int8,hybrid(LiteRT)": our dtypes, each marked where LiteRT is its oracle."""
    litert = row.get("litert", [])
    names = row["dtypes"] + [name for name in litert if name not in row["dtypes"]]
    return ",".join(name + ("(LiteRT)" if name in litert else "") for name in names)


def format_ops(rows: list[dict], total: dict) -> str:
    """The text table of `rows`, closed by the summary of all builtins."""
    table = []
    for row in rows:
        ours, theirs = ",".join(row["dtypes"]) or "-", ",".join(row["tflm_dtypes"]) or "-"
        table.append([row["code"], row["op"], row["tflm"], _dtypes_text(row) or "-",
                      "same" if ours == theirs else theirs])
    lines = [format_table(["code", "op", "tflm", "tflm-gen dtypes", "tflm dtypes"], table)]
    lines.append(
        f"{total['builtins']} builtins; TFLM registers {total['tflm']}; tflm-gen runs "
        f"{total['tflm_gen']} ({total['tflm_gen_of_tflm']} of TFLM's {total['tflm']})"
    )
    differ = total["dtype_pairs_differ"]
    lines.append(f"(op, dtype) pairs: TFLM runs {total['dtype_pairs_tflm']}, tflm-gen runs "
                 f"{total['dtype_pairs_both']} of them; TFLM only: "
                 f"{'; '.join(differ['tflm_only']) or 'none'}; tflm-gen only: "
                 f"{'; '.join(differ['tflm_gen_only']) or 'none'}")  # fmt: skip
    return "\n".join(lines)


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
