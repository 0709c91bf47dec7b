"""FULLY_CONNECTED: generated C against tflite-micro, bit for bit.

Seeded random ops over input ranks (2-D, 3-D with and without keep_num_dims, 4-D
flattened), fused activations, bias present or absent, and quantisation parameters
(per-tensor and per-channel int8 filters) for float32, int8 and int16x8 (per-channel 16x8
is what onnx2tf writes for a classifier's dense head).  Several
independent ops share one model because the host library compiles once per model.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_oracle import (
    BIAS_DTYPE,
    FUSED_ACTIVATIONS,
    MIN_OUTPUT_ELEMENTS,
    QRANGE,
    accumulator_rms,
    assert_bit_exact,
    check_model,
    output_quantization,
    real_rms,
    run_tflm,
)

from tflm_gen import host
from tflm_gen.errors import ModelError
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.verify import verify

OPS_PER_MODEL = 8
MODELS_PER_DTYPE = 4


def random_shapes(rng: np.random.Generator) -> dict:
    """Input and output shapes of one case, redrawn until the output has enough elements
    to show many distinct values; depth is the length of each dot product."""
    while True:
        shapes = one_shape_draw(rng)
        if np.prod(shapes["output"]) >= MIN_OUTPUT_ELEMENTS:
            return shapes


def one_shape_draw(rng: np.random.Generator) -> dict:
    depth, units, batches = (int(v) for v in rng.integers(1, [40, 64, 4]))
    kind = str(rng.choice(["2d", "3d_keep", "3d_flat", "4d"]))
    if kind == "2d":
        return {
            "kind": kind,
            "depth": depth,
            "units": units,
            "input": [batches, depth],
            "output": [batches, units],
            "keep": False,
        }
    if kind == "4d":  # an image flattened into one row, as after a conv stack
        h, w = (int(v) for v in rng.integers(1, 4, size=2))
        return {
            "kind": kind,
            "depth": h * w * depth,
            "units": units,
            "input": [1, h, w, depth],
            "output": [1, units],
            "keep": False,
        }
    steps = int(rng.integers(1, 4))
    keep = kind == "3d_keep"
    output = [batches, steps, units] if keep else [batches * steps, units]
    return {"kind": kind, "depth": depth, "units": units,
            "input": [batches, steps, depth], "output": output, "keep": keep}  # fmt: skip


def quantized_tensors(rng, s, dtype, per_channel):
    """Scales follow the accumulator's spread (op_oracle.output_quantization), so outputs vary."""
    in_zp = int(rng.integers(-128, 128)) if dtype == "int8" else 0
    count = s["units"] if per_channel else 1
    filter_scales = 10 ** rng.uniform(-3, -1) * 10 ** rng.uniform(-0.3, 0.3, size=count)
    filter_scales = filter_scales.astype(np.float32)
    weights = rng.integers(-127, 128, size=[s["units"], s["depth"]]).astype(np.int8)
    accumulator = accumulator_rms(s["depth"], dtype, in_zp)
    rms = real_rms(rng, s.get("activation", "NONE"))
    in_scale = rms / (float(filter_scales.mean()) * accumulator)
    # The bias adds about as much spread as the products (its RMS is accumulator / sqrt 3).
    out_scale, out_zp = output_quantization(rng, dtype, rms * np.sqrt(4 / 3))
    bias_scales = [float(np.float32(in_scale) * v) for v in np.resize(filter_scales, s["units"])]
    limit = int(accumulator)
    bias = rng.integers(-limit, limit + 1, size=s["units"]).astype(BIAS_DTYPE[dtype])
    return {
        "in_q": ir.Quantization([in_scale], [in_zp]),
        "out_q": ir.Quantization([out_scale], [out_zp]),
        "weights": weights,
        "filter_q": ir.Quantization(list(filter_scales), [0] * count),
        "bias": bias,
        "bias_q": ir.Quantization(bias_scales, [0] * s["units"]),
    }


def float_tensors(rng, s):
    """Weights scaled so that dot products with inputs of RMS 2 have the RMS the fused
    activation wants, as for the quantised cases."""
    rms = real_rms(rng, s["activation"])
    weights = rng.standard_normal([s["units"], s["depth"]]) * rms / (2 * np.sqrt(s["depth"]))
    return {"in_q": None, "out_q": None, "filter_q": None, "bias_q": None,
            "weights": weights.astype(np.float32),
            "bias": (rng.standard_normal(s["units"]) * rms / 2).astype(np.float32)}  # fmt: skip


def add_case(b: ModelBuilder, rng: np.random.Generator, dtype: str):
    """Adds one random op with its own input and output to b; returns (input data, case)."""
    s = random_shapes(rng)
    # tflite-micro takes per-channel filters with int8 and int16 activations (the
    # converters' int16x8 Conv1D nets and classifier heads are per-channel).
    s["per_channel"] = dtype != "float32" and bool(rng.random() < 0.5)
    s["bias"] = str(rng.choice(["yes", "yes", "absent", "omitted"]))
    s["activation"] = str(rng.choice(FUSED_ACTIVATIONS))
    t = float_tensors(rng, s) if dtype == "float32" else quantized_tensors(
        rng, s, dtype, s["per_channel"])  # fmt: skip
    x = b.input(f"x{len(b.graph.inputs)}", s["input"], dtype, quantization=t["in_q"])
    inputs = [x, b.constant("w", t["weights"], quantization=t["filter_q"])]
    if s["bias"] == "yes":
        inputs.append(b.constant("b", t["bias"], quantization=t["bias_q"]))
    elif s["bias"] == "absent":
        inputs.append(-1)
    options = {"fused_activation_function": s["activation"], "keep_num_dims": s["keep"]}
    y = b.add_op("FULLY_CONNECTED", inputs, s["output"], dtype, quantization=t["out_q"],
                 options=options)  # fmt: skip
    b.output(y)
    if dtype == "float32":
        return (rng.standard_normal(s["input"]) * 2).astype(np.float32), s
    lo, hi = QRANGE[dtype]
    return rng.integers(lo, hi + 1, size=s["input"]).astype(dtype), s


def build_model(seed: int, dtype: str):
    """A model of OPS_PER_MODEL independent random ops: (model, inputs, cases)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    cases = [add_case(b, rng, dtype) for _ in range(OPS_PER_MODEL)]
    return b.build(), [data for data, _ in cases], [case for _, case in cases]


def check_seed(seed: int, dtype: str) -> None:
    model, inputs, cases = build_model(seed, dtype)
    check_model(model, inputs, cases, informative=True)


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
@pytest.mark.parametrize("seed", range(MODELS_PER_DTYPE))
def test_fully_connected_matches_tflm(seed: int, dtype: str) -> None:
    check_seed(3000 + seed, dtype)


@pytest.mark.parametrize("filter_scale", [0.5, 0.25, 0.125])
def test_requantization_ties_match_tflm(filter_scale: float) -> None:
    """Every int8 input through a 1x1 filter of 1 with a multiplier of exactly 2^-k: each odd
    accumulator is a rounding tie, which random cases almost never produce."""
    b = ModelBuilder()
    unit = ir.Quantization([1.0], [0])
    x = b.input("x", [256, 1], "int8", quantization=unit)
    w = b.constant("w", np.ones([1, 1], np.int8), quantization=ir.Quantization([filter_scale], [0]))
    b.output(b.add_op("FULLY_CONNECTED", [x, w], [256, 1], "int8", quantization=unit))
    model = b.build()
    data = np.arange(-128, 128, dtype=np.int8).reshape(256, 1)
    assert_bit_exact(np.asarray(host.run_model(model, [data])[0]), run_tflm(model, [data])[0])


def test_int16_per_channel_head_matches_tflm() -> None:
    """A 16x8 classifier head at real size (1280 inputs, 100 classes, one filter scale per
    class, int64 bias), as onnx2tf writes it; we once refused per-channel int16 filters."""
    rng = np.random.default_rng(3100)
    s = {"depth": 1280, "units": 100}
    t = quantized_tensors(rng, s, "int16", per_channel=True)
    b = ModelBuilder()
    x = b.input("x", [1, 1280], "int16", quantization=t["in_q"])
    w = b.constant("w", t["weights"], quantization=t["filter_q"])
    bias = b.constant("b", t["bias"], quantization=t["bias_q"])
    b.output(b.add_op("FULLY_CONNECTED", [x, w, bias], [1, 100], "int16", quantization=t["out_q"]))
    model = b.build()
    data = rng.integers(-32768, 32768, size=[1, 1280]).astype(np.int16)
    expected = run_tflm(model, [data])[0]
    assert len(np.unique(expected)) > 50, "outputs too coarse to tell rounding apart"
    assert_bit_exact(np.asarray(host.run_model(model, [data])[0]), expected)


def test_non_finite_requantization_is_refused_like_tflm() -> None:
    """The converter's int16x8 GRU gives the zero initial state a scale of 0 and the
    recurrent weights a scale of inf: no multiplier exists. TFLM fails to allocate; we
    refuse in one line instead of crashing on the NaN (a zoo model found it)."""
    b = ModelBuilder()
    x = b.input("x", [1, 4], "int16", quantization=ir.Quantization([0.0], [0]))
    w = b.constant("w", np.ones([3, 4], np.int8), quantization=ir.Quantization([np.inf], [0]))
    b.output(b.add_op("FULLY_CONNECTED", [x, w], [1, 3], "int16",
                      quantization=ir.Quantization([0.01], [0])))
    model = b.build()
    with pytest.raises(ModelError, match="scales must be finite and positive"):
        verify(model, runs=1)
    with pytest.raises(RuntimeError):
        run_tflm(model, [np.zeros([1, 4], np.int16)])
