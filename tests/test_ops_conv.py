"""CONV_2D and DEPTHWISE_CONV_2D: generated C against tflite-micro, bit for bit.

Seeded random ops over shapes, strides, padding, dilation, depth multipliers,
groups, fused activations, bias present or absent, and quantisation parameters (per-channel
and per-tensor filters) for float32, int8 and int16x8.  Floats are compared by bit pattern.
Several independent ops share one model because the host library compiles once per model.
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
    check_model,
    out_size,
    output_quantization,
    real_rms,
)

from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder

# Each model holds several independent ops: the host library is compiled once per model.
OPS_PER_MODEL = 8
MODELS_PER_DTYPE = 4


def random_geometry(rng: np.random.Generator, depthwise: bool) -> dict:
    """Shapes and options of one case, redrawn until the output has enough elements."""
    while True:
        g = {
            "batches": int(rng.integers(1, 3)),
            "h": int(rng.integers(1, 10)),
            "w": int(rng.integers(1, 10)),
            "cin": int(rng.integers(1, 6)),
            "kh": int(rng.integers(1, 5)),
            "kw": int(rng.integers(1, 5)),
            "stride": (int(rng.integers(1, 4)), int(rng.integers(1, 4))),
            "dilation": (int(rng.integers(1, 3)), int(rng.integers(1, 3))),
            "padding": str(rng.choice(["SAME", "VALID"])),
            "activation": str(rng.choice(FUSED_ACTIVATIONS)),
            "bias": str(rng.choice(["yes", "yes", "absent", "omitted"])),
            "per_channel": bool(rng.random() < 0.75),
        }
        if depthwise:
            # tflite-micro's DEPTHWISE_CONV_2D crashes on a bias input of -1, so the
            # oracle can only check a bias left out of the input list.
            g["bias"] = "omitted" if g["bias"] == "absent" else g["bias"]
            g["multiplier"] = int(rng.integers(1, 4))
            g["cout"] = g["cin"] * g["multiplier"]
            g["groups"] = 1
        else:
            g["groups"] = int(rng.choice([1, 1, 1, 2])) if g["cin"] % 2 == 0 else 1
            g["cout"] = g["groups"] * int(rng.integers(1, 5))
        g["oh"] = out_size(g["padding"], g["h"], g["kh"], g["stride"][0], g["dilation"][0])
        g["ow"] = out_size(g["padding"], g["w"], g["kw"], g["stride"][1], g["dilation"][1])
        # Few output elements cannot show enough distinct values to tell kernels apart.
        elements = g["batches"] * g["oh"] * g["ow"] * g["cout"]
        # SAME padding of a size-1 input with dilation puts every tap in the padding: the
        # output would be the bias alone, one value per channel.
        dilated_one = (g["h"] == 1 and g["dilation"][0] > 1) or (g["w"] == 1 and g["dilation"][1] > 1)
        if g["oh"] > 0 and g["ow"] > 0 and elements >= MIN_OUTPUT_ELEMENTS and not dilated_one:
            return g


def filter_shape(g: dict, depthwise: bool) -> list[int]:
    if depthwise:
        return [1, g["kh"], g["kw"], g["cout"]]
    return [g["cout"], g["kh"], g["kw"], g["cin"] // g["groups"]]


def window_depth(g: dict, depthwise: bool) -> int:
    """Products summed into one output element."""
    return g["kh"] * g["kw"] * (1 if depthwise else g["cin"] // g["groups"])


def quantized_tensors(rng, g, dtype, depthwise):
    """Input/output quantisation, filter values and quantisation, bias values and quantisation.
    Scales follow the accumulator's spread (op_oracle.output_quantization), so outputs vary."""
    in_zp = int(rng.integers(-128, 128)) if dtype == "int8" else 0
    channels = g["cout"]
    count = channels if g["per_channel"] else 1
    filter_scales = (10 ** rng.uniform(-3, -1) * 10 ** rng.uniform(-0.3, 0.3, size=count))
    filter_scales = filter_scales.astype(np.float32)
    axis = 3 if depthwise else 0
    filter_q = ir.Quantization(list(filter_scales), [0] * count, quantized_dimension=axis)
    weights = rng.integers(-127, 128, size=filter_shape(g, depthwise)).astype(np.int8)
    accumulator = accumulator_rms(window_depth(g, depthwise), dtype, in_zp)
    rms = real_rms(rng, g["activation"])
    in_scale = rms / (float(filter_scales.mean()) * accumulator)
    # The bias adds about as much spread as the products (its RMS is accumulator / sqrt 3).
    out_scale, out_zp = output_quantization(rng, dtype, rms * np.sqrt(4 / 3))
    per_channel_scales = np.resize(filter_scales, channels).astype(np.float64)
    bias_scales = [float(np.float32(in_scale) * s) for s in per_channel_scales]
    limit = int(accumulator)
    bias = rng.integers(-limit, limit + 1, size=channels).astype(BIAS_DTYPE[dtype])
    bias_q = ir.Quantization(bias_scales, [0] * channels, quantized_dimension=0)
    return {
        "in_q": ir.Quantization([in_scale], [in_zp]),
        "out_q": ir.Quantization([out_scale], [out_zp]),
        "weights": weights, "filter_q": filter_q, "bias": bias, "bias_q": bias_q,
    }  # fmt: skip


def float_tensors(rng, g, depthwise):
    """Weights scaled so that sums over the window (inputs of RMS 2) have the RMS the fused
    activation wants, as for the quantised cases."""
    rms = real_rms(rng, g["activation"])
    scale = rms / (2 * np.sqrt(window_depth(g, depthwise)))
    weights = (rng.standard_normal(filter_shape(g, depthwise)) * scale).astype(np.float32)
    bias = (rng.standard_normal(g["cout"]) * rms / 2).astype(np.float32)
    return {"in_q": None, "out_q": None, "weights": weights, "filter_q": None, "bias": bias,
            "bias_q": None}  # fmt: skip


def add_case(b: ModelBuilder, rng: np.random.Generator, dtype: str, depthwise: bool,
             geometry: dict | None = None):
    """Adds one random op with its own input and output to b (of `geometry`, else a random
    one); returns (input data, geometry)."""
    g = geometry or random_geometry(rng, depthwise)
    t = float_tensors(rng, g, depthwise) if dtype == "float32" else quantized_tensors(
        rng, g, dtype, depthwise)  # fmt: skip
    in_shape = [g["batches"], g["h"], g["w"], g["cin"]]
    x = b.input(f"x{len(b.graph.inputs)}", in_shape, dtype, quantization=t["in_q"])
    inputs = [x, b.constant("w", t["weights"], quantization=t["filter_q"])]
    if g["bias"] == "yes":
        inputs.append(b.constant("b", t["bias"], quantization=t["bias_q"]))
    elif g["bias"] == "absent":
        inputs.append(-1)
    options = {
        "padding": g["padding"], "stride_h": g["stride"][0], "stride_w": g["stride"][1],
        "dilation_h_factor": g["dilation"][0], "dilation_w_factor": g["dilation"][1],
        "fused_activation_function": g["activation"],
    }  # fmt: skip
    if depthwise:
        options["depth_multiplier"] = g["multiplier"]
    opcode = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    shape = [g["batches"], g["oh"], g["ow"], g["cout"]]
    b.output(b.add_op(opcode, inputs, shape, dtype, quantization=t["out_q"], options=options))
    if dtype == "float32":
        return (rng.standard_normal(in_shape) * 2).astype(np.float32), g
    lo, hi = QRANGE[dtype]
    return rng.integers(lo, hi + 1, size=in_shape).astype(dtype), g


def build_model(seed: int, dtype: str, depthwise: bool):
    """A model of OPS_PER_MODEL independent random ops (one compile checks them all)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    cases = [add_case(b, rng, dtype, depthwise) for _ in range(OPS_PER_MODEL)]
    return b.build(), [data for data, _ in cases], [g for _, g in cases]


def check_seed(seed: int, dtype: str, depthwise: bool) -> None:
    model, inputs, geometries = build_model(seed, dtype, depthwise)
    check_model(model, inputs, geometries, informative=True)


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
@pytest.mark.parametrize("seed", range(MODELS_PER_DTYPE))
def test_conv_2d_matches_tflm(seed: int, dtype: str) -> None:
    check_seed(1000 + seed, dtype, depthwise=False)


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
@pytest.mark.parametrize("seed", range(MODELS_PER_DTYPE))
def test_depthwise_conv_2d_matches_tflm(seed: int, dtype: str) -> None:
    check_seed(2000 + seed, dtype, depthwise=True)
