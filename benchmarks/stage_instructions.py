"""Fits the instruction costs of tflm_gen/instructions.py (COSTS, OTHER) from QEMU counts,
then prints, per corpus CNN and --memory choice, the instructions a patch stage adds as
measured beside the estimate `balanced` decides by.

    TFLM_GEN_CORPUS=/work/shared/models python3 benchmarks/stage_instructions.py

Each model is benched (`tflm-gen bench --target qemu-cortex-m4`, reference and cmsis
kernels) with --memory fast, balanced and small.  The fit: per (kernels, op), the
instructions of every call of the fast runs as a non-negative sum of the call's features
(tflm_gen.instructions.features), least squares on relative errors.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tflm_gen.bench import bench
from tflm_gen.instructions import COSTS, features, model_instructions
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model
from tflm_gen.patches import extra_instructions, read_stage

CORPUS = Path(os.environ.get("TFLM_GEN_CORPUS", REPO.parent / "shared" / "models"))
MODELS = ["vww_96_int8", "person_detect", "test_conv_model", "kws_ref_model",
          "pretrainedResnet_quant"]
KERNELS = {"reference": (), "cmsis": ("cmsis",)}
MEMORY = ("fast", "balanced", "small")


def nonnegative_fit(rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Least squares on relative errors, dropping the most negative coefficient until none
    is left (an active set: few features, so this converges in a few steps)."""
    scaled = rows / counts[:, None]
    active = list(range(rows.shape[1]))
    while True:
        fit = np.linalg.lstsq(scaled[:, active], np.ones(len(counts)), rcond=None)[0]
        if fit.min(initial=0) >= 0:
            break
        active.pop(int(np.argmin(fit)))
    coefficients = np.zeros(rows.shape[1])
    coefficients[active] = fit
    return coefficients


def benches() -> dict:
    runs = {}
    for name in MODELS:
        data = (CORPUS / f"{name}.tflite").read_bytes()
        for kernels, tags in KERNELS.items():
            for memory in MEMORY:
                runs[name, kernels, memory] = bench(data, "qemu-cortex-m4", tags, memory=memory)
                print(f"benched {name} {kernels} {memory}", file=sys.stderr, flush=True)
    return runs


def fit(runs: dict) -> dict:
    samples: dict = {}
    for name in MODELS:
        graph = read_model((CORPUS / f"{name}.tflite").read_bytes()).subgraph
        for kernels in KERNELS:
            for row in runs[name, kernels, "fast"]["ops"]:
                op = graph.operators[row["index"]]
                key = (kernels, op.opcode if (kernels, op.opcode) in COSTS else "other")
                samples.setdefault(key, []).append((features(graph, op), row["instructions"]))
    table = {}
    for key, rows in sorted(samples.items()):
        a = np.array([f for f, _ in rows], float)
        y = np.array([max(c, 1) for _, c in rows], float)
        table[key] = nonnegative_fit(a, y)
        error = np.abs(a @ table[key] - y) / y
        print(f"    {key}: ({', '.join(f'{c:.2f}' for c in table[key])}),  "
              f"# {len(rows)} calls, median error {np.median(error):.1%}")
    return table


def compare(runs: dict) -> None:
    print("\n| model | kernels | memory | stage | arena | instructions | measured | estimated |")
    print("|---|---|---|---|---:|---:|---:|---:|")
    for name in MODELS:
        data = (CORPUS / f"{name}.tflite").read_bytes()
        for kernels, tags in KERNELS.items():
            fast = runs[name, kernels, "fast"]["instructions_per_invoke"]
            for memory in MEMORY[1:]:
                model = read_model(device_model(data, tags, memory)[0])
                stage, run = read_stage(model), runs[name, kernels, memory]
                where = f"ops {stage.first}-{stage.last}, {len(stage.bands)} bands" if stage else "none"
                estimate = (extra_instructions(model, stage, kernels) if stage else 0) / \
                    model_instructions(model, kernels)
                measured = run["instructions_per_invoke"] / fast - 1
                print(f"| {name} | {kernels} | {memory} | {where} | {run['arena_bytes']:,} | "
                      f"{run['instructions_per_invoke']:,} | {measured:+.1%} | {estimate:+.1%} |",
                      flush=True)


def main() -> None:
    runs = benches()
    print("COSTS fitted (tflm_gen/instructions.py):")
    fit(runs)
    compare(runs)


if __name__ == "__main__":
    main()
