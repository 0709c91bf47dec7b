"""MIRROR_PAD, REVERSE_V2, BROADCAST_TO, BROADCAST_ARGS, SPACE_TO_BATCH_ND,
BATCH_TO_SPACE_ND, GATHER_ND and DYNAMIC_UPDATE_SLICE against tflite-micro, bit for bit.
These ops move whole elements; seeded random shapes and parameters, several ops per model,
one model per dtype."""

from __future__ import annotations

import numpy as np
import pytest
from op_oracle import check_model

from tflm_gen.model.builder import ModelBuilder

QUANT = {"int8": {"scale": 0.1, "zero_point": -7}, "int16": {"scale": 0.01, "zero_point": 0}}


class Cases:
    """One model of many ops; each op reads one fresh input and writes one output."""

    def __init__(self, dtype: str, seed: int):
        self.dtype, self.rng = dtype, np.random.default_rng(seed)
        self.b, self.inputs, self.cases = ModelBuilder(), [], []

    def data(self, shape: list[int], dtype: str | None = None) -> np.ndarray:
        dtype = dtype or self.dtype
        if dtype == "bool":
            return self.rng.random(shape) < 0.5
        if dtype == "float32":
            return self.rng.standard_normal(shape).astype(np.float32)
        info = np.iinfo(dtype)
        return self.rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape,
                                 endpoint=True).astype(dtype)  # fmt: skip

    def input(self, shape: list[int], dtype: str | None = None) -> int:
        dtype = dtype or self.dtype
        self.inputs.append(self.data(shape, dtype))
        return self.b.input(f"x{len(self.b.graph.inputs)}", shape, dtype,
                            **QUANT.get(dtype, {}))  # fmt: skip

    def op(self, op: str, inputs: list[int], out_shape: list[int], case, options=None,
           out_dtype: str | None = None) -> None:  # fmt: skip
        out_dtype = out_dtype or self.dtype
        self.b.output(self.b.add_op(op, inputs, out_shape, out_dtype, options=options,
                                    **QUANT.get(out_dtype, {})))  # fmt: skip
        self.cases.append((op, case))

    def const(self, values, dtype: str = "int32") -> int:
        return self.b.constant(f"c{len(self.b.graph.tensors)}", np.array(values, dtype))

    def check(self) -> None:
        check_model(self.b.build(), self.inputs, self.cases)


def shape(rng: np.random.Generator, rank: int) -> list[int]:
    return [int(d) for d in rng.integers(1, 5, size=rank)]


def add_mirror_pad(c: Cases) -> None:
    for mode in ["REFLECT", "SYMMETRIC"] * 2:
        dims = [d + 1 for d in shape(c.rng, int(c.rng.integers(1, 5)))]
        limit = [d - (1 if mode == "REFLECT" else 0) for d in dims]
        pads = [[int(c.rng.integers(0, m + 1)) for _ in range(2)] for m in limit]
        out = [d + p[0] + p[1] for d, p in zip(dims, pads)]
        c.op("MIRROR_PAD", [c.input(dims), c.const(pads)], out, (mode, dims, pads),
             {"mode": 0 if mode == "REFLECT" else 1})  # fmt: skip


def add_reverse(c: Cases) -> None:
    for _ in range(3):
        dims = shape(c.rng, int(c.rng.integers(1, 5)))
        axes = sorted({int(a) for a in c.rng.integers(0, len(dims), size=1)})
        c.op("REVERSE_V2", [c.input(dims), c.const(axes)], dims, (dims, axes))


def add_broadcast_to(c: Cases) -> None:
    for _ in range(3):
        out = shape(c.rng, int(c.rng.integers(1, 5)))
        dims = [d if c.rng.random() < 0.5 else 1 for d in out][int(c.rng.integers(0, len(out))) :]
        c.op("BROADCAST_TO", [c.input(dims), c.const(out)], out, (dims, out))


def space_batch_shapes(c: Cases, rank: int, cropped: bool):
    """block shape, crops (zero unless `cropped`), the space shape and the batched shape."""
    blocks = [int(v) for v in c.rng.integers(1, 4, size=rank - 2)]
    crops = [[int(v) for v in c.rng.integers(0, 3, size=2)] if cropped else [0, 0]
             for _ in blocks]  # fmt: skip
    batched = [int(c.rng.integers(1, 4)) for _ in blocks]
    batched = [max(n, (p[0] + p[1]) // b + 1) for n, b, p in zip(batched, blocks, crops)]
    space = [n * b - p[0] - p[1] for n, b, p in zip(batched, blocks, crops)]
    batch, depth = int(c.rng.integers(1, 3)), int(c.rng.integers(1, 4))
    return (blocks, crops, [batch, *space, depth],
            [batch * int(np.prod(blocks)), *batched, depth])  # fmt: skip


def add_space_batch(c: Cases) -> None:
    for rank in [4, 4, 3]:
        # SPACE_TO_BATCH_ND pads with an op-data field TFLM never initialises (arena
        # garbage), so the oracle is only defined without padding; crops are fine.
        blocks, pads, space, batched = space_batch_shapes(c, rank, cropped=False)
        x = c.input(space)
        c.op("SPACE_TO_BATCH_ND", [x, c.const(blocks), c.const(pads)], batched, (space, blocks))
        blocks, crops, space, batched = space_batch_shapes(c, rank, cropped=True)
        c.op("BATCH_TO_SPACE_ND", [c.input(batched), c.const(blocks), c.const(crops)], space,
             (batched, blocks, crops))  # fmt: skip


def add_gather_nd(c: Cases) -> None:
    for _ in range(3):
        params = shape(c.rng, int(c.rng.integers(1, 4)))
        depth = int(c.rng.integers(1, len(params) + 1))
        rows = shape(c.rng, int(c.rng.integers(1, 3)))
        index = np.stack([c.rng.integers(0, d, size=rows) for d in params[:depth]], -1)
        out = rows + params[depth:]
        c.op("GATHER_ND", [c.input(params), c.const(index)], out, (params, index.shape))


def add_dynamic_update_slice(c: Cases) -> None:
    for _ in range(3):
        dims = shape(c.rng, int(c.rng.integers(1, 5)))
        update = [int(c.rng.integers(1, d + 1)) for d in dims]
        start = [int(v) for v in c.rng.integers(-2, 5, size=len(dims))]  # clamped by TFLM
        c.op("DYNAMIC_UPDATE_SLICE", [c.input(dims), c.input(update), c.const(start)], dims,
             (dims, update, start))  # fmt: skip


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
def test_layout_ops_match_tflm(dtype: str) -> None:
    c = Cases(dtype, 401 + len(dtype))
    for add in [add_reverse, add_broadcast_to, add_dynamic_update_slice]:
        add(c)
    if dtype != "int16":  # TFLM runs these on float32 and int8 only
        for add in [add_mirror_pad, add_space_batch, add_gather_nd]:
            add(c)
    c.check()


def test_int32_layout_ops_match_tflm() -> None:
    c = Cases("int32", 409)
    for add in [add_reverse, add_broadcast_to, add_dynamic_update_slice]:
        add(c)
    for dtype in ["int32", "int64"]:
        a, b = shape(c.rng, 3), shape(c.rng, 2)
        a = [1 if c.rng.random() < 0.5 else d for d in a]
        b = [1 if c.rng.random() < 0.5 else d for d in b]
        b = [a[1 + k] if b[k] != 1 and a[1 + k] != 1 else b[k] for k in range(2)]
        out = np.broadcast_shapes(tuple(a), tuple(b))
        x = c.b.input(f"x{len(c.b.graph.inputs)}", [3], dtype)
        y = c.b.input(f"x{len(c.b.graph.inputs)}", [2], dtype)
        c.inputs += [np.array(a, dtype), np.array(b, dtype)]
        c.op("BROADCAST_ARGS", [x, y], [3], (a, b, out), out_dtype=dtype)
    c.check()
