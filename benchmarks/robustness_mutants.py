"""Prints how the CLI's entry points take corrupt models: seeded truncations, byte writes and
bit flips of real models (and the bundled sine example) through `tflm-gen inspect`,
`project`, `verify`, `run` and `bench`, each in a child process with a timeout.

    python3 benchmarks/robustness_mutants.py [--count 50] [--seed 0] [--commands a,b]
        [--models a,b] [--keep DIR] [--structure | --semantic]

Every mutant must end in one of two ways: exit 2 with one line on stderr (a clean refusal),
or success (exit 0; for `verify` that means bit-exact; `bench --json` must say bit_exact).
Anything else is a defect and is listed: a Python traceback, the CLI's "internal error"
line (an unexpected exception caught at the top), a signal (a C crash), a hang (timeout), a
multi-line error, a non-bit-exact result.  `--keep DIR` saves each defective
mutant there (name: command, model, seed) to turn into a regression test.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("TFLM_GEN_CORPUS", REPO.parent / "shared" / "models"))
MODELS = {"sine_int8": REPO / "examples" / "sine" / "sine_int8.tflite",
          "kws_ref_model": CORPUS / "kws_ref_model.tflite",
          "micro_speech_quantized": CORPUS / "micro_speech_quantized.tflite",
          "pretrainedResnet_quant": CORPUS / "pretrainedResnet_quant.tflite"}
COMMANDS = ["inspect", "verify", "run", "project", "bench"]
TIMEOUT = {"bench": 600, "project": 300}
DEFAULT_TIMEOUT = 180


def structure_positions(data: bytes) -> np.ndarray:
    """The byte positions outside the constant buffers' data (tables, vectors of shapes,
    quantisation and options, strings): where a change alters the graph, not a weight."""
    from tflm_gen.model.reader import read_model

    weights = np.zeros(len(data), dtype=bool)
    for buffer in read_model(data).buffers:
        payload = bytes(getattr(buffer, "data", buffer) or b"")
        start = data.find(payload) if len(payload) >= 64 else -1
        if start >= 0:
            weights[start:start + len(payload)] = True
    return np.flatnonzero(~weights)


ODD_SCALES = (0.0, -1.0, float("inf"), float("nan"), 1e-30, 1e30, 2.0 ** -40)
ODD_INTS = (0, -1, 1, 2, 3, 127, 128, -129, 255, 1 << 20, -(1 << 31))


def _semantic_change(model, rng: np.random.Generator) -> str:
    """One change of the graph's meaning: a dimension, a scale, a zero point, an operator's
    input or output, an option value, a dtype."""
    graph = model.subgraph
    tensor_index = int(rng.integers(len(graph.tensors)))
    tensor = graph.tensors[tensor_index]
    op_index = int(rng.integers(len(graph.operators)))
    op = graph.operators[op_index]
    value = ODD_INTS[int(rng.integers(len(ODD_INTS)))]
    kind = int(rng.integers(6))
    if kind == 0 and tensor.shape:
        axis = int(rng.integers(len(tensor.shape)))
        tensor.shape[axis] = abs(value) if value else 0
        return f"tensor {tensor_index} dim {axis} = {tensor.shape[axis]}"
    if kind == 1 and tensor.quantization and tensor.quantization.scale:
        scale = ODD_SCALES[int(rng.integers(len(ODD_SCALES)))]
        tensor.quantization.scale[int(rng.integers(len(tensor.quantization.scale)))] = scale
        return f"tensor {tensor_index} scale = {scale}"
    if kind == 2 and tensor.quantization and tensor.quantization.zero_point:
        tensor.quantization.zero_point[0] = value
        return f"tensor {tensor_index} zero point = {value}"
    if kind == 3:
        ends = op.inputs if rng.integers(2) else op.outputs
        slot = int(rng.integers(len(ends))) if ends else 0
        if ends:
            ends[slot] = int(rng.integers(-1, len(graph.tensors)))
            return f"op {op_index} end {slot} = {ends[slot]}"
    if kind == 4 and op.builtin_options:
        key = sorted(op.builtin_options)[int(rng.integers(len(op.builtin_options)))]
        if isinstance(op.builtin_options[key], int):
            op.builtin_options[key] = value
            return f"op {op_index} {key} = {value}"
    names = ("int8", "int16", "int32", "uint8", "float32", "bool")
    tensor.dtype = names[int(rng.integers(len(names)))]
    return f"tensor {tensor_index} dtype = {tensor.dtype}"


def semantic_mutate(data: bytes, rng: np.random.Generator) -> tuple[bytes, str]:
    """1-2 changes of the model's meaning, written back as a valid flatbuffer."""
    from tflm_gen.model.reader import read_model
    from tflm_gen.model.writer import write_model

    while True:  # a value out of its field's range cannot be written: draw again
        model = read_model(data)
        changes = [_semantic_change(model, rng) for _ in range(int(rng.integers(1, 3)))]
        try:
            return write_model(model), "; ".join(changes)
        except (TypeError, ValueError, OverflowError, struct.error):
            continue


def mutate(data: bytes, rng: np.random.Generator, structure: bool) -> tuple[bytes, str]:
    """A truncation (one in five), else 1-8 byte writes or bit flips (with `structure`,
    only outside the weights); and what was done."""
    kind = int(rng.integers(5))
    if kind == 0:
        cut = int(rng.integers(0, len(data)))
        return data[:cut], f"cut at {cut}"
    out = bytearray(data)
    changes = []
    positions = structure_positions(data) if structure else np.arange(len(data))
    for _ in range(int(rng.integers(1, 9))):
        position = int(positions[int(rng.integers(0, len(positions)))])
        if kind % 2:
            out[position] ^= 1 << int(rng.integers(8))
        else:
            out[position] = int(rng.integers(0, 256))
        changes.append(f"{position}={out[position]}")
    return bytes(out), ("flip " if kind % 2 else "write ") + ",".join(changes)


def arguments(command: str, model: Path, folder: Path) -> list[str]:
    return {"inspect": ["inspect", str(model)],
            "verify": ["verify", str(model), "--runs", "1", "--tags", "cmsis"],
            "run": ["run", str(model), "-o", str(folder / "out.npz")],
            "project": ["project", "--model", str(model), "--target", "make", "-o",
                        str(folder / "project")],
            "bench": ["bench", str(model), "--target", "qemu-cortex-m4", "--no-compare",
                      "--json", str(folder / "bench.json")]}[command]


def verdict(command: str, completed: subprocess.CompletedProcess | None, folder: Path) -> str:
    if completed is None:
        return "hang"
    lines = [line for line in completed.stderr.splitlines() if line.strip()]
    if completed.returncode < 0:
        return f"signal {-completed.returncode}"
    if "Traceback" in completed.stderr:
        return "traceback"
    if completed.returncode == 2:
        if "internal error" in completed.stderr:  # the CLI's net for an unexpected exception
            return "internal error"
        return "refused" if len(lines) == 1 else "multi-line error"
    if completed.returncode != 0:
        return f"exit {completed.returncode}"
    if command == "bench":
        figures = json.loads((folder / "bench.json").read_text())
        return "ok" if figures["bit_exact"] else "not bit-exact"
    return "ok"


def try_mutant(command: str, data: bytes) -> tuple[str, str]:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        model = folder / "mutant.tflite"
        model.write_bytes(data)
        command_line = [sys.executable, "-m", "tflm_gen.cli", *arguments(command, model, folder)]
        try:
            completed = subprocess.run(command_line, capture_output=True, text=True,
                                       timeout=TIMEOUT.get(command, DEFAULT_TIMEOUT),
                                       check=False, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            completed = None
        outcome = verdict(command, completed, folder)
        return outcome, "" if completed is None else completed.stderr.strip()[-600:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--commands", default=",".join(COMMANDS))
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--structure", action="store_true",
                        help="mutate only outside the constant buffers' data")
    parser.add_argument("--semantic", action="store_true",
                        help="change shapes, scales, zero points, operator ends, options, "
                             "dtypes and write the model back")
    args = parser.parse_args()
    models = args.models.split(",")
    defects = []
    print("| command | mutants | ok | refused | defects |\n|---|---:|---:|---:|---:|")
    for command in args.commands.split(","):
        rng = np.random.default_rng([args.seed, COMMANDS.index(command)])
        counts: dict[str, int] = {}
        for trial in range(args.count):
            name = models[trial % len(models)]
            source = MODELS[name].read_bytes()
            data, how = semantic_mutate(source, rng) if args.semantic else mutate(
                source, rng, args.structure)
            outcome, stderr = try_mutant(command, data)
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome not in ("ok", "refused"):
                defects.append((command, name, trial, how, outcome, stderr))
                if args.keep:
                    args.keep.mkdir(parents=True, exist_ok=True)
                    (args.keep / f"{command}-{name}-{trial}.tflite").write_bytes(data)
        bad = args.count - counts.get("ok", 0) - counts.get("refused", 0)
        print(f"| {command} | {args.count} | {counts.get('ok', 0)} | {counts.get('refused', 0)}"
              f" | {bad} |", flush=True)
    for command, name, trial, how, outcome, stderr in defects:
        print(f"\n{command} {name} #{trial} ({how}): {outcome}\n{stderr}")


if __name__ == "__main__":
    main()
