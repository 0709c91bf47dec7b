"""What the tables comparing a kernel tag with the reference kernels share (cmsis_table.py,
cores_table.py): the corpus folder and its --models option, and one model benched under
QEMU with both kernel sets."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# This checkout's tflm_gen and kernels, not an installed copy's.
sys.path.insert(0, str(REPO))

from tflm_gen.bench import bench

CORPUS = Path(os.environ.get("TFLM_GEN_CORPUS") or REPO.parent / "shared" / "models")


def parser(doc: str) -> argparse.ArgumentParser:
    """The table's options: its first docstring line as description, and --models."""
    options = argparse.ArgumentParser(description=doc.split("\n")[0])
    options.add_argument("--models", type=Path, default=CORPUS)
    return options


def bench_both(data: bytes, target: str, tag: str = "cmsis") -> tuple[dict, dict, bool]:
    """tflm_gen.bench of the reference kernels and of the tag's, and whether both were
    bit-exact."""
    reference, tagged = bench(data, target), bench(data, target, (tag,))
    return reference, tagged, bool(reference["bit_exact"] and tagged["bit_exact"])
