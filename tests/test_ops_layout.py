"""Data-movement ops against tflite-micro, bit for bit: TRANSPOSE, SQUEEZE, EXPAND_DIMS,
SHAPE, PACK, UNPACK, SPLIT, SPLIT_V, CONCATENATION, GATHER, SLICE, STRIDED_SLICE, PAD,
PADV2, DEPTH_TO_SPACE, SPACE_TO_DEPTH.

Seeded random shapes, axes, indices, masks and paddings; every op of one dtype is a branch
of one model (one host build per dtype).  Quantised ops keep the input's quantisation, as
the converter emits them.
"""

from __future__ import annotations

import numpy as np
import pytest
from layout_cases import Case

DTYPES = ["float32", "int8", "int16"]
REPEATS = 3  # random cases per op and dtype


def rand_shape(c: Case, rank: int, low: int = 1, high: int = 5) -> list[int]:
    return [int(v) for v in c.rng.integers(low, high, size=rank)]


def const_int(c: Case, values, name="k") -> int:
    return c.b.constant(name, np.asarray(values, dtype=np.int32))


def add_transpose(c: Case) -> None:
    shape = rand_shape(c, int(c.rng.integers(1, 6)))
    perm = [int(v) for v in c.rng.permutation(len(shape))]
    q = c.quant()
    x = c.input(shape, q)
    c.op("TRANSPOSE", [x, const_int(c, perm)], [[shape[p] for p in perm]], q)


def add_squeeze_expand(c: Case) -> None:
    shape = rand_shape(c, int(c.rng.integers(2, 5)))
    # squeeze_dims never empty (that means "every 1") and never every axis (a scalar).
    ones = sorted(
        {int(c.rng.integers(0, len(shape)))}
        | {i for i in range(len(shape)) if c.rng.random() < 0.4}
    )[: len(shape) - 1]
    for i in ones:
        shape[i] = 1
    q = c.quant()
    x = c.input(shape, q)
    squeezed = [d for i, d in enumerate(shape) if i not in ones]
    c.op("SQUEEZE", [x], [squeezed], q, {"squeeze_dims": ones})
    axis = int(c.rng.integers(-len(shape) - 1, len(shape) + 1))
    expanded = list(shape)
    expanded.insert(axis if axis >= 0 else len(shape) + 1 + axis, 1)
    c.op("EXPAND_DIMS", [x, const_int(c, [axis])], [expanded], q)
    c.op("SHAPE", [x], [[len(shape)]], dtype="int32")


def add_pack_unpack(c: Case) -> None:
    shape = rand_shape(c, int(c.rng.integers(1, 4)))
    count = int(c.rng.integers(1, 4))
    axis = int(c.rng.integers(-len(shape) - 1, len(shape) + 1))
    q = c.quant()
    xs = [c.input(shape, q) for _ in range(count)]
    packed = list(shape)
    packed.insert(axis if axis >= 0 else len(shape) + 1 + axis, count)
    c.op("PACK", xs, [packed], q, {"values_count": count, "axis": axis})
    y = c.input(packed, q)
    unpack_axis = int(c.rng.integers(-len(packed), len(packed)))
    pieces = packed[unpack_axis]
    piece_shape = [d for i, d in enumerate(packed) if i != unpack_axis % len(packed)]
    c.op("UNPACK", [y], [piece_shape] * pieces, q, {"num": pieces, "axis": unpack_axis})


def add_split(c: Case) -> None:
    rank = int(c.rng.integers(1, 5))
    axis = int(c.rng.integers(-rank, rank))
    count = int(c.rng.integers(1, 4))
    shape = rand_shape(c, rank)
    shape[axis] = count * int(c.rng.integers(1, 3))
    q = c.quant()
    x = c.input(shape, q)
    piece = list(shape)
    piece[axis] //= count
    c.op("SPLIT", [const_int(c, [axis]), x], [piece] * count, q, {"num_splits": count})
    sizes = [int(v) for v in c.rng.integers(1, 3, size=int(c.rng.integers(1, 4)))]
    shape_v = list(shape)
    shape_v[axis] = sum(sizes)
    y = c.input(shape_v, q)
    given = list(sizes)
    if c.rng.random() < 0.5:
        given[int(c.rng.integers(0, len(sizes)))] = -1
    outs = [shape_v[: axis % rank] + [s] + shape_v[axis % rank + 1 :] for s in sizes]
    c.op(
        "SPLIT_V",
        [y, const_int(c, given), const_int(c, [axis])],
        outs,
        q,
        {"num_splits": len(sizes)},
    )


def add_concatenation(c: Case) -> None:
    rank = int(c.rng.integers(1, 5))
    axis = int(c.rng.integers(-rank, rank))
    shape = rand_shape(c, rank)
    q = c.quant()
    xs, total = [], 0
    for _ in range(int(c.rng.integers(1, 4))):
        piece = list(shape)
        piece[axis] = int(c.rng.integers(1, 4))
        total += piece[axis]
        xs.append(c.input(piece, q))
    out = list(shape)
    out[axis] = total
    c.op("CONCATENATION", xs, [out], q, {"axis": axis})


def add_gather(c: Case) -> None:
    """TFLM's GATHER takes float32 or int8 values and int32 indices only."""
    if c.dtype == "int16":
        return
    rank = int(c.rng.integers(1, 4))
    shape = rand_shape(c, rank, 1, 5)
    axis = int(c.rng.integers(0, rank))
    batch_dims = int(c.rng.integers(0, axis + 1)) if c.rng.random() < 0.3 else 0
    idx_shape = shape[:batch_dims] + rand_shape(c, int(c.rng.integers(1, 3)))
    indices = c.rng.integers(0, shape[axis], size=idx_shape).astype(np.int32)
    q = c.quant()
    x = c.input(shape, q)
    out = shape[:axis] + idx_shape[batch_dims:] + shape[axis + 1 :]
    c.op(
        "GATHER",
        [x, c.b.constant("idx", indices)],
        [out],
        q,
        {"axis": axis, "batch_dims": batch_dims},
    )


def add_slice(c: Case) -> None:
    shape = rand_shape(c, int(c.rng.integers(1, 5)), 1, 6)
    begin = [int(c.rng.integers(0, d)) for d in shape]
    size = [int(c.rng.integers(1, d - b + 1)) for d, b in zip(shape, begin)]
    size = [-1 if c.rng.random() < 0.25 else s for s in size]
    out = [d - b if s == -1 else s for d, b, s in zip(shape, begin, size)]
    q = c.quant()
    x = c.input(shape, q)
    c.op("SLICE", [x, const_int(c, begin), const_int(c, size)], [out], q)


def strided_axis(size, begin, end, stride, axis, masks):
    """Output length of one axis, with TFLM's StridedSlice index rules."""

    def clamp(v, lo, hi):
        return max(lo, min(hi, v))

    start = begin + size if begin < 0 else begin
    start = clamp(start, 0, size) if stride > 0 else clamp(start, -1, size - 1)
    if masks["begin_mask"] >> axis & 1:
        start = 0 if stride > 0 else size - 1
    if masks["shrink_axis_mask"] >> axis & 1:
        return 1
    end = end + size if end < 0 else end
    end = clamp(end, 0, size) if stride > 0 else clamp(end, -1, size - 1)
    if masks["end_mask"] >> axis & 1:
        end = size if stride > 0 else -1
    span = end - start if stride > 0 else start - end
    return max(0, -(-span // abs(stride)))


def add_strided_slice(c: Case) -> None:
    """TFLM rejects empty outputs (dynamic tensors), so cases are redrawn until non-empty."""
    while not try_strided_slice(c):
        pass


def try_strided_slice(c: Case) -> bool:
    rank = int(c.rng.integers(1, 5))
    shape = rand_shape(c, rank, 1, 7)
    begin = [int(c.rng.integers(-d - 1, d + 1)) for d in shape]
    end = [int(c.rng.integers(-d - 1, d + 2)) for d in shape]
    strides = [int(c.rng.choice([-2, -1, 1, 1, 2, 3])) for _ in shape]
    masks = {name: int(c.rng.integers(0, 1 << rank)) if c.rng.random() < 0.4 else 0
             for name in ("begin_mask", "end_mask")}  # fmt: skip
    shrink = 0
    for axis in range(rank):  # shrink only where begin is a valid index
        if c.rng.random() < 0.2 and -shape[axis] <= begin[axis] < shape[axis]:
            shrink |= 1 << axis
            strides[axis] = 1  # TFLM copies nothing for a shrunk axis with a negative stride
            masks["begin_mask"] &= ~(1 << axis)
    masks["shrink_axis_mask"] = shrink
    lengths = [strided_axis(d, b, e, s, i, masks)
               for i, (d, b, e, s) in enumerate(zip(shape, begin, end, strides))]  # fmt: skip
    if min(lengths) == 0:
        return False
    out = [n for i, n in enumerate(lengths) if not shrink >> i & 1]
    q = c.quant()
    x = c.input(shape, q)
    inputs = [x, const_int(c, begin), const_int(c, end), const_int(c, strides)]
    c.op("STRIDED_SLICE", inputs, [out], q, masks)
    return True


def add_pad(c: Case) -> None:
    shape = rand_shape(c, int(c.rng.integers(1, 5)))
    pads = c.rng.integers(0, 3, size=(len(shape), 2)).astype(np.int32)
    out = [d + int(p.sum()) for d, p in zip(shape, pads)]
    q = c.quant()
    x = c.input(shape, q)
    c.op("PAD", [x, c.b.constant("pads", pads)], [out], q)
    y = c.input(shape, q)
    value = c.data([], c.dtype)
    quant = None
    if q:
        from tflm_gen.model import ir

        quant = ir.Quantization([q["scale"]], [q["zero_point"]])
    constant = c.b.constant("value", value, quantization=quant)
    c.op("PADV2", [y, c.b.constant("pads", pads), constant], [out], q)


def add_space_depth(c: Case) -> None:
    """TFLM's DEPTH_TO_SPACE / SPACE_TO_DEPTH take float32 and int8 only."""
    if c.dtype == "int16":
        return
    block = int(c.rng.integers(1, 4))
    n, h, w, ch = (int(v) for v in c.rng.integers(1, 4, size=4))
    q = c.quant()
    x = c.input([n, h, w, ch * block * block], q)
    c.op("DEPTH_TO_SPACE", [x], [[n, h * block, w * block, ch]], q, {"block_size": block})
    y = c.input([n, h * block, w * block, ch], q)
    c.op("SPACE_TO_DEPTH", [y], [[n, h, w, ch * block * block]], q, {"block_size": block})


BUILDERS = [add_transpose, add_squeeze_expand, add_pack_unpack, add_split, add_concatenation,
            add_gather, add_slice, add_strided_slice, add_pad, add_space_depth]  # fmt: skip


@pytest.mark.parametrize("dtype", DTYPES)
def test_layout_ops_match_tflm(dtype: str) -> None:
    c = Case(dtype, [DTYPES.index(dtype), 4040])
    for _ in range(REPEATS):
        for builder in BUILDERS:
            builder(c)
    c.check()
