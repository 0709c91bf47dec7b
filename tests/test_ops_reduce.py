"""Reductions and per-row ops against tflite-micro, bit for bit: MEAN, SUM, REDUCE_MAX,
ARG_MAX, ARG_MIN, L2_NORMALIZATION, RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR; REDUCE_MIN
(float32, int8) and REDUCE_ALL (bool) in models of their own.

Seeded random shapes, axes (at most two, TFLM's limit for MEAN/SUM), keep_dims, resize
flags and quantisation; quantised MEAN is drawn both with equal input/output quantisation
and with different ones.  One model per dtype holds every case.  Small random shapes cannot
tell truncation from rounding, so the global average pooling of real classifiers is tested
apart, at their sizes (tests/regression/test_mean_global_average_pooling.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from layout_cases import Case
from op_oracle import check_model

from tflm_gen.model.builder import ModelBuilder

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


def random_reduction(rng: np.random.Generator, high: int) -> tuple:
    """A reduction over a random shape (dims 1..high-1): (shape, axes, keep_dims, output
    shape, the axes as given to the op, some of them negative)."""
    shape = [int(d) for d in rng.integers(1, high, size=int(rng.integers(1, 5)))]
    axes = sorted({int(a) for a in rng.integers(0, len(shape), size=rng.integers(1, 3))})
    keep = bool(rng.random() < 0.5)
    out = [1 if k in axes else d for k, d in enumerate(shape)]
    out = out if keep else [d for k, d in enumerate(shape) if k not in axes]
    signed = [a - len(shape) if rng.random() < 0.3 else a for a in axes]
    return shape, axes, keep, out, signed


def test_reduce_min_matches_tflm() -> None:
    rng = np.random.default_rng(317)
    b, cases, inputs = ModelBuilder(), [], []
    for dtype in ["float32", "int8"] * 4:
        shape, axes, keep, out, signed = random_reduction(rng, 5)
        quant = {"scale": 0.05, "zero_point": 3} if dtype == "int8" else {}
        x = b.input(f"x{len(b.graph.inputs)}", shape, dtype, **quant)
        axis = b.constant(f"axis{len(b.graph.tensors)}", np.array(signed, np.int32))
        b.output(b.add_op("REDUCE_MIN", [x, axis], out, dtype, options={"keep_dims": keep},
                          **quant))  # fmt: skip
        if dtype == "int8":
            data = rng.integers(-128, 127, size=shape, endpoint=True).astype(np.int8)
        else:
            data = (rng.standard_normal(shape) * 5).astype(np.float32)
        inputs.append(data)
        cases.append((dtype, shape, axes, keep))
    check_model(b.build(), inputs, cases)


def test_reduce_all_matches_tflm() -> None:
    rng = np.random.default_rng(349)
    b, cases, inputs = ModelBuilder(), [], []
    for _ in range(8):
        shape, axes, keep, out, signed = random_reduction(rng, 6)
        x = b.input(f"x{len(b.graph.inputs)}", shape, "bool")
        axis = b.constant(f"axis{len(b.graph.tensors)}", np.array(signed, np.int32))
        b.output(b.add_op("REDUCE_ALL", [x, axis], out, "bool", options={"keep_dims": keep}))
        inputs.append(rng.random(shape) < 0.85)  # mostly true, so some rows stay true
        cases.append((shape, axes, keep))
    check_model(b.build(), inputs, cases)
