"""Prints model | bit-exact | our arena | TFLM arena | our us/invoke | tflite-micro us/invoke.

    python3 benchmarks/host_table.py [MODEL ...]   (default: the issue-3 models)

Arena: ours is tflm_interpreter_arena_used_bytes of the model as a project embeds it (the
smallest arena that works); TFLM's is the "Arena allocation total" of its recording
allocator (print_allocations) on the original model.
Times are medians of 50 invokes alone (inputs set before), wall-clock through the
Python bindings of each runtime, for orientation only.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tflm_gen.host import HostInterpreter
from tflm_gen.inputs import random_inputs
from tflm_gen.optimize import device_model
from tflm_gen.oracle import Oracle, tflm_allocations
from tflm_gen.verify import verify

CORPUS = REPO.parent / "shared" / "models"
MODELS = [
    "hello_world_int8", "hello_world_float", "micro_speech_quantized", "kws_ref_model",
    "vww_96_int8", "person_detect", "pretrainedResnet_quant", "ad01_int8", "test_conv_model",
    "simple_add_model", "model_ToyCar_quant_fullint",
]
def median_us(invoke, repeats: int = 50) -> float:
    """Median wall-clock microseconds of one invoke (inputs already set)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        invoke()
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def row(path: Path) -> str:
    data = path.read_bytes()
    ours = HostInterpreter(device_model(data)[0])
    inputs = random_inputs(ours.model)
    exact = verify(data, "tflm", runs=3).bit_exact
    oracle = Oracle(data)
    ours.set_inputs(inputs)
    oracle.run(inputs)  # sets the inputs; the timed calls below only invoke
    return (f"| {path.stem} | {'yes' if exact else 'NO'} | {ours.arena_used_bytes} | "
            f"{tflm_allocations(data)['total']} | {median_us(ours.invoke):.1f} | "
            f"{statistics.median(oracle.invoke_times(50)):.1f} |")  # timed in its process


def main(names: list[str]) -> None:
    paths = [Path(n) if n.endswith(".tflite") else CORPUS / f"{n}.tflite" for n in names]
    paths += [REPO / "examples" / "sine" / f for f in ("sine_int8.tflite", "sine_float.tflite")]
    print("| model | bit-exact with TFLM | our arena bytes | TFLM arena bytes | "
          "our host us/invoke | tflite-micro us/invoke |")
    print("|---|---|---|---|---|---|")
    for path in paths:
        print(row(path), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or MODELS)
