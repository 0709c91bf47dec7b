"""EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL and SELECT_V2 against
tflite-micro, bit for bit.

Seeded random broadcast shapes (4-D, TFLM's limit for comparisons); values drawn from a
small set so that ties occur; int8 inputs with different quantisations compare by real
value after TFLM's rescaling.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_oracle import check_model

from tflm_gen.model.builder import ModelBuilder

COMPARISONS = ["EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"]


def broadcast_shapes(rng: np.random.Generator, max_rank: int, count: int) -> list[list[int]]:
    """`count` shapes that broadcast together: suffixes of one shape, some dims set to 1."""
    rank = int(rng.integers(1, max_rank + 1))
    full = [int(d) for d in rng.integers(2, 5, size=rank)]
    shapes = []
    for _ in range(count):
        own = full[rank - int(rng.integers(0, rank + 1)) :]
        shapes.append([1 if rng.random() < 0.3 else d for d in own])
    return shapes


def tie_values(rng: np.random.Generator, dtype: str, shape) -> np.ndarray:
    """Values from a few levels, so equal pairs are common."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    levels = np.array([-3, -1, 0, 1, 2, 5])
    if dtype == "float32":
        return (rng.choice(levels, size=shape) * 0.5).astype(np.float32)
    return rng.choice(levels, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "bool"])
def test_comparisons_match_tflm(dtype: str) -> None:
    rng = np.random.default_rng([113, len(dtype), ord(dtype[0])])
    b, cases, inputs = ModelBuilder(), [], []
    ops = COMPARISONS[:2] if dtype == "bool" else COMPARISONS
    for op in ops * 2:
        shape1, shape2 = broadcast_shapes(rng, 4, 2)
        x1 = b.input(f"a{len(b.graph.inputs)}", shape1, dtype)
        x2 = b.input(f"b{len(b.graph.inputs)}", shape2, dtype)
        out_shape = list(np.broadcast_shapes(tuple(shape1), tuple(shape2)))
        b.output(b.add_op(op, [x1, x2], out_shape, "bool"))
        inputs += [tie_values(rng, dtype, shape1), tie_values(rng, dtype, shape2)]
        cases.append((op, dtype, shape1, shape2))
    check_model(b.build(), inputs, cases)


def test_comparisons_int8_rescale_like_tflm() -> None:
    rng = np.random.default_rng(127)
    b, cases, inputs = ModelBuilder(), [], []
    for op in COMPARISONS * 3:
        shape1, shape2 = broadcast_shapes(rng, 4, 2)
        scale = float(10 ** rng.uniform(-3, -0.5))
        quant1 = {"scale": scale, "zero_point": int(rng.integers(-50, 50))}
        # Same scale (ties by stored value), or a ratio of 2 (ties after rescaling), or any.
        other = scale * float(rng.choice([1.0, 2.0, 0.5, rng.uniform(0.3, 3)]))
        quant2 = {"scale": min(other, 0.9), "zero_point": int(rng.integers(-50, 50))}
        x1 = b.input(f"a{len(b.graph.inputs)}", shape1, "int8", **quant1)
        x2 = b.input(f"b{len(b.graph.inputs)}", shape2, "int8", **quant2)
        out_shape = list(np.broadcast_shapes(tuple(shape1), tuple(shape2)))
        b.output(b.add_op(op, [x1, x2], out_shape, "bool"))
        inputs += [rng.integers(-128, 127, size=shape1, endpoint=True).astype(np.int8),
                   rng.integers(-128, 127, size=shape2, endpoint=True).astype(np.int8)]  # fmt: skip
        cases.append((op, shape1, shape2, quant1, quant2))
    check_model(b.build(), inputs, cases)


def test_select_v2_matches_tflm() -> None:
    rng = np.random.default_rng(131)
    b, cases, inputs = ModelBuilder(), [], []
    for dtype in ["float32", "int8", "int16"] * 5:
        shapes = broadcast_shapes(rng, 4, 3)
        quant = {"scale": 0.05, "zero_point": 3} if dtype in ("int8", "int16") else {}
        if dtype == "int16":
            quant["zero_point"] = 0
        c = b.input(f"c{len(b.graph.inputs)}", shapes[0], "bool")
        x = b.input(f"x{len(b.graph.inputs)}", shapes[1], dtype, **quant)
        y = b.input(f"y{len(b.graph.inputs)}", shapes[2], dtype, **quant)
        out_shape = list(np.broadcast_shapes(*(tuple(s) for s in shapes)))
        b.output(b.add_op("SELECT_V2", [c, x, y], out_shape, dtype, **quant))
        inputs += [rng.random(shapes[0]) < 0.5, tie_values(rng, dtype, shapes[1]),
                   tie_values(rng, dtype, shapes[2])]  # fmt: skip
        cases.append((dtype, shapes))
    check_model(b.build(), inputs, cases)
