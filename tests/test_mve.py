"""The Cortex-M55 (Helium / MVE) paths of the cmsis tag, swept over the shapes they branch on,
bit-exact with the TFLM oracle on the QEMU board (test_cmsis.compare_on_board: one model of
independent ops, one build):

  kernels_c/cmsis/depthwise_mve.h  DEPTHWISE_CONV_2D 3x3 of multiplier 1: channel counts
    around the 16-channel blocks (1..130, the tail blocks copied with the zero point), 8
    channels at stride 1 (two pixels per pass), strides 1 and 2, SAME and VALID padding,
    weights with a -128 (not taken: the int16 pair sums need |w| <= 127), and a depthwise fed
    by a CONV_2D, whose output the planner may start inside its input (the block-wise
    backward walk); multiplier 2 beside them (the other path);
  kernels_c/cmsis/conv_mve.h  CONV_2D with patches of at most 32 bytes: 1x1 over 1..32
    input channels, 3x3 over 2 and 3 (the first layer of an image), output channel counts
    beyond one chunk of parameters (32) and odd ones (the 4-pixel path), odd pixel counts
    (the last pixel on the 4-pixel path), effective scales above 1 (a left shift), and a 1x1 convolution fed by another, over more
    channels than one chunk, whose output the planner places over its input."""

from __future__ import annotations

import numpy as np
import test_ops_conv as conv_cases
from op_oracle import out_size
from test_cmsis import add_conv, compare, compare_on_board, conv_geometry, need_board

from tflm_gen import host
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder

TARGET = "qemu-cortex-m55"


def geometry(rng, depthwise: bool, kernel: int, cin: int, cout: int, stride: int,
             padding: str, h: int, w: int, multiplier: int = 1) -> dict:
    """conv_geometry with the swept fields fixed."""
    g = conv_geometry(rng, depthwise, kernel, cin, cout)
    g.update(h=h, w=w, stride=(stride, stride), padding=padding, multiplier=multiplier)
    if depthwise:
        g["cout"] = cin * multiplier
    g["oh"] = out_size(padding, h, kernel, stride, 1)
    g["ow"] = out_size(padding, w, kernel, stride, 1)
    return g


def add_conv_then_depthwise(b: ModelBuilder, rng, channels: int, stride: int, padding: str):
    """x -> CONV_2D 1x1 (4 -> channels) -> DEPTHWISE_CONV_2D 3x3: the depthwise input is an
    intermediate tensor, which the planner may overlap with its output."""
    g1 = geometry(rng, False, 1, 4, channels, 1, "VALID", 7, 9)
    g2 = geometry(rng, True, 3, channels, channels, stride, padding, 7, 9)
    t1 = conv_cases.quantized_tensors(rng, g1, "int8", False)
    t2 = conv_cases.quantized_tensors(rng, g2, "int8", True)
    x = b.input(f"x{len(b.graph.inputs)}", [1, 7, 9, 4], "int8", quantization=t1["in_q"])
    conv = b.add_op("CONV_2D", [x, b.constant("w", t1["weights"], quantization=t1["filter_q"]),
                                b.constant("b", t1["bias"], quantization=t1["bias_q"])],
                    [1, 7, 9, channels], "int8", quantization=t2["in_q"],
                    options={"padding": "VALID", "stride_h": 1, "stride_w": 1,
                             "dilation_h_factor": 1, "dilation_w_factor": 1,
                             "fused_activation_function": "NONE"})
    options = {"padding": padding, "stride_h": stride, "stride_w": stride,
               "dilation_h_factor": 1, "dilation_w_factor": 1,
               "fused_activation_function": g2["activation"], "depth_multiplier": 1}
    b.output(b.add_op("DEPTHWISE_CONV_2D",
                      [conv, b.constant("w", t2["weights"], quantization=t2["filter_q"]),
                       b.constant("b", t2["bias"], quantization=t2["bias_q"])],
                      [1, g2["oh"], g2["ow"], channels], "int8", quantization=t2["out_q"],
                      options=options))
    data = rng.integers(-128, 128, size=[1, 7, 9, 4]).astype(np.int8)
    return data, {**g2, "chain": "CONV_2D 1x1 -> DEPTHWISE_CONV_2D"}


def add_conv_then_wide_conv(b: ModelBuilder, rng, cin: int, cout: int):
    """x -> CONV_2D 1x1 (4 -> cin) -> CONV_2D 1x1 (cin -> cout): the second convolution's
    input is an intermediate tensor, which the planner places inside the upper part of its
    output (tflm_gen/overlap.py); with more than one chunk of channel parameters (66) the
    pair path would re-read pixels the first chunk overwrote."""
    g1 = geometry(rng, False, 1, 4, cin, 1, "VALID", 3, 5)
    g2 = geometry(rng, False, 1, cin, cout, 1, "VALID", 3, 5)
    t1 = conv_cases.quantized_tensors(rng, g1, "int8", False)
    t2 = conv_cases.quantized_tensors(rng, g2, "int8", False)
    options = {"padding": "VALID", "stride_h": 1, "stride_w": 1, "dilation_h_factor": 1,
               "dilation_w_factor": 1, "fused_activation_function": "NONE"}
    x = b.input(f"x{len(b.graph.inputs)}", [1, 3, 5, 4], "int8", quantization=t1["in_q"])
    first = b.add_op("CONV_2D", [x, b.constant("w", t1["weights"], quantization=t1["filter_q"]),
                                 b.constant("b", t1["bias"], quantization=t1["bias_q"])],
                     [1, 3, 5, cin], "int8", quantization=t2["in_q"], options=options)
    b.output(b.add_op("CONV_2D",
                      [first, b.constant("w", t2["weights"], quantization=t2["filter_q"]),
                       b.constant("b", t2["bias"], quantization=t2["bias_q"])],
                      [1, 3, 5, cout], "int8", quantization=t2["out_q"], options=options))
    data = rng.integers(-128, 128, size=[1, 3, 5, 4]).astype(np.int8)
    return data, {**g2, "chain": "CONV_2D 1x1 -> CONV_2D 1x1"}


def add_depthwise_with_min_weight(b: ModelBuilder, rng, channels: int):
    """A 3x3 depthwise whose filter holds -128 (the MVE path declines it)."""
    g = geometry(rng, True, 3, channels, channels, 1, "SAME", 5, 6)
    t = conv_cases.quantized_tensors(rng, g, "int8", True)
    t["weights"].flat[channels + 1] = -128
    x = b.input(f"x{len(b.graph.inputs)}", [1, 5, 6, channels], "int8", quantization=t["in_q"])
    options = {"padding": "SAME", "stride_h": 1, "stride_w": 1, "dilation_h_factor": 1,
               "dilation_w_factor": 1, "fused_activation_function": "NONE",
               "depth_multiplier": 1}
    b.output(b.add_op("DEPTHWISE_CONV_2D",
                      [x, b.constant("w", t["weights"], quantization=t["filter_q"]),
                       b.constant("b", t["bias"], quantization=t["bias_q"])],
                      [1, g["oh"], g["ow"], channels], "int8", quantization=t["out_q"],
                      options=options))
    data = rng.integers(-128, 128, size=[1, 5, 6, channels]).astype(np.int8)
    return data, {**g, "weights": "one -128"}


def add_conv_shifting_left(b: ModelBuilder, rng, g: dict):
    """A CONV_2D whose effective scales are 2**9 times the usual (about 2**-9): above 1 in
    some channels, a left shift in the requantisation (conv_mve.h's LEFT loop), with the
    bias divided by as much and inputs at most 2 above the zero point (-128, which the
    folded constants need) so that most outputs still fall inside [-128, 127]."""
    t = conv_cases.quantized_tensors(rng, g, "int8", False)
    out_q = t["out_q"]
    in_q = ir.Quantization(t["in_q"].scale, [-128])
    x = b.input(f"x{len(b.graph.inputs)}", [1, g["h"], g["w"], g["cin"]], "int8",
                quantization=in_q)
    options = {"padding": g["padding"], "stride_h": g["stride"][0], "stride_w": g["stride"][1],
               "dilation_h_factor": 1, "dilation_w_factor": 1,
               "fused_activation_function": "NONE"}
    bias = (t["bias"] // 512).astype(np.int32)
    b.output(b.add_op("CONV_2D",
                      [x, b.constant("w", t["weights"], quantization=t["filter_q"]),
                       b.constant("b", bias, quantization=t["bias_q"])],
                      [1, g["oh"], g["ow"], g["cout"]], "int8",
                      quantization=ir.Quantization([out_q.scale[0] / 512], out_q.zero_point),
                      options=options))
    data = rng.integers(-128, -125, size=[1, g["h"], g["w"], g["cin"]]).astype(np.int8)
    return data, {**g, "scale": 1 / 512, "activation": "NONE"}


def sweep_model():
    """(model bytes, inputs, case descriptions) of the swept shapes."""
    rng = np.random.default_rng(1855)
    b = ModelBuilder()
    cases = []
    for channels, stride, padding, h, w in (
            (1, 1, "SAME", 5, 6), (3, 2, "VALID", 7, 8), (8, 1, "SAME", 6, 7),
            (8, 1, "VALID", 5, 9), (8, 2, "SAME", 7, 7), (13, 1, "SAME", 4, 5),
            (16, 2, "SAME", 6, 6), (17, 1, "VALID", 5, 5), (24, 1, "SAME", 3, 3),
            (33, 2, "VALID", 7, 5), (48, 1, "SAME", 6, 6), (130, 1, "SAME", 4, 3)):
        g = geometry(rng, True, 3, channels, channels, stride, padding, h, w)
        data, g = add_conv(b, rng, g, True, 1.0)
        cases.append(("DEPTHWISE_CONV_2D 3x3", [data], g))
    data, g = add_depthwise_with_min_weight(b, rng, 16)
    cases.append(("DEPTHWISE_CONV_2D -128 weight", [data], g))
    for channels, stride in ((6, 2), (5, 1)):
        g = geometry(rng, True, 3, channels, 2 * channels, stride, "SAME", 6, 5, multiplier=2)
        data, g = add_conv(b, rng, g, True, 1.0)
        cases.append(("DEPTHWISE_CONV_2D multiplier 2", [data], g))
    for channels, stride, padding in ((8, 1, "SAME"), (32, 1, "SAME"), (19, 2, "VALID"),
                                      (48, 2, "SAME")):
        data, g = add_conv_then_depthwise(b, rng, channels, stride, padding)
        cases.append(("CONV_2D -> DEPTHWISE_CONV_2D", [data], g))
    for cin, cout in ((32, 64), (16, 66)):
        data, g = add_conv_then_wide_conv(b, rng, cin, cout)
        cases.append(("CONV_2D -> CONV_2D", [data], g))
    for kernel, cin, cout, stride, padding, h, w in (
            (1, 1, 2, 1, "VALID", 3, 5), (1, 8, 16, 1, "VALID", 5, 7), (1, 13, 6, 2, "VALID", 7, 6),
            (1, 16, 34, 1, "VALID", 3, 3), (1, 17, 8, 1, "VALID", 4, 5),
            (1, 32, 66, 1, "VALID", 3, 3), (1, 24, 7, 1, "VALID", 3, 4),
            (3, 3, 8, 2, "SAME", 9, 9), (3, 3, 8, 2, "VALID", 8, 7), (3, 2, 10, 1, "SAME", 5, 6)):
        g = geometry(rng, False, kernel, cin, cout, stride, padding, h, w)
        data, g = add_conv(b, rng, g, False, 1.0, input_zero_point=-128)
        cases.append(("CONV_2D", [data], g))
    for kernel, cin, cout, stride in ((1, 8, 16, 1), (3, 3, 8, 2)):
        g = geometry(rng, False, kernel, cin, cout, stride, "SAME", 7, 7)
        data, g = add_conv_shifting_left(b, rng, g)
        cases.append(("CONV_2D left shift", [data], g))
    inputs = [array for _, data, _ in cases for array in data]
    return b.build(), inputs, [(op, g) for op, _, g in cases]


def test_mve_paths_host_build():
    model, inputs, cases = sweep_model()
    compare(host.run_model(model, inputs, ("cmsis",)), model, inputs, cases)


def test_mve_paths_on_board():
    need_board(TARGET)
    model, inputs, cases = sweep_model()
    compare_on_board(TARGET, model, inputs, cases)
