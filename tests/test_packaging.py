"""A plain (non-editable) install carries the C sources, templates and targets, and can
generate and build a project from a directory that is not the repository."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import need_tool

REPO = Path(__file__).resolve().parent.parent
SINE = REPO / "examples" / "sine" / "sine_int8.tflite"


def test_wheel_installs_and_generates(tmp_path):
    need_tool("make")
    wheel_dir, target = tmp_path / "wheel", tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheel_dir),
                    str(REPO)], check=True, capture_output=True)
    wheel = next(wheel_dir.glob("tflm_gen-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for required in ("tflm_gen/_data/runtime_c/tflm_interpreter.c",
                     "tflm_gen/_data/kernels_c/conv.c", "tflm_gen/_data/templates/make/Makefile.j2",
                     "tflm_gen/_data/targets/make.json",
                     "tflm_gen/_data/templates/report/report.html.j2"):
        assert required in names
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True, capture_output=True)
    script = (f"import tflm_gen, pathlib; from tflm_gen.output import write_tree; "
              f"assert tflm_gen.__file__.startswith({str(target)!r}), tflm_gen.__file__; "
              f"write_tree(tflm_gen.generate(pathlib.Path({str(SINE)!r}).read_bytes()), 'out')")
    env = {**os.environ, "PYTHONPATH": str(target)}
    subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, check=True)
    run = subprocess.run(["make", "-s", "run"], cwd=tmp_path / "out", capture_output=True,
                         text=True, check=False)
    assert run.returncode == 0 and "~~~ALL TESTS PASSED~~~" in run.stderr, run.stderr
