"""The sine example: both committed models run in tflite-micro and regenerate byte for byte."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from tflite_micro.python.tflite_micro import runtime

from tflm_gen import quantize
from tflm_gen.model.reader import read_model

SINE_DIR = Path(__file__).resolve().parent.parent / "examples" / "sine"
MAX_ERROR = {"sine_float.tflite": 0.05, "sine_int8.tflite": 0.12}


def load_make_sine():
    spec = importlib.util.spec_from_file_location("make_sine", SINE_DIR / "make_sine.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def predict(model_bytes: bytes, xs: np.ndarray) -> np.ndarray:
    """Runs the model once per x, quantizing in and dequantizing out when int8."""
    graph = read_model(model_bytes).subgraph
    in_quant = graph.tensors[graph.inputs[0]].quantization
    out_quant = graph.tensors[graph.outputs[0]].quantization
    interpreter = runtime.Interpreter.from_bytes(model_bytes)
    ys = []
    for x in xs:
        value = np.array([[x]], np.float32)
        if in_quant is not None:
            value = quantize.quantize(value, in_quant, "int8")
        interpreter.set_input(value, 0)
        interpreter.invoke()
        output = interpreter.get_output(0)
        ys.append(quantize.dequantize(output, out_quant) if out_quant else output)
    return np.asarray(ys, np.float64).reshape(-1)


@pytest.mark.parametrize("name", sorted(MAX_ERROR))
def test_sine_model_error(name):
    xs = np.linspace(0.0, 2 * math.pi, 400, dtype=np.float32)
    error = np.abs(predict((SINE_DIR / name).read_bytes(), xs) - np.sin(xs.astype(np.float64)))
    print(f"{name}: max |error| = {error.max():.4f}, mean = {error.mean():.4f}")
    assert error.max() < MAX_ERROR[name]


def test_sine_int8_model_has_int8_input_and_output():
    graph = read_model(SINE_DIR / "sine_int8.tflite").subgraph
    assert [graph.tensors[i].dtype for i in graph.inputs + graph.outputs] == ["int8", "int8"]
    assert {op.opcode for op in graph.operators} == {"FULLY_CONNECTED"}


def test_committed_models_equal_fresh_generation():
    fresh = load_make_sine().make_models()
    for name, data in fresh.items():
        assert (SINE_DIR / name).read_bytes() == data, f"{name} differs from make_sine.py output"
