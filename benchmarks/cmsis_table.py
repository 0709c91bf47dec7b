"""Instructions per invoke of the `cmsis` tag against our reference kernels, counted exactly
under QEMU (tflm_gen.bench), with the kernels' text size of the tagged build.

    python benchmarks/cmsis_table.py [--models DIR]

Prints: model | board | reference instructions | cmsis instructions | ratio | kernel text
bytes (cmsis build; the reference build's in parentheses), TFLM + CMSIS-NN's count on the
M4 where issue 7 measured it, and the model's flash with the reference kernels and with the
cmsis tag on that board (its core's layout records only, tflm_gen.layout_cores; issue 18).
Never asserted in tests."""

from __future__ import annotations

from pathlib import Path

from tag_tables import bench_both, parser

from tflm_gen.layout_cores import core_of_target
from tflm_gen.optimize import device_model
from tflm_gen.targets import load_target

ROWS = [("kws_ref_model", "qemu-cortex-m4"), ("vww_96_int8", "qemu-cortex-m4"),
        ("pretrainedResnet_quant", "qemu-cortex-m4"), ("ad01_int8", "qemu-cortex-m4"),
        ("person_detect", "qemu-cortex-m4"), ("micro_speech_quantized", "qemu-cortex-m4"),
        ("vww_96_int8", "qemu-cortex-m55"), ("kws_ref_model", "qemu-cortex-m3"),
        ("ad01_int8", "qemu-cortex-m3")]
# TFLM with Arm's CMSIS-NN on mps2-an386 (issue 7): the peer to beat on the M4.
CMSIS_NN_M4 = {"kws_ref_model": 7_699_897, "vww_96_int8": 24_101_967,
               "pretrainedResnet_quant": 29_863_357, "ad01_int8": 582_949,
               "person_detect": 22_928_454, "micro_speech_quantized": 1_495_387}


def row(models: Path, name: str, target: str) -> str:
    data = (models / f"{name}.tflite").read_bytes()
    reference, tagged, exact = bench_both(data, target)
    ratio = reference["instructions_per_invoke"] / tagged["instructions_per_invoke"]
    peer = CMSIS_NN_M4.get(name) if target == "qemu-cortex-m4" else None
    core = core_of_target(load_target(target))
    flash = [len(device_model(data, tags, core=core)[0]) for tags in ((), ("cmsis",))]
    return (f"| {name} | {target} | {reference['instructions_per_invoke']:,} | "
            f"{tagged['instructions_per_invoke']:,} | {ratio:.2f}x | "
            f"{tagged['text_kernels']:,} ({reference['text_kernels']:,}) | "
            f"{f'{peer:,}' if peer else '-'} | {'yes' if exact else 'NO'} | "
            f"{flash[0]:,} | {flash[1]:,} |")


def main() -> None:
    args = parser(__doc__).parse_args()
    print("| model | board | reference instructions | cmsis instructions | ratio | "
          "kernel text bytes (reference) | TFLM+CMSIS-NN | bit-exact | model bytes ref | "
          "model bytes cmsis |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|---:|")
    for name, target in ROWS:
        print(row(args.models, name, target), flush=True)


if __name__ == "__main__":
    main()
