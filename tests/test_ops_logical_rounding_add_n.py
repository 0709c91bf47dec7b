"""LOGICAL_AND / OR / NOT, ROUND, FLOOR_DIV, FLOOR_MOD and ADD_N against tflite-micro, bit
for bit.  Seeded random shapes with numpy-style broadcasting for the
binary ops; several ops per model."""

from __future__ import annotations

import numpy as np
from op_oracle import check_model

from tflm_gen.model.builder import ModelBuilder


def random_shape(rng: np.random.Generator, rank: int | None = None) -> list[int]:
    rank = int(rng.integers(1, 5)) if rank is None else rank
    return [int(d) for d in rng.integers(1, 5, size=rank)]


def broadcast_pair(rng: np.random.Generator) -> tuple[list[int], list[int], list[int]]:
    """Two shapes that broadcast (some dims 1, maybe fewer dims) and their result."""
    out = random_shape(rng)
    a = [d if rng.random() < 0.7 else 1 for d in out]
    b = [d if rng.random() < 0.7 else 1 for d in out][int(rng.integers(0, len(out))) :]
    return a, b, out


def add_binary(b: ModelBuilder, op: str, x: np.ndarray, y: np.ndarray,
               out_shape: list[int], out_dtype: str) -> list[np.ndarray]:  # fmt: skip
    ix = b.input(f"x{len(b.graph.inputs)}", list(x.shape), x.dtype.name)
    iy = b.input(f"x{len(b.graph.inputs)}", list(y.shape), y.dtype.name)
    b.output(b.add_op(op, [ix, iy], out_shape, out_dtype))
    return [x, y]


def test_logical_ops_match_tflm() -> None:
    rng = np.random.default_rng(307)
    b, cases, inputs = ModelBuilder(), [], []
    for op in ["LOGICAL_AND", "LOGICAL_OR"] * 4:
        a, c, out = broadcast_pair(rng)
        inputs += add_binary(b, op, rng.random(a) < 0.5, rng.random(c) < 0.5, out, "bool")
        cases.append((op, a, c))
    for _ in range(3):
        shape = random_shape(rng)
        x = b.input(f"x{len(b.graph.inputs)}", shape, "bool")
        b.output(b.add_op("LOGICAL_NOT", [x], shape, "bool"))
        inputs.append(rng.random(shape) < 0.5)
        cases.append(("LOGICAL_NOT", shape))
    check_model(b.build(), inputs, cases)


def float_operand(rng: np.random.Generator, shape: list[int], nonzero: bool) -> np.ndarray:
    values = rng.standard_normal(shape) * 10
    values = np.where(rng.random(shape) < 0.3, np.round(values), values)  # exact quotients
    if nonzero:
        values = np.where(np.abs(values) < 0.25, 1.5, values)
    return values.astype(np.float32)


def test_round_floor_div_floor_mod_match_tflm() -> None:
    rng = np.random.default_rng(311)
    b, cases, inputs = ModelBuilder(), [], []
    for op in ["FLOOR_DIV", "FLOOR_MOD"] * 4:
        a, c, out = broadcast_pair(rng)
        x, y = float_operand(rng, a, False), float_operand(rng, c, True)
        inputs += add_binary(b, op, x, y, out, "float32")
        cases.append((op, a, c))
    for _ in range(3):
        shape = random_shape(rng)
        x = b.input(f"x{len(b.graph.inputs)}", shape, "float32")
        b.output(b.add_op("ROUND", [x], shape, "float32"))
        data = (rng.integers(-20, 20, size=shape) / 4).astype(np.float32)  # many halves
        data.flat[0] = -0.0
        inputs.append(data)
        cases.append(("ROUND", shape))
    check_model(b.build(), inputs, cases)


def test_add_n_matches_tflm() -> None:
    rng = np.random.default_rng(313)
    b, cases, inputs = ModelBuilder(), [], []
    for dtype in ["float32", "int8"] * 3:
        shape, count = random_shape(rng), int(rng.integers(2, 5))
        quant = {}
        if dtype == "int8":
            quant = {"scale": float(10 ** rng.uniform(-2, 0)),
                     "zero_point": int(rng.integers(-50, 50))}  # fmt: skip
        out_quant = {}
        if dtype == "int8":
            out_quant = {"scale": quant["scale"] * float(rng.uniform(1, 4)),
                         "zero_point": int(rng.integers(-50, 50))}  # fmt: skip
        xs = [b.input(f"x{len(b.graph.inputs)}", shape, dtype, **quant) for _ in range(count)]
        b.output(b.add_op("ADD_N", xs, shape, dtype, **out_quant))
        for _ in range(count):
            if dtype == "int8":
                inputs.append(rng.integers(-128, 127, size=shape, endpoint=True).astype(np.int8))
            else:
                inputs.append(rng.standard_normal(shape).astype(np.float32))
        cases.append((dtype, shape, count, quant, out_quant))
    check_model(b.build(), inputs, cases)
