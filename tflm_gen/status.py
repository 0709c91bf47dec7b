"""Status codes of the C runtime, read from runtime_c/tflm_status.h (the one list)."""

from __future__ import annotations

import re
from functools import lru_cache

from tflm_gen.resources import resource_dir

_ENTRY = re.compile(r'X\((TFLM_\w+),\s*"([^"]*)"\)')


@lru_cache(maxsize=1)
def status_table() -> list[tuple[str, str]]:
    """(name, text) in enum order."""
    header = (resource_dir("runtime_c") / "tflm_status.h").read_text()
    return _ENTRY.findall(header)


def status_name(code: int) -> str:
    table = status_table()
    return table[code][0] if 0 <= code < len(table) else f"status {code}"


def status_text(code: int) -> str:
    table = status_table()
    return table[code][1] if 0 <= code < len(table) else f"unknown status {code}"


def status_code(name: str) -> int:
    return [entry[0] for entry in status_table()].index(name)
