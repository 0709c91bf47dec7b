"""Hybrid FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D (float32 activations, int8
weights) against LiteRT's reference kernels, bit for bit: TFLM refuses hybrid models, so
LiteRT is the oracle.  Every formula LiteRT picks is covered: per-tensor and per-channel
weight scales, symmetric and asymmetric input quantisation (FULLY_CONNECTED's
asymmetric_quantize_inputs both ways; the per-channel convolutions always asymmetric),
several batches (each quantised with its own scale), fused activations, grouped and
strided convolutions, and the all-zero input FULLY_CONNECTED short-cuts.  Each case runs
with the reference kernels and with the cmsis tag (whose kernels hand hybrid nodes over).

Seeded.  Weight scales spread over a decade; inputs have an offset so the asymmetric zero
point is not 0.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import need_tool
from op_oracle import assert_bit_exact

from tflm_gen import host, qemu
from tflm_gen.errors import UnsupportedModelError
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.ir import Quantization
from tflm_gen.model.reader import read_model
from tflm_gen.oracle import Oracle, choose_oracle
from tflm_gen.support import check_supported

TAGS = [(), ("cmsis",)]


def weights(rng, shape: list[int], scales: int, dimension: int):
    """int8 weights over the whole range and their quantisation (zero points 0)."""
    data = rng.integers(-127, 128, shape).astype(np.int8)
    values = rng.uniform(0.002, 0.02, scales).astype(np.float32).astype(float).tolist()
    quantization = Quantization(values, [0] * scales)
    quantization.quantized_dimension = dimension
    return data, quantization


def check_litert(model: bytes, inputs: list[np.ndarray], tags: tuple[str, ...]) -> None:
    assert choose_oracle(model)[0] == "litert"
    theirs = Oracle(model, "litert").run(inputs)[0]
    ours = host.run_model(model, inputs, tags)[0]
    assert len(np.unique(theirs)) >= 8, "case too weak to fail"
    assert_bit_exact(ours, theirs, tags)


def fc_model(rng, batches, depth, units, scales, asymmetric, activation, bias=True) -> bytes:
    b = ModelBuilder()
    x = b.input("x", [batches, depth], "float32")
    data, quantization = weights(rng, [units, depth], scales, 0)
    w = b.constant("w", data, quantization=quantization)
    bias_index = b.constant("b", rng.normal(0, 1, units).astype(np.float32)) if bias else -1
    options = {"asymmetric_quantize_inputs": asymmetric, "fused_activation_function": activation}
    b.output(b.add_op("FULLY_CONNECTED", [x, w, bias_index], [batches, units], "float32",
                      options=options))  # fmt: skip
    return b.build()


FC_CASES = [  # batches, depth, units, scales (1: per-tensor), asymmetric, activation, bias
    (3, 37, 11, 1, False, "NONE", True), (3, 37, 11, 1, True, "NONE", True),
    (3, 37, 11, 11, False, "NONE", True), (4, 64, 12, 12, True, "RELU", True),
    (1, 300, 48, 1, False, "RELU6", False), (2, 29, 24, 24, True, "RELU_N1_TO_1", False),
    (5, 1000, 10, 10, True, "NONE", True),
]  # fmt: skip


@pytest.mark.parametrize("tags", TAGS)
@pytest.mark.parametrize("case", FC_CASES)
def test_fully_connected_hybrid(case, tags):
    rng = np.random.default_rng(10)
    batches, depth = case[:2]
    model = fc_model(rng, *case)
    # Outputs of unit spread whatever the depth, so activations clamp only some of them.
    data = (rng.normal(0.3, 2.0, (batches, depth)) * 3 / np.sqrt(depth)).astype(np.float32)
    check_litert(model, [data], tags)


@pytest.mark.parametrize("asymmetric", [False, True])
def test_fully_connected_hybrid_zero_rows(asymmetric):
    """A zero batch row quantises to scale 1 and zero point 0; an all-zero input takes
    LiteRT's bias-only short-cut."""
    rng = np.random.default_rng(11)
    model = fc_model(rng, 3, 40, 12, 12, asymmetric, "NONE")
    data = rng.normal(0.3, 2.0, (3, 40)).astype(np.float32)
    data[1] = 0.0
    check_litert(model, [data], ())
    zeros = np.zeros((3, 40), np.float32)
    assert_bit_exact(host.run_model(model, [zeros])[0], Oracle(model, "litert").run([zeros])[0])


def conv_model(rng, depthwise, cin, cout, scales, stride, padding, activation, groups=1,
               dilation=1) -> tuple[bytes, list[int]]:
    b = ModelBuilder()
    shape = [2, 9, 8, cin]
    x = b.input("x", shape, "float32")
    filter_shape = [1, 3, 3, cout] if depthwise else [cout, 3, 2, cin // groups]
    data, quantization = weights(rng, filter_shape, scales, 3 if depthwise else 0)
    w = b.constant("w", data, quantization=quantization)
    bias = b.constant("b", rng.normal(0, 1, cout).astype(np.float32))
    span_h, span_w = (filter_shape[1] - 1) * dilation + 1, (filter_shape[2] - 1) * dilation + 1
    size = [(n + stride - 1) // stride if padding == "SAME" else (n - span) // stride + 1
            for n, span in ((9, span_h), (8, span_w))]  # fmt: skip
    options = {"padding": padding, "stride_w": stride, "stride_h": stride,
               "fused_activation_function": activation, "dilation_w_factor": dilation,
               "dilation_h_factor": dilation}  # fmt: skip
    if depthwise:
        options["depth_multiplier"] = cout // cin
    op = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    b.output(b.add_op(op, [x, w, bias], [2, *size, cout], "float32", options=options))
    return b.build(), shape


CONV_CASES = [  # depthwise, cin, cout, scales, stride, padding, activation, groups, dilation
    (False, 5, 7, 1, 1, "SAME", "RELU", 1, 1), (False, 5, 7, 7, 1, "SAME", "NONE", 1, 1),
    (False, 5, 8, 1, 2, "VALID", "RELU6", 1, 1), (False, 6, 9, 9, 1, "SAME", "RELU", 3, 1),
    (False, 4, 6, 6, 1, "SAME", "NONE", 1, 2), (True, 7, 7, 7, 1, "SAME", "RELU", 1, 1),
    (True, 7, 14, 14, 2, "SAME", "RELU6", 1, 1), (True, 3, 6, 6, 1, "VALID", "NONE", 1, 2),
]  # fmt: skip


@pytest.mark.parametrize("tags", TAGS)
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_hybrid(case, tags):
    rng = np.random.default_rng(12)
    model, shape = conv_model(rng, *case)
    data = rng.normal(0.1, 1.5, shape).astype(np.float32)
    check_litert(model, [data], tags)


def test_hybrid_nodes_litert_refuses_are_refused():
    """Depthwise with one weight scale (LiteRT wants one per channel) fails at init with the
    op named, never runs."""
    rng = np.random.default_rng(13)
    model, shape = conv_model(rng, True, 4, 4, 4, 1, "SAME", "NONE")
    graph = read_model(model)
    graph.subgraph.tensors[1].quantization.scale = [0.01]
    graph.subgraph.tensors[1].quantization.zero_point = [0]
    from tflm_gen.model.writer import write_model

    with pytest.raises(Exception, match="DEPTHWISE_CONV_2D|BAD_PARAMS"):
        host.run_model(write_model(graph), [np.zeros(shape, np.float32)])


def test_int4_hybrid_weights_are_refused_by_name():
    rng = np.random.default_rng(14)
    graph = read_model(fc_model(rng, 1, 8, 8, 1, False, "NONE"))
    graph.subgraph.tensors[1].dtype = "int4"
    with pytest.raises(UnsupportedModelError, match="FULLY_CONNECTED op 0 .*int4"):
        check_supported(graph)


@pytest.mark.parametrize("tags", TAGS)
@pytest.mark.parametrize("case", [FC_CASES[6], CONV_CASES[1], CONV_CASES[6]])
def test_hybrid_on_cortex_m4(case, tags):
    """On the board too: asymmetric per-channel FULLY_CONNECTED, per-channel CONV_2D and
    DEPTHWISE_CONV_2D."""
    board = qemu.board_of("qemu-cortex-m4")
    need_tool(board["toolchain"] + "gcc")
    need_tool(board["qemu"])
    rng = np.random.default_rng(15)
    if len(case) == 7:
        model, shape = fc_model(rng, *case), list(case[:2])
    else:
        model, shape = conv_model(rng, *case)
    data = (rng.normal(0.1, 1.5, shape) * (0.1 if len(case) == 7 else 1)).astype(np.float32)
    theirs = Oracle(model, "litert").run([data])[0]
    ours = qemu.run_on_target(model, "qemu-cortex-m4", [data], tags).outputs[0]
    assert_bit_exact(ours.reshape(theirs.shape), theirs, tags)
