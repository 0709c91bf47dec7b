"""SUB, MUL, MAXIMUM, MINIMUM, DIV (int8 too) and SQUARED_DIFFERENCE: generated C against
tflite-micro.

Seeded random broadcast shapes (up to 6-D where TFLM's kernel allows it, 4-D for MUL),
fused activations and quantisation parameters, many single-op branches per model so the
host library is built once per test.  Floats are compared by bit pattern.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_oracle import FUSED_ACTIVATIONS, QRANGE, check_model

from tflm_gen.model.builder import ModelBuilder

CASES = 24


def broadcast_shapes(rng: np.random.Generator, max_rank: int) -> tuple[list[int], list[int]]:
    """Two input shapes that broadcast: suffixes of one shape, some dimensions set to 1."""
    rank = int(rng.integers(1, max_rank + 1))
    full = [int(d) for d in rng.integers(2, 5, size=rank)]
    if rng.random() < 0.3:
        return full, list(full)
    shapes = []
    for _ in range(2):
        own = full[rank - int(rng.integers(0, rank + 1)) :]
        shapes.append([1 if rng.random() < 0.3 else d for d in own])
    return shapes[0], shapes[1]


def random_values(rng: np.random.Generator, dtype: str, shape, limit: int | None = None):
    if dtype == "float32":
        return (rng.standard_normal(shape) * 3).astype(np.float32)
    if dtype in ("int32", "int64"):
        limit = limit or 1000
        return rng.integers(-limit, limit, size=shape, endpoint=True).astype(dtype)
    lo, hi = QRANGE[dtype]
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def random_quant(rng: np.random.Generator, dtype: str, count: int) -> list[dict]:
    """Per-tensor quantisation for `count` tensors; int16 is symmetric (zero point 0)."""
    if dtype not in QRANGE:
        return [{}] * count
    quants = []
    for _ in range(count):
        zero_point = int(rng.integers(-60, 60)) if dtype == "int8" else 0
        quants.append({"scale": float(10 ** rng.uniform(-2.5, 0)), "zero_point": zero_point})
    return quants


def add_binary(b: ModelBuilder, op: str, dtype: str, case: dict, rng: np.random.Generator,
               options: dict | None = None, out_dtype: str | None = None) -> list:  # fmt: skip
    """Adds op(x1, x2) -> output; returns the two inputs' data."""
    quant = case.get("quant") or [{}] * 3
    x1 = b.input(f"a{len(b.graph.inputs)}", case["shape1"], dtype, **quant[0])
    x2 = b.input(f"b{len(b.graph.inputs)}", case["shape2"], dtype, **quant[1])
    out_shape = list(np.broadcast_shapes(tuple(case["shape1"]), tuple(case["shape2"])))
    y = b.add_op(op, [x1, x2], out_shape, out_dtype or dtype, options=options, **quant[2])
    b.output(y)
    data = [random_values(rng, dtype, case["shape1"]), random_values(rng, dtype, case["shape2"])]
    if op == "DIV":  # keep divisors away from zero
        data[1] = np.where(np.abs(data[1]) < 0.1, 1.5, data[1]).astype(data[1].dtype)
        if dtype == "int32":
            data[1] = np.where(data[1] == 0, 7, data[1]).astype(np.int32)
    return data


def make_case(rng: np.random.Generator, dtype: str, max_rank: int) -> dict:
    shape1, shape2 = broadcast_shapes(rng, max_rank)
    return {"shape1": shape1, "shape2": shape2, "dtype": dtype,
            "activation": str(rng.choice(FUSED_ACTIVATIONS)), "quant": random_quant(rng, dtype, 3)}  # fmt: skip


def run_cases(op: str, dtype: str, seed: int, max_rank: int, with_activation: bool,
              count: int = CASES) -> None:  # fmt: skip
    rng = np.random.default_rng([seed, len(dtype), ord(dtype[-1])])
    b, cases, inputs = ModelBuilder(), [], []
    for _ in range(count):
        case = make_case(rng, dtype, max_rank)
        if op == "SUB" and dtype in QRANGE:  # output scale near the inputs' (TFLM needs < 1)
            case["quant"][2]["scale"] = max(q["scale"] for q in case["quant"][:2]) * float(
                rng.uniform(0.7, 4)
            )
        options = {"fused_activation_function": case["activation"]} if with_activation else None
        inputs += add_binary(b, op, dtype, case, rng, options)
        cases.append(case)
    check_model(b.build(), inputs, cases)


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32"])
def test_sub_matches_tflm(dtype: str) -> None:
    run_cases("SUB", dtype, 31, 6, with_activation=True)


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32"])
def test_mul_matches_tflm(dtype: str) -> None:
    run_cases("MUL", dtype, 37, 4, with_activation=True)


@pytest.mark.parametrize("op", ["MAXIMUM", "MINIMUM"])
def test_maximum_minimum_match_tflm(op: str) -> None:
    rng = np.random.default_rng([41, len(op)])
    b, cases, inputs = ModelBuilder(), [], []
    for dtype in ["float32", "int8", "int16", "int32", "int64"] * 4:
        case = make_case(rng, dtype, 5)
        case["quant"] = [case["quant"][0]] * 3  # TFLM assumes one quantisation
        inputs += add_binary(b, op, dtype, case, rng)
        cases.append(case)
    check_model(b.build(), inputs, cases)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_div_matches_tflm(dtype: str) -> None:
    run_cases("DIV", dtype, 43, 5, with_activation=True)


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32"])
def test_squared_difference_matches_tflm(dtype: str) -> None:
    run_cases("SQUARED_DIFFERENCE", dtype, 47, 4, with_activation=False)


def test_sub_int16_seanet_scales() -> None:
    """The scales of seanet's sub_sub1: a multiplier computed in float instead of double
    changes one output in thousands, so this pins TFLM's double arithmetic."""
    rng = np.random.default_rng(53)
    case = {"shape1": [64, 22, 32], "shape2": [32], "dtype": "int16",
            "quant": [{"scale": 0.0012579172616824508, "zero_point": 0},
                      {"scale": 9.196187420457136e-06, "zero_point": 0},
                      {"scale": 0.0009364741272293031, "zero_point": 0}]}  # fmt: skip
    b = ModelBuilder()
    inputs = add_binary(b, "SUB", "int16", case, rng)
    check_model(b.build(), inputs, [case])


def test_div_int8_matches_tflm() -> None:
    rng = np.random.default_rng(353)
    b, cases, inputs = ModelBuilder(), [], []
    for _ in range(24):
        out = [int(d) for d in rng.integers(1, 6, size=int(rng.integers(1, 5)))]
        shapes = [[d if rng.random() < 0.7 else 1 for d in out] for _ in range(2)]
        shapes[1] = shapes[1][int(rng.integers(0, len(out))) :]
        out = list(np.broadcast_shapes(*(tuple(s) for s in shapes)))
        quant = [{"scale": float(10 ** rng.uniform(-2.5, 0)),
                  "zero_point": int(rng.integers(-60, 60))} for _ in range(3)]  # fmt: skip
        activation = str(rng.choice(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]))
        x = b.input(f"x{len(b.graph.inputs)}", shapes[0], "int8", **quant[0])
        y = b.input(f"x{len(b.graph.inputs)}", shapes[1], "int8", **quant[1])
        b.output(b.add_op("DIV", [x, y], out, "int8",
                          options={"fused_activation_function": activation}, **quant[2]))  # fmt: skip
        divisor = rng.integers(-128, 127, size=shapes[1], endpoint=True).astype(np.int8)
        divisor[divisor.astype(np.int32) == quant[1]["zero_point"]] += 1  # no zero divisor
        numerator = rng.integers(-128, 127, size=shapes[0], endpoint=True).astype(np.int8)
        numerator.flat[0] = quant[0]["zero_point"]  # a zero numerator
        inputs += [numerator, divisor]
        cases.append((shapes, quant, activation))
    check_model(b.build(), inputs, cases)
