"""benchmarks/conformance_matrix.py chooses its cells without running any: each cell once
(a board cell with --compress or --weights separate at balanced is also one of the fixed
host / M4 variants; counted twice, it made the table's columns disagree with the cells run),
and `--weights` reaches every board cell."""

from __future__ import annotations

from benchmarks.conformance_matrix import cell_key, combinations

TARGETS = ["host", "qemu-cortex-m4"]
MEMORIES = ["balanced", "small"]


def test_each_cell_once_with_compress_and_separate_weights():
    for compress in (False, True):
        for weights in ("whole", "separate"):
            cells = combinations(["a", "b"], TARGETS, True, [()], compress, MEMORIES, weights)
            keys = [cell_key(cell) for cell in cells]
            assert len(keys) == len(set(keys)), keys


def test_weights_reach_every_memory():
    cells = combinations(["a"], TARGETS, True, [()], True, MEMORIES, "separate")
    small = [c for c in cells if c["memory"] == "small"]
    assert len(small) == 2
    assert all(c["weights"] == "separate" and c["compress"] for c in small)
