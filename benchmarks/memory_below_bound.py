"""Prints the table of issue 13 for every shared model we run (arena bytes, reference kernels):
model | op-by-op bound | ours before | in-place only | + optimal placement | + patches
balanced | + patches small | TFLM | ratio (balanced).

    TFLM_GEN_CORPUS=/work/shared/models python3 benchmarks/memory_below_bound.py

op-by-op bound: the head no plan reaches while every operator keeps its whole input and
whole output (tensors counted separately).  The three plans of ours are measured by the
runtime on the device model (tflm_interpreter_memory, the exact size a project declares):
  before         whole-buffer sharing only, best of the greedy orders (the planner of main);
  in-place only  + partial overlaps of convolution outputs with their consumed inputs;
  + optimal      + the bounded bottom-up search below the greedy result (tflm_gen.plan);
  + patches      + a patch stage (tflm_gen.patches), `--memory balanced` (the default) and
                 `small`: the device model a project embeds.
TFLM: its recording allocator (print_allocations) on this 64-bit host, original model.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tflm_gen.errors import TflmGenError
from tflm_gen.host import HostInterpreter
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.optimize import device_model
from tflm_gen.oracle import tflm_allocations
from tflm_gen.plan import embed_plan, make_plan
from tflm_gen.requant import embed_requant

CORPUS = Path(os.environ.get("TFLM_GEN_CORPUS", REPO.parent / "shared" / "models"))
VARIANTS = {"before": {"overlaps": False, "search_nodes": 0},
            "in-place only": {"overlaps": True, "search_nodes": 0},
            "+ optimal placement": {}}
PATCHES = ("balanced", "small")


def arena_bytes(model, **planner) -> tuple[int, int]:
    """The arena the device model needs with this planner, and the plan's op-by-op bound."""
    plan = make_plan(model, **planner)
    device = write_model(embed_plan(embed_requant(model), plan))
    return HostInterpreter(device).arena_used_bytes, plan.lower_bound_bytes


def staged_bytes(data: bytes, memory: str) -> tuple[int, int]:
    """The arena of the device model `project --memory` embeds, and its op-by-op bound."""
    device, plan = device_model(data, (), memory)
    return HostInterpreter(device).arena_used_bytes, plan.lower_bound_bytes


def main() -> None:
    columns = [*VARIANTS, *(f"+ patches {memory}" for memory in PATCHES)]
    print("| model | op-by-op bound | " + " | ".join(columns) + " | TFLM | ours/TFLM |")
    print("|---|" + "---:|" * (len(columns) + 3))
    ratios = []
    for path in sorted(CORPUS.glob("*.tflite")):
        data = path.read_bytes()
        try:
            model = read_model(data)
            measured = [arena_bytes(model, **planner) for planner in VARIANTS.values()]
            measured += [staged_bytes(data, memory) for memory in PATCHES]
        except TflmGenError as error:
            print(f"| {path.stem} | not run: {str(error)[:70]} |")
            continue
        cells = " | ".join(f"{arena:,}" for arena, _ in measured)
        try:
            tflm = tflm_allocations(data)["total"]
        except TflmGenError:  # e.g. hybrid convolutions, which TFLM refuses
            print(f"| {path.stem} | {measured[0][1]:,} | {cells} | n/a | |", flush=True)
            continue
        ratios.append([arena / tflm for arena, _ in measured])
        print(f"| {path.stem} | {measured[0][1]:,} | {cells} | {tflm:,} | "
              f"{ratios[-1][len(VARIANTS)]:.2f} |", flush=True)
    print(f"\ngeometric mean of ours / TFLM arena over {len(ratios)} models:")
    for column, name in enumerate(columns):
        geomean = math.exp(sum(math.log(r[column]) for r in ratios) / len(ratios))
        print(f"  {name}: {geomean:.3f}")


if __name__ == "__main__":
    main()
