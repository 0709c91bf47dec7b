"""TFLM's (op, dtype) matrix, tested: every pair of the layout, reduction, unary and
comparison families that tflm-gen runs, against tflite-micro bit for bit, and every pair
outside the matrix refused at generation in one line.

The shapes and quantisation come from the ranges real models reach, which the small random
shapes of the per-family tests do not: 1280 channels at 7x7 (MobileNetV2's head), reductions
over thousands of elements, a 1000-row embedding table, int8 zero points at -128 and 127,
output/input scale ratios of 1/20 to 300, int32 and int64 values near their limits (shape
arithmetic, indices).  Each dtype is one model holding every op of the families that takes
it (one host build per dtype); which ops those are is read from tflm_op_dtypes.tsv, so a
pair added to the table without a case here fails test_every_family_pair_has_a_case.
"""

from __future__ import annotations

import numpy as np
import pytest
from layout_cases import Case
from op_oracle import run_tflm

from tflm_gen.errors import UnsupportedModelError
from tflm_gen.kernels import supported_ops
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.reader import read_model
from tflm_gen.op_dtypes import expected_pairs, tflm_pairs
from tflm_gen.ops_table import tflm_ops
from tflm_gen.support import DATA_INPUT, check_supported

DTYPES = ["float32", "int8", "int16", "int32", "int64", "uint8", "uint32", "bool"]
LIMITS = {"int32": 2**31 - 1, "int64": 2**62, "uint8": 255, "uint32": 2**32 - 1}


def values(c: Case, shape, dtype=None) -> np.ndarray:
    """Data over the dtype's whole range, half of it from a few levels so ties occur."""
    dtype = dtype or c.dtype
    if dtype in ("float32", "bool", "int8", "int16"):
        data = c.data(shape, dtype)
    else:
        top = LIMITS[dtype]
        bottom = 0 if dtype.startswith("u") else -top - (dtype == "int32")
        data = c.rng.integers(bottom, top, size=shape, endpoint=True, dtype=np.int64)
    levels = np.resize(np.asarray(data).reshape(-1)[:5], 5)
    tied = c.rng.choice(levels, size=shape) if np.prod(shape) else data
    return np.where(c.rng.random(shape) < 0.5, data, tied).astype(dtype)


def quant(c: Case, zero_point: int | None = None, scale: float | None = None) -> dict:
    """Real-model quantisation: int8 zero points often at an extreme, int16 symmetric."""
    if c.dtype not in ("int8", "int16"):
        return {}
    if zero_point is None:
        zero_point = int(c.rng.choice([-128, 127, int(c.rng.integers(-128, 128))]))
    return {"scale": scale or float(10 ** c.rng.uniform(-4, 0)),
            "zero_point": zero_point if c.dtype == "int8" else 0}  # fmt: skip


def x_in(c: Case, shape, q=None) -> int:
    return c.input(shape, q, data=values(c, shape))


def ints(c: Case, values_, dtype=np.int32) -> int:
    return c.b.constant("k", np.asarray(values_, dtype=dtype))


# --- layout ---------------------------------------------------------------------------


def add_strided_slice(c: Case, op: str) -> None:
    q = quant(c)
    x = x_in(c, [1, 49, 1280], q)
    c.op("STRIDED_SLICE", [x, ints(c, [0, 3, 100]), ints(c, [1, -1, 1280]), ints(c, [1, 2, 3])],
         [[1, 23, 394]], q)  # fmt: skip
    c.op("STRIDED_SLICE", [x, ints(c, [0, -1, 0]), ints(c, [1, 0, 0]), ints(c, [1, -1, 1])],
         [[48, 1280]], q, {"shrink_axis_mask": 1, "end_mask": 4})  # fmt: skip


def add_slice(c: Case, op: str) -> None:
    q = quant(c)
    c.op("SLICE", [x_in(c, [1, 49, 1280], q), ints(c, [0, 3, 100]), ints(c, [1, -1, 640])],
         [[1, 46, 640]], q)  # fmt: skip


def add_pack(c: Case, op: str) -> None:
    q = quant(c)
    xs = [x_in(c, [1280], q) for _ in range(3)]
    c.op("PACK", xs, [[3, 1280]], q, {"values_count": 3, "axis": 0})
    c.op("PACK", xs[:2], [[1280, 2]], q, {"values_count": 2, "axis": -1})


def add_unpack(c: Case, op: str) -> None:
    q = quant(c)
    c.op("UNPACK", [x_in(c, [4, 1280], q)], [[1280]] * 4, q, {"num": 4, "axis": 0})


def add_concatenation(c: Case, op: str) -> None:
    # int8 CONCATENATION needs equal quantisation (TFLM); int16 needs zero point 0.
    q = quant(c)
    halves = [x_in(c, [1, 7, 7, 640], q) for _ in range(2)]
    c.op("CONCATENATION", halves, [[1, 7, 7, 1280]], q, {"axis": 3})
    rows = [x_in(c, [1, n, 1280], q) for n in (1, 48)]
    c.op("CONCATENATION", rows, [[1, 49, 1280]], q, {"axis": -2})


def add_split(c: Case, op: str) -> None:
    q = quant(c)
    c.op("SPLIT", [ints(c, [3]), x_in(c, [1, 7, 7, 1280], q)], [[1, 7, 7, 640]] * 2, q,
         {"num_splits": 2})  # fmt: skip


def add_split_v(c: Case, op: str) -> None:
    q = quant(c)
    sizes = [256, -1, 24]
    c.op("SPLIT_V", [x_in(c, [1, 49, 1280], q), ints(c, sizes), ints(c, [-1])],
         [[1, 49, 256], [1, 49, 1000], [1, 49, 24]], q, {"num_splits": 3})  # fmt: skip


def add_pad(c: Case, op: str) -> None:
    q = quant(c)
    pads = ints(c, [[0, 0], [1, 1], [2, 0], [0, 3]])
    c.op("PAD", [x_in(c, [1, 7, 7, 320], q), pads], [[1, 9, 9, 323]], q)


def add_padv2(c: Case, op: str) -> None:
    q = quant(c)
    pads = ints(c, [[0, 0], [0, 2], [1, 1], [0, 0]])
    quantization = ir.Quantization([q["scale"]], [q["zero_point"]]) if q else None
    fill = c.b.constant("fill", values(c, []), quantization=quantization)
    c.op("PADV2", [x_in(c, [1, 7, 7, 320], q), pads, fill], [[1, 9, 9, 320]], q)


def add_mirror_pad(c: Case, op: str) -> None:
    q = quant(c)
    x = x_in(c, [1, 7, 7, 64], q)
    pads = ints(c, [[0, 0], [2, 2], [1, 2], [0, 0]])
    for mode in (0, 1):  # REFLECT, SYMMETRIC
        c.op("MIRROR_PAD", [x, pads], [[1, 11, 10, 64]], q, {"mode": mode})


def add_gather(c: Case, op: str) -> None:
    q = quant(c)
    table = c.b.constant("table", values(c, [1000, 64]), quantization=(
        ir.Quantization([q["scale"]], [q["zero_point"]]) if q else None))  # fmt: skip
    positions = c.rng.integers(0, 1000, size=[1, 50]).astype(np.int32)
    positions[0, :2] = [0, 999]
    ids = c.input([1, 50], dtype="int32", data=positions)
    c.op("GATHER", [table, ids], [[1, 50, 64]], q, {"axis": 0})
    x = x_in(c, [2, 1280], q)
    c.op("GATHER", [x, ints(c, [1279, 0, 640])], [[2, 3]], q, {"axis": 1})


def add_gather_nd(c: Case, op: str) -> None:
    q = quant(c)
    indices = np.stack([c.rng.integers(0, 32, size=10), c.rng.integers(0, 32, size=10)], 1)
    c.op("GATHER_ND", [x_in(c, [32, 32, 16], q), ints(c, indices)], [[10, 16]], q)


def add_transpose(c: Case, op: str) -> None:
    q = quant(c)
    c.op("TRANSPOSE", [x_in(c, [1, 49, 1280], q), ints(c, [0, 2, 1])], [[1, 1280, 49]], q)
    c.op("TRANSPOSE", [x_in(c, [1, 7, 7, 160], q), ints(c, [0, 3, 1, 2])], [[1, 160, 7, 7]], q)


def add_reverse(c: Case, op: str) -> None:
    q = quant(c)
    x = x_in(c, [1, 7, 7, 1280], q)
    c.op("REVERSE_V2", [x, ints(c, [3])], [[1, 7, 7, 1280]], q)
    c.op("REVERSE_V2", [x, ints(c, [1, 2])], [[1, 7, 7, 1280]], q)


def add_squeeze(c: Case, op: str) -> None:
    q = quant(c)
    c.op("SQUEEZE", [x_in(c, [1, 1, 1, 1280], q)], [[1, 1280]], q, {"squeeze_dims": [1, 2]})


def add_expand_dims(c: Case, op: str) -> None:
    q = quant(c)
    c.op("EXPAND_DIMS", [x_in(c, [1280], q), ints(c, [0])], [[1, 1280]], q)


def add_shape(c: Case, op: str) -> None:
    c.op("SHAPE", [x_in(c, [1, 7, 7, 1280], quant(c))], [[4]], dtype="int32")


def add_reshape(c: Case, op: str) -> None:
    q = quant(c)
    c.op("RESHAPE", [x_in(c, [1, 7, 7, 1280], q), ints(c, [1, -1])], [[1, 62720]], q)


def add_broadcast_to(c: Case, op: str) -> None:
    q = quant(c)
    c.op("BROADCAST_TO", [x_in(c, [1, 1, 1280], q), ints(c, [1, 49, 1280])], [[1, 49, 1280]], q)


def add_zeros_like(c: Case, op: str) -> None:
    q = quant(c)
    c.op("ZEROS_LIKE", [x_in(c, [1, 1280], q)], [[1, 1280]], q)


# --- reductions -----------------------------------------------------------------------


def narrow(c: Case, shape, q) -> np.ndarray:
    """Activations as a real layer's: spread around the zero point, rarely at the rails."""
    if not q:
        return values(c, shape)
    centre, spread = (
        (int(np.clip(q["zero_point"], -60, 60)), 15) if c.dtype == "int8" else (0, 3000)
    )
    info = np.iinfo(c.dtype)
    data = np.round(c.rng.standard_normal(shape) * spread) + centre
    return np.clip(data, info.min, info.max).astype(c.dtype)


def add_min_max(c: Case, op: str) -> None:
    """Global max pooling of a 7x7x1280 head, and long rows (audio frames)."""
    q = quant(c)  # TFLM: same quantisation in and out
    c.op(op, [x_in(c, [1, 7, 7, 1280], q), ints(c, [1, 2])], [[1, 1, 1, 1280]], q,
         {"keep_dims": True}, options_type="ReducerOptions")  # fmt: skip
    x = c.input([16, 4000], q, data=narrow(c, [16, 4000], q))
    c.op(op, [x, ints(c, [-1])], [[16]], q, {"keep_dims": False},
         options_type="ReducerOptions")  # fmt: skip


def add_sum(c: Case, op: str) -> None:
    """Long sums; the output scale spans the sums drawn (the converter's calibration), so
    it is 10 to 1000 times the input's."""
    for shape, axes, out in (([1, 7, 7, 1280], [1, 2], [1, 1280]), ([16, 2048], [1], [16]),
                             ([64, 1000], [1], [64])):  # fmt: skip
        q = quant(c)
        data = narrow(c, shape, q)
        q_out = {}
        if q:
            sums = (data.astype(np.int64) - q["zero_point"]).sum(axis=tuple(axes))
            levels = 127 if c.dtype == "int8" else 32767
            q_out = {"scale": q["scale"] * max(1.0, float(np.abs(sums).max()) / levels),
                     "zero_point": 0}  # fmt: skip
        c.op("SUM", [c.input(shape, q, data=data), ints(c, axes)], [out], q_out,
             {"keep_dims": False}, options_type="ReducerOptions")  # fmt: skip


def add_arg(c: Case, op: str) -> None:
    q = quant(c)
    c.op(op, [x_in(c, [8, 1000], q), ints(c, [1])], [[8]], options={"output_type": 2},
         dtype="int32")  # fmt: skip
    c.op(op, [x_in(c, [1, 49, 1280], q), ints(c, [-2])], [[1, 1280]],
         options={"output_type": 2}, dtype="int32")  # fmt: skip


def add_reduce_all(c: Case, op: str) -> None:
    data = c.rng.random([49, 1280]) < 0.999  # rows both all-true and not
    data[:10] = True
    x = c.input([49, 1280], data=data if c.dtype == "bool" else values(c, [49, 1280]))
    c.op("REDUCE_ALL", [x, ints(c, [1])], [[49]], options={"keep_dims": False})


# --- unary ----------------------------------------------------------------------------

FLOAT_UNARY = ["ABS", "NEG", "SQRT", "RSQRT", "EXP", "LOG", "SIN", "COS", "SQUARE", "FLOOR",
               "CEIL", "ROUND"]  # fmt: skip


def float_unary_data(c: Case, shape) -> np.ndarray:
    """Activations' range with exact halves (ROUND's ties), zeros, signed zeros and values
    where EXP overflows and LOG/SQRT have no real result."""
    data = (c.rng.standard_normal(shape) * 8).astype(np.float32)
    flat = data.reshape(-1)
    specials = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 100.0, -100.0, 1e-30, 1e30, 89.0]
    flat[: len(specials)] = specials
    flat[len(specials) : 400] = np.round(flat[len(specials) : 400] * 2) / 2
    return data


def add_unary(c: Case, op: str) -> None:
    shape = [1, 49, 1280]
    if c.dtype == "float32":
        c.op(op, [c.input(shape, data=float_unary_data(c, shape))], [shape])
        return
    q_in = quant(c)
    if not q_in or (c.dtype == "int16" and op == "ABS"):  # int16 ABS unquantised: |x|
        c.op(op, [x_in(c, shape)], [shape])
    if not q_in:
        return
    if op == "RSQRT":  # TFLM refuses negative real inputs at invoke
        q_in["zero_point"] = -128 if c.dtype == "int8" else 0
    top = 127 if c.dtype == "int8" else 32767
    for ratio in (0.3, 1.0, 8.0):  # output scale over input scale
        q_out = dict(q_in, scale=q_in["scale"] * ratio)
        if c.dtype == "int8":
            q_out["zero_point"] = int(c.rng.choice([-128, -64, 0]))  # |x|, 1/sqrt(x) >= 0
        data = values(c, shape)
        if op == "RSQRT":
            q_out["scale"] = float(1.0 / np.sqrt(q_in["scale"]) / top * ratio)
            data = np.maximum(data, q_in["zero_point"])
        c.op(op, [c.input(shape, q_in, data=data)], [shape], q_out)


def add_logical_not(c: Case, op: str) -> None:
    c.op("LOGICAL_NOT", [x_in(c, [1, 49, 1280])], [[1, 49, 1280]])


# --- comparisons ----------------------------------------------------------------------

COMPARISONS = ["EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"]


def add_comparisons(c: Case, op: str) -> None:
    """A 49x1280 map against a broadcast row that repeats some of the map's values (ties);
    int8 inputs with scales up to 50 apart (both orders) and zero points at the extremes;
    int64 values that differ only above bit 32."""
    q1 = quant(c, scale=float(10 ** c.rng.uniform(-2.5, -1.75)))  # x50 stays below 1
    ratio = float(c.rng.choice([1.0, 2.0, 50.0]))
    q2 = quant(c, int(c.rng.integers(-20, 20)), q1["scale"] * ratio) if q1 else {}
    a = x_in(c, [1, 49, 1280], q1)
    mine = c.inputs[-1]
    row = values(c, [1, 1, 1280])
    repeated = c.rng.random(1280) < 0.5
    row[0, 0, repeated] = mine[0, int(c.rng.integers(0, 49)), repeated]
    if q1:  # the same real values in b's quantisation: ties after TFLM's rescaling
        real = (mine[0, 0, repeated].astype(np.float64) - q1["zero_point"]) * q1["scale"]
        stored = np.round(real / q2["scale"]) + q2["zero_point"]
        row[0, 0, repeated] = np.clip(stored, -128, 127)
    if c.dtype == "int64":
        row[0, 0, :320] = mine[0, 0, :320] ^ (1 << 40)
    b = c.input([1, 1, 1280], q2, data=row)
    c.op(op, [a, b], [[1, 49, 1280]], dtype="bool")
    c.op(op, [b, a], [[1, 49, 1280]], dtype="bool")


FAMILIES = {
    "STRIDED_SLICE": add_strided_slice, "SLICE": add_slice, "PACK": add_pack,
    "UNPACK": add_unpack, "CONCATENATION": add_concatenation, "SPLIT": add_split,
    "SPLIT_V": add_split_v, "PAD": add_pad, "PADV2": add_padv2, "MIRROR_PAD": add_mirror_pad,
    "GATHER": add_gather, "GATHER_ND": add_gather_nd, "TRANSPOSE": add_transpose,
    "REVERSE_V2": add_reverse, "SQUEEZE": add_squeeze, "EXPAND_DIMS": add_expand_dims,
    "SHAPE": add_shape, "RESHAPE": add_reshape, "BROADCAST_TO": add_broadcast_to,
    "ZEROS_LIKE": add_zeros_like, "REDUCE_MAX": add_min_max, "REDUCE_MIN": add_min_max,
    "SUM": add_sum, "ARG_MAX": add_arg, "ARG_MIN": add_arg, "REDUCE_ALL": add_reduce_all,
    "LOGICAL_NOT": add_logical_not,
    **dict.fromkeys(FLOAT_UNARY, add_unary), **dict.fromkeys(COMPARISONS, add_comparisons),
}  # fmt: skip
EXPECTED = expected_pairs(supported_ops())


def family_ops(dtype: str) -> list[str]:
    """The family ops that run `dtype`."""
    return [op for op in sorted(FAMILIES) if (op, dtype) in EXPECTED]


def test_every_family_pair_has_a_case() -> None:
    pairs = {(op, dtype) for op, dtype in EXPECTED if op in FAMILIES}
    assert {dtype for _, dtype in pairs} <= set(DTYPES)
    assert len(pairs) > 100


@pytest.mark.parametrize("dtype", DTYPES)
def test_family_pairs_match_tflm(dtype: str) -> None:
    c = Case(dtype, [DTYPES.index(dtype), 1919])
    ops = family_ops(dtype)
    assert ops, dtype
    for op in ops:
        FAMILIES[op](c, op)
    built = {op.opcode for op in c.b.graph.operators}
    assert {op for op in FAMILIES if (op, dtype) in EXPECTED} <= built
    c.check(1 << 26)


def test_keras_flatten_on_a_dynamic_batch_matches_tflm() -> None:
    """Keras' Flatten with an unknown batch converts to SHAPE -> STRIDED_SLICE -> PACK ->
    RESHAPE on int32 tensors (MobileNetV3's head)."""
    c = Case("int8", [1, 2, 3])
    q = quant(c, zero_point=-128, scale=0.0235)
    x = x_in(c, [1, 1, 1, 1280], q)
    shape = c.b.add_op("SHAPE", [x], [4], "int32")
    batch = c.b.add_op("STRIDED_SLICE", [shape, ints(c, [0]), ints(c, [1]), ints(c, [1])], [],
                       "int32", options={"shrink_axis_mask": 1})  # fmt: skip
    packed = c.b.add_op("PACK", [batch, ints(c, -1)], [2], "int32",
                        options={"values_count": 2, "axis": 0})  # fmt: skip
    c.op("RESHAPE", [x, packed], [[1, 1280]], q)
    c.check(1 << 26)


# --- other ops, for the refusal probe only (their bit-exact tests live per family) ------

SMALL = [1, 4, 4, 8]


# The output quantisation TFLM requires of these (scale, zero point).
FIXED_OUTPUT = {
    ("LOGISTIC", "int8"): {"scale": 1 / 256, "zero_point": -128},
    ("TANH", "int8"): {"scale": 1 / 128, "zero_point": 0},
    ("SOFTMAX", "int8"): {"scale": 1 / 256, "zero_point": -128},
    ("LOG_SOFTMAX", "int8"): {"scale": 16 / 256, "zero_point": 127},
    **{(op, "int16"): {"scale": 1 / 32768, "zero_point": 0}
       for op in ("LOGISTIC", "TANH", "SOFTMAX")},
}  # fmt: skip


def probe_unary(c: Case, op: str) -> None:
    options = {"LEAKY_RELU": {"alpha": 0.2}, "SOFTMAX": {"beta": 1.0}}.get(op)
    q = FIXED_OUTPUT.get((op, c.dtype), quant(c, 0, 0.05))
    c.op(op, [x_in(c, SMALL, quant(c, 0, 0.05))], [SMALL], q, options)


def probe_binary(c: Case, op: str) -> None:
    q = quant(c, 0, 0.05)
    c.op(op, [x_in(c, SMALL, q), x_in(c, SMALL, q)], [SMALL], q)


def probe_prelu(c: Case, op: str) -> None:
    q = quant(c, 0, 0.05)
    alpha_type = "int8" if c.dtype == "int16" else c.dtype  # TFLM: int16 PRELU, int8 alpha
    alpha_quant = ir.Quantization([0.01], [0]) if q else None
    alpha = c.b.constant("alpha", values(c, [8], alpha_type), quantization=alpha_quant)
    c.op(op, [x_in(c, SMALL, q), alpha], [SMALL], q)


def probe_pool(c: Case, op: str) -> None:
    q = quant(c, 0, 0.05)
    options = {"stride_w": 2, "stride_h": 2, "filter_width": 2, "filter_height": 2}
    c.op(op, [x_in(c, SMALL, q)], [[1, 2, 2, 8]], q, dict(options, padding="VALID"))


def probe_blocks(c: Case, op: str) -> None:
    q = quant(c, 0, 0.05)
    if op in ("SPACE_TO_DEPTH", "DEPTH_TO_SPACE"):
        out = [1, 2, 2, 32] if op == "SPACE_TO_DEPTH" else [1, 8, 8, 2]
        c.op(op, [x_in(c, SMALL, q)], [out], q, {"block_size": 2})
        return
    shapes = [SMALL, [4, 2, 2, 8]] if op == "SPACE_TO_BATCH_ND" else [[4, 2, 2, 8], SMALL]
    inputs = [x_in(c, shapes[0], q), ints(c, [2, 2]), ints(c, [[0, 0], [0, 0]])]
    c.op(op, inputs, [shapes[1]], q)


def probe_resize(c: Case, op: str) -> None:
    q = quant(c, 0, 0.05)
    c.op(op, [x_in(c, SMALL, q), ints(c, [8, 8])], [[1, 8, 8, 8]], q)


def probe_mean(c: Case, op: str) -> None:
    q = quant(c, 0, 0.05)
    c.op(op, [x_in(c, SMALL, q), ints(c, [1, 2])], [[1, 1, 1, 8]], q, {"keep_dims": True},
         options_type="ReducerOptions")  # fmt: skip


def probe_select(c: Case, op: str) -> None:
    q = quant(c, 0, 0.05)
    condition = c.input([1, 4], dtype="bool", data=c.rng.random([1, 4]) < 0.5)
    c.op(op, [condition, x_in(c, [1, 4], q), x_in(c, [1, 4], q)], [[1, 4]], q)


def probe_fill(c: Case, op: str) -> None:
    q = quant(c, 0, 0.05)
    c.op(op, [ints(c, [2, 3]), c.input([], q, data=values(c, []))], [[2, 3]], q)


def probe_update_slice(c: Case, op: str) -> None:
    q = quant(c, 0, 0.05)
    c.op(op, [x_in(c, [4, 4], q), x_in(c, [2, 2], q), ints(c, [1, 1])], [[4, 4]], q)


def probe_cast(c: Case, op: str) -> None:
    c.op(op, [x_in(c, [4], quant(c, 0, 0.05))], [[4]],
         dtype="float32" if c.dtype != "float32" else "int32")  # fmt: skip


def probe_embedding(c: Case, op: str) -> None:
    q = quant(c, 0, 0.05)
    ids = c.input([3], dtype="int32", data=np.array([0, 2, 1], np.int32))
    c.op(op, [ids, x_in(c, [4, 5], q)], [[3, 5]], q)


PROBES = {
    **dict.fromkeys(["RELU", "RELU6", "LOGISTIC", "TANH", "HARD_SWISH", "ELU", "LEAKY_RELU",
                     "SOFTMAX", "LOG_SOFTMAX", "L2_NORMALIZATION"], probe_unary),
    **dict.fromkeys(["ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE",
                     "FLOOR_DIV", "FLOOR_MOD", "LOGICAL_AND", "LOGICAL_OR", "ADD_N"],
                    probe_binary),
    "PRELU": probe_prelu,
    **dict.fromkeys(["AVERAGE_POOL_2D", "MAX_POOL_2D", "L2_POOL_2D"], probe_pool),
    **dict.fromkeys(["SPACE_TO_DEPTH", "DEPTH_TO_SPACE", "SPACE_TO_BATCH_ND",
                     "BATCH_TO_SPACE_ND"], probe_blocks),
    **dict.fromkeys(["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"], probe_resize),
    "MEAN": probe_mean, "SELECT_V2": probe_select, "FILL": probe_fill,
    "DYNAMIC_UPDATE_SLICE": probe_update_slice, "CAST": probe_cast,
    "EMBEDDING_LOOKUP": probe_embedding,
}  # fmt: skip
LISTED = {(pair.op, pair.dtype) for pair in tflm_pairs()}


def tflm_runs(c: Case) -> bool:
    try:
        run_tflm(c.b.build(), c.inputs, len(c.labels), 1 << 26)
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize("dtype", DTYPES)
def test_tflm_refuses_the_pairs_the_table_leaves_out(dtype: str) -> None:
    """The table read from TFLM's sources, checked against the installed wheel: each op
    built for a dtype the table does not list fails in tflite-micro too (and the probe
    builders of the other ops do run in it for the dtypes it lists, so a refusal is the
    dtype's)."""
    accepted, broken = [], []
    for op, builder in sorted({**FAMILIES, **PROBES}.items()):
        c = Case(dtype, [DTYPES.index(dtype), 2929])
        builder(c, op)
        assert {built.opcode for built in c.b.graph.operators} == {op}
        listed = (op, dtype) in LISTED
        if listed and op in PROBES and not tflm_runs(c):
            broken.append(op)
        elif not listed and tflm_runs(c):
            accepted.append(op)
    assert accepted == [], f"TFLM runs {dtype} {accepted}; add them to tflm_op_dtypes.tsv"
    assert broken == [], f"probe builders TFLM refuses on listed {dtype}: {broken}"


# --- refusals -------------------------------------------------------------------------


def one_op_model(op: str, dtype: str) -> ir.Model:
    """A model whose `op` has a `dtype` tensor where the kernel-selecting input is; the
    other inputs are int32 (refusal happens before anything reads shapes or options)."""
    b = ModelBuilder()
    position = DATA_INPUT.get(op, 0)
    inputs = [b.input(f"in{k}", [2], dtype if k == position else "int32")
              for k in range(position + 2)]  # fmt: skip
    b.output(b.add_op(op, inputs, [2], dtype, name="result"))
    return read_model(b.build())


REFUSED = sorted((op, dtype) for op in sorted(supported_ops()) if op in tflm_ops()
                 for dtype in DTYPES + ["float16", "float64", "uint16", "int4"]
                 if (op, dtype) not in EXPECTED)  # fmt: skip


def test_every_pair_tflm_refuses_is_refused_in_one_line() -> None:
    assert len(REFUSED) > 300
    for op, dtype in REFUSED:
        model = one_op_model(op, dtype)
        with pytest.raises(UnsupportedModelError) as error:
            check_supported(model)
        message = str(error.value)
        assert "\n" not in message
        assert f"{op} op 0 ({dtype} input #" in message, message


def test_documented_refusals_are_refused() -> None:
    for op, dtype in [("GREATER", "int16"), ("SELECT_V2", "bool"), ("LOGICAL_AND", "int8")]:
        assert (op, dtype) in REFUSED
