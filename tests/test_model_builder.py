"""ModelBuilder + quantize helpers: single-op models that tflite-micro accepts and runs.

For float models the output is compared with a plain numpy computation; this checks that the
builder wired tensors and options as intended (the oracle for kernels is TFLM elsewhere).
"""

from __future__ import annotations

import numpy as np
import pytest
from tflite_micro.python.tflite_micro import runtime

from tflm_gen import quantize as q
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder, make_options
from tflm_gen.model.reader import read_model

RNG = np.random.default_rng(1234)


def run_tflm(model: bytes, *inputs: np.ndarray) -> np.ndarray:
    interpreter = runtime.Interpreter.from_bytes(model, arena_size=1 << 20)
    for index, value in enumerate(inputs):
        interpreter.set_input(value, index)
    interpreter.invoke()
    return interpreter.get_output(0)


def conv_reference(x, w, b, stride=1, depthwise=False):
    """VALID convolution, NHWC input, filter [O, H, W, I] (depthwise: [1, H, W, C])."""
    _, height, width, _ = x.shape
    kh, kw = w.shape[1:3]
    rows, cols = (height - kh) // stride + 1, (width - kw) // stride + 1
    out = np.zeros((1, rows, cols, w.shape[0] if not depthwise else w.shape[3]), np.float64)
    for r in range(rows):
        for c in range(cols):
            patch = x[0, r * stride : r * stride + kh, c * stride : c * stride + kw, :]
            if depthwise:
                out[0, r, c] = (patch * w[0]).sum(axis=(0, 1))
            else:
                out[0, r, c] = np.tensordot(w, patch, axes=([1, 2, 3], [0, 1, 2]))
    return out + b


def pool_reference(x, size, reduce):
    _, height, width, channels = x.shape
    blocks = x.reshape(1, height // size, size, width // size, size, channels)
    return reduce(blocks, axis=(2, 4))


def softmax_reference(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class Case:
    """One single-op model in float32 or int8 plus its float reference."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.builder = ModelBuilder()
        self.inputs = []  # (index, float value)

    def quant(self, values):
        if self.dtype == "float32":
            return None
        return q.activation_quantization(np.min(values), np.max(values))

    def input(self, shape, low=-1.0, high=1.0):
        value = RNG.uniform(low, high, shape).astype(np.float32)
        index = self.builder.input(f"in{len(self.inputs)}", shape, self.dtype, self.quant(value))
        self.inputs.append((index, value))
        return index, value

    def weights(self, array, axis):
        if self.dtype == "float32":
            return self.builder.constant("weights", array.astype(np.float32)), None
        values, quant = q.symmetric_weights(array, axis)
        return self.builder.constant("weights", values, quantization=quant), quant

    def bias(self, array, input_index, weight_quant):
        if self.dtype == "float32":
            return self.builder.constant("bias", array.astype(np.float32))
        in_scale = self.builder.graph.tensors[input_index].quantization.scale[0]
        values, quant = q.bias_quantization(array, in_scale, weight_quant.scale)
        return self.builder.constant("bias", values, quantization=quant)

    def op(self, opcode, inputs, expected, out_dtype=None, same_quant=False, **kwargs):
        """Adds the op; int8 output quantization from `expected`, or the input's (same_quant)."""
        out_dtype = out_dtype or self.dtype
        quant = self.quant(expected) if out_dtype == "int8" else None
        if same_quant and quant is not None:
            quant = self.builder.graph.tensors[inputs[0]].quantization
        out = self.builder.add_op(opcode, inputs, expected.shape, out_dtype, quant, **kwargs)
        self.builder.output(out)
        return expected

    def run(self):
        graph = self.builder.graph
        values = []
        for index, value in self.inputs:
            quant = graph.tensors[index].quantization
            values.append(q.quantize(value, quant, "int8") if quant else value)
        output = run_tflm(self.builder.build(), *values)
        out_tensor = graph.tensors[graph.outputs[0]]
        assert output.dtype == np.dtype(out_tensor.dtype)
        assert list(output.shape) == out_tensor.shape
        if out_tensor.quantization is not None:
            return q.dequantize(output, out_tensor.quantization)
        return output


def make_conv(case):
    x, xv = case.input([1, 6, 6, 3])
    wv = RNG.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    bv = RNG.uniform(-1, 1, 4).astype(np.float32)
    w, wq = case.weights(wv, 0)
    b = case.bias(bv, x, wq)
    expected = conv_reference(xv, wv, bv)
    options = {"padding": "VALID", "stride_w": 1, "stride_h": 1}
    return case.op("CONV_2D", [x, w, b], expected, options=options)


def make_depthwise(case):
    x, xv = case.input([1, 5, 5, 4])
    wv = RNG.uniform(-1, 1, (1, 3, 3, 4)).astype(np.float32)
    bv = RNG.uniform(-1, 1, 4).astype(np.float32)
    w, wq = case.weights(wv, 3)
    b = case.bias(bv, x, wq)
    expected = conv_reference(xv, wv, bv, depthwise=True)
    options = {"padding": "VALID", "stride_w": 1, "stride_h": 1, "depth_multiplier": 1}
    return case.op("DEPTHWISE_CONV_2D", [x, w, b], expected, options=options)


def make_fully_connected(case):
    x, xv = case.input([1, 8])
    wv = RNG.uniform(-1, 1, (5, 8)).astype(np.float32)
    bv = RNG.uniform(-1, 1, 5).astype(np.float32)
    w, wq = case.weights(wv, None)
    b = case.bias(bv, x, wq)
    expected = np.maximum(xv @ wv.T + bv, 0)
    options = {"fused_activation_function": "RELU"}
    return case.op("FULLY_CONNECTED", [x, w, b], expected, options=options)


def make_pool(opcode, reduce):
    def make(case):
        x, xv = case.input([1, 4, 4, 2])
        expected = pool_reference(xv, 2, reduce)
        options = {"padding": "VALID", "stride_w": 2, "stride_h": 2}
        options |= {"filter_width": 2, "filter_height": 2}
        return case.op(opcode, [x], expected, same_quant=True, options=options)

    return make


def make_softmax(case):
    x, xv = case.input([1, 10], -4, 4)
    if case.dtype == "int8":  # TFLM's int8 softmax wants output scale 1/256, zero point -128
        out = case.builder.add_op(
            "SOFTMAX", [x], [1, 10], "int8", scale=1 / 256, zero_point=-128, options={"beta": 1.0}
        )
        case.builder.output(out)
        return softmax_reference(xv)
    return case.op("SOFTMAX", [x], softmax_reference(xv), options={"beta": 1.0})


def make_reshape(case):
    x, xv = case.input([1, 2, 3, 4])
    shape = case.builder.constant("shape", np.array([1, 24], np.int32))
    options = {"new_shape": [1, 24]}
    return case.op("RESHAPE", [x, shape], xv.reshape(1, 24), same_quant=True, options=options)


def make_add(case):
    a, av = case.input([1, 3, 3, 2])
    b, bv = case.input([1, 3, 3, 2])
    return case.op("ADD", [a, b], av + bv)


def make_quantize(case):
    x, xv = case.input([1, 16])
    quant = q.activation_quantization(-1, 1)
    out = case.builder.add_op("QUANTIZE", [x], [1, 16], "int8", quant)
    case.builder.output(out)
    return xv


def make_dequantize(case):
    x, xv = case.input([1, 16])
    return case.op("DEQUANTIZE", [x], xv, out_dtype="float32")


MAKERS = {
    "CONV_2D": make_conv,
    "DEPTHWISE_CONV_2D": make_depthwise,
    "FULLY_CONNECTED": make_fully_connected,
    "AVERAGE_POOL_2D": make_pool("AVERAGE_POOL_2D", np.mean),
    "MAX_POOL_2D": make_pool("MAX_POOL_2D", np.max),
    "SOFTMAX": make_softmax,
    "RESHAPE": make_reshape,
    "ADD": make_add,
    "QUANTIZE": make_quantize,
    "DEQUANTIZE": make_dequantize,
}


# QUANTIZE takes float32 in and DEQUANTIZE int8 in: each runs with that dtype only.
SINGLE_OP_CASES = [
    (opcode, dtype)
    for opcode in sorted(MAKERS)
    for dtype in ("float32", "int8")
    if (opcode, dtype) not in {("QUANTIZE", "int8"), ("DEQUANTIZE", "float32")}
]


@pytest.mark.parametrize("opcode,dtype", SINGLE_OP_CASES)
def test_single_op_model_runs_in_tflm(opcode, dtype):
    case = Case(dtype)
    expected = MAKERS[opcode](case)
    output = case.run()
    # float: the builder check; quantized: a loose check that quantization parameters are sane.
    quantized = any(tensor.quantization for tensor in case.builder.graph.tensors)
    tolerance = 0.05 * max(1.0, float(np.abs(expected).max())) if quantized else 1e-4
    np.testing.assert_allclose(output, expected, atol=tolerance, rtol=1e-4)
    assert read_model(case.builder.build()) == case.builder.model


def test_builder_is_deterministic():
    assert Case("int8").builder.build() == Case("int8").builder.build()
    first, second = Case("int8"), Case("int8")
    make_conv(first)
    make_conv(second)
    assert first.builder.build() != ModelBuilder().build()


def test_make_options_resolves_enum_names_and_rejects_unknown_fields():
    options = make_options(
        "Conv2DOptions", {"padding": "SAME", "fused_activation_function": "RELU6"}
    )
    assert options["padding"] == 0 and options["fused_activation_function"] == 3
    assert options["dilation_w_factor"] == 1
    with pytest.raises(ValueError, match="no fields"):
        make_options("Conv2DOptions", {"stride": 2})


def test_symmetric_weights_per_channel():
    weights = np.array([[1.0, -2.0], [0.5, 0.25], [0.0, 0.0]], np.float32)
    values, quant = q.symmetric_weights(weights, axis=0)
    assert quant.zero_point == [0, 0, 0] and quant.quantized_dimension == 0
    np.testing.assert_allclose(quant.scale, [2 / 127, 0.5 / 127, 1.0], rtol=1e-6)
    assert values.dtype == np.int8 and values[0].tolist() == [64, -127]


def test_activation_quantization_int8_and_int16():
    int8 = q.activation_quantization(-1.0, 3.0)
    assert int8.scale == pytest.approx([4 / 255]) and int8.zero_point == [-64]
    int16 = q.activation_quantization(-2.0, 1.0, "int16")
    assert int16.zero_point == [0] and int16.scale == pytest.approx([2 / 32767])
    positive = q.activation_quantization(0.5, 2.0)  # the range is widened to include 0
    assert positive.zero_point == [-128]


def test_bias_quantization_int32_and_int64():
    values, quant = q.bias_quantization([1.0, -1.0], 0.5, [0.1, 0.2])
    assert values.dtype == np.int32 and values.tolist() == [20, -10]
    assert quant.scale == pytest.approx([0.05, 0.1])
    values64, _ = q.bias_quantization([1.0], 0.5, [0.1], dtype="int64")
    assert values64.dtype == np.int64


def test_int16x8_fully_connected_runs():
    builder = ModelBuilder()
    in_quant = q.activation_quantization(-1, 1, "int16")
    x = builder.input("x", [1, 4], "int16", in_quant)
    weights, weight_quant = q.symmetric_weights(RNG.uniform(-1, 1, (3, 4)), axis=None)
    bias, bias_quant = q.bias_quantization(
        np.zeros(3), in_quant.scale[0], weight_quant.scale, "int64"
    )
    w = builder.constant("w", weights, quantization=weight_quant)
    b = builder.constant("b", bias, quantization=bias_quant)
    out_quant = q.activation_quantization(-4, 4, "int16")
    builder.output(builder.add_op("FULLY_CONNECTED", [x, w, b], [1, 3], "int16", out_quant))
    output = run_tflm(builder.build(), np.array([[1000, -2000, 3000, 0]], np.int16))
    assert output.dtype == np.int16 and output.shape == (1, 3)


def test_tensor_helpers():
    builder = ModelBuilder()
    index = builder.constant("c", np.arange(6, dtype=np.int16).reshape(2, 3))
    tensor = builder.graph.tensors[index]
    assert ir.is_constant(builder.model, tensor) and ir.tensor_bytes(tensor) == 12
    np.testing.assert_array_equal(ir.tensor_data(builder.model, tensor), np.arange(6).reshape(2, 3))
    assert ir.dtype_info("int4").bits == 4 and ir.dtype_info(9).name == "int8"
    assert ir.tensor_bytes(ir.Tensor("p", [3], "int4")) == 2
