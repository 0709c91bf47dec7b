"""Weight compression (`--compress`, tflm_gen/compress.py) on the shared int8 models: the
filters' bytes, their coded bytes as they are and pruned to 0.8 sparsity (`tflm-gen prune`),
and with --qemu the instructions per invoke and the arena on the Cortex-M4 with --tags
cmsis, compressed or not (tflm_gen.bench, under QEMU: a few minutes per model).  `--memory
fast` compares like with like: under the default, the patch stage may be chosen for one
model and not the other.

    python3 benchmarks/compress_table.py [--qemu] [--memory fast] [--pruned-only]
                                         [--goal balanced|size|both] [MODEL ...]

`--pruned-only` counts only the models pruned to 0.8 (half the QEMU runs).  `--goal` picks
the `--compress-goal` (both: a row per goal).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from tflm_gen import compress
from tflm_gen.bench import bench
from tflm_gen.model.reader import read_model
from tflm_gen.patches import DEFAULT_MEMORY, MEMORY_CHOICES
from tflm_gen.prune import prune_weights
from tflm_gen.table import format_table

CORPUS = Path(os.environ.get("TFLM_GEN_CORPUS", Path(__file__).resolve().parents[2] /
                             "shared" / "models"))
MODELS = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8",
          "person_detect"]
SPARSITY = 0.8


def coded_bytes(model_bytes: bytes, goal: str = compress.BALANCED) -> tuple[int, int]:
    """(filter bytes, their bytes once compressed, the metadata's table included)."""
    model = read_model(model_bytes)
    found = compress.candidates(model)
    coded = compress.compress_model(model, goal)
    streams = sum(len(coded.buffers[c.tensor.buffer].data) for c in found)
    metadata = sum(len(coded.buffers[i].data) for name, i in coded.metadata
                   if name == compress.METADATA_NAME)
    return sum(c.rows.size for c in found), streams + metadata


def figures(model_bytes: bytes, compressed: bool | str, memory: str) -> tuple[int, int]:
    """(instructions per invoke, arena bytes) on the Cortex-M4 with cmsis."""
    found = bench(model_bytes, "qemu-cortex-m4", ("cmsis",), memory=memory,
                  compress=compressed)
    return found["instructions_per_invoke"], found["arena_bytes"]


def row(name: str, qemu: bool, memory: str, pruned_only: bool = False,
        goal: str = compress.BALANCED) -> list[str]:
    original = (CORPUS / f"{name}.tflite").read_bytes()
    pruned = prune_weights(original, SPARSITY).model
    weights, as_is = coded_bytes(original, goal)
    _, at_sparsity = coded_bytes(pruned, goal)
    cells = [name, goal, f"{weights:,}", f"{as_is:,} ({as_is / weights:.1%})",
             f"{at_sparsity:,} ({at_sparsity / weights:.1%})", f"{1 - at_sparsity / weights:.1%}"]
    if qemu:
        for model in (pruned,) if pruned_only else (original, pruned):
            (plain, plain_arena), (coded, coded_arena) = (
                figures(model, c, memory) for c in (False, goal if goal != compress.BALANCED
                                                    else True))
            cells.append(f"{coded:,} / {plain:,} ({coded / plain - 1:+.1%})")
            cells.append(f"{coded_arena:,} / {plain_arena:,}")
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qemu", action="store_true", help="also count instructions")
    parser.add_argument("--memory", choices=MEMORY_CHOICES, default=DEFAULT_MEMORY)
    parser.add_argument("--pruned-only", action="store_true",
                        help="count only the models pruned to 0.8")
    parser.add_argument("--goal", choices=[*compress.GOALS, "both"], default=compress.BALANCED,
                        help="the --compress-goal (both: one row per goal)")
    parser.add_argument("models", nargs="*", default=MODELS)
    args = parser.parse_args()
    goals = compress.GOALS if args.goal == "both" else (args.goal,)
    headers = ["model", "goal", "filter bytes", "compressed as is", f"compressed at {SPARSITY}",
               "saving at 0.8"]
    if args.qemu:
        headers += [] if args.pruned_only else ["M4 cmsis instr. as is: compressed / not",
                                                 "arena as is"]
        headers += ["instr. at 0.8: compressed / not", "arena at 0.8"]
    print(format_table(headers, [row(name, args.qemu, args.memory, args.pruned_only, goal)
                                 for name in args.models for goal in goals]))


if __name__ == "__main__":
    main()
