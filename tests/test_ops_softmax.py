"""SOFTMAX: generated C against tflite-micro, bit for bit.

Seeded random single-op branches (many per model, so the host library is built once per
test) over rank 1-4 shapes, depth, beta and input quantisation, for float32 -> float32,
int8 -> int8 (scale 1/256, zero point -128), int8 -> int16 (scale 1/65536, zero point -32768) and
int16 -> int16 (scale 1/32768, zero point 0, TFLM's lookup-table path).  Floats are
compared by bit pattern.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_oracle import check_model

from tflm_gen.model.builder import ModelBuilder

OUTPUT_QUANT = {"int8": (1 / 256, -128), "int16": (1 / 65536, -32768)}
INT16_OUTPUT_QUANT = (1 / 32768, 0)  # int16 -> int16 (the table path)
CASES = 40


def random_case(rng: np.random.Generator, max_depth: int = 20) -> dict:
    rank = int(rng.integers(1, 5))
    shape = [int(d) for d in rng.integers(1, 4, size=rank - 1)] + [
        int(rng.integers(1, max_depth + 1))
    ]
    beta = float(rng.choice([1.0, 1.0, 0.5, 2.0, float(10 ** rng.uniform(-1, 1))]))
    return {"shape": shape, "beta": beta}


def add_softmax(b: ModelBuilder, case: dict, in_dtype: str, out_dtype: str, rng):
    """Adds one input -> SOFTMAX -> output branch; returns the branch's input data."""
    shape, in_quant, out_quant = case["shape"], {}, {}
    if in_dtype == "float32":
        data = (rng.standard_normal(shape) * float(rng.choice([0.1, 1.0, 10.0]))).astype(np.float32)
    else:
        in_quant = {"scale": case["scale"], "zero_point": case["zero_point"]}
        quant = INT16_OUTPUT_QUANT if in_dtype == "int16" else OUTPUT_QUANT[out_dtype]
        out_quant = {"scale": quant[0], "zero_point": quant[1]}
        lo, hi = (-32768, 32767) if in_dtype == "int16" else (-128, 127)
        data = rng.integers(lo, hi, size=shape, endpoint=True).astype(in_dtype)
    x = b.input(f"x{len(b.graph.inputs)}", shape, in_dtype, **in_quant)
    y = b.add_op("SOFTMAX", [x], shape, out_dtype, options={"beta": case["beta"]}, **out_quant)
    b.output(y)
    return data


def run_cases(cases: list[dict], in_dtype: str, out_dtype: str, rng) -> None:
    b = ModelBuilder()
    inputs = [add_softmax(b, case, in_dtype, out_dtype, rng) for case in cases]
    check_model(b.build(), inputs, cases)


def test_float_softmax_matches_tflm() -> None:
    rng = np.random.default_rng(31)
    run_cases([random_case(rng) for _ in range(CASES)], "float32", "float32", rng)


def quantized_case(rng: np.random.Generator, max_depth: int = 20) -> dict:
    case = random_case(rng, max_depth)
    case["scale"] = float(10 ** rng.uniform(-2.5, 0))
    case["zero_point"] = int(rng.integers(-128, 128))
    return case


@pytest.mark.parametrize("out_dtype", ["int8", "int16"])
def test_int8_softmax_matches_tflm(out_dtype: str) -> None:
    rng = np.random.default_rng([41, len(out_dtype)])
    run_cases([quantized_case(rng) for _ in range(CASES)], "int8", out_dtype, rng)


@pytest.mark.parametrize("out_dtype", ["int8", "int16"])
def test_int8_softmax_long_rows_and_extreme_beta(out_dtype: str) -> None:
    """Long rows (sums of exps far above 1) and betas that cap the input multiplier."""
    rng = np.random.default_rng([43, len(out_dtype)])
    cases = [quantized_case(rng, max_depth=300) for _ in range(8)]
    for case, beta in zip(cases, [1e-3, 0.05, 30.0, 1000.0, 1e6, 1.0, 1.0, 1.0]):
        case["beta"] = beta
    cases[-1]["shape"] = [2, 400]  # sum of exps up to 400: reciprocal far below 1
    run_cases(cases, "int8", out_dtype, rng)


def test_int8_softmax_constant_rows() -> None:
    """Equal inputs: every difference is 0, so every exp is exactly one."""
    case = {"shape": [3, 7], "beta": 1.0, "scale": 0.1, "zero_point": 0}
    b = ModelBuilder()
    add_softmax(b, case, "int8", "int8", np.random.default_rng(0))
    data = np.full([3, 7], 5, dtype=np.int8)
    check_model(b.build(), [data], [case])


def test_int16_softmax_matches_tflm() -> None:
    rng = np.random.default_rng(47)
    cases = [quantized_case(rng, max_depth=40) for _ in range(CASES)]
    for case in cases:
        case["scale"] = float(10 ** rng.uniform(-4.5, -2.5))  # int16 spans ~ +-1 .. +-100
        case["zero_point"] = 0
    run_cases(cases, "int16", "int16", rng)
