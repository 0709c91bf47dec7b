"""Quantization arithmetic as TFLite defines it, and a tiny post-training quantizer.

Conventions (TFLite's): weights are symmetric int8 (zero point 0), per channel or per tensor;
int8 activations are asymmetric over a range that includes 0; int16 activations (the 16x8
scheme) are symmetric with zero point 0; biases are int32 (int64 for 16x8) with scale
input_scale * weight_scale and zero point 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder

QMAX = {"int8": 127, "int16": 32767, "int32": 2**31 - 1, "int64": 2**63 - 1}


def symmetric_weights(
    weights: np.ndarray, axis: int | None = 0, dtype: str = "int8"
) -> tuple[np.ndarray, ir.Quantization]:
    """Symmetric quantization, scale = max|w| / 127 per channel along `axis` (None: per tensor)."""
    weights = np.asarray(weights, np.float32)
    if axis is None:
        peak = np.abs(weights).max(keepdims=True).reshape(1)
    else:
        others = tuple(dim for dim in range(weights.ndim) if dim != axis % weights.ndim)
        peak = np.abs(weights).max(axis=others)
    scale = np.where(peak > 0, peak / QMAX[dtype], 1.0).astype(np.float32)
    shape = [1] * weights.ndim
    if axis is not None:
        shape[axis] = -1
    values = np.round(weights / scale.reshape(shape))
    q = np.clip(values, -QMAX[dtype], QMAX[dtype]).astype(dtype)
    quantization = ir.Quantization(scale, [0] * scale.size, 0 if axis is None else axis % q.ndim)
    return q, quantization


def activation_quantization(low: float, high: float, dtype: str = "int8") -> ir.Quantization:
    """Parameters covering [low, high]: int8 asymmetric, int16 symmetric with zero point 0."""
    low, high = min(float(low), 0.0), max(float(high), 0.0)
    if dtype == "int16":
        peak = max(-low, high)
        return ir.Quantization([peak / QMAX["int16"] if peak > 0 else 1.0], [0])
    if dtype != "int8":
        raise ValueError(f"activations are int8 or int16, not {dtype}")
    scale = (high - low) / 255.0 if high > low else 1.0
    zero_point = int(np.clip(np.round(-128 - low / np.float32(scale)), -128, 127))
    return ir.Quantization([scale], [zero_point])


def bias_quantization(
    bias: np.ndarray, input_scale: float, weight_scales, dtype: str = "int32"
) -> tuple[np.ndarray, ir.Quantization]:
    """Bias in int32 (int64 for 16x8) with scale input_scale * weight_scale per channel."""
    weight_scales = np.asarray(weight_scales, np.float64).reshape(-1)
    scales = np.float32(input_scale) * weight_scales.astype(np.float32)
    values = np.round(np.asarray(bias, np.float64) / scales.astype(np.float64))
    q = np.clip(values, -QMAX[dtype], QMAX[dtype]).astype(dtype)
    return q, ir.Quantization(scales, [0] * scales.size, 0)


def quantize(values, quantization: ir.Quantization, dtype: str) -> np.ndarray:
    """Real values to integers with per-tensor parameters (round half away from zero)."""
    info = np.iinfo(dtype)
    scaled = np.asarray(values, np.float64) / quantization.scale[0]
    q = np.round(scaled) + quantization.zero_point[0]
    return np.clip(q, info.min, info.max).astype(dtype)


def dequantize(values, quantization: ir.Quantization) -> np.ndarray:
    q = np.asarray(values, np.float64) - quantization.zero_point[0]
    return (q * quantization.scale[0]).astype(np.float32)


@dataclass
class DenseLayer:
    """One fully connected layer: y = activation(x @ weights.T + bias)."""

    weights: np.ndarray  # [units, inputs], TFLite's FULLY_CONNECTED layout
    bias: np.ndarray  # [units]
    activation: str = "NONE"  # NONE, RELU or RELU6 (fused into the op)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        y = ordered_matmul(x, self.weights.T) + self.bias
        if self.activation == "RELU":
            return np.maximum(y, 0)
        if self.activation == "RELU6":
            return np.clip(y, 0, 6)
        return y


def ordered_sum(values: np.ndarray, axis: int) -> np.ndarray:
    """Sum along `axis` strictly left to right: `np.add.accumulate` has one order on every
    CPU, where `sum`, `einsum` and BLAS pick SIMD widths and kernels by CPU at run time, so
    calibration ranges and the example's training would change from machine to machine."""
    return np.take(np.add.accumulate(values, axis=axis), -1, axis=axis)


def ordered_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for 2-D arrays with `ordered_sum`'s summation order (elementwise products are
    correctly rounded, so only the order of the sums could vary)."""
    return ordered_sum(a[:, :, None] * b[None, :, :], axis=1)


def run_dense(layers: list[DenseLayer], x: np.ndarray) -> list[np.ndarray]:
    """The float activations: the input and the output of each layer."""
    activations = [np.asarray(x, np.float32)]
    for layer in layers:
        activations.append(layer(activations[-1]).astype(np.float32))
    return activations


def dense_float_model(layers: list[DenseLayer], description: str = "") -> bytes:
    """The float32 .tflite model of a dense network taking [1, inputs]."""
    builder = ModelBuilder(description)
    x = builder.input("input", [1, layers[0].weights.shape[1]], "float32")
    for number, layer in enumerate(layers):
        w = builder.constant(f"dense_{number}/weights", layer.weights.astype(np.float32))
        b = builder.constant(f"dense_{number}/bias", layer.bias.astype(np.float32))
        options = {"fused_activation_function": layer.activation}
        shape = [1, layer.weights.shape[0]]
        x = builder.add_op("FULLY_CONNECTED", [x, w, b], shape, "float32", options=options)
    builder.output(x)
    return builder.build()


def quantize_dense(
    layers: list[DenseLayer], calibration: np.ndarray, description: str = ""
) -> bytes:
    """Post-training int8 quantization of a dense network, int8 input and output.

    Activation ranges come from running the float network on `calibration` ([samples,
    inputs]); weights are per-tensor symmetric int8, biases int32.
    """
    activations = run_dense(layers, calibration)
    ranges = [activation_quantization(a.min(), a.max()) for a in activations]
    builder = ModelBuilder(description)
    x = builder.input("input", [1, layers[0].weights.shape[1]], "int8", quantization=ranges[0])
    for number, layer in enumerate(layers):
        x = _quantized_dense_layer(builder, number, layer, x, ranges[number], ranges[number + 1])
    builder.output(x)
    return builder.build()


def _quantized_dense_layer(builder, number, layer, x, in_quant, out_quant) -> int:
    weights, weight_quant = symmetric_weights(layer.weights, axis=0)
    bias, bias_quant = bias_quantization(layer.bias, in_quant.scale[0], weight_quant.scale)
    w = builder.constant(f"dense_{number}/weights", weights, quantization=weight_quant)
    b = builder.constant(f"dense_{number}/bias", bias, quantization=bias_quant)
    options = {"fused_activation_function": layer.activation}
    shape = [1, layer.weights.shape[0]]
    return builder.add_op(
        "FULLY_CONNECTED", [x, w, b], shape, "int8", quantization=out_quant, options=options
    )
