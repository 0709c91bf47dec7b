"""int16x8 weighted ops whose accumulator leaves the int32 range: TFLM sums in 64 bits, so
must we.  Inputs near the int16 maximum times weights near 127 over 1024 products sum to
about 4.3e9; an int64 bias cancels most of it, so the output still varies (an accumulator
kept in 32 bits would be off by multiples of 2^32 and saturate)."""

from __future__ import annotations

import numpy as np
import pytest
from op_oracle import assert_bit_exact, assert_informative, output_quantization, run_tflm

from tflm_gen import host
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder

DEPTH = 1024
UNITS = 4
IN_SCALE, FILTER_SCALE = 1e-4, 0.01
INPUT_NOISE = 4000  # inputs are 32767 minus up to this much


def wide_tensors(rng: np.random.Generator, input_shape: list[int]):
    """(input data, weights [UNITS, DEPTH], int64 bias cancelling the expected sums,
    real RMS of what is left)."""
    data = (32767 - rng.integers(0, INPUT_NOISE + 1, input_shape)).astype(np.int16)
    weights = (127 - rng.integers(0, 16, [UNITS, DEPTH])).astype(np.int8)
    expected_input = 32767 - INPUT_NOISE / 2
    bias = -np.round(expected_input * weights.astype(np.int64).sum(axis=1)).astype(np.int64)
    spread = np.sqrt(DEPTH) * 127 * INPUT_NOISE / np.sqrt(12)
    return data, weights, bias, spread * IN_SCALE * FILTER_SCALE


def add_wide_op(b: ModelBuilder, rng, opcode: str, input_shape, output_shape) -> np.ndarray:
    data, weights, bias, rms = wide_tensors(rng, input_shape)
    x = b.input(f"x{len(b.graph.inputs)}", input_shape, "int16", scale=IN_SCALE, zero_point=0)
    filter_shape = [UNITS, DEPTH] if opcode == "FULLY_CONNECTED" else [UNITS, 1, 1, DEPTH]
    w = b.constant("w", weights.reshape(filter_shape),
                   quantization=ir.Quantization([FILTER_SCALE], [0]))  # fmt: skip
    bias_q = ir.Quantization([IN_SCALE * FILTER_SCALE] * UNITS, [0] * UNITS)
    bias_tensor = b.constant("b", bias, quantization=bias_q)
    scale, _ = output_quantization(rng, "int16", rms)
    options = {"padding": "VALID", "stride_h": 1, "stride_w": 1}
    inputs = [x, w, bias_tensor]
    if opcode == "FULLY_CONNECTED":
        options = {}
    elif opcode == "TRANSPOSE_CONV":
        shape = b.constant("shape", np.asarray(output_shape, np.int32))
        inputs = [shape, w, x, bias_tensor]
    b.output(b.add_op(opcode, inputs, output_shape, "int16", scale=scale, zero_point=0,
                      options=options))  # fmt: skip
    return data


@pytest.mark.parametrize("opcode", ["FULLY_CONNECTED", "CONV_2D", "TRANSPOSE_CONV"])
def test_int16_accumulators_beyond_int32_match_tflm(opcode):
    rng = np.random.default_rng(["FULLY_CONNECTED", "CONV_2D", "TRANSPOSE_CONV"].index(opcode))
    b = ModelBuilder()
    if opcode == "FULLY_CONNECTED":
        data = add_wide_op(b, rng, opcode, [16, DEPTH], [16, UNITS])
    else:
        data = add_wide_op(b, rng, opcode, [1, 4, 4, DEPTH], [1, 4, 4, UNITS])
    model = b.build()
    expected = run_tflm(model, [data])[0]
    assert_informative(expected, opcode)
    assert_bit_exact(host.run_model(model, [data])[0], expected, opcode)
