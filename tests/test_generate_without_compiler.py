"""Generating needs no host C compiler: IDE users (Keil, STM32CubeIDE on Windows) usually
have none.  The arena then comes from the Python arena model and the expected outputs from
the oracle; `assemble` itself imports nothing that compiles or runs; with neither compiler
nor oracle the project still generates, and its self-test says it has nothing to compare."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import STRICT, corpus_path, need_tool

REPO = Path(__file__).resolve().parent.parent
SINE = REPO / "examples" / "sine" / "sine_int8.tflite"
MODELS = ("kws_ref_model.tflite", "micro_speech_quantized.tflite")
# Run first in a child Python: makes the oracle's packages (and, where asked, the modules
# that compile or run C) impossible to import.
BLOCK = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None
"""


def _environment(tmp_path: Path) -> dict[str, str]:
    """A child environment whose PATH holds no compiler at all (nor anything else)."""
    empty = tmp_path / "empty-path"
    empty.mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if key not in ("CC", "PATH")}
    env["PATH"] = str(empty)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return env


def _project_cli(args: list[str], env: dict | None = None, blocked: tuple[str, ...] = ()):
    code = BLOCK.format(blocked=blocked) + "from tflm_gen.cli import main\nmain()\n"
    return subprocess.run([sys.executable, "-c", code, "project", *args], env=env,
                          capture_output=True, text=True, check=False)


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes().replace(str(folder).encode(), b"OUT")
            for p in folder.rglob("*") if p.is_file()}


def _arena(folder: Path) -> int:
    header = next((folder / "tflm").glob("*_model_data.h")).read_text()
    return int(re.search(r"#define \w+_ARENA_BYTES (\d+)", header).group(1))


@pytest.mark.parametrize("target", ["keil", "stm32cube"])
@pytest.mark.parametrize("model", MODELS)
def test_ide_project_without_a_compiler_equals_the_one_with(model, target, tmp_path):
    need_tool("cc")
    path = corpus_path(model)
    with_compiler, without = tmp_path / "with", tmp_path / "without"
    made = _project_cli(["--model", str(path), "--target", target, "-o", str(with_compiler)])
    assert made.returncode == 0, made.stderr
    made = _project_cli(["--model", str(path), "--target", target, "-o", str(without)],
                        _environment(tmp_path))
    assert made.returncode == 0 and made.stderr == "", made.stderr
    assert _arena(without) == _arena(with_compiler)
    assert _tree(without) == _tree(with_compiler)  # the same expected outputs, too


def test_assemble_imports_nothing_that_compiles_or_runs(tmp_path):
    blocked = ("cffi", "tflm_gen.host", "tflm_gen.oracle", "tflite_micro", "ai_edge_litert",
               "subprocess")
    script = BLOCK.format(blocked=blocked) + f"""
from pathlib import Path
from tflm_gen.arena import arena_bytes
from tflm_gen.inputs import random_inputs
from tflm_gen.measure import Measured
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model
from tflm_gen.project import GenerateOptions, assemble
model = Path({str(SINE)!r}).read_bytes()
device = read_model(device_model(model)[0])
measured = Measured(arena_bytes(device), "arena model", tuple(random_inputs(device)), ())
files = assemble(model, GenerateOptions("keil"), measured)
print(len(files), "MODEL_ARENA_BYTES " + str(measured.arena_bytes) in
      files["tflm/model_model_data.h"].decode())
"""
    run = subprocess.run([sys.executable, "-c", script], env=_environment(tmp_path),
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    count, declared = run.stdout.split()
    assert int(count) > 20 and declared == "True"


def test_without_compiler_or_oracle_the_self_test_says_it_has_no_reference(tmp_path):
    gcc = need_tool("gcc")
    out = tmp_path / "sine"
    made = _project_cli(["--model", str(SINE), "--target", "make", "-o", str(out)],
                        _environment(tmp_path), ("tflite_micro", "ai_edge_litert"))
    assert made.returncode == 0, made.stderr
    note = [line for line in made.stderr.splitlines() if line]
    assert len(note) == 1 and "no reference output" in note[0]
    assert "expected_output_" not in (out / "test" / "test_data.h").read_text()
    sources = [str(p) for p in [*(out / "tflm").glob("*.c"), out / "test" / "main.c"]]
    program = tmp_path / "self_test"
    subprocess.run([gcc, *STRICT, *sources, "-o", str(program), "-lm"], check=True)
    run = subprocess.run([str(program)], capture_output=True, text=True, check=False)
    log = run.stdout + run.stderr
    assert run.returncode == 0 and "no reference output to compare" in log, log
    assert "ALL TESTS PASSED" not in log
