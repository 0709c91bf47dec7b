"""The `cmsis` tag's speed on the Cortex-M4 against its own earlier state and TFLM+CMSIS-NN,
counted exactly under QEMU (tflm_gen.bench), and vww's instructions per MAC per operator type.

    python benchmarks/cmsis_speed.py [--models DIR] [--save now.json] [--before then.json]

`--save` writes this checkout's figures; `--before` reads figures saved the same way by an
earlier checkout (e.g. `git archive BASE | tar -x -C /tmp/base` and run this script from
there with `--save`), so "before" and "after" are the same measurement of two trees.
Prints: model | ours reference kernels | TFLM+CMSIS-NN (issue 7's count) | ours cmsis before |
ours cmsis after | before / after, then vww_96_int8's instructions per MAC of CONV_2D and
DEPTHWISE_CONV_2D.  Never asserted in tests."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# This checkout's tflm_gen and kernels, not an installed copy's.
sys.path.insert(0, str(REPO))

from cmsis_table import CMSIS_NN_M4  # the peer's counts, issue 7

from tflm_gen.bench import bench
from tflm_gen.inspect import operator_macs
from tflm_gen.model.reader import read_model

CORPUS = REPO.parent / "shared" / "models"
TARGET = "qemu-cortex-m4"
MODELS = ["kws_ref_model", "vww_96_int8", "person_detect", "pretrainedResnet_quant",
          "ad01_int8", "micro_speech_quantized"]
PER_MAC_MODEL = "vww_96_int8"


def measure(models: Path) -> dict:
    """{model: {reference, cmsis, ops: [[op, instructions, macs], ...]}} of this checkout."""
    figures = {}
    for name in MODELS:
        data = (models / f"{name}.tflite").read_bytes()
        tagged = bench(data, TARGET, ("cmsis",))
        graph = read_model(data).subgraph
        macs = [operator_macs(graph, op) for op in graph.operators]
        figures[name] = {
            "reference": bench(data, TARGET)["instructions_per_invoke"],
            "cmsis": tagged["instructions_per_invoke"], "bit_exact": tagged["bit_exact"],
            "arena": tagged["arena_bytes"], "kernel_text": tagged["text_kernels"],
            "ops": [[row["op"], row["instructions"], macs[row["index"]]]
                    for row in tagged["ops"]]}  # fmt: skip
    return figures


def per_mac(ops: list) -> dict:
    """{op type: instructions per MAC} over the operators of the types that multiply."""
    totals: dict = {}
    for op, instructions, macs in ops:
        if macs:
            done, work = totals.get(op, (0, 0))
            totals[op] = (done + instructions, work + macs)
    return {op: done / work for op, (done, work) in sorted(totals.items())}


def print_tables(now: dict, before: dict) -> None:
    print("| model | ours reference | TFLM+CMSIS-NN | ours cmsis before | ours cmsis after | "
          "before / after | after / TFLM+CMSIS-NN | arena before / after | kernel text "
          "before / after | bit-exact |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for name in MODELS:
        row, old = now[name], before.get(name, {})
        after, then, peer = row["cmsis"], old.get("cmsis"), CMSIS_NN_M4.get(name)
        print(f"| {name} | {row['reference']:,} | {f'{peer:,}' if peer else '-'} | "
              f"{f'{then:,}' if then else '-'} | {after:,} | "
              f"{f'{then / after:.2f}x' if then else '-'} | "
              f"{f'{after / peer:.2f}x' if peer else '-'} | "
              f"{old.get('arena', '-')} / {row['arena']} | "
              f"{old.get('kernel_text', '-')} / {row['kernel_text']} | "
              f"{'yes' if row['bit_exact'] else 'NO'} |")
    print(f"\n{PER_MAC_MODEL}, instructions per MAC")
    print("| op | before | after |\n|---|---:|---:|")
    after_ops = per_mac(now[PER_MAC_MODEL]["ops"])
    before_ops = per_mac(before[PER_MAC_MODEL]["ops"]) if PER_MAC_MODEL in before else {}
    for op, value in after_ops.items():
        then = before_ops.get(op)
        print(f"| {op} | {f'{then:.2f}' if then else '-'} | {value:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=Path, default=CORPUS)
    parser.add_argument("--save", type=Path, help="write this checkout's figures here")
    parser.add_argument("--before", type=Path, help="figures saved by an earlier checkout")
    args = parser.parse_args()
    now = measure(args.models)
    if args.save:
        args.save.write_text(json.dumps(now, indent=1) + "\n")
    before = json.loads(args.before.read_text()) if args.before else {}
    print_tables(now, before)


if __name__ == "__main__":
    main()
