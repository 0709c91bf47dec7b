"""Prints the table of issue 15 for `--weights separate` over every int8 model of the corpus:
model | flatbuffer bytes | mini flatbuffer bytes | saving | weight bytes, for the device
model of the reference kernels and of `--tags cmsis` (whose offline weight layouts move to
the weight array too), then the mean saving.

    TFLM_GEN_CORPUS=/work/shared/models python3 benchmarks/weights_table.py

flatbuffer: the device model a whole project embeds (the user's model plus requantisation,
offline plan and, with cmsis, weight layouts); mini flatbuffer: the model array of a
separate project; weight bytes: its weight array (tflm_gen/weights.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tflm_gen.optimize import device_model
from tflm_gen.table import format_table
from tflm_gen.weights import separate_summary

CORPUS = Path(os.environ.get("TFLM_GEN_CORPUS", REPO.parent / "shared" / "models"))


def int8_models(corpus: Path = CORPUS) -> list[str]:
    """Corpus models with an int8 input or output (MANIFEST.tsv columns 5 and 6)."""
    rows = (corpus / "MANIFEST.tsv").read_text().splitlines()[1:]
    return [row.split("\t")[0] for row in rows if "int8" in " ".join(row.split("\t")[4:6])]


def summaries(tags: tuple[str, ...], corpus: Path = CORPUS) -> dict[str, dict]:
    """separate_summary of every int8 model of the corpus (tests/test_weights.py checks
    the mean saving against the issue's goal)."""
    return {name: separate_summary(device_model((corpus / name).read_bytes(), tags)[0])
            for name in int8_models(corpus)}


def table(tags: tuple[str, ...]) -> str:
    found = summaries(tags)
    rows = [[name.removesuffix(".tflite"), split["whole_bytes"], split["mini_bytes"],
             f"{split['saving']:.1%}", split["weights_bytes"]] for name, split in found.items()]
    header = ["model", "flatbuffer bytes", "mini flatbuffer bytes", "saving", "weight bytes"]
    mean = sum(split["saving"] for split in found.values()) / len(found)
    return f"{format_table(header, rows)}\nmean saving {mean:.1%} over {len(rows)} models"


if __name__ == "__main__":
    for tags in ((), ("cmsis",)):
        print(f"tags: {','.join(tags) or 'reference'}")
        print(table(tags) + "\n")
