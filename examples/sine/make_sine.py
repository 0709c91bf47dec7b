"""Train a tiny sine regressor with numpy and write it as float32 and int8 .tflite models.

    python examples/sine/make_sine.py   # writes sine_float.tflite and sine_int8.tflite here

The network is dense 1-16-16-1 with ReLU, trained full-batch with Adam on x in [0, 2*pi].
The int8 model comes from tflm-gen's own post-training quantization (int8 input and output,
like TFLM's hello_world). Everything is seeded and uses only arithmetic that gives the same
bits on every CPU (correctly rounded elementwise +, -, *, /, sqrt and sums in a fixed
order; no BLAS, no SIMD-dispatched reductions, no libm), so each run on any machine writes
the same bytes.
"""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import numpy as np

from tflm_gen.quantize import (
    DenseLayer,
    dense_float_model,
    ordered_matmul,
    ordered_sum,
    quantize_dense,
)

HERE = Path(__file__).resolve().parent
SEED = 7
SIZES = (1, 16, 16, 1)
STEPS = 6000
LEARNING_RATE = 0.01


def series_sin(x: np.ndarray) -> np.ndarray:
    """sin(x) for x in [0, 2*pi] from its Taylor series around pi (sin(x) = -sin(x - pi)),
    in plain float64 arithmetic: np.sin is SIMD-dispatched and differs in the last bit
    between CPUs.  24 terms are exact to double precision on [-pi, pi]."""
    t = x - math.pi
    term, total = -t, -t
    for k in range(1, 24):
        term = term * (-(t * t) / float((2 * k) * (2 * k + 1)))
        total = total + term
    return total


def training_data() -> tuple[np.ndarray, np.ndarray]:
    x = np.linspace(0.0, 2 * math.pi, 512).reshape(-1, 1)
    return x, series_sin(x)


def initial_parameters(rng: np.random.Generator) -> list[np.ndarray]:
    """He-initialised [weights (inputs, units), bias] pairs, flattened into one list.  The
    normal draws are table lookups and comparisons; libm's exp only decides the rare
    rejections, where a last-bit difference could flip a comparison only at equality."""
    parameters = []
    for inputs, units in itertools.pairwise(SIZES):
        parameters.append(rng.normal(0.0, math.sqrt(2.0 / inputs), (inputs, units)))
        parameters.append(np.zeros(units))
    return parameters



def forward(parameters: list[np.ndarray], x: np.ndarray) -> list[np.ndarray]:
    """Activations of every layer, input first; ReLU on all but the last layer."""
    activations = [x]
    for layer in range(len(parameters) // 2):
        y = ordered_matmul(activations[-1], parameters[2 * layer]) + parameters[2 * layer + 1]
        activations.append(np.maximum(y, 0.0) if 2 * layer + 2 < len(parameters) else y)
    return activations


def gradients(parameters, x, target) -> list[np.ndarray]:
    """Gradients of the mean squared error, by backpropagation."""
    activations = forward(parameters, x)
    delta = 2.0 * (activations[-1] - target) / len(x)
    grads = [None] * len(parameters)
    for layer in reversed(range(len(parameters) // 2)):
        grads[2 * layer] = ordered_matmul(activations[layer].T, delta)
        grads[2 * layer + 1] = ordered_sum(delta, axis=0)
        if layer:
            delta = ordered_matmul(delta, parameters[2 * layer].T) * (activations[layer] > 0)
    return grads


def train() -> list[np.ndarray]:
    """Full-batch Adam; returns the trained parameters."""
    rng = np.random.default_rng(SEED)
    parameters = initial_parameters(rng)
    x, target = training_data()
    moments = [np.zeros_like(p) for p in parameters]
    velocities = [np.zeros_like(p) for p in parameters]
    beta1, beta2, epsilon = 0.9, 0.999, 1e-8
    power1 = power2 = 1.0  # beta**step by products: pow() comes from libm
    for _ in range(STEPS):
        power1, power2 = power1 * beta1, power2 * beta2
        for index, grad in enumerate(gradients(parameters, x, target)):
            moments[index] = beta1 * moments[index] + (1 - beta1) * grad
            velocities[index] = beta2 * velocities[index] + (1 - beta2) * grad * grad
            m_hat = moments[index] / (1 - power1)
            v_hat = velocities[index] / (1 - power2)
            step_size = LEARNING_RATE * m_hat / (np.sqrt(v_hat) + epsilon)
            parameters[index] = parameters[index] - step_size
    return parameters


def dense_layers(parameters: list[np.ndarray]) -> list[DenseLayer]:
    """Trained parameters as float32 DenseLayers in TFLite's [units, inputs] layout."""
    layers = []
    count = len(parameters) // 2
    for layer in range(count):
        weights = parameters[2 * layer].T.astype(np.float32)
        bias = parameters[2 * layer + 1].astype(np.float32)
        layers.append(DenseLayer(weights, bias, "RELU" if layer < count - 1 else "NONE"))
    return layers


def make_models() -> dict[str, bytes]:
    """File name -> .tflite bytes of the float32 and int8 sine models."""
    layers = dense_layers(train())
    calibration = training_data()[0].astype(np.float32)
    return {
        "sine_float.tflite": dense_float_model(layers, "tflm-gen sine example, float32"),
        "sine_int8.tflite": quantize_dense(layers, calibration, "tflm-gen sine example, int8"),
    }


def main(folder: Path = HERE) -> None:
    for name, data in make_models().items():
        (folder / name).write_bytes(data)
        print(f"wrote {folder / name} ({len(data)} bytes)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
