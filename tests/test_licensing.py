"""A generated project can be shipped: it carries the Apache-2.0 LICENSE and a NOTICE that
says the model's data belongs to its owner, and every file with a comment syntax starts
with an SPDX line (the XML ones right after their declaration; JSON has no comments)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tflm_gen.licensing import APACHE, MODEL_OWNER
from tflm_gen.project import GenerateOptions, generate
from tflm_gen.targets import list_targets

REPO = Path(__file__).resolve().parent.parent
SINE = (REPO / "examples" / "sine" / "sine_int8.tflite").read_bytes()
NO_COMMENTS = (".json",)
UNHEADED = ("LICENSE", "NOTICE")


def spdx_of(path: str, text: str) -> str | None:
    """The SPDX identifier in a file's head, if any."""
    lines = text.splitlines()[:3]
    for line in lines if path.endswith((".uvprojx", ".cproject", ".project")) else lines[:1]:
        if "SPDX-License-Identifier: " in line:
            return line.split("SPDX-License-Identifier: ", 1)[1].split()[0]
    return None


# Every target, and the IDE targets for a board (startup, linker script, scatter file,
# PlatformIO link script, board header).
CASES = [(target, None) for target in list_targets()] + [
    (target, "netduinoplus2") for target in ("keil", "stm32cube", "platformio")]


@pytest.mark.parametrize("target,board", CASES)
def test_every_generated_file_has_its_license(target, board):
    files = generate(SINE, GenerateOptions(target, board=board))
    assert files["LICENSE"] == (REPO / "LICENSE").read_bytes()
    notice = files["NOTICE"].decode()
    assert "Apache License, Version 2.0" in notice and "belongs to the model's owner" in notice
    for path, data in files.items():
        if path.endswith(NO_COMMENTS) or path in UNHEADED:
            continue
        expected = MODEL_OWNER if "_model_data" in Path(path).name else APACHE
        assert spdx_of(path, data.decode()) == expected, path
