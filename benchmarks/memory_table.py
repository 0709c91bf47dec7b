"""Prints the memory table of issue 5 for every shared model we run:
model | lower bound | our head | TFLM head | our tail | TFLM tail | our total | TFLM total.

    python3 benchmarks/memory_table.py

Ours: the device model a project embeds (offline plan, flash requantisation), measured by
the runtime itself (tflm_interpreter_memory; identical on 64-, 32- and 8-bit targets).
TFLM's: its recording allocator (print_allocations) on this 64-bit host, original model.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tflm_gen.errors import TflmGenError
from tflm_gen.memory import memory_report
from tflm_gen.oracle import tflm_allocations

CORPUS = REPO.parent / "shared" / "models"


def main() -> None:
    print("| model | lower bound | our head | TFLM head | our tail | TFLM tail | our total | "
          "TFLM total | ours/TFLM |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for path in sorted(CORPUS.glob("*.tflite")):
        data = path.read_bytes()
        try:
            ours = memory_report(data)
        except TflmGenError as error:
            print(f"| {path.stem} | not run: {str(error)[:70]} |")
            continue
        theirs = tflm_allocations(data)
        ratio = ours["arena_bytes"] / theirs["total"]
        ratios.append(ratio)
        print(f"| {path.stem} | {ours['lower_bound_bytes']} | {ours['head_bytes']} | "
              f"{theirs['head']} | {ours['tail_bytes']} | {theirs['tail']} | "
              f"{ours['arena_bytes']} | {theirs['total']} | {ratio:.2f} |", flush=True)
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"\ngeometric mean of ours/TFLM total over {len(ratios)} models: {geomean:.3f}")


if __name__ == "__main__":
    main()
