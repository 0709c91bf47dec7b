"""AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D (float32): generated C against tflite-micro, bit for bit.

Seeded random single-op models over batch, spatial size, channels, filter size, strides,
SAME/VALID padding and fused activations, for float32, int8 and int16.  Floats are
compared by bit pattern.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_oracle import FUSED_ACTIVATIONS, QRANGE, check_model, out_size

from tflm_gen import host
from tflm_gen.model.builder import ModelBuilder

OPS = ["AVERAGE_POOL_2D", "MAX_POOL_2D"]
DTYPES = ["float32", "int8", "int16"]
CASES = 40


def random_case(rng: np.random.Generator) -> dict:
    """One geometry, redrawn until VALID padding leaves an output."""
    while True:
        case = {
            "n": int(rng.integers(1, 3)),
            "h": int(rng.integers(1, 11)),
            "w": int(rng.integers(1, 11)),
            "c": int(rng.integers(1, 6)),
            "fh": int(rng.integers(1, 5)),
            "fw": int(rng.integers(1, 5)),
            "sh": int(rng.integers(1, 4)),
            "sw": int(rng.integers(1, 4)),
            "padding": str(rng.choice(["SAME", "VALID"])),
            "activation": str(rng.choice(FUSED_ACTIVATIONS)),
        }
        case["oh"] = out_size(case["padding"], case["h"], case["fh"], case["sh"])
        case["ow"] = out_size(case["padding"], case["w"], case["fw"], case["sw"])
        if case["oh"] > 0 and case["ow"] > 0:
            return case


def add_pool(b: ModelBuilder, op: str, dtype: str, case: dict, rng: np.random.Generator):
    """Adds one independent input -> op -> output branch; returns the branch's input data."""
    shape = [case["n"], case["h"], case["w"], case["c"]]
    quant = {}
    if dtype == "float32":
        data = (rng.standard_normal(shape) * 4).astype(np.float32)
    else:
        lo, hi = QRANGE[dtype]
        zp = int(rng.integers(-100, 100)) if dtype == "int8" else 0
        quant = {"scale": float(10 ** rng.uniform(-3, -1)), "zero_point": zp}
        data = rng.integers(lo, hi + 1, size=shape).astype(dtype)
    x = b.input(f"x{len(b.graph.inputs)}", shape, dtype, **quant)
    options = {
        "padding": case["padding"],
        "stride_h": case["sh"],
        "stride_w": case["sw"],
        "filter_height": case["fh"],
        "filter_width": case["fw"],
        "fused_activation_function": case["activation"],
    }
    out_shape = [case["n"], case["oh"], case["ow"], case["c"]]
    y = b.add_op(op, [x], out_shape, dtype, options=options, **quant)
    b.output(y)
    return data


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_pool_matches_tflm(op: str, dtype: str) -> None:
    rng = np.random.default_rng([OPS.index(op), DTYPES.index(dtype), 2024])
    # All cases are branches of one model: one host build instead of one per case.
    b, cases = ModelBuilder(), [random_case(rng) for _ in range(CASES)]
    inputs = [add_pool(b, op, dtype, case, rng) for case in cases]
    check_model(b.build(), inputs, cases)


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_average_rounds_half_away_from_zero(dtype: str) -> None:
    """Windows of two values whose sums are odd: every average is a tie."""
    case = {"n": 1, "h": 1, "w": 8, "c": 1, "fh": 1, "fw": 2, "sh": 1, "sw": 2,
            "padding": "VALID", "activation": "NONE", "oh": 1, "ow": 4}  # fmt: skip
    b = ModelBuilder()
    add_pool(b, "AVERAGE_POOL_2D", dtype, case, np.random.default_rng(1))
    data = np.array([1, 2, -1, -2, 3, 4, -3, -4], dtype=dtype).reshape(1, 1, 8, 1)
    model = b.build()
    assert host.run_model(model, [data])[0].reshape(-1).tolist() == [2, -2, 4, -4]
    check_model(model, [data], [case])


def test_l2_pool_matches_tflm() -> None:
    rng = np.random.default_rng(347)
    b, cases, inputs = ModelBuilder(), [], []
    for padding in ["SAME", "VALID"] * 4:
        shape = [int(rng.integers(1, 3)), *[int(d) for d in rng.integers(2, 8, size=2)],
                 int(rng.integers(1, 4))]  # fmt: skip
        fh, fw = (int(rng.integers(1, min(d, 3) + 1)) for d in shape[1:3])
        sh, sw = (int(v) for v in rng.integers(1, 4, size=2))
        if padding == "SAME":
            out = [shape[0], -(-shape[1] // sh), -(-shape[2] // sw), shape[3]]
        else:
            out = [shape[0], (shape[1] - fh) // sh + 1, (shape[2] - fw) // sw + 1, shape[3]]
        options = {"padding": padding, "stride_h": sh, "stride_w": sw, "filter_height": fh,
                   "filter_width": fw,
                   "fused_activation_function": str(rng.choice(["NONE", "RELU6", "RELU_N1_TO_1"]))}  # fmt: skip
        x = b.input(f"x{len(b.graph.inputs)}", shape, "float32")
        b.output(b.add_op("L2_POOL_2D", [x], out, "float32", options=options))
        inputs.append((rng.standard_normal(shape) * 3).astype(np.float32))
        cases.append((shape, options))
    check_model(b.build(), inputs, cases)
