"""Ops TFLM lacks, checked against LiteRT's reference kernels (the oracle where TFLM cannot
run a model): GELU float32 / int8 / int16 (exact and tanh forms), RELU_0_TO_1 float32 /
int8; and
`verify` / `project` choosing LiteRT by themselves for such models.

Seeded.  int8 inputs hold every stored value; int16 inputs span the whole range.  Each
case must give the oracle enough distinct outputs to tell a wrong table from a right one.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import need_tool
from op_oracle import assert_bit_exact

from tflm_gen import host, qemu
from tflm_gen.cli import main
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.ir import Quantization
from tflm_gen.oracle import Oracle, choose_oracle
from tflm_gen.project import GenerateOptions, generate
from tflm_gen.verify import verify

SIZE = 4096  # int8: every stored value many times; int16: ~1 in 16 values


def quant(scale: float, zero_point: int) -> Quantization:
    return Quantization([scale], [zero_point])


def unary_model(op: str, dtype: str, in_q, out_q, options=None, size: int = SIZE) -> bytes:
    b = ModelBuilder()
    x = b.input("x", [1, size], dtype, quantization=in_q)
    b.output(b.add_op(op, [x], [1, size], dtype, quantization=out_q, options=options))
    return b.build()


def values(dtype: str, seed: int, size: int = SIZE) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "float32":
        data = (rng.standard_normal(size) * 1.5).astype(np.float32)
        data[:6] = [0.0, -0.0, 1.0, -1e-30, 1.0000001, np.nan]
        return rng.permutation(data)[None]
    info = np.iinfo(dtype)
    data = rng.integers(info.min, info.max, size=size, endpoint=True)
    data[:2] = [info.min, info.max]
    if dtype == "int8":
        data[:256] = np.arange(-128, 128)
    return rng.permutation(data).astype(dtype)[None]


def check_litert(model: bytes, inputs: list[np.ndarray], min_distinct: int) -> None:
    theirs = Oracle(model, "litert").run(inputs)[0]
    ours = host.run_model(model, inputs)[0]
    assert len(np.unique(theirs)) >= min_distinct, "case too weak to fail"
    assert_bit_exact(ours, theirs)


# (input scale, zero point, output scale, zero point): moderate, extreme zero points, and
# scales whose ratio is far from 1.
INT8_CASES = [(0.05, 3, 0.02, -5), (0.1, -128, 0.07, -128), (0.031, 127, 0.0041, -20),
              (0.0025, -7, 0.0015, 100)]  # fmt: skip
INT16_CASES = [(1 / 4096, 0, 1 / 8192, 0), (3e-4, 0, 2.5e-4, 0), (1e-4, 11, 4e-4, -9)]


@pytest.mark.parametrize("approximate", [False, True])
@pytest.mark.parametrize("case", INT8_CASES)
def test_gelu_int8(approximate, case):
    model = unary_model("GELU", "int8", quant(*case[:2]), quant(*case[2:]),
                        {"approximate": approximate})  # fmt: skip
    check_litert(model, [values("int8", 1)], 8)


@pytest.mark.parametrize("approximate", [False, True])
@pytest.mark.parametrize("case", INT16_CASES)
def test_gelu_int16(approximate, case):
    model = unary_model("GELU", "int16", quant(*case[:2]), quant(*case[2:]),
                        {"approximate": approximate})  # fmt: skip
    check_litert(model, [values("int16", 2)], 256)


def test_relu_0_to_1_float32():
    check_litert(unary_model("RELU_0_TO_1", "float32", None, None), [values("float32", 3)], 256)


@pytest.mark.parametrize("case", [(0.02, -3, 1 / 255, -128), (0.013, 10, 0.0071, -100),
                                  (0.004, -128, 0.009, 127 - 111)])  # fmt: skip
def test_relu_0_to_1_int8(case):
    model = unary_model("RELU_0_TO_1", "int8", quant(*case[:2]), quant(*case[2:]))
    check_litert(model, [values("int8", 4)], 8)


def gelu_floats(seed: int, size: int) -> np.ndarray:
    """Every region of LiteRT's float GELU: tiny and subnormal magnitudes, |x| < sqrt(2)
    (erfc's polynomial), beyond (its exp branch, where Eigen's exp changes its ldexp above
    |x| = 13.2 and flushes to 0 above 14.4), and past the +-11 clamp."""
    rng = np.random.default_rng(seed)
    quarter = size // 4
    data = np.concatenate([
        rng.normal(0, 3, quarter), rng.uniform(-16, 16, quarter),
        np.sign(rng.normal(size=quarter)) * 10 ** rng.uniform(-40, 1.3, quarter),
        rng.uniform(-15, -12, size - 3 * quarter)]).astype(np.float32)  # fmt: skip
    if size >= 8:
        data[:4] = [0.0, -0.0, 1.4142135, -1.4142137]
    return rng.permutation(data)[None]


# Sizes not a multiple of 4: LiteRT computes the last size % 4 elements one by one.
@pytest.mark.parametrize("size", [65539, 5, 1])
@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_float32(approximate, size):
    model = unary_model("GELU", "float32", None, None, {"approximate": approximate}, size)
    check_litert(model, [gelu_floats(5, size)], min(size // 2 + 1, 256))


def test_gelu_float32_last_elements_use_the_c_library_exp():
    """The exact form's last size % 4 elements take erfc's exp from libm, the others from
    Eigen: the same value must give LiteRT's (different) results in both places."""
    model = unary_model("GELU", "float32", None, None, {"approximate": False}, 5)
    theirs, ours = Oracle(model, "litert"), host.HostInterpreter(model)
    differing = 0
    for value in np.random.default_rng(6).uniform(-13, -4, 64).astype(np.float32):
        inputs = [np.full((1, 5), value, np.float32)]
        reference = theirs.run(inputs)[0]
        assert_bit_exact(ours.run(inputs)[0], reference, float(value))
        differing += int(reference.view(np.uint32)[0, 0] != reference.view(np.uint32)[0, 4])
    assert differing > 0, "no value tells the two exps apart: the case cannot fail"


def test_verify_picks_litert_and_says_why(tmp_path):
    model = unary_model("GELU", "int8", quant(0.05, 3), quant(0.02, -5), size=64)
    path = tmp_path / "gelu.tflite"
    path.write_bytes(model)
    result = CliRunner().invoke(main, ["verify", str(path)])
    explicit = CliRunner().invoke(main, ["verify", "--against", "tflm", str(path)])
    assert result.exit_code == 0, result.output
    assert "oracle: litert (TFLM cannot run GELU op 0 (int8))" in result.output
    assert "bit-exact with litert" in result.output
    assert explicit.exit_code == 2 and "TFLM cannot run GELU op 0" in explicit.output


def test_tflm_stays_the_oracle_of_tflm_models():
    model = unary_model("RELU", "int8", quant(0.05, 3), quant(0.02, -5), size=64)
    assert choose_oracle(model)[0] == "tflm"


def test_project_embeds_litert_outputs():
    model = unary_model("RELU_0_TO_1", "int8", quant(0.02, -3), quant(1 / 255, -128), size=32)
    files = generate(model, GenerateOptions("make"))
    test_data = next(data for path, data in files.items() if path.endswith("test_data.h"))
    assert b"LiteRT reference kernels" in test_data


def litert_ops_model() -> tuple[bytes, list[np.ndarray]]:
    """Every op and dtype of this file side by side, one input and output each."""
    b = ModelBuilder()
    cases = [("GELU", "int8", quant(0.05, 3), quant(0.02, -5), {"approximate": False}),
             ("GELU", "int16", quant(3e-4, 0), quant(2.5e-4, 0), {"approximate": True}),
             ("GELU", "float32", None, None, {"approximate": False}),
             ("GELU", "float32", None, None, {"approximate": True}),
             ("RELU_0_TO_1", "int8", quant(0.02, -3), quant(1 / 255, -128), None),
             ("RELU_0_TO_1", "float32", None, None, None)]  # fmt: skip
    inputs = []
    for index, (op, dtype, in_q, out_q, options) in enumerate(cases):
        size = 1027 if dtype == "float32" else 1024  # float: 3 elements past Eigen's packets
        x = b.input(f"x{index}", [1, size], dtype, quantization=in_q)
        b.output(b.add_op(op, [x], [1, size], dtype, quantization=out_q, options=options))
        inputs.append(gelu_floats(index, size) if dtype == "float32" else
                      values(dtype, index, size))  # fmt: skip
    return b.build(), inputs


@pytest.mark.parametrize("tags", [(), ("cmsis",)])
def test_litert_ops_on_cortex_m4(tags):
    """On the board, with newlib's libm building the GELU tables and computing the last
    float elements: still LiteRT's outputs bit for bit."""
    board = qemu.board_of("qemu-cortex-m4")
    need_tool(board["toolchain"] + "gcc")
    need_tool(board["qemu"])
    model, inputs = litert_ops_model()
    theirs = Oracle(model, "litert").run(inputs)
    ours = qemu.run_on_target(model, "qemu-cortex-m4", inputs, tags).outputs
    assert len(ours) == len(theirs)
    for index, (mine, reference) in enumerate(zip(ours, theirs)):
        assert_bit_exact(mine.reshape(reference.shape), reference, f"output {index}")


def mixed_model(dtype: str) -> bytes:
    """A transformer-like block around the LiteRT-only ops: FULLY_CONNECTED, GELU, MEAN,
    SOFTMAX, LOGISTIC, RELU_0_TO_1 and ADD; with LiteRT as the oracle, TFLM's ops are
    checked against LiteRT's reference kernels too."""
    rng = np.random.default_rng(7)
    q = (lambda s, z: quant(s, z)) if dtype == "int8" else (lambda s, z: None)
    b = ModelBuilder()
    x = b.input("x", [4, 32], dtype, quantization=q(0.05, 2))
    if dtype == "int8":
        w = b.constant("w", rng.integers(-127, 128, (32, 32)).astype(np.int8),
                       quantization=quant(0.004, 0))  # fmt: skip
        bias = b.constant("b", rng.integers(-500, 500, 32).astype(np.int32),
                          quantization=quant(0.0002, 0))  # fmt: skip
    else:
        w = b.constant("w", rng.normal(0, 0.2, (32, 32)).astype(np.float32))
        bias = b.constant("b", rng.normal(0, 0.1, 32).astype(np.float32))
    h = b.add_op("FULLY_CONNECTED", [x, w, bias], [4, 32], dtype, quantization=q(0.06, -3))
    g = b.add_op("GELU", [h], [4, 32], dtype, quantization=q(0.04, -100),
                 options={"approximate": dtype == "int8"})  # fmt: skip
    axis = b.constant("axis", np.array([1], np.int32))
    mean = b.add_op("MEAN", [g, axis], [4], dtype, quantization=q(0.01, -50))
    soft = b.add_op("SOFTMAX", [g], [4, 32], dtype, quantization=q(1 / 256, -128),
                    options={"beta": 1.0})  # fmt: skip
    logistic = b.add_op("LOGISTIC", [g], [4, 32], dtype, quantization=q(1 / 256, -128))
    clamp = b.add_op("RELU_0_TO_1", [g], [4, 32], dtype, quantization=q(1 / 255, -128))
    total = b.add_op("ADD", [g, clamp], [4, 32], dtype, quantization=q(0.05, -90))
    b.output(mean, soft, logistic, total)
    return b.build()


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_mixed_model_verifies_against_litert(dtype):
    report = verify(mixed_model(dtype), "auto", runs=3)
    assert report.against == "litert" and "GELU op 1" in report.reason
    assert len(report.outputs) == 4 and all(o.elements > 0 for o in report.outputs)
    assert report.bit_exact, [(o.index, o.differing, o.max_abs_diff) for o in report.outputs]


def test_ops_names_the_litert_oracle():
    """`tflm-gen ops` marks what only LiteRT checks; TFLM's own pairs stay unmarked."""
    result = CliRunner().invoke(main, ["ops", "--json"])
    rows = {row["op"]: row for row in json.loads(result.output)["ops"]}
    assert rows["GELU"]["litert"] == ["float32", "int16", "int8"]
    assert rows["RELU_0_TO_1"]["litert"] == ["float32", "int8"]
    for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
        assert rows[op]["litert"] == ["hybrid"] and "hybrid" not in rows[op]["dtypes"]
    assert "litert" not in rows["SOFTMAX"]
    text = CliRunner().invoke(main, ["ops"]).output
    assert "float32(LiteRT),int16(LiteRT),int8(LiteRT)" in text and "int8,hybrid(LiteRT)" in text
