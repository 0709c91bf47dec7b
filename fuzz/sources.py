"""Writes the C files the fuzzer compiles: the runtime and every kernel under the given
tags, with a resolver that registers all ops, flat in one folder (as a project has them).

    python -m fuzz.sources OUT_DIR [TAG ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

from tflm_gen.assemble import resolver_files
from tflm_gen.kernels import kernel_catalogue, kernel_files, runtime_files


def write_sources(out: Path, tags: tuple[str, ...]) -> list[str]:
    """Writes the files; returns the .c names to compile."""
    ops = sorted(kernel_catalogue())
    sources = {**runtime_files(tags), **kernel_files(ops, tags)}
    out.mkdir(parents=True, exist_ok=True)
    for name, path in sources.items():
        (out / name).write_bytes(path.read_bytes())
    for name, data in resolver_files(ops, b"").items():  # model_model_ops.c/.h
        (out / name).write_bytes(data)
    return sorted(p.name for p in out.glob("*.c"))


def main(argv: list[str]) -> int:
    names = write_sources(Path(argv[0]), tuple(argv[1:]))
    print(" ".join(names))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
