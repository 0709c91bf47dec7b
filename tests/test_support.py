"""Generation-time refusals (tflm_gen.support): unsupported operators, hybrid operators we
do not run (int8 FULLY_CONNECTED / CONV_2D / DEPTHWISE_CONV_2D we run, against LiteRT) and
unsupported activation dtypes, all named at once in one line; the CLI exits 2."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import need_corpus

from tflm_gen.cli import main
from tflm_gen.errors import UnsupportedModelError
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.reader import read_model
from tflm_gen.support import check_supported, litert_only, unsupported_report


def hybrid_fully_connected() -> bytes:
    """float32 activations through a FULLY_CONNECTED with int8 weights (a hybrid op)."""
    b = ModelBuilder()
    x = b.input("features", [1, 8], "float32")
    weights = np.ones([4, 8], np.int8)
    w = b.constant("dense/kernel", weights, quantization=ir.Quantization([0.02], [0]))
    b.output(b.add_op("FULLY_CONNECTED", [x, w], [1, 4], "float32"))
    return b.build()


def hybrid_batch_matmul() -> bytes:
    """float32 activations times constant int8 weights in a BATCH_MATMUL: hybrid, which
    tflm-gen does not run."""
    b = ModelBuilder()
    x = b.input("features", [1, 2, 8], "float32")
    weights = np.ones([1, 8, 4], np.int8)
    w = b.constant("dense/kernel", weights, quantization=ir.Quantization([0.02], [0]))
    b.output(b.add_op("BATCH_MATMUL", [x, w], [1, 2, 4], "float32"))
    return b.build()


def many_problems() -> bytes:
    """Two ops without kernels, one hybrid op, one op with an unsupported input dtype."""
    b = ModelBuilder()
    x = b.input("x", [1, 8], "float32")
    y = b.add_op("LSH_PROJECTION", [x], [1, 8], "float32")
    y = b.add_op("SKIP_GRAM", [y], [1, 8], "float32")
    w = b.constant("w", np.ones([1, 8, 8], np.int8), quantization=ir.Quantization([0.1], [0]))
    b.output(b.add_op("BATCH_MATMUL", [y, w], [1, 8], "float32"))
    s = b.input("s", [1, 4], "uint16")
    b.output(b.add_op("SOFTMAX", [s], [1, 4], "uint16"))
    return b.build()


def test_hybrid_op_refused_with_op_and_tensors_named() -> None:
    with pytest.raises(UnsupportedModelError) as error:
        check_supported(read_model(hybrid_batch_matmul()))
    message = str(error.value)
    assert "hybrid" in message and "\n" not in message
    assert "BATCH_MATMUL op 0" in message
    assert "'features' float32" in message and "'dense/kernel' int8" in message


def test_int8_hybrid_fully_connected_runs_against_litert() -> None:
    model = read_model(hybrid_fully_connected())
    check_supported(model)
    assert litert_only(model) == ["FULLY_CONNECTED op 0 (hybrid)"]


def test_every_problem_listed_in_one_line() -> None:
    report = unsupported_report(read_model(many_problems()))
    assert report["operators"] == ["LSH_PROJECTION (version 1, op 0)",
                                   "SKIP_GRAM (version 1, op 1)"]
    assert len(report["hybrid"]) == 1 and report["hybrid"][0].startswith("BATCH_MATMUL op 2")
    assert len(report["dtypes"]) == 1 and report["dtypes"][0].startswith("SOFTMAX op 3 (uint16")
    with pytest.raises(UnsupportedModelError) as error:
        check_supported(read_model(many_problems()))
    message = str(error.value)
    assert "\n" not in message
    for part in ("LSH_PROJECTION", "SKIP_GRAM", "BATCH_MATMUL op 2", "SOFTMAX op 3"):
        assert part in message


def test_weight_only_dequantize_is_not_hybrid() -> None:
    """int8 constants dequantized to float feed float kernels: TFLM runs that, and so do we."""
    b = ModelBuilder()
    x = b.input("x", [1, 8], "float32")
    q = ir.Quantization([0.1], [0])
    w = b.add_op("DEQUANTIZE", [b.constant("w", np.ones([4, 8], np.int8), quantization=q)],
                 [4, 8], "float32")  # fmt: skip
    b.output(b.add_op("FULLY_CONNECTED", [x, w], [1, 4], "float32"))
    check_supported(read_model(b.build()))


def test_cli_refuses_hybrid_model_with_exit_2(tmp_path) -> None:
    model = tmp_path / "hybrid.tflite"
    model.write_bytes(hybrid_batch_matmul())
    result = CliRunner().invoke(main, ["project", "--model", str(model), "-o", str(tmp_path / "o")])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tflm-gen: error: hybrid operators")
    assert "BATCH_MATMUL op 0" in lines[0]


def test_kws_float32_project_embeds_litert_outputs(tmp_path) -> None:
    """Its hybrid convolutions run; TFLM cannot, so the expected output is LiteRT's."""
    model = need_corpus() / "kws_ref_model_float32.tflite"
    result = CliRunner().invoke(main, ["project", "--model", str(model), "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    test_data = next(tmp_path.rglob("test_data.h")).read_text()
    assert "(LiteRT reference kernels)" in test_data


def test_ops_beyond_tflm_limits_are_refused() -> None:
    """TFLM refuses a 5-D STRIDED_SLICE and a CONCATENATION of more than 10 inputs, so
    nothing could check our answer there: refused in one line naming both."""
    b = ModelBuilder()
    x = b.input("x", [1, 2, 2, 2, 4], "float32")
    parts = [b.constant("begin", np.zeros(5, np.int32)), b.constant("end", np.ones(5, np.int32)),
             b.constant("strides", np.ones(5, np.int32))]
    b.output(b.add_op("STRIDED_SLICE", [x, *parts], [1, 1, 1, 1, 1], "float32"))
    pieces = [b.input(f"p{k}", [1, 2], "float32") for k in range(11)]
    b.output(b.add_op("CONCATENATION", pieces, [1, 22], "float32", options={"axis": 1}))
    with pytest.raises(UnsupportedModelError) as error:
        check_supported(read_model(b.build()))
    message = str(error.value)
    assert "STRIDED_SLICE op 0 (5 input dimensions; TFLM takes 4)" in message
    assert "CONCATENATION op 1 (11 inputs; TFLM takes 10)" in message


def reordered_unsupported() -> bytes:
    """An op without a kernel (REVERSE_SEQUENCE, op 2) on a branch reading the input, which
    the memory-aware order runs first (op 0 of the device model): x then dies at TANH."""
    b = ModelBuilder()
    x = b.input("x", [1, 1024], "float32")
    big = b.add_op("TANH", [x], [1, 1024], "float32")
    axis = b.constant("axis", np.array([1], np.int32))
    mean = b.add_op("MEAN", [big, axis], [1, 1], "float32")
    lengths = b.constant("lengths", np.array([1], np.int32))
    small = b.add_op("REVERSE_SEQUENCE", [x, lengths], [1, 1], "float32", version=1)
    b.output(b.add_op("ADD", [mean, small], [1, 1], "float32"))
    return b.build()


@pytest.mark.parametrize("command", [
    ["project", "--model", "{model}", "-o", "{tmp}/p"], ["run", "{model}"],
    ["run", "{model}", "--target", "qemu-cortex-m4"], ["verify", "{model}"],
    ["bench", "{model}"], ["inspect", "{model}", "--memory"]])
def test_every_entry_point_refuses_numbering_the_users_operators(tmp_path, command) -> None:
    """Each command checks the user's model before the device model, whose order differs."""
    from tflm_gen.schedule import memory_order

    data = reordered_unsupported()
    moved = memory_order(read_model(data)).subgraph.operators
    assert moved[0].opcode == "REVERSE_SEQUENCE"  # so the device's numbering would differ
    model = tmp_path / "reordered.tflite"
    model.write_bytes(data)
    args = [part.format(model=model, tmp=tmp_path) for part in command]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "REVERSE_SEQUENCE (version 1, op 2)" in lines[0], lines


def test_inspect_weights_lists_an_unsupported_models_constants_and_says_why_no_split(
        tmp_path) -> None:
    model = tmp_path / "reordered.tflite"
    model.write_bytes(reordered_unsupported())
    result = CliRunner().invoke(main, ["inspect", str(model), "--weights"])
    assert result.exit_code == 0, result.output
    assert "lengths" in result.output and "axis" in result.output
    assert "--weights separate: no split" in result.output
    assert "REVERSE_SEQUENCE (version 1, op 2)" in result.output
