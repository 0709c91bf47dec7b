"""ABS, NEG, EXP, LOG, SQRT, RSQRT, SQUARE, SIN, COS, FLOOR, CEIL, CAST, ZEROS_LIKE and
FILL against tflite-micro, bit for bit.

Floats cover negative values (NaN results for LOG / SQRT), zeros of both signs, halves and
large magnitudes; int8 tensors hold every stored value.  Seeded, many ops per model.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_oracle import check_model, float_values, int8_values, run_tflm

from tflm_gen import host
from tflm_gen.errors import ModelError
from tflm_gen.model.builder import ModelBuilder

FLOAT_OPS = ["ABS", "NEG", "EXP", "LOG", "SQRT", "RSQRT", "SQUARE", "SIN", "COS", "FLOOR",
             "CEIL"]  # fmt: skip
SPECIAL_FLOATS = [0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 1e-30, 100.0, -100.0, 3e38]


def add_unary(b: ModelBuilder, op: str, data: np.ndarray, in_quant: dict, out_dtype: str,
              out_quant: dict, options: dict | None = None) -> np.ndarray:  # fmt: skip
    x = b.input(f"x{len(b.graph.inputs)}", list(data.shape), data.dtype.name, **in_quant)
    y = b.add_op(op, [x], list(data.shape), out_dtype, options=options, **out_quant)
    b.output(y)
    return data


def random_shape(rng: np.random.Generator, min_size: int = 1) -> list[int]:
    shape = [int(d) for d in rng.integers(1, 6, size=int(rng.integers(1, 5)))]
    shape[-1] = max(shape[-1], int(np.ceil(min_size / max(1, int(np.prod(shape[:-1]))))))
    return shape


def test_float_unary_ops_match_tflm() -> None:
    rng = np.random.default_rng(89)
    b, cases, inputs = ModelBuilder(), [], []
    for op in FLOAT_OPS * 2:
        shape = random_shape(rng, 12)
        inputs.append(add_unary(b, op, float_values(rng, shape, SPECIAL_FLOATS), {}, "float32", {}))
        cases.append((op, shape))
    check_model(b.build(), inputs, cases)


def test_abs_quantized_matches_tflm() -> None:
    rng = np.random.default_rng(97)
    b, cases, inputs = ModelBuilder(), [], []
    for dtype in ["int8", "int16", "int16_raw"] * 4:
        shape = random_shape(rng, 300)
        if dtype == "int8":
            scale = float(10 ** rng.uniform(-3, 0))
            in_quant = {"scale": scale, "zero_point": int(rng.integers(-100, 100))}
            out_scale = scale if rng.random() < 0.3 else float(10 ** rng.uniform(-3, 0))
            out_quant = {"scale": out_scale, "zero_point": int(rng.integers(-100, 100))}
            data = int8_values(rng, shape)
        else:
            in_quant = {"scale": float(10 ** rng.uniform(-4, -1)), "zero_point": 0}
            out_quant = {"scale": float(10 ** rng.uniform(-4, -1)), "zero_point": 0}
            if dtype == "int16_raw":  # no quantisation: plain |x|
                in_quant, out_quant = {}, {}
            data = rng.integers(-32768, 32767, size=shape, endpoint=True).astype(np.int16)
            data.flat[0] = -32768
        inputs.append(add_unary(b, "ABS", data, in_quant, data.dtype.name, out_quant))
        cases.append((dtype, shape, in_quant, out_quant))
    check_model(b.build(), inputs, cases)


def test_rsqrt_int8_matches_tflm() -> None:
    rng = np.random.default_rng(101)
    b, cases, inputs = ModelBuilder(), [], []
    for _ in range(12):
        zero_point = int(rng.integers(-128, 60))
        shape = random_shape(rng, 128 - zero_point)
        in_quant = {"scale": float(10 ** rng.uniform(-3, 0)), "zero_point": zero_point}
        out_quant = {"scale": float(10 ** rng.uniform(-2, 0)),
                     "zero_point": int(rng.integers(-100, 100))}  # fmt: skip
        data = int8_values(rng, shape, low=zero_point)  # TFLM rejects x < zero point
        inputs.append(add_unary(b, "RSQRT", data, in_quant, "int8", out_quant))
        cases.append((shape, in_quant, out_quant))
    check_model(b.build(), inputs, cases)


# The CAST pairs TFLM runs: any two different types of this list.
CAST_TYPES = ["float32", "int8", "int16", "int32", "uint32", "bool"]


def cast_values(rng: np.random.Generator, dtype: str, to_dtype: str, shape) -> np.ndarray:
    """Values whose cast is defined in C++ (no float out of the target's range)."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    lo = 0 if dtype == "float32" and to_dtype == "uint32" else -100
    values = rng.integers(lo, 100, size=shape)
    if dtype == "float32":
        values = values + rng.choice([0.0, 0.25, 0.5, 0.75], size=shape)
    return values.astype(dtype)


def test_cast_matches_tflm() -> None:
    rng = np.random.default_rng(103)
    b, cases, inputs = ModelBuilder(), [], []
    for from_dtype in CAST_TYPES:
        for to_dtype in CAST_TYPES:
            if from_dtype != to_dtype:
                shape = random_shape(rng, 6)
                data = cast_values(rng, from_dtype, to_dtype, shape)
                inputs.append(add_unary(b, "CAST", data, {}, to_dtype, {}))
                cases.append((from_dtype, to_dtype, shape))
    check_model(b.build(), inputs, cases)


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_zeros_like_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng([107, len(dtype)])
    b, cases, inputs = ModelBuilder(), [], []
    for _ in range(4):
        shape = random_shape(rng, 3)
        data = (rng.standard_normal(shape) * 100).astype(dtype)
        inputs.append(add_unary(b, "ZEROS_LIKE", data, {}, dtype, {}))
        cases.append(shape)
    check_model(b.build(), inputs, cases)


def test_fill_matches_tflm() -> None:
    rng = np.random.default_rng(109)
    b, cases, inputs = ModelBuilder(), [], []
    for dtype in ["float32", "int8", "int32"] * 2:
        shape = random_shape(rng, 2)
        dims = b.constant(f"d{len(b.graph.tensors)}", np.array(shape, np.int32))
        value = b.input(f"v{len(b.graph.inputs)}", [], dtype)
        y = b.add_op("FILL", [dims, value], shape, dtype)
        b.output(y)
        inputs.append(np.array(rng.integers(-100, 100), dtype))
        cases.append((dtype, shape))
    check_model(b.build(), inputs, cases)


def test_host_refuses_negative_rsqrt_like_tflm() -> None:
    """TFLM fails the invoke on x < zero point; the generated kernel reports an error too."""
    b = ModelBuilder()
    data = np.array([-5, 3, 7], np.int8)
    add_unary(b, "RSQRT", data, {"scale": 0.1, "zero_point": 0}, "int8",
              {"scale": 0.1, "zero_point": 0})  # fmt: skip
    with pytest.raises(RuntimeError):
        run_tflm(b.build(), [data])
    with pytest.raises(ModelError, match="invoke failed"):
        host.run_model(b.build(), [data])
