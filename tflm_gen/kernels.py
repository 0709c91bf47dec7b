"""The catalogue of C kernels and the tag rule that picks each file's variant.

A kernel file declares the ops it implements in marker comments
(`/* tflm-op: CONV_2D tflm_op_conv_2d types: float32,int8 */`); an optional
`litert: float32,hybrid` after the types names what TFLM cannot run, so LiteRT's reference
kernels are the oracle there (`hybrid`: float32 activations with int8 weights); helper files come along
when a chosen file includes them.  For an ordered tag list (an implicit `reference`
first), `<dir>/<tag>/f.c` replaces `<dir>/f.c` and the last tag that has the file wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tflm_gen.errors import InputError
from tflm_gen.resources import resource_dir

_MARKER = re.compile(r"tflm-op:\s*(\w+)\s+(\w+)\s+types:\s*([\w,]+)(?:\s+litert:\s*([\w,]+))?")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


@dataclass(frozen=True)
class KernelSpec:
    op: str  # BuiltinOperator name, e.g. "CONV_2D"
    symbol: str  # the tflm_registration_t defined by the file
    file: str  # file name inside kernels_c/
    dtypes: frozenset[str]  # activation dtypes the kernel supports
    litert: frozenset[str] = frozenset()  # dtypes (or "hybrid") only LiteRT can check


@cache
def kernel_catalogue() -> dict[str, KernelSpec]:
    """Every op implemented in kernels_c/ (reference variants), by op name."""
    catalogue = {}
    for path in sorted(resource_dir("kernels_c").glob("*.c")):
        for op, symbol, types, litert in _MARKER.findall(path.read_text()):
            catalogue[op] = KernelSpec(op, symbol, path.name, frozenset(types.split(",")),
                                       frozenset(litert.split(",")) - {""})
    return catalogue


def supported_ops() -> dict[str, set[str]]:
    """Op name -> activation dtype names we can run."""
    return {op: set(spec.dtypes) for op, spec in kernel_catalogue().items()}


def choose_variant(base: Path, name: str, tags: tuple[str, ...]) -> Path | None:
    """The file that stands for `name` under the tag rule, or None when there is none."""
    chosen = base / name if (base / name).is_file() else None
    for tag in tags:
        candidate = base / tag / name
        if candidate.is_file():
            chosen = candidate
    return chosen


def _with_includes(base: Path, roots: list[str], tags: tuple[str, ...]) -> dict[str, Path]:
    """The files `roots` plus every local header they include (and its .c), transitively."""
    chosen: dict[str, Path] = {}
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in chosen:
            continue
        path = choose_variant(base, name, tags)
        if path is None:
            continue
        chosen[name] = path
        pending += _INCLUDE.findall(path.read_text())
        if name.endswith(".h"):
            pending.append(name[:-2] + ".c")
    return chosen


def runtime_files(tags: tuple[str, ...]) -> dict[str, Path]:
    """All runtime sources and headers, each in its tag-chosen variant, by output name.

    A tag's `f.cpp` may stand for `f.c` (a port written in C++ with C linkage, such as a
    DebugLog over Arduino's Serial); the last tag with either file wins.
    """
    base = resource_dir("runtime_c")
    names = sorted(p.name for p in base.iterdir() if p.suffix in (".c", ".h", ".cpp"))
    files = {}
    for name in names:
        chosen = choose_variant(base, name, tags)
        if name.endswith(".c"):
            for tag in tags:
                for candidate in (base / tag / name, base / tag / (name[:-2] + ".cpp")):
                    chosen = candidate if candidate.is_file() else chosen
        files[chosen.name] = chosen
    return files


def kernel_files(ops: list[str], tags: tuple[str, ...]) -> dict[str, Path]:
    """The kernel files (and helpers they include) for `ops`; runtime headers excluded."""
    catalogue = kernel_catalogue()
    roots = sorted({catalogue[op].file for op in ops})
    files = _with_includes(resource_dir("kernels_c"), roots, tags)
    return dict(sorted(files.items()))


# What each tag's files do; tests/test_cli_help.py checks that every tag has a line.
TAG_DESCRIPTIONS = {
    "cmsis": "int8 conv, depthwise conv, fully connected, add, mul, pooling and softmax "
             "kernels using Cortex-M DSP or Helium (MVE) instructions where the compiler "
             "offers them, plain C elsewhere; same integers as the reference kernels",
    "arduino": "DebugLog over Arduino's Serial (C++)",
    "cortexm": "tflm_timer over the Cortex-M DWT cycle counter",
    "mbed": "DebugLog over the Mbed OS console UART (C++)",
    "semihost": "DebugLog over semihosting (a debugger's or QEMU's console); the board's "
                "startup provides the trap",
    "stm32f4": "DebugLog over an STM32F4 USART (which one: tflm_board.h, written for "
               "--board)",
    "zephyr": "DebugLog over Zephyr's printk",
}


def host_tags(tags: tuple[str, ...]) -> tuple[str, ...]:
    """The tags the host run uses: a tag that only replaces runtime files (a board's
    DebugLog) changes neither arithmetic nor the arena, and need not build on the host."""
    kernels, runtime = resource_dir("kernels_c"), resource_dir("runtime_c")
    return tuple(tag for tag in tags if (kernels / tag).is_dir() or not (runtime / tag).is_dir())


def tag_description(tag: str) -> str:
    return TAG_DESCRIPTIONS.get(tag, "(no description)")


def known_tags() -> list[str]:
    """Every tag: the sub-folders of kernels_c/ and runtime_c/ (`cmsis`, `semihost`, ...)."""
    folders = (resource_dir("kernels_c"), resource_dir("runtime_c"))
    return sorted({path.name for base in folders for path in base.iterdir() if path.is_dir()
                   and not path.name.startswith((".", "_"))})


def check_tags(tags: tuple[str, ...]) -> None:
    """Raises InputError for a tag that is not a known name: a tag is joined to paths
    (`kernels_c/<tag>/f.c`), so `../x` must never reach choose_variant."""
    unknown = [tag for tag in tags if tag not in known_tags()]
    if unknown:
        raise InputError(f"unknown tag {', '.join(repr(tag) for tag in unknown)}; known tags: "
                         f"{', '.join(known_tags())}")
