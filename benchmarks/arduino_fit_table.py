"""Prints which Arduino boards (`--board`) each model fits, as the generator's fit check
decides it: model | device bytes | arena | one column per board (fits, or the memory that
refuses it).

    python3 benchmarks/arduino_fit_table.py

Device bytes: the model a project embeds (offline plan, flash requantisation); arena: the
exact arena the runtime uses, measured on the host (the same on an 8-bit AVR).  On AVR the
model counts against the SRAM too (`const` data is copied there).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tflm_gen.errors import UnsupportedModelError
from tflm_gen.host import HostInterpreter
from tflm_gen.optimize import device_model
from tflm_gen.project import check_fits_board
from tflm_gen.targets import load_target, with_board

CORPUS = Path(os.environ.get("TFLM_GEN_CORPUS") or REPO.parent / "shared" / "models")
MODELS = [REPO / "examples" / "sine" / "sine_int8.tflite", CORPUS / "hello_world_int8.tflite",
          CORPUS / "micro_speech_quantized.tflite", CORPUS / "kws_ref_model.tflite"]


def verdict(target, board: str, model_bytes: int, arena_bytes: int) -> str:
    try:
        check_fits_board(with_board(target, board), model_bytes, arena_bytes)
    except UnsupportedModelError as refusal:
        return "flash" if "for code and model" in str(refusal) else "SRAM"
    return "fits"


def main() -> None:
    target = load_target("arduino")
    boards = sorted(target.boards)
    print("| model | device bytes | arena | " + " | ".join(boards) + " |")
    print("|---|---:|---:|" + "---|" * len(boards))
    for path in MODELS:
        device = device_model(path.read_bytes())[0]
        arena = HostInterpreter(device).arena_used_bytes
        cells = [verdict(target, board, len(device), arena) for board in boards]
        print(f"| {path.stem} | {len(device)} | {arena} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
