"""The one table printer of the CLI (`inspect`, `bench`, `targets`, `ops`, `doctor`): a
header row, a rule, aligned columns; integers with thousands separators and numbers
right-aligned, so that columns of sizes can be compared at a glance."""

from __future__ import annotations

import re
from numbers import Integral, Real


def cell_text(value) -> str:
    """An int as `12,345`, anything else as str (the caller formats floats and escapes
    untrusted names with tflm_gen.text.printable)."""
    if isinstance(value, bool):
        return "yes" if value else "-"
    if isinstance(value, Integral):
        return f"{value:,}"
    return str(value)


_NUMBER_TEXT = re.compile(r"^-?[\d,]+(\.\d+)?[%x]?$")  # "12.5%", "1.82x": read as numbers


def _numeric(column: list) -> bool:
    present = [value for value in column if value not in ("", "-", None)]
    return bool(present) and all(
        (isinstance(value, Real) and not isinstance(value, bool))
        or (isinstance(value, str) and _NUMBER_TEXT.match(value)) for value in present)


def format_table(headers: list[str], rows: list[list], indent: str = "") -> str:
    """`rows` under `headers`, one line each; a numeric column is right-aligned (its header
    too), the last column is not padded."""
    columns = list(zip(*rows)) if rows else [[] for _ in headers]
    right = [_numeric(list(column)) for column in columns]
    texts = [[cell_text(value) for value in row] for row in rows]
    widths = [max([len(header), *(len(row[k]) for row in texts)])
              for k, header in enumerate(headers)]

    def line(cells: list[str]) -> str:
        padded = [cell.rjust(width) if align else cell.ljust(width)
                  for cell, width, align in zip(cells, widths, right)]
        return (indent + "  ".join(padded)).rstrip()

    rule = ["-" * width for width in widths]
    return "\n".join([line(headers), line(rule), *(line(row) for row in texts)])
