"""The oracle's time limit (tflm_gen.oracle): a reference runtime that hangs is killed after
a limit scaled to the model, and the command says so in one line with exit status 2,
instead of waiting forever.  Tested with a child whose invokes sleep, under a limit of a
second (TFLM_GEN_ORACLE_TIMEOUT), not by waiting minutes."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import corpus_path

from tflm_gen import oracle
from tflm_gen.cli import main
from tflm_gen.errors import InputError
from tflm_gen.model.reader import read_model

REPO = Path(__file__).resolve().parent.parent
SINE = REPO / "examples" / "sine" / "sine_int8.tflite"
# The oracle's process, its invokes never returning as a reference runtime's bug would.
HANGING_CHILD = """
import time
from tflm_gen import oracle_child
oracle_child.Loaded.run = lambda self, inputs: time.sleep(120)
oracle_child.main()
"""


@pytest.fixture
def hanging_child(monkeypatch):
    monkeypatch.setattr(oracle, "CHILD_COMMAND", [sys.executable, "-c", HANGING_CHILD])
    monkeypatch.setattr(oracle, "_CHILD", None)  # a fresh process with that command
    yield
    if oracle._CHILD is not None:
        oracle._CHILD.close()
    oracle._CHILD = None  # the next test's oracle starts a healthy child


def test_a_hang_of_the_reference_runtime_is_one_line_and_exit_2(hanging_child, monkeypatch):
    monkeypatch.setenv(oracle.TIMEOUT_VARIABLE, "2")
    started = time.monotonic()
    result = CliRunner().invoke(main, ["verify", str(SINE), "--runs", "1"])
    assert time.monotonic() - started < 100  # the sleep lasts 120 s
    assert result.exit_code == 2, (result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert ("the reference runtime (TFLM) did not finish in 2 s on this model "
            f"({oracle.TIMEOUT_VARIABLE} sets the seconds to wait)") in lines[0]
    assert lines[0].endswith("; our outputs were not compared")
    assert oracle._CHILD.process.poll() is not None  # killed, not left running


def test_the_limit_scales_with_the_model_and_is_minutes_on_the_biggest(monkeypatch):
    """A base for the child's start, then per MAC: minutes for pretrainedResnet_quant
    (12.5 M MACs, whose healthy invoke takes TFLM about 0.1 s), more for more invokes."""
    monkeypatch.delenv(oracle.TIMEOUT_VARIABLE, raising=False)
    sine = oracle.timeout_seconds(read_model(SINE.read_bytes()))
    assert oracle.BASE_SECONDS <= sine < oracle.BASE_SECONDS + 1
    resnet = read_model(corpus_path("pretrainedResnet_quant.tflite").read_bytes())
    assert 120 < oracle.timeout_seconds(resnet) < 600
    assert oracle.timeout_seconds(resnet, invokes=2) > oracle.timeout_seconds(resnet)


@pytest.mark.parametrize("value", ["0", "-3", "soon", "inf", "nan"])
def test_a_bad_limit_is_refused_in_words(monkeypatch, value):
    monkeypatch.setenv(oracle.TIMEOUT_VARIABLE, value)
    with pytest.raises(InputError, match=oracle.TIMEOUT_VARIABLE):
        oracle.timeout_seconds(read_model(SINE.read_bytes()))
