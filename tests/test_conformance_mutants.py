"""Corrupt real models through the whole pipeline of `verify` and `project` (reader, graph
checks, device model, layouts, patch stage, host run, oracle, generation), with the cmsis
tag: seeded changes of meaning written back as valid flatbuffers (a dimension, a scale, a
zero point, an operator's input or output, an option, a dtype), which get past the reader
where random bytes seldom do.  Each must either succeed (for `verify`: bit-exact with TFLM)
or be refused in one line with exit status 2; never a traceback or an internal error.

tests/test_inspect.py fuzzes the reader alone and tests/test_runtime_c.py the C loader under
the sanitizers; this covers the stages between.  The broad sample (50 mutants per entry
point, `inspect`, `run` and `bench` too, each in a child process with a timeout) is
benchmarks/robustness_mutants.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import corpus_path

from benchmarks.robustness_mutants import semantic_mutate
from tflm_gen.cli import main
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder

REPO = Path(__file__).resolve().parent.parent
MUTANTS = 8  # per model and command


def model_path(name: str) -> Path:
    if name == "sine_int8":
        return REPO / "examples" / "sine" / "sine_int8.tflite"
    return corpus_path(f"{name}.tflite")


def arguments(command: str, model: Path, folder: Path) -> list[str]:
    if command == "verify":
        return ["verify", str(model), "--runs", "1", "--memory", "small"]
    return ["project", "--model", str(model), "--target", "make", "-o", str(folder / "p")]


@pytest.mark.parametrize("command", ["verify", "project"])
@pytest.mark.parametrize("name", ["sine_int8", "micro_speech_quantized"])
def test_corrupt_models_succeed_or_are_refused_in_one_line(name, command, tmp_path):
    data = model_path(name).read_bytes()
    rng = np.random.default_rng([7, len(name), len(command)])
    outcomes = []
    for trial in range(MUTANTS):
        mutant, how = semantic_mutate(data, rng)
        path = tmp_path / f"{trial}.tflite"
        path.write_bytes(mutant)
        result = CliRunner().invoke(main, [*arguments(command, path, tmp_path / str(trial)),
                                           "--tags", "cmsis"])
        lines = result.stderr.splitlines()
        refused = result.exit_code == 2 and len(lines) == 1 and "internal error" not in lines[0]
        assert result.exit_code == 0 or refused, (how, result.exit_code, result.stderr,
                                                  result.exception)
        outcomes.append(result.exit_code)
    assert 2 in outcomes  # the mutants reach the checks


def _conv_with_a_flat_filter() -> bytes:
    """An int8 CONV_2D whose filter is a 1-D constant (found as kws_ref_model with one
    operator's filter swapped for another's bias by benchmarks/robustness_mutants.py)."""
    builder = ModelBuilder()
    x = builder.input("x", [1, 4, 4, 2], "int8", scale=0.5, zero_point=0)
    w = builder.constant("w", np.ones(8, np.int8), quantization=ir.Quantization([0.25], [0]))
    builder.output(builder.add_op("CONV_2D", [x, w, -1], [1, 4, 4, 2], "int8", scale=0.5,
                                  zero_point=0, options={"padding": "SAME"}))
    return builder.build()


def _fully_connected_without_input() -> bytes:
    """An int8 FULLY_CONNECTED whose data input is omitted (-1; found as the sine example
    with one operator's input index changed by benchmarks/robustness_mutants.py)."""
    builder = ModelBuilder()
    x = builder.input("x", [1, 4], "int8", scale=0.5, zero_point=0)
    w = builder.constant("w", np.ones((4, 4), np.int8), quantization=ir.Quantization([0.25], [0]))
    hidden = builder.add_op("FULLY_CONNECTED", [x, w, -1], [1, 4], "int8", scale=0.5,
                            zero_point=0)
    builder.output(builder.add_op("FULLY_CONNECTED", [-1, w, -1], [1, 4], "int8", scale=0.5,
                                  zero_point=0))
    del hidden
    return builder.build()


def _conv_chain_with_a_negative_stride() -> bytes:
    """Two int8 CONV_2D layers (a patch stage candidate) whose first has stride_h -2**31
    (found as kws_ref_model with that option by benchmarks/robustness_mutants.py): the
    stage's band rows overflowed its int32 metadata."""
    builder = ModelBuilder()
    x = builder.input("x", [1, 8, 8, 2], "int8", scale=0.5, zero_point=0)
    w = builder.constant("w", np.ones((2, 3, 3, 2), np.int8),
                         quantization=ir.Quantization([0.25], [0]))
    hidden = builder.add_op("CONV_2D", [x, w, -1], [1, 8, 8, 2], "int8", scale=0.5,
                            zero_point=0, options={"padding": "SAME"})
    builder.output(builder.add_op("CONV_2D", [hidden, w, -1], [1, 8, 8, 2], "int8",
                                  scale=0.5, zero_point=0, options={"padding": "SAME"}))
    builder.model.subgraph.operators[0].builtin_options["stride_h"] = -(1 << 31)
    return builder.build()


MALFORMED = {"flat_filter": _conv_with_a_flat_filter,
             "omitted_input": _fully_connected_without_input,
             "negative_stride": _conv_chain_with_a_negative_stride}


@pytest.mark.parametrize("tags", [(), ("cmsis",)], ids=["reference", "cmsis"])
@pytest.mark.parametrize("command", ["verify", "project"])
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_nodes_the_kernels_refuse_are_refused_in_one_line(case, command, tags, tmp_path):
    """The arena model that chooses the patch stage met these nodes before the runtime's
    prepare could refuse them: an IndexError or AttributeError (an internal error) with the
    cmsis tag, and for an omitted input without it."""
    path = tmp_path / "malformed.tflite"
    path.write_bytes(MALFORMED[case]())
    tag_options = ["--tags", ",".join(tags)] if tags else []
    result = CliRunner().invoke(main, [*arguments(command, path, tmp_path), *tag_options])
    lines = result.stderr.splitlines()
    assert result.exit_code == 2 and len(lines) == 1, (result.stderr, result.exception)
    assert "internal error" not in lines[0] and "op " in lines[0], lines[0]
