"""Constants and layouts Python shares with the C runtime, read from the runtime's headers.

The C header is the one declaration (STYLE.md: one table, two languages): the arena
alignment (tflm_arena.h), the ABI version (tflm_interpreter.h), the structs cffi passes
across (tflm_tensor_t, tflm_memory_stats_t).  Values the schema fixes go the other way:
generated headers written from the `tflite` package (schema_header, builtin_header).
"""

from __future__ import annotations

import re
from functools import cache

from tflm_gen.resources import resource_dir


@cache
def _header_text(header: str) -> str:
    """A runtime header without its comments."""
    text = (resource_dir("runtime_c") / header).read_text()
    return re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)


def header_define(header: str, macro: str) -> int:
    """The integer a runtime header #defines `macro` to (an unsigned suffix dropped)."""
    match = re.search(rf"^\s*#define {macro} (\d+)[uU]?\s*$", _header_text(header), re.MULTILINE)
    if match is None:
        raise RuntimeError(f"runtime_c/{header} defines no integer {macro}")
    return int(match.group(1))


def header_struct(header: str, name: str) -> str:
    """The `typedef struct {...} name;` of a runtime header, for cffi (comments dropped,
    size macros of tflm_kernel.h replaced by their values)."""
    match = re.search(r"typedef struct \{[^{}]*\} " + name + ";", _header_text(header))
    if match is None:
        raise RuntimeError(f"runtime_c/{header} declares no {name}")
    return re.sub(r"\bTFLM_\w+\b", lambda m: str(header_define("tflm_kernel.h", m.group(0))),
                  match.group(0))


ARENA_ALIGN = header_define("tflm_arena.h", "TFLM_ARENA_ALIGN")
RUNTIME_ABI_VERSION = header_define("tflm_interpreter.h", "TFLM_RUNTIME_ABI_VERSION")
