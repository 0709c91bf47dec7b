"""Instructions per invoke of the `cmsis` tag against our reference kernels, counted exactly
under QEMU (tflm_gen.bench), with the kernels' text size of the tagged build.

    python benchmarks/cmsis_table.py [--models DIR]

Prints: model | board | reference instructions | cmsis instructions | ratio | kernel text
bytes (cmsis build; the reference build's in parentheses), and TFLM + CMSIS-NN's count on the
M4 where issue 7 measured it.  Never asserted in tests."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# This checkout's tflm_gen and kernels, not an installed copy's.
sys.path.insert(0, str(REPO))

from tflm_gen.bench import bench

CORPUS = REPO.parent / "shared" / "models"
ROWS = [("kws_ref_model", "qemu-cortex-m4"), ("vww_96_int8", "qemu-cortex-m4"),
        ("pretrainedResnet_quant", "qemu-cortex-m4"), ("ad01_int8", "qemu-cortex-m4"),
        ("person_detect", "qemu-cortex-m4"), ("micro_speech_quantized", "qemu-cortex-m4"),
        ("vww_96_int8", "qemu-cortex-m55")]
# TFLM with Arm's CMSIS-NN on mps2-an386 (issue 7): the peer to beat on the M4.
CMSIS_NN_M4 = {"kws_ref_model": 7_699_897, "vww_96_int8": 24_101_967,
               "pretrainedResnet_quant": 29_863_357, "ad01_int8": 582_949,
               "person_detect": 22_928_454, "micro_speech_quantized": 1_495_387}


def row(models: Path, name: str, target: str) -> str:
    data = (models / f"{name}.tflite").read_bytes()
    reference = bench(data, target)
    tagged = bench(data, target, ("cmsis",))
    ratio = reference["instructions_per_invoke"] / tagged["instructions_per_invoke"]
    peer = CMSIS_NN_M4.get(name) if target == "qemu-cortex-m4" else None
    exact = "yes" if tagged["bit_exact"] and reference["bit_exact"] else "NO"
    return (f"| {name} | {target} | {reference['instructions_per_invoke']:,} | "
            f"{tagged['instructions_per_invoke']:,} | {ratio:.2f}x | "
            f"{tagged['text_kernels']:,} ({reference['text_kernels']:,}) | "
            f"{f'{peer:,}' if peer else '-'} | {exact} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=Path, default=CORPUS)
    args = parser.parse_args()
    print("| model | board | reference instructions | cmsis instructions | ratio | "
          "kernel text bytes (reference) | TFLM+CMSIS-NN | bit-exact |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name, target in ROWS:
        print(row(args.models, name, target), flush=True)


if __name__ == "__main__":
    main()
