"""TRANSPOSE_CONV and BATCH_MATMUL against tflite-micro, bit for bit, and `verify` on the
seanet PAD / STRIDED_SLICE / TRANSPOSE_CONV models of the shared corpus.

TRANSPOSE_CONV: seeded random batch, sizes, strides, SAME/VALID padding, fused RELU/RELU6, bias or
not, per-channel or per-tensor filter scales, for float32, int8 and int16x8 (int64 bias).
BATCH_MATMUL: random ranks 2..4 with broadcast batch dims and adjoint flags.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import corpus_models, corpus_path
from layout_cases import Case
from op_oracle import (
    accumulator_rms,
    assert_informative,
    centred_square,
    output_quantization,
    per_op_explanation,
    real_rms,
    run_tflm,
)

from tflm_gen.model import ir
from tflm_gen.verify import verify

DTYPES = ["float32", "int8", "int16"]
MIN_OUTPUT_ELEMENTS = 32
BIAS_DTYPE = {"float32": np.float32, "int8": np.int32, "int16": np.int64}
CASES = 16
SEANET = corpus_models("seanet", ("pad_", "strided_slice_", "transpose_conv_"))


def tc_geometry(c: Case) -> dict:
    """Redrawn until the output has enough elements to show many distinct values, and no
    stride exceeds its kernel (rows or columns that no tap reaches hold only the bias)."""
    while True:
        g = one_tc_geometry(c)
        covered = g["kh"] >= g["sh"] and g["kw"] >= g["sw"]
        if covered and g["n"] * g["oh"] * g["ow"] * g["cout"] >= MIN_OUTPUT_ELEMENTS:
            return g


def one_tc_geometry(c: Case) -> dict:
    g = {k: int(c.rng.integers(1, 5)) for k in ("n", "h", "w", "cin", "cout", "kh", "kw")}
    g["n"] = int(c.rng.integers(1, 3))
    g["sh"], g["sw"] = (int(v) for v in c.rng.integers(1, 4, size=2))
    g["padding"] = str(c.rng.choice(["SAME", "VALID"]))
    g["activation"] = str(c.rng.choice(["NONE", "RELU", "RELU6"]))
    if g["padding"] == "SAME":
        g["oh"], g["ow"] = g["h"] * g["sh"], g["w"] * g["sw"]
    else:
        g["oh"] = (g["h"] - 1) * g["sh"] + g["kh"]
        g["ow"] = (g["w"] - 1) * g["sw"] + g["kw"]
    return g


def tc_filter_and_bias(c: Case, g: dict):
    shape = [g["cout"], g["kh"], g["kw"], g["cin"]]
    if c.dtype == "float32":  # inputs have an RMS of 4 (layout_cases.Case.data)
        rms = real_rms(c.rng, g["activation"])
        depth = -(-g["kh"] // g["sh"]) * -(-g["kw"] // g["sw"]) * g["cin"]
        weights = c.rng.standard_normal(shape) * rms / (4 * np.sqrt(depth))
        return (c.b.constant("w", weights.astype(np.float32)),
                (c.rng.standard_normal(g["cout"]) * rms / 2).astype(np.float32), None, {})  # fmt: skip
    count = g["cout"] if c.rng.random() < 0.7 else 1
    scales = (10 ** c.rng.uniform(-3, -1) * 10 ** c.rng.uniform(-0.3, 0.3, size=count))
    scales = scales.astype(np.float32)
    filter_q = ir.Quantization(list(scales), [0] * count, quantized_dimension=0)
    weights = c.rng.integers(-127, 128, size=shape).astype(np.int8)
    q_in = c.quant()
    # Each output sums about ceil(k / stride) taps per axis over every input channel.
    depth = -(-g["kh"] // g["sh"]) * -(-g["kw"] // g["sw"]) * g["cin"]
    accumulator = accumulator_rms(depth, c.dtype, q_in["zero_point"])
    rms = real_rms(c.rng, g["activation"])
    q_in["scale"] = rms / (float(scales.mean()) * accumulator)
    q_out = dict(zip(("scale", "zero_point"),
                     output_quantization(c.rng, c.dtype, rms * np.sqrt(4 / 3))))  # fmt: skip
    limit = int(accumulator)
    bias = c.rng.integers(-limit, limit + 1, size=g["cout"]).astype(BIAS_DTYPE[c.dtype])
    bias_scales = [float(np.float32(q_in["scale"]) * s) for s in np.resize(scales, g["cout"])]
    bias_q = ir.Quantization(bias_scales, [0] * g["cout"], quantized_dimension=0)
    return c.b.constant("w", weights, quantization=filter_q), bias, bias_q, (q_in, q_out)


def add_transpose_conv(c: Case) -> None:
    g = tc_geometry(c)
    weights, bias, bias_q, quant = tc_filter_and_bias(c, g)
    q_in, q_out = quant if quant else ({}, {})
    x = c.input([g["n"], g["h"], g["w"], g["cin"]], q_in)
    out_shape = [g["n"], g["oh"], g["ow"], g["cout"]]
    inputs = [c.b.constant("shape", np.asarray(out_shape, np.int32)), weights, x]
    if c.rng.random() < 0.7:
        inputs.append(c.b.constant("b", bias, quantization=bias_q))
    options = {
        "padding": g["padding"],
        "stride_h": g["sh"],
        "stride_w": g["sw"],
        "fused_activation_function": g["activation"],
    }
    c.op("TRANSPOSE_CONV", inputs, [out_shape], q_out, options)


def add_batch_matmul(c: Case) -> None:
    rank = int(c.rng.integers(2, 5))
    batch = [int(v) for v in c.rng.integers(1, 4, size=rank - 2)]
    lhs_batch = [1 if c.rng.random() < 0.3 else d for d in batch]
    rhs_batch = [1 if c.rng.random() < 0.3 else d for d in batch]
    m, k, n = (int(v) for v in c.rng.integers(1, 6, size=3))
    while int(np.prod([max(a, b) for a, b in zip(lhs_batch, rhs_batch)])) * m * n < 16:
        m, n = m + 1, n + 1  # enough elements to show many distinct values
    adj_x, adj_y = bool(c.rng.random() < 0.5), bool(c.rng.random() < 0.5)
    q_in = c.quant(0 if c.dtype == "int16" else None)
    q_rhs = c.quant(0 if c.dtype == "int16" else None)
    q_out = {}
    if q_in:  # both operands are inputs: the accumulator sums k products of two of them
        rms = real_rms(c.rng, "NONE")
        spread = np.sqrt(k * centred_square(c.dtype, q_in["zero_point"])
                         * centred_square(c.dtype, q_rhs["zero_point"]))  # fmt: skip
        q_in["scale"] = rms / (q_rhs["scale"] * spread)
        scale, zero_point = output_quantization(c.rng, c.dtype, rms)
        q_out = {"scale": scale, "zero_point": 0 if c.dtype == "int16" else zero_point}
    lhs = c.input(lhs_batch + ([k, m] if adj_x else [m, k]), q_in)
    rhs = c.input(rhs_batch + ([n, k] if adj_y else [k, n]), q_rhs)
    out = [max(a, b) for a, b in zip(lhs_batch, rhs_batch)] + [m, n]
    c.op(
        "BATCH_MATMUL",
        [lhs, rhs],
        [out],
        q_out,
        {"adj_x": adj_x, "adj_y": adj_y},
        options_type="BatchMatMulOptions",
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_transpose_conv_and_batch_matmul_match_tflm(dtype: str) -> None:
    c = Case(dtype, [DTYPES.index(dtype), 6767])
    for _ in range(CASES):
        add_transpose_conv(c)
        add_batch_matmul(c)
    for output, label in zip(run_tflm(c.b.build(), c.inputs, len(c.labels)), c.labels):
        assert_informative(output, label)
    c.check()


@pytest.mark.parametrize("model_name", SEANET)
def test_seanet_layout_models_verify_bit_exact(model_name: str) -> None:
    data = corpus_path(f"seanet/{model_name}").read_bytes()
    assert verify(data, runs=2).bit_exact, per_op_explanation(data, runs=2)
