"""RELU, RELU6, LEAKY_RELU, HARD_SWISH, PRELU, LOGISTIC and TANH against tflite-micro.

Seeded random shapes and quantisation per op and dtype, many single-op branches per model.
int8 inputs cover every stored value (-128..127) so each fixed-point path is exercised in
full; floats include 0, -0 and values beyond the kernels' cut-offs.  Compared bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_oracle import check_model

from tflm_gen.model.builder import ModelBuilder

QRANGE = {"int8": (-128, 127), "int16": (-32768, 32767)}
SPECIAL_FLOATS = [0.0, -0.0, 3.0, -3.0, 6.0, 20.0, -20.0, 1e-8, -1e-8]


def input_values(rng: np.random.Generator, dtype: str, shape: list[int]) -> np.ndarray:
    """Random values; int8 tensors hold every stored value (shape must have >= 256 elements
    for that) and floats some special values."""
    size = int(np.prod(shape))
    if dtype == "float32":
        data = (rng.standard_normal(size) * 5).astype(np.float32)
        count = min(size, len(SPECIAL_FLOATS))
        data[:count] = np.array(SPECIAL_FLOATS[:count], np.float32)
        return rng.permutation(data).reshape(shape)
    lo, hi = QRANGE[dtype]
    data = rng.integers(lo, hi, size=size, endpoint=True)
    if dtype == "int8" and size >= 256:
        data[:256] = np.arange(-128, 128)
    return rng.permutation(data).astype(dtype).reshape(shape)


def random_shape(rng: np.random.Generator) -> list[int]:
    rank = int(rng.integers(1, 5))
    shape = [int(d) for d in rng.integers(1, 6, size=rank)]
    shape[-1] = int(np.ceil(300 / max(1, int(np.prod(shape[:-1])))))  # >= 256 elements
    return shape


def random_quant(rng: np.random.Generator, dtype: str, symmetric: bool = False) -> dict:
    if dtype == "float32":
        return {}
    zero_point = 0 if symmetric or dtype == "int16" else int(rng.integers(-100, 100))
    return {"scale": float(10 ** rng.uniform(-3, -0.5)), "zero_point": zero_point}


def add_unary(b: ModelBuilder, op: str, data: np.ndarray, in_quant: dict, out_quant: dict,
              options: dict | None = None) -> np.ndarray:  # fmt: skip
    dtype = data.dtype.name
    x = b.input(f"x{len(b.graph.inputs)}", list(data.shape), dtype, **in_quant)
    y = b.add_op(op, [x], list(data.shape), dtype, options=options, **out_quant)
    b.output(y)
    return data


def run_unary_cases(op: str, dtypes: list[str], seed: int, make_quant, options=None,
                    repeat: int = 4) -> None:  # fmt: skip
    """`make_quant(rng, dtype) -> (in_quant, out_quant)`; options(rng) gives op options."""
    rng = np.random.default_rng(seed)
    b, cases, inputs = ModelBuilder(), [], []
    for dtype in dtypes * repeat:
        shape = random_shape(rng)
        in_quant, out_quant = make_quant(rng, dtype)
        opts = options(rng) if options else None
        inputs.append(add_unary(b, op, input_values(rng, dtype, shape), in_quant, out_quant,
                                opts))  # fmt: skip
        cases.append((op, dtype, shape, in_quant, out_quant, opts))
    check_model(b.build(), inputs, cases)


def independent_quant(rng: np.random.Generator, dtype: str) -> tuple[dict, dict]:
    return random_quant(rng, dtype), random_quant(rng, dtype)


def shared_quant(rng: np.random.Generator, dtype: str) -> tuple[dict, dict]:
    quant = random_quant(rng, dtype)
    return quant, quant


def test_relu_matches_tflm() -> None:
    run_unary_cases("RELU", ["float32", "int8", "int16"], 61, independent_quant)


def test_relu6_matches_tflm() -> None:
    run_unary_cases("RELU6", ["float32", "int8", "int16"], 67, shared_quant)


def test_leaky_relu_matches_tflm() -> None:
    def alpha(rng: np.random.Generator) -> dict:
        return {"alpha": float(rng.choice([0.2, 0.01, 0.3, 1.5, -0.5]))}

    run_unary_cases("LEAKY_RELU", ["float32", "int8", "int16"], 71, independent_quant, alpha)


def test_hard_swish_matches_tflm() -> None:
    def quant(rng: np.random.Generator, dtype: str) -> tuple[dict, dict]:
        if dtype == "float32":
            return {}, {}
        in_quant = {"scale": float(10 ** rng.uniform(-2, -0.7)),
                    "zero_point": int(rng.integers(-100, 100))}  # fmt: skip
        out_quant = {"scale": in_quant["scale"] * float(rng.uniform(0.6, 2.5)),
                     "zero_point": int(rng.integers(-100, 100))}  # fmt: skip
        return in_quant, out_quant

    run_unary_cases("HARD_SWISH", ["float32", "int8"], 73, quant, repeat=6)


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
def test_logistic_tanh_match_tflm(op: str) -> None:
    def quant(rng: np.random.Generator, dtype: str) -> tuple[dict, dict]:
        if dtype == "float32":
            return {}, {}
        in_quant = {"scale": float(10 ** rng.uniform(-2.5, -0.5)),
                    "zero_point": int(rng.integers(-100, 100))}  # fmt: skip
        if op == "LOGISTIC":
            return in_quant, {"scale": 1 / 256, "zero_point": -128}
        return in_quant, {"scale": 1 / 128, "zero_point": 0}

    run_unary_cases(op, ["float32", "int8"], 79 + len(op), quant, repeat=6)


def test_prelu_matches_tflm() -> None:
    rng = np.random.default_rng(83)
    b, cases, inputs = ModelBuilder(), [], []
    for dtype in ["float32", "int8", "int16"] * 5:
        shape = [int(d) for d in rng.integers(2, 6, size=int(rng.integers(1, 5)))]
        alpha_shape = [1 if rng.random() < 0.4 else d for d in shape[len(shape) - 1 :]]
        if rng.random() < 0.3:
            alpha_shape = list(shape)
        alpha_dtype = "float32" if dtype == "float32" else "int8"
        quant = [random_quant(rng, dtype), random_quant(rng, alpha_dtype),
                 random_quant(rng, dtype)]  # fmt: skip
        x = b.input(f"x{len(b.graph.inputs)}", shape, dtype, **quant[0])
        a = b.input(f"a{len(b.graph.inputs)}", alpha_shape, alpha_dtype, **quant[1])
        y = b.add_op("PRELU", [x, a], shape, dtype, **quant[2])
        b.output(y)
        inputs += [input_values(rng, dtype, shape), input_values(rng, alpha_dtype, alpha_shape)]
        if alpha_dtype == "float32":
            inputs[-1] = (inputs[-1] / 10).astype(np.float32)
        cases.append((dtype, shape, alpha_shape, quant))
    check_model(b.build(), inputs, cases)
