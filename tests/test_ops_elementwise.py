"""ADD, RESHAPE, QUANTIZE and DEQUANTIZE: generated C against tflite-micro, bit for bit.

Seeded random single-op branches, many per model so the host library is built once per
test: ADD over broadcast shapes up to 6-D, fused activations and quantisation parameters
(float32, int8, int16, int32); QUANTIZE from float32 (including exact rounding ties) and
every integer requantisation pair TFLM supports; DEQUANTIZE from int8 and int16; RESHAPE
with and without a shape input.  Floats are compared by bit pattern.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_oracle import FUSED_ACTIVATIONS, check_model

from tflm_gen.model.builder import ModelBuilder

QRANGE = {
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "int32": (-(2**31), 2**31 - 1),
}
CASES = 30


def random_values(rng: np.random.Generator, dtype: str, shape, limit=None) -> np.ndarray:
    if dtype == "float32":
        return (rng.standard_normal(shape) * 3).astype(np.float32)
    lo, hi = QRANGE[dtype] if limit is None else (-limit, limit)
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


# --- ADD --------------------------------------------------------------------------------


def broadcast_shapes(rng: np.random.Generator, max_rank: int) -> tuple[list[int], list[int]]:
    """Two input shapes that broadcast: suffixes of one shape, some dimensions set to 1."""
    rank = int(rng.integers(1, max_rank + 1)) if rng.random() < 0.3 else max_rank
    full = [int(d) for d in rng.integers(2, 5, size=rank)]
    if rng.random() < 0.3:
        return full, list(full)  # same shapes: the flat loop
    shapes = []
    for _ in range(2):
        own = full[rank - int(rng.integers(0, rank + 1)) :]
        shapes.append([1 if rng.random() < 0.3 else d for d in own])
    return shapes[0], shapes[1]


def add_case(rng: np.random.Generator, dtype: str, max_rank: int = 4) -> dict:
    shape1, shape2 = broadcast_shapes(rng, max_rank)
    case = {"shape1": shape1, "shape2": shape2, "activation": str(rng.choice(FUSED_ACTIVATIONS))}
    if dtype in ("int8", "int16"):
        scales = [float(10 ** rng.uniform(-2.5, 0)) for _ in range(2)]
        out_scale = max(scales) * float(rng.uniform(0.7, 4))
        zero_points = (
            [int(z) for z in rng.integers(-100, 100, size=3)] if dtype == "int8" else [0] * 3
        )
        case.update(quant=list(zip(scales + [out_scale], zero_points)))
        case["pot_scale_int16"] = bool(rng.random() < 0.5)
    return case


def add_add(b: ModelBuilder, dtype: str, case: dict, rng: np.random.Generator) -> list:
    """Adds x1 + x2 -> output; returns the two inputs' data."""
    quant = [{"scale": s, "zero_point": z} for s, z in case.get("quant", [])] or [{}] * 3
    x1 = b.input(f"a{len(b.graph.inputs)}", case["shape1"], dtype, **quant[0])
    x2 = b.input(f"b{len(b.graph.inputs)}", case["shape2"], dtype, **quant[1])
    out_shape = list(np.broadcast_shapes(tuple(case["shape1"]), tuple(case["shape2"])))
    options = {"fused_activation_function": case["activation"]}
    if dtype == "int16":
        options["pot_scale_int16"] = case["pot_scale_int16"]
    y = b.add_op("ADD", [x1, x2], out_shape, dtype, options=options, **quant[2])
    b.output(y)
    limit = 2**29 if dtype == "int32" else None
    return [random_values(rng, dtype, case["shape1"], limit),
            random_values(rng, dtype, case["shape2"], limit)]  # fmt: skip


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32"])
def test_add_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng([7, len(dtype), ord(dtype[0])])
    b, cases, inputs = ModelBuilder(), [add_case(rng, dtype) for _ in range(CASES)], []
    for case in cases:
        inputs += add_add(b, dtype, case, rng)
    check_model(b.build(), inputs, cases)


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_add_broadcasts_up_to_6d(dtype: str) -> None:
    rng = np.random.default_rng([8, len(dtype)])
    cases = [add_case(rng, dtype, max_rank=6) for _ in range(12)]
    for index, case in enumerate(cases[:4]):  # make sure ranks 5 and 6 occur
        case["shape1"] = [2, 1, 3, 1, 2, 3][: 5 + index % 2]
        case["shape2"] = [3, 2, 1]
    b, inputs = ModelBuilder(), []
    for case in cases:
        inputs += add_add(b, dtype, case, rng)
    check_model(b.build(), inputs, cases)


# --- QUANTIZE / DEQUANTIZE ----------------------------------------------------------------

REQUANTIZE_PAIRS = [
    ("int8", "int8"), ("int8", "int16"), ("int8", "int32"), ("int8", "uint8"),
    ("uint8", "int8"), ("int16", "int8"), ("int16", "int16"), ("int16", "int32"),
    ("int32", "int8"), ("int32", "int16"),
]  # fmt: skip


def add_unary(b: ModelBuilder, op: str, data: np.ndarray, in_quant: dict, out_dtype: str,
              out_quant: dict) -> np.ndarray:  # fmt: skip
    x = b.input(f"x{len(b.graph.inputs)}", list(data.shape), data.dtype.name, **in_quant)
    y = b.add_op(op, [x], list(data.shape), out_dtype, **out_quant)
    b.output(y)
    return data


def random_quant(rng: np.random.Generator, dtype: str) -> dict:
    zero_point = int(rng.integers(-100, 100)) if dtype in ("int8", "int32") else 0
    if dtype == "uint8":
        zero_point = int(rng.integers(0, 256))
    return {"scale": float(10 ** rng.uniform(-3, 0)), "zero_point": zero_point}


def float_with_ties(rng: np.random.Generator, shape, quant: dict) -> np.ndarray:
    """Random floats, a third of them exactly (k + 1/2) * scale in float32."""
    data = (rng.standard_normal(shape) * 50 * quant["scale"]).astype(np.float32)
    ties = (rng.integers(-200, 200, size=shape) + 0.5).astype(np.float32)
    ties = ties * np.float32(quant["scale"])
    return np.where(rng.random(shape) < 0.33, ties, data).astype(np.float32)


@pytest.mark.parametrize("out_dtype", ["int8", "int16"])
def test_quantize_float_matches_tflm(out_dtype: str) -> None:
    rng = np.random.default_rng([11, len(out_dtype)])
    b, cases, inputs = ModelBuilder(), [], []
    for _ in range(CASES):
        shape = [int(d) for d in rng.integers(1, 6, size=int(rng.integers(1, 5)))]
        quant = random_quant(rng, "int8" if rng.random() < 0.5 else out_dtype)
        inputs.append(add_unary(b, "QUANTIZE", float_with_ties(rng, shape, quant), {},
                                out_dtype, quant))  # fmt: skip
        cases.append({"shape": shape, **quant})
    check_model(b.build(), inputs, cases)


def test_requantize_matches_tflm() -> None:
    rng = np.random.default_rng(13)
    b, cases, inputs = ModelBuilder(), [], []
    for in_dtype, out_dtype in REQUANTIZE_PAIRS * 3:
        shape = [int(d) for d in rng.integers(1, 6, size=int(rng.integers(1, 4)))]
        in_quant, out_quant = random_quant(rng, in_dtype), random_quant(rng, out_dtype)
        if rng.random() < 0.2:
            out_quant["scale"] = in_quant["scale"]  # zero-point shift only
        limit = 2**20 if in_dtype == "int32" else None
        data = random_values(rng, in_dtype, shape, limit)
        inputs.append(add_unary(b, "QUANTIZE", data, in_quant, out_dtype, out_quant))
        cases.append((in_dtype, out_dtype, in_quant, out_quant))
    check_model(b.build(), inputs, cases)


def test_dequantize_matches_tflm() -> None:
    rng = np.random.default_rng(17)
    b, cases, inputs = ModelBuilder(), [], []
    for in_dtype in ["int8", "int16"] * (CASES // 2):
        shape = [int(d) for d in rng.integers(1, 6, size=int(rng.integers(1, 5)))]
        quant = random_quant(rng, in_dtype)
        data = random_values(rng, in_dtype, shape)
        inputs.append(add_unary(b, "DEQUANTIZE", data, quant, "float32", {}))
        cases.append((in_dtype, quant))
    check_model(b.build(), inputs, cases)


# --- RESHAPE ------------------------------------------------------------------------------


def test_reshape_matches_tflm() -> None:
    rng = np.random.default_rng(19)
    b, cases, inputs = ModelBuilder(), [], []
    for dtype in ["float32", "int8", "int16", "int32"] * 4:
        shape = [int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 5)))]
        new_shape = [int(np.prod(shape))] if rng.random() < 0.5 else list(reversed(shape))
        x = b.input(f"x{len(b.graph.inputs)}", shape, dtype, scale=0.5, zero_point=0)
        operands = [x]
        if rng.random() < 0.5:
            operands.append(b.constant(f"s{len(b.graph.tensors)}", np.array(new_shape, np.int32)))
        y = b.add_op("RESHAPE", operands, new_shape, dtype, options={"new_shape": new_shape},
                     scale=0.5, zero_point=0)  # fmt: skip
        b.output(y)
        inputs.append(random_values(rng, dtype, shape))
        cases.append((dtype, shape, new_shape, len(operands)))
    check_model(b.build(), inputs, cases)


def test_chain_quantize_add_reshape_dequantize() -> None:
    """The ops back to back, so intermediate tensors (not graph inputs) feed each kernel."""
    rng = np.random.default_rng(23)
    b = ModelBuilder()
    x = b.input("x", [1, 4, 6], "float32")
    q = b.add_op("QUANTIZE", [x], [1, 4, 6], "int8", scale=0.05, zero_point=-3)
    bias = b.constant("bias", rng.integers(-128, 128, size=[6]).astype(np.int8),
                      quantization=None)  # fmt: skip
    b.graph.tensors[bias].quantization = type(b.graph.tensors[q].quantization)([0.02], [5])
    s = b.add_op("ADD", [q, bias], [1, 4, 6], "int8", scale=0.06, zero_point=2,
                 options={"fused_activation_function": "RELU"})  # fmt: skip
    r = b.add_op("RESHAPE", [s], [24], "int8", scale=0.06, zero_point=2,
                 options={"new_shape": [24]})  # fmt: skip
    d = b.add_op("DEQUANTIZE", [r], [24], "float32")
    b.output(d)
    data = (rng.standard_normal([1, 4, 6]) * 3).astype(np.float32)
    check_model(b.build(), [data], ["chain"])
