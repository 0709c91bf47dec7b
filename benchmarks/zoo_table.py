"""Prints the zoo table of issue 19 for every model of tests/zoo/<source>/:
model | dtype | ops | host | M4 | M4 cmsis | arena ours / TFLM.

    python3 benchmarks/zoo_table.py [--no-verify]

host: `verify` over three invokes against the row's oracle (TFLM, or LiteRT where the row
says so), or the row's refusal / stated defect.  M4 and M4 cmsis are what
tests/test_zoo.py runs under QEMU for the int8 rows that run (not repeated here: run
`pytest tests/test_zoo.py -k cortex`).  Arenas: ours measured by the runtime on the device
model a project embeds; TFLM's from its recording allocator on the original model.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from test_zoo import ROWS, oracle_of

from tflm_gen.errors import TflmGenError
from tflm_gen.memory import memory_report
from tflm_gen.oracle import tflm_allocations
from tflm_gen.verify import verify


def host_column(row: dict, data: bytes, check: bool) -> str:
    expect = row["expect"]
    if expect.startswith(("refused", "defect")):
        return expect.split(":", 1)[0] + (" (" + expect.split(":", 2)[-1].strip()[:50] + ")")
    if not check:
        return "ok (not rerun)"
    report = verify(data, oracle_of(row), runs=3)
    return f"bit-exact vs {report.against}" if report.bit_exact else "DIFFERS"


def arena_column(row: dict, data: bytes) -> tuple[str, float | None]:
    if not row["expect"].startswith("ok"):
        return "-", None
    ours = memory_report(data)["arena_bytes"]
    try:
        theirs = tflm_allocations(data)["total"]
    except TflmGenError:
        return f"{ours:,} / - (TFLM cannot run it)", None
    return f"{ours:,} / {theirs:,}", ours / theirs


def main() -> None:
    check = "--no-verify" not in sys.argv
    print("| model | dtype | ops | host | M4 | M4 cmsis | arena ours / TFLM |")
    print("|---|---|---|---|---|---|---|")
    ratios = []
    for row in ROWS:
        data = row["path"].read_bytes()
        board = "pass" if row["dtype"] == "int8" and row["expect"] == "ok" else "-"
        arena, ratio = arena_column(row, data)
        if ratio:
            ratios.append(ratio)
        ops = len(row["ops"].split(","))
        print(f"| {row['path'].parent.name}/{row['path'].stem} | {row['dtype']} | {ops} | "
              f"{host_column(row, data, check)} | {board} | {board} | {arena} |", flush=True)
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"\ngeometric mean of ours/TFLM arena over {len(ratios)} models: {geomean:.3f}")


if __name__ == "__main__":
    main()
