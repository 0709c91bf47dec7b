"""Prints model | board | instructions per invoke | init | overhead % | arena | text (runtime /
kernels) | bit-exact, from `tflm-gen bench` on every QEMU board, and TFLM's figures for the
Cortex-M4 (measured for issue 6: TFLM's own Makefile, gcc 12.2, framework -Os, kernels -O2,
reference kernels, mps2-an386, the same kind of counting plugin).

    python3 benchmarks/qemu_table.py [--opt -O2] [MODEL ...]   (default: the issue-6 models)

Instruction counts are exact and repeatable (QEMU TCG plugin), not cycles.  A model that
does not fit a board shows the reason instead of figures.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tflm_gen.bench import bench
from tflm_gen.errors import TflmGenError

CORPUS = REPO.parent / "shared" / "models"
BOARDS = ["qemu-cortex-m4", "qemu-cortex-m7", "qemu-cortex-m55", "qemu-riscv32"]
MODELS = [
    "hello_world_int8", "micro_speech_quantized", "kws_ref_model", "ad01_int8",
    "vww_96_int8", "person_detect", "pretrainedResnet_quant",
]
# model -> (instructions per invoke, AllocateTensors instructions or None), Cortex-M4 (issue 6)
TFLM_M4 = {
    "kws_ref_model": (43_042_476, 782_751), "vww_96_int8": (100_250_558, 3_509_013),
    "pretrainedResnet_quant": (107_404_892, None), "ad01_int8": (1_952_297, None),
    "person_detect": (95_660_741, None), "micro_speech_quantized": (9_310_576, None),
    "hello_world_int8": (5_235, None),
}


def _row(model: str, board: str, opt: str) -> str:
    try:
        r = bench((CORPUS / f"{model}.tflite").read_bytes(), board, (), opt)
    except TflmGenError as error:
        return f"| {model} | {board} | {error} | | | | | |"
    text = f"{r['text_runtime']:,} / {r['text_kernels']:,}"
    exact = "yes" if r["bit_exact"] else "NO"
    return (f"| {model} | {board} | {r['instructions_per_invoke']:,} | {r['init_instructions']:,} "
            f"| {r['interpreter_overhead_pct']:.3f} | {r['arena_bytes']:,} | {text} | {exact} |")


def _tflm_rows(models: list[str], opt: str) -> list[str]:
    rows = ["", f"Cortex-M4 (mps2-an386), ours at {opt} vs TFLM (framework -Os, kernels -O2):", "",
            "| model | ours / invoke | TFLM / invoke | ratio | our init | TFLM AllocateTensors |",
            "|---|---:|---:|---:|---:|---:|"]
    for model in models:
        if model not in TFLM_M4:
            continue
        ours = bench((CORPUS / f"{model}.tflite").read_bytes(), "qemu-cortex-m4", (), opt)
        theirs, allocate = TFLM_M4[model]
        rows.append(f"| {model} | {ours['instructions_per_invoke']:,} | {theirs:,} | "
                    f"{ours['instructions_per_invoke'] / theirs:.3f} | "
                    f"{ours['init_instructions']:,} | {f'{allocate:,}' if allocate else 'n/a'} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--opt", default="-O2")
    parser.add_argument("models", nargs="*", default=MODELS)
    args = parser.parse_args()
    print(f"All files at {args.opt}; text in bytes; overhead = invoke minus kernel evals.\n")
    print("| model | board | instructions / invoke | init | overhead % | arena | "
          "text (runtime / kernels) | bit-exact |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for model in args.models:
        for board in BOARDS:
            print(_row(model, board, args.opt), flush=True)
    print("\n".join(_tflm_rows(args.models, args.opt)))
    small = bench((CORPUS / "kws_ref_model.tflite").read_bytes(), "qemu-cortex-m4", (), "-Os")
    print(f"\nRuntime text at -Os on the Cortex-M4 (kws_ref_model): {small['text_runtime']:,} B; "
          f"kernels at -Os {small['text_kernels']:,} B.")


if __name__ == "__main__":
    main()
