"""`tflm-gen inspect` and the reader's behaviour on hostile bytes."""

from __future__ import annotations

import json
import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import corpus_models, need_tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_conformance_mutants import MALFORMED

from tflm_gen.cli import main
from tflm_gen.errors import ModelError, TflmGenError
from tflm_gen.inspect import inspect_model, operator_macs
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.lifetimes import activation_lower_bound, tensor_lifetimes
from tflm_gen.model.reader import read_model
from tflm_gen.text import one_line

CORPUS = corpus_models() + [f"seanet/{name}" for name in corpus_models("seanet")]
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def small_model() -> bytes:
    """A two-op int8 model made by the builder: small, yet with every kind of table."""
    builder = ModelBuilder()
    x = builder.input("x", [1, 4], "int8", scale=0.1, zero_point=-3)
    w = builder.constant("w", np.arange(12, dtype=np.int8).reshape(3, 4), dtype="int8")
    b = builder.constant("b", np.zeros(3, np.int32))
    y = builder.add_op("FULLY_CONNECTED", [x, w, b], [1, 3], "int8", scale=0.2, zero_point=1)
    z = builder.add_op("SOFTMAX", [y], [1, 3], "int8", scale=1 / 256, zero_point=-128)
    builder.output(z)
    return builder.build()


SMALL = small_model()


def run_inspect(path, *options):
    return CliRunner().invoke(main, ["inspect", *options, str(path)])


def assert_user_error(result):
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tflm-gen: error:"), result.stderr
    assert "Traceback" not in result.output


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS)
def test_inspect_corpus_model(corpus_dir, name):
    result = run_inspect(corpus_dir / name, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    for key in (
        "inputs",
        "outputs",
        "operators",
        "activation_lower_bound_bytes",
        "weight_bytes",
        "unsupported_ops",
    ):
        assert key in report
    assert {"shape", "dtype", "scale", "zero_point"} <= set(report["inputs"][0])
    assert {"index", "op", "version", "inputs", "outputs", "macs"} <= set(report["operators"][0])
    assert run_inspect(corpus_dir / name).exit_code == 0


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["person_detect.tflite", "vww_96_int8.tflite"])
def test_activation_lower_bound_matches_tflm_planner(corpus_dir, name):
    assert inspect_model(corpus_dir / name)["activation_lower_bound_bytes"] == 55296


@pytest.mark.corpus
def test_macs_of_person_detect(corpus_dir):
    report = inspect_model(corpus_dir / "person_detect.tflite")
    first = report["operators"][0]  # 3x3 depthwise, 96x96x1 -> 48x48x8
    assert first["op"] == "DEPTHWISE_CONV_2D" and first["macs"] == 48 * 48 * 8 * 9
    assert report["total_macs"] > 7_000_000


def test_text_report_lists_everything(tmp_path):
    path = tmp_path / "small.tflite"
    path.write_bytes(SMALL)
    result = run_inspect(path)
    assert result.exit_code == 0
    for text in (
        "inputs:",
        "scale=0.1",
        "FULLY_CONNECTED",
        "SOFTMAX",
        "weight bytes: 24",
        "activation lower bound: 7 bytes",
        "tensors: 5",
    ):
        assert text in result.stdout


def test_lifetimes_of_small_model():
    model = read_model(SMALL)
    assert tensor_lifetimes(model) == {0: (0, 0), 3: (0, 1), 4: (1, 1)}
    assert activation_lower_bound(model) == 4 + 3
    assert operator_macs(model.subgraph, model.subgraph.operators[0]) == 12


def test_variable_tensors_live_throughout():
    builder = ModelBuilder()
    x = builder.input("x", [1, 8], "float32")
    y = builder.add_op("RELU", [x], [1, 8], "float32")
    z = builder.add_op("RELU", [y], [1, 8], "float32")
    builder.graph.tensors.append(ir.Tensor("state", [1, 100], "float32", is_variable=True))
    builder.output(z)
    model = read_model(builder.build())
    assert tensor_lifetimes(model)[3] == (0, 1)
    assert activation_lower_bound(model) == 400 + 32 + 32


@pytest.mark.parametrize("cut", [0, 3, 8, 40, len(SMALL) // 2, len(SMALL) - 1])
def test_truncated_model_is_one_line_error(tmp_path, cut):
    path = tmp_path / "cut.tflite"
    path.write_bytes(SMALL[:cut])
    assert_user_error(run_inspect(path))


@pytest.mark.corpus
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.999])
def test_truncated_corpus_model_is_one_line_error(corpus_dir, tmp_path, fraction):
    data = (corpus_dir / "person_detect.tflite").read_bytes()
    path = tmp_path / "cut.tflite"
    path.write_bytes(data[: int(len(data) * fraction)])
    assert_user_error(run_inspect(path))


def corrupt(data: bytes, position: int, value: int) -> bytes:
    return data[:position] + struct.pack("<I", value & 0xFFFFFFFF) + data[position + 4 :]


@pytest.mark.parametrize(
    "how",
    ["root offset", "root soffset", "vtable size", "identifier"],
)
def test_corrupted_offsets_are_one_line_errors(tmp_path, how):
    root = struct.unpack_from("<I", SMALL, 0)[0]
    data = {
        "root offset": lambda: corrupt(SMALL, 0, 0xFFFFFF00),
        "root soffset": lambda: corrupt(SMALL, root, -0x7FFFFFF0),
        "vtable size": lambda: corrupt(SMALL, root - struct.unpack_from("<i", SMALL, root)[0], 3),
        "identifier": lambda: SMALL[:4] + b"XXXX" + SMALL[8:],
    }[how]()
    path = tmp_path / "bad.tflite"
    path.write_bytes(data)
    assert_user_error(run_inspect(path))


def test_missing_file_is_one_line_error(tmp_path):
    assert_user_error(run_inspect(tmp_path / "absent.tflite"))


@FUZZ
@given(st.binary(min_size=0, max_size=600))
def test_random_bytes_exit_2(data):
    # also with the "TFL3" identifier so the reader gets past the first check
    for candidate in (data, data[:4] + b"TFL3" + data[8:]):
        with tempfile.TemporaryDirectory() as folder:  # hypothesis runs it many times
            path = Path(folder) / "random.tflite"
            path.write_bytes(candidate)
            assert_user_error(run_inspect(path))


@FUZZ
@given(st.lists(st.tuples(st.integers(0, len(SMALL) - 1), st.integers(0, 255)), max_size=8))
def test_mutated_model_raises_only_model_error(changes):
    data = bytearray(SMALL)
    for position, value in changes:
        data[position] = value
    try:
        read_model(bytes(data))
    except TflmGenError:
        pass


@FUZZ
@given(st.integers(0, len(SMALL) - 4), st.integers(0, 0xFFFFFFFF))
def test_mutated_word_raises_only_model_error(position, value):
    try:
        read_model(corrupt(SMALL, position, value))
    except TflmGenError:
        pass


def test_index_out_of_range_is_model_error():
    model = read_model(SMALL)
    model.subgraph.operators[0].inputs[1] = 99
    from tflm_gen.model.writer import write_model

    with pytest.raises(ModelError, match="input refers to tensor 99 of 5"):
        read_model(write_model(model))


def test_constant_smaller_than_tensor_is_model_error():
    model = read_model(SMALL)
    model.buffers[1].data = b"\x00" * 5
    from tflm_gen.model.writer import write_model

    with pytest.raises(ModelError, match="needs 12 bytes of data but its buffer holds 5"):
        read_model(write_model(model))


SINE = Path(__file__).resolve().parent.parent / "examples" / "sine" / "sine_int8.tflite"


def _verify_refusal(path: Path) -> str | None:
    """What `verify` says when it refuses the model (without the `tflm-gen: error:`), or
    None when it verifies it."""
    result = CliRunner().invoke(main, ["verify", str(path), "--runs", "1"])
    if result.exit_code == 0:
        return None
    assert result.exit_code == 2, (result.output, result.exception)
    return result.stderr.strip().removeprefix("tflm-gen: error: ")


@pytest.mark.parametrize("case", [*sorted(MALFORMED), "healthy"])
def test_inspect_gives_the_verdict_and_reason_of_verify(case, tmp_path):
    """The malformed nodes of tests/test_conformance_mutants.py pass the operator table but
    not their kernel's prepare: inspect runs the same check as verify (a host compiler
    exists here), so it refuses them in the same words; a healthy model both take."""
    need_tool("cc")
    path = tmp_path / f"{case}.tflite"
    path.write_bytes(SINE.read_bytes() if case == "healthy" else MALFORMED[case]())
    refused = _verify_refusal(path)
    assert (refused is None) == (case == "healthy"), refused
    report = json.loads(run_inspect(path, "--json").stdout)
    verdict = None if report["refused"] is None else one_line(report["refused"])
    assert verdict == refused
    assert report["kernels_checked"] and report["unsupported_ops"] == []
    last = run_inspect(path).stdout.strip().splitlines()[-1]
    assert last == (f"refused by run and verify: {refused}" if refused
                    else "supported: all operators")
