"""Prints the conformance matrix: every corpus model on every QEMU board, with and without
`--tags cmsis`, at `--memory small|balanced|fast`, and the host `verify` with `--weights
separate` and `--compress` (host and Cortex-M4); each cell is bit-exact, refused (one clean
message, e.g. an M0 that the model does not fit, with sizes), WRONG (the board's output
differs from the oracle's) or CRASH (a traceback, a failed build, a board that stopped or
hung).

    python3 benchmarks/conformance_matrix.py [--jobs 2] [--results DIR] [--models a,b]
        [--targets t1,t2] [--memories m1,m2] [--tags cmsis|none] [--compress]
        [--weights whole|separate]
        [--inputs min,max,zero]
        [--quick] [--table]

Each combination runs in a child process with a timeout (a hang or a crash of the host
runtime cannot stop the table).  The board run is the project `tflm-gen bench` builds (same
files, same build cache) and its self-test verdict, without the counting plugin: bench's
`bit_exact` is that verdict.  A combination whose generated files equal an earlier one's
(`--memory` changes nothing for a model without a patch stage) reuses its verdict.  Results
are kept one JSON file per combination in DIR (default /tmp/conformance_matrix), so a
second run only fills what is missing; the least tested combinations run first.

`--compress` codes the filters in every board cell too (every memory, every board: the
decoded scratch at its smallest is `--memory small`); point TFLM_GEN_CORPUS at a folder of
pruned models (`tflm-gen prune`, and a MANIFEST.tsv naming them) for the sparse codings.
`--weights separate` does the same for the weights in their own array (the host and M4
cells above have it at balanced only; with it, every memory).
`--inputs min,max,zero` runs each cell once per kind of constant input instead of the
seeded random one: every integer input element at its type's minimum, maximum or zero point
(tests/test_conformance_extremes.py does the same on the host), which drives the
accumulators and requantisations of the boards' DSP and MVE kernels to their saturating
branches.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

CORPUS = Path(os.environ.get("TFLM_GEN_CORPUS", REPO.parent / "shared" / "models"))
# Least covered by tests/ first (test_cores runs one model on M0/M3/M33, test_qemu a few on
# M7/M55/RV32 and all on the M4 at the default memory).
BOARDS = ["qemu-cortex-m0", "qemu-cortex-m3", "qemu-cortex-m33", "qemu-cortex-m7",
          "qemu-cortex-m55", "qemu-riscv32", "qemu-cortex-m4"]
TAG_SETS = [("cmsis",), ()]
MEMORIES = ["small", "fast", "balanced"]
# The models with many operators first; the seanet single-operator models after them.
MAIN_MODELS = ["kws_ref_model", "vww_96_int8", "person_detect", "pretrainedResnet_quant",
               "micro_speech_quantized", "ad01_int8", "test_conv_model", "trained_lstm_int8",
               "keyword_scrambled", "model_ToyCar_quant_fullint", "hello_world_int8",
               "hello_world_float", "simple_add_model", "kws_ref_model_float32"]
HOST_VARIANTS = [("host", "separate", False), ("host", "whole", True),
                 ("qemu-cortex-m4", "separate", False), ("qemu-cortex-m4", "whole", True)]
TIMEOUT = 900
EXTREMES = ("min", "max", "zero")


def corpus_models() -> list[str]:
    names = [line.split("\t")[0] for line in (CORPUS / "MANIFEST.tsv").read_text().splitlines()
             if line and not line.startswith("#")]
    stems = [name[:-len(".tflite")] for name in names]
    return [m for m in MAIN_MODELS if m in stems] + [m for m in stems if m not in MAIN_MODELS]


def combinations(models: list[str], targets: list[str], quick: bool,
                 tag_sets: list[tuple] = TAG_SETS, compress: bool = False,
                 memories: list[str] = MEMORIES, weights: str = "whole") -> list[dict]:
    """Board cells, least covered first; the seanet models at the default memory only when
    quick (they have no patch stage: their memory cells equal the balanced one)."""
    cells = []
    for model in models:
        for target, kept, coded in HOST_VARIANTS:
            for tags in tag_sets:
                cells.append({"model": model, "target": target, "tags": list(tags),
                              "memory": "balanced", "weights": kept, "compress": coded})
    for memory in memories:
        for target in targets:
            for tags in tag_sets:
                for model in models:
                    if quick and model.startswith("seanet/") and memory != "balanced":
                        continue
                    cells.append({"model": model, "target": target, "tags": list(tags),
                                  "memory": memory, "weights": weights, "compress": compress})
    main = [c for c in cells if not c["model"].startswith("seanet/")]
    ordered = main + [c for c in cells if c["model"].startswith("seanet/")]
    # A board cell with --compress or --weights separate at balanced is also a fixed one
    # above: once each, so the table counts it once.
    return list({cell_key(c): c for c in ordered}.values())


def cell_key(cell: dict) -> str:
    tags = "+".join(cell["tags"]) or "none"
    extra = ("-sep" if cell["weights"] == "separate" else "") + ("-cmp" if cell["compress"] else "")
    if cell.get("inputs", "random") != "random":
        extra += f"-{cell['inputs']}"
    return f"{cell['model'].replace('/', '_')}__{cell['target']}__{tags}__{cell['memory']}{extra}"


def extreme_inputs(model, pick: str) -> list:
    """One array per graph input: every integer element at its type's minimum, maximum or
    the input's zero point (`pick`); a float input keeps the seeded random draw."""
    import numpy as np

    from tflm_gen.inputs import random_inputs
    from tflm_gen.model import ir
    arrays = random_inputs(model)
    for slot, index in enumerate(model.subgraph.inputs):
        tensor = model.subgraph.tensors[index]
        dtype = np.dtype(ir.dtype_info(tensor.dtype).numpy)
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            zero = int(tensor.quantization.zero_point[0]) if tensor.quantization and \
                tensor.quantization.zero_point else 0
            value = {"min": info.min, "max": info.max, "zero": zero}[pick]
            arrays[slot] = np.full(tensor.shape, value, dtype=dtype)
    return arrays


def _use_inputs(pick: str) -> None:
    """`generate` embeds the input it draws from the seed (measure.random_inputs); this
    child process draws the constant one instead."""
    from tflm_gen import measure
    if pick != "random":
        measure.random_inputs = lambda model, seed=0: extreme_inputs(model, pick)


def _verdict_of_exception(error: BaseException) -> str:
    from tflm_gen.errors import TflmGenError, ToolchainError
    text = str(error)
    if isinstance(error, ToolchainError) or "did not initialise" in text:
        return "hang" if "did not finish" in text else "crash"
    return "refused" if isinstance(error, TflmGenError) else "crash"


def _board_cell(model: bytes, cell: dict, seen: Path) -> dict:
    from tflm_gen import qemu
    files = qemu.project_files(model, cell["target"], tuple(cell["tags"]), cell["weights"],
                               cell["memory"], cell["compress"])
    digest = qemu._files_hash(files, qemu.DEFAULT_OPT)
    same = seen / f"{digest}.json"
    if same.is_file():
        return {**json.loads(same.read_text()), "same_as": digest}
    program = qemu.build(files, cell["target"])
    completed = qemu.run(program)
    if qemu.PASSED in completed.stdout:
        result = {"verdict": "bit_exact"}
    elif completed.returncode == 1 and "FAIL" in completed.stdout.upper():
        result = {"verdict": "wrong", "detail": completed.stdout[-1500:]}
    else:
        result = {"verdict": "crash", "detail": f"exit {completed.returncode}: "
                  f"{completed.stdout[-1000:]}{completed.stderr[-500:]}"}
    same.write_text(json.dumps(result))
    return result


def _host_cell(model: bytes, cell: dict) -> dict:
    from tflm_gen.model.reader import read_model
    from tflm_gen.verify import verify
    pick = cell.get("inputs", "random")
    samples = None if pick == "random" else [extreme_inputs(read_model(model), pick)]
    report = verify(model, "auto", tags=tuple(cell["tags"]), weights=cell["weights"],
                    compress=cell["compress"], memory=cell["memory"], samples=samples)
    return {"verdict": "bit_exact" if report.bit_exact else "wrong",
            "detail": "" if report.bit_exact else str(report.outputs)[-1500:]}


def run_cell(cell: dict, seen: Path) -> dict:
    """One combination, in this (child) process."""
    import traceback
    model = (CORPUS / f"{cell['model']}.tflite").read_bytes()
    _use_inputs(cell.get("inputs", "random"))
    try:
        if cell["target"] == "host":
            return _host_cell(model, cell)
        return _board_cell(model, cell, seen)
    except Exception as error:  # noqa: BLE001 - every failure is a verdict here
        verdict = _verdict_of_exception(error)
        ours = type(error).__module__ == "tflm_gen.errors"
        detail = str(error) if ours else traceback.format_exc()
        return {"verdict": verdict, "detail": detail[-2000:]}


def _spawn(cell: dict, results: Path) -> dict:
    out = results / f"{cell_key(cell)}.json"
    if out.is_file():
        return json.loads(out.read_text())
    start = time.monotonic()
    try:
        child = subprocess.run([sys.executable, __file__, "--cell", json.dumps(cell),
                                "--results", str(results)], capture_output=True, text=True,
                               timeout=TIMEOUT, check=False)
        lines = child.stdout.strip().splitlines()
        result = json.loads(lines[-1]) if child.returncode == 0 and lines else {
            "verdict": "crash", "detail": f"child exit {child.returncode}: {child.stderr[-1500:]}"}
    except subprocess.TimeoutExpired:
        result = {"verdict": "hang", "detail": f"no verdict in {TIMEOUT} s"}
    result = {**cell, **result, "seconds": round(time.monotonic() - start, 1)}
    out.write_text(json.dumps(result))
    print(f"{result['verdict']:9} {cell_key(cell)} {result['seconds']} s", flush=True)
    return result


def print_table(results: list[dict]) -> None:
    counts: dict[tuple, dict[str, int]] = {}
    for r in results:
        variant = r["memory"] + ("+separate" if r["weights"] == "separate" else "")
        pick = r.get("inputs", "random")
        group = (r["target"], "+".join(r["tags"]) or "none",
                 variant + ("+compress" if r["compress"] else "")
                 + ("" if pick == "random" else f", {pick} input"))
        counts.setdefault(group, {}).setdefault(r["verdict"], 0)
        counts[group][r["verdict"]] += 1
    print("\n| target | tags | memory / variant | bit-exact | refused | WRONG | crash | hang |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for group in sorted(counts):
        c = counts[group]
        print(f"| {' | '.join(group)} | {c.get('bit_exact', 0)} | {c.get('refused', 0)} | "
              f"{c.get('wrong', 0)} | {c.get('crash', 0)} | {c.get('hang', 0)} |")
    print("\nrefusals and failures:")
    for r in results:
        if r["verdict"] != "bit_exact":
            print(f"- {r['verdict']}: {cell_key(r)}: {str(r.get('detail', ''))[:300]!r}")


def selected_cells(args: argparse.Namespace) -> list[dict]:
    models = args.models.split(",") if args.models else corpus_models()
    targets = args.targets.split(",") if args.targets else BOARDS
    tag_sets = [t for t in TAG_SETS if not args.tags or ("+".join(t) or "none") == args.tags]
    return combinations(models, targets, args.quick, tag_sets, args.compress,
                        args.memories.split(","), args.weights)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--results", type=Path, default=Path("/tmp/conformance_matrix"))
    parser.add_argument("--models", default="")
    parser.add_argument("--targets", default="")
    parser.add_argument("--memories", default=",".join(MEMORIES))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tags", choices=["cmsis", "none"],
                        help="only this tag column (the cmsis kernels first when short of time)")
    parser.add_argument("--compress", action="store_true",
                        help="code the filters in every board cell (pruned models)")
    parser.add_argument("--weights", choices=["whole", "separate"], default="whole",
                        help="where every board cell keeps its weights")
    parser.add_argument("--inputs", default="random",
                        help="comma-separated kinds of test input: random, min, max, zero")
    parser.add_argument("--table", action="store_true",
                        help="only print the table of the results already in DIR")
    parser.add_argument("--cell", help=argparse.SUPPRESS)
    args = parser.parse_args()
    seen = args.results / "by_files"
    seen.mkdir(parents=True, exist_ok=True)
    if args.cell:
        print(json.dumps(run_cell(json.loads(args.cell), seen)))
        return
    if args.table:
        print_table([json.loads(path.read_text()) for path in sorted(args.results.glob("*.json"))])
        return
    picks = args.inputs.split(",")
    if not set(picks) <= {"random", *EXTREMES}:
        parser.error(f"--inputs: one or more of random, {', '.join(EXTREMES)}")
    cells = [{**cell, "inputs": pick} for pick in picks for cell in selected_cells(args)]
    with ThreadPoolExecutor(max_workers=min(args.jobs, 2)) as pool:
        results = list(pool.map(lambda c: _spawn(c, args.results), cells))
    print_table(results)


if __name__ == "__main__":
    main()
