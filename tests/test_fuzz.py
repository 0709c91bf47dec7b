"""The coverage-guided fuzzer (fuzz/run.sh: libFuzzer, ASan, UBSan over the C loader, init
and two invokes) runs in CI, and every input it ever crashed on is replayed here under the
sanitizers: tests/regression/cases.tsv names each file, the statuses init and invoke must
now return, and the class of the bug it found."""

from __future__ import annotations

import csv
import os
import subprocess
from pathlib import Path

import pytest
from conftest import need_tool

from fuzz.replay_build import build_replay, run_replay

REPO = Path(__file__).resolve().parent.parent
REGRESSION = REPO / "tests" / "regression"
# Seconds of fuzzing per kernel tag in CI (one minute in all).
FUZZ_SECONDS = {"reference": 40, "cmsis": 20}


def regression_cases() -> list[dict]:
    with (REGRESSION / "cases.tsv").open() as table:
        return list(csv.DictReader(table, delimiter="\t"))


def test_every_regression_input_is_listed():
    listed = {case["file"] for case in regression_cases()}
    assert listed == {path.name for path in REGRESSION.glob("*.bin")}
    assert all(case["class"] and case["init"].startswith("TFLM_") for case in regression_cases())


@pytest.mark.parametrize("tag", ["reference", "cmsis"])
def test_fuzz_crashes_stay_fixed(tag, tmp_path):
    """Each saved crash runs clean under ASan and UBSan and returns its recorded statuses."""
    compiler = need_tool("gcc")
    replay = build_replay(tmp_path, () if tag == "reference" else (tag,), compiler)
    cases = regression_cases()
    statuses = run_replay(replay, [REGRESSION / case["file"] for case in cases])
    for case in cases:
        got = statuses[str(REGRESSION / case["file"])]
        assert got == (case["init"], case["invoke"]), (case["file"], case["class"], got)


@pytest.mark.parametrize("tag", sorted(FUZZ_SECONDS))
def test_libfuzzer_finds_nothing_in_ci_time(tag, tmp_path):
    """A short libFuzzer run from the seeds (shared models, zoo, op-test models, the
    regression inputs); any sanitizer report or crash fails it."""
    need_tool("clang")
    env = {**os.environ, "FUZZ_WORK": str(tmp_path / "work"), "PYTHONPATH": str(REPO)}
    run = subprocess.run([str(REPO / "fuzz" / "run.sh"), str(FUZZ_SECONDS[tag]), tag], env=env,
                         capture_output=True, text=True, timeout=1800, check=False)
    crashes = sorted((tmp_path / "work").glob("crash-*"))
    assert run.returncode == 0 and not crashes, (crashes, run.stderr[-4000:])
    assert "Done" in run.stderr, run.stderr[-2000:]
