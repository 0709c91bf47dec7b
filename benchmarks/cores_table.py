"""Every Cortex-M board against the int8 corpus models: instructions per invoke of the
reference and `cmsis` kernels (exact, under QEMU), the cmsis build's estimated cycles
(tflm_gen/cycles.py, docs/cycles.md) and MACs per cycle, its arena and stack high-water
mark, and its kernels' text.

    python benchmarks/cores_table.py [--models DIR] [--cores m0,m4] [--names kws_ref_model]

Prints: model | core | ours ref | ours cmsis | est. cycles | MACs/cycle | arena ours cmsis |
stack | kernel text.  A model that does not fit a board shows the reason instead of figures.
Never asserted in tests."""

from __future__ import annotations

from pathlib import Path

from tag_tables import bench_both, parser

from tflm_gen.errors import TflmGenError
from tflm_gen.inspect import inspect_model

CORES = ["m0", "m3", "m4", "m7", "m33", "m55"]
MODELS = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8",
          "person_detect", "micro_speech_quantized", "hello_world_int8"]


def row(models: Path, name: str, core: str) -> str:
    path = models / f"{name}.tflite"
    data, target = path.read_bytes(), f"qemu-cortex-{core}"
    try:
        reference, tagged, exact = bench_both(data, target)
    except TflmGenError as error:
        return f"| {name} | {core} | {error} |||||||"
    macs = inspect_model(path)["total_macs"]
    return (f"| {name} | {core} | {reference['instructions_per_invoke']:,} | "
            f"{tagged['instructions_per_invoke']:,}{'' if exact else ' NOT BIT-EXACT'} | "
            f"{tagged['cycles_per_invoke']:,} | "
            f"{macs / tagged['cycles_per_invoke']:.3f} | {tagged['arena_bytes']:,} | "
            f"{tagged['stack_bytes']:,} | {tagged['text_kernels']:,} |")


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--cores", default=",".join(CORES), help="comma-separated, e.g. m0,m4")
    options.add_argument("--names", default=",".join(MODELS), help="comma-separated model stems")
    args = options.parse_args()
    print("| model | core | ours ref | ours cmsis | est. cycles | MACs/cycle | "
          "arena ours cmsis | stack | kernel text |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.names.split(","):
        for core in args.cores.split(","):
            print(row(args.models, name, core), flush=True)


if __name__ == "__main__":
    main()
