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
    assert report["operators"] == ["LSH_PROJECTION (version 1)", "SKIP_GRAM (version 1)"]
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
