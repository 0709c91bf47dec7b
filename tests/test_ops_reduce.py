"""Reductions and per-row ops against tflite-micro, bit for bit: MEAN, SUM, REDUCE_MAX,
ARG_MAX, ARG_MIN, L2_NORMALIZATION, RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR.

Seeded random shapes, axes (at most two, TFLM's limit for MEAN/SUM), keep_dims, resize
flags and quantisation; quantised MEAN is drawn both with equal input/output quantisation
and with different ones.  One model per dtype holds every case.  Small random shapes cannot
tell truncation from rounding, so the global average pooling of real classifiers is tested
apart, at their sizes.
"""

from __future__ import annotations

import numpy as np
import pytest
from layout_cases import Case

DTYPES = ["float32", "int8", "int16"]
REPEATS = 4


def reduced_shape(shape, axes, keep_dims):
    axes = {a % len(shape) for a in axes}
    if keep_dims:
        return [1 if i in axes else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in axes]


def add_reductions(c: Case) -> None:
    rank = int(c.rng.integers(1, 5))
    shape = [int(v) for v in c.rng.integers(1, 6, size=rank)]
    count = int(c.rng.integers(1, min(rank, 2) + 1))
    axes = [int(a) - rank * int(c.rng.integers(0, 2))
            for a in c.rng.choice(rank, size=count, replace=False)]  # fmt: skip
    keep = bool(c.rng.random() < 0.5)
    out = reduced_shape(shape, axes, keep)
    if not out:  # TFLM's reducers need a non-scalar output tensor here
        out, keep = [1] * rank, True
    axis_tensor = c.b.constant("axis", np.asarray(axes, dtype=np.int32))
    for op in ("MEAN", "SUM", "REDUCE_MAX"):
        if op == "REDUCE_MAX" and c.dtype == "int16":
            continue  # TFLM's REDUCE_MAX takes float32 and int8 only
        q_in = c.quant()
        same = op == "REDUCE_MAX" or (op == "MEAN" and c.rng.random() < 0.4)
        q_out = q_in if same else c.quant()
        if op == "SUM" and q_out:  # room for the sum
            q_out["scale"] = q_in["scale"] * float(c.rng.uniform(1, 2 * np.prod(shape)))
        x = c.input(shape, q_in)
        c.op(op, [x, axis_tensor], [out], q_out, {"keep_dims": keep}, options_type="ReducerOptions")


def add_arg(c: Case) -> None:
    if c.dtype == "int16":
        return  # TFLM's ARG_MAX / ARG_MIN take float32 and int8 (and int32) only
    rank = int(c.rng.integers(1, 5))
    shape = [int(v) for v in c.rng.integers(1, 6, size=rank)]
    axis = int(c.rng.integers(-rank, rank))
    out = [d for i, d in enumerate(shape) if i != axis % rank] or [1]
    if out == [1] and rank == 1:
        out = []
    for op in ("ARG_MAX", "ARG_MIN"):
        x = c.input(shape, c.quant())
        out_type = "int32"  # the installed TFLM fails int64 arg outputs at invoke
        c.op(
            op,
            [x, c.b.constant("axis", np.asarray([axis], np.int32))],
            [out],
            options={"output_type": 2 if out_type == "int32" else 4},
            dtype=out_type,
        )


def add_l2norm(c: Case) -> None:
    if c.dtype == "int16":
        return  # TFLM's L2_NORMALIZATION takes float32 and int8 only
    shape = [int(v) for v in c.rng.integers(1, 6, size=int(c.rng.integers(1, 5)))]
    shape[-1] = int(c.rng.integers(1, 40))
    q_out = {"scale": 1.0 / 128.0, "zero_point": 0} if c.dtype == "int8" else {}
    x = c.input(shape, c.quant())
    c.op("L2_NORMALIZATION", [x], [shape], q_out)


def add_resize(c: Case) -> None:
    n, h, w, ch = (int(v) for v in c.rng.integers(1, 6, size=4))
    oh, ow = (int(v) for v in c.rng.integers(1, 11, size=2))
    size = c.b.constant("size", np.asarray([oh, ow], np.int32))
    for op in ("RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR"):
        if op == "RESIZE_BILINEAR" and c.dtype == "int16":
            continue  # TFLM's RESIZE_BILINEAR takes float32 and int8 only
        mode = int(c.rng.integers(0, 3))  # neither, align_corners, half_pixel_centers
        options = {"align_corners": mode == 1, "half_pixel_centers": mode == 2}
        q = c.quant()
        x = c.input([n, h, w, ch], q)
        c.op(op, [x, size], [[n, oh, ow, ch]], q, options)


BUILDERS = [add_reductions, add_arg, add_l2norm, add_resize]


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_ops_match_tflm(dtype: str) -> None:
    c = Case(dtype, [DTYPES.index(dtype), 7070])
    for _ in range(REPEATS):
        for builder in BUILDERS:
            builder(c)
    c.check()


# Global average pooling as real classifiers end: (height, width, channels, keep_dims).
# PyTorch's converters emit MEAN with equal input and output quantisation; Keras' often
# with different ones.  A 7x7 mean of 1280 channels is MobileNetV2 224's; 1x1 and 2x2
# reduce one or a few elements, 32x32 and 10x49 are long audio/image reductions.
POOLS = [(7, 7, 1280, True), (7, 7, 1280, False), (3, 3, 576, True), (1, 1, 1024, False),
         (2, 2, 96, True), (32, 32, 16, True), (10, 49, 64, False)]


def add_global_pool(c: Case, h: int, w: int, channels: int, keep: bool, same: bool) -> None:
    axis = c.b.constant("axis", np.asarray([1, 2], np.int32))
    q_in = c.quant()
    q_out = q_in if same else c.quant()
    out = [1, 1, 1, channels] if keep else [1, channels]
    c.op("MEAN", [c.input([1, h, w, channels], q_in), axis], [out], q_out,
         {"keep_dims": keep}, options_type="ReducerOptions")


@pytest.mark.parametrize("dtype", DTYPES)
def test_global_average_pooling_matches_tflm_at_real_sizes(dtype: str) -> None:
    c = Case(dtype, [DTYPES.index(dtype), 4949])
    for h, w, channels, keep in POOLS:
        for same in (True, False):
            add_global_pool(c, h, w, channels, keep, same)
    c.check()
