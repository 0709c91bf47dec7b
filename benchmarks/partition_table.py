"""Prints the partition table of issue 14 for the shared int8 models and the shipped specs:
model | spec | subgraphs | ops offloaded | share of MACs offloaded | bit-exact.

    python3 benchmarks/partition_table.py

bit-exact: the partitioned model's outputs (host run, reference backend) equal the
original's over two invokes on seeded random inputs, and the original's equal TFLM's.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tflm_gen.accelerator import load_accelerator
from tflm_gen.host import HostInterpreter
from tflm_gen.inputs import random_inputs
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.oracle import Oracle
from tflm_gen.partition import partition_model, partition_summary, plan_partition

CORPUS = Path(os.environ.get("TFLM_GEN_CORPUS") or REPO.parent / "shared" / "models")
MODELS = ["ad01_int8", "hello_world_int8", "kws_ref_model", "micro_speech_quantized",
          "person_detect", "pretrainedResnet_quant", "simple_add_model", "trained_lstm_int8",
          "vww_96_int8"]
SPECS = ["conv_only", "all_but_softmax", "small_pool"]


def outputs(data: bytes, runtime) -> list[bytes]:
    model = read_model(data)
    return [array.tobytes() for seed in (0, 1) for array in runtime.run(random_inputs(model, seed))]


def main() -> None:
    print("| model | spec | subgraphs | ops offloaded | share of MACs offloaded | bit-exact |")
    print("|---|---|---|---|---|---|")
    for name in MODELS:
        original = (CORPUS / f"{name}.tflite").read_bytes()
        model = read_model(original)
        ours = outputs(original, HostInterpreter(original))
        matches_tflm = ours == outputs(original, Oracle(original, "tflm"))
        for spec in SPECS:
            accelerator = load_accelerator(spec)
            plan = plan_partition(model, accelerator)
            data = write_model(partition_model(model, accelerator, plan))
            summary = partition_summary(model, plan)
            exact = matches_tflm and outputs(data, HostInterpreter(data)) == ours
            print(f"| {name} | {spec} | {summary['subgraphs']} | {summary['ops_offloaded']} of "
                  f"{summary['ops']} | {summary['mac_share']:.2%} | {'yes' if exact else 'NO'} |")


if __name__ == "__main__":
    main()
