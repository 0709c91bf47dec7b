"""Crafted graphs that break one rule each: every command refuses them at load with one
ModelError line naming the rule (tflm_gen.model.graph_check), and every real model passes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import need_corpus

from tflm_gen.errors import ModelError
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model

QUANT = {"scale": 0.5, "zero_point": 0}


def _chain() -> ModelBuilder:
    """x -> RELU -> RELU -> output: small, valid, and every rule can be broken on it."""
    builder = ModelBuilder()
    x = builder.input("x", [1, 4], "int8", **QUANT)
    y = builder.add_op("RELU", [x], [1, 4], "int8", **QUANT)
    builder.output(builder.add_op("RELU", [y], [1, 4], "int8", **QUANT))
    return builder


def _refused(model: ir.Model, pattern: str) -> None:
    with pytest.raises(ModelError, match=pattern) as caught:
        read_model(write_model(model))
    assert "\n" not in str(caught.value)


def test_the_valid_chain_reads():
    read_model(_chain().build())


def test_self_loop_is_refused():
    builder = _chain()
    builder.graph.operators[1].inputs = [2]
    _refused(builder.model, r"operator 1 \(RELU\) reads its own output tensor 2")


def test_operators_out_of_order_are_refused():
    builder = _chain()
    builder.graph.operators.reverse()
    _refused(builder.model, r"operator 0 \(RELU\) reads tensor 1 'relu_0' before operator 1 "
                            r"writes it")


def test_tensor_with_two_producers_is_refused():
    builder = _chain()
    builder.graph.operators[1].outputs = [1]
    builder.graph.outputs = [1]
    _refused(builder.model, r"operator 1 \(RELU\) reads its own output|already writes")
    builder.graph.operators[1].inputs = [0]
    _refused(builder.model, r"operator 1 \(RELU\) writes tensor 1 'relu_0', which an earlier")


def test_operator_writing_a_graph_input_is_refused():
    builder = _chain()
    builder.graph.operators[1].outputs = [0]
    _refused(builder.model, r"operator 1 \(RELU\) writes tensor 0 'x', which is a graph input")


def test_operator_writing_a_constant_is_refused():
    builder = _chain()
    constant = builder.constant("c", np.ones((1, 4), np.int8))
    builder.graph.operators[1].outputs = [constant]
    builder.graph.outputs = [constant]
    _refused(builder.model, r"writes tensor 3 'c', which is a constant")


def test_input_that_nothing_writes_is_refused():
    builder = _chain()
    orphan = builder.tensor("orphan", [1, 4], "int8", **QUANT)
    builder.graph.operators[1].inputs = [orphan]
    _refused(builder.model, r"operator 1 \(RELU\) reads tensor 3 'orphan', which is not a "
                            r"constant with data")


def test_bias_whose_constant_data_is_missing_is_refused():
    builder = ModelBuilder()
    x = builder.input("x", [1, 2], "float32")
    weights = builder.constant("w", np.ones((3, 2), np.float32))
    bias = builder.constant("b", np.zeros(3, np.float32))
    builder.output(builder.add_op("FULLY_CONNECTED", [x, weights, bias], [1, 3], "float32"))
    builder.model.buffers[builder.graph.tensors[bias].buffer] = ir.Buffer(b"")
    _refused(builder.model, r"reads tensor 2 'b', which is not a constant with data")


def test_constant_with_too_much_data_is_refused():
    builder = ModelBuilder()
    x = builder.input("x", [1, 2], "float32")
    weights = builder.constant("w", np.ones((3, 2), np.float32))
    builder.output(builder.add_op("FULLY_CONNECTED", [x, weights, -1], [1, 3], "float32"))
    builder.model.buffers[builder.graph.tensors[weights].buffer] = ir.Buffer(bytes(28))
    _refused(builder.model, r"tensor 1 \('w'\) needs 24 bytes of data but its buffer holds 28")


def test_optional_inputs_variables_and_empty_tensors_are_allowed():
    builder = ModelBuilder()
    x = builder.input("x", [1, 2], "float32")
    weights = builder.constant("w", np.ones((3, 2), np.float32))
    state = builder.tensor("state", [1, 3], "float32")
    builder.graph.tensors[state].is_variable = True
    empty = builder.tensor("empty", [0], "int32")
    y = builder.add_op("FULLY_CONNECTED", [x, weights, -1], [1, 3], "float32")
    z = builder.add_op("ADD", [y, state], [1, 3], "float32")
    builder.output(builder.add_op("RESHAPE", [z, empty], [1, 3], "float32"))
    read_model(builder.build())


def test_operator_without_outputs_is_refused():
    builder = _chain()
    builder.graph.operators[1].outputs = []
    builder.graph.outputs = [1]
    _refused(builder.model, r"operator 1 \(RELU\) has no outputs")


def test_graph_output_that_nothing_writes_is_refused():
    builder = _chain()
    orphan = builder.tensor("orphan", [1, 4], "int8", **QUANT)
    builder.graph.outputs = [orphan]
    _refused(builder.model, r"graph output tensor 3 'orphan' is never written")


def test_model_without_operators_is_refused():
    builder = ModelBuilder()
    builder.output(builder.input("x", [1, 4], "int8", **QUANT))
    _refused(builder.model, "model has no operators")


@pytest.mark.parametrize("scale", [math.nan, math.inf, -math.inf, 0.0, -0.5, 1e-46])
def test_bad_quantization_scales_are_refused(scale):
    builder = _chain()
    builder.graph.tensors[1].quantization = ir.Quantization([scale], [0])
    _refused(builder.model, r"tensor 1 'relu_0' has quantization scale .*finite and positive")


def test_per_channel_bad_scale_is_refused():
    builder = _chain()
    builder.graph.tensors[2].quantization = ir.Quantization([0.5, 0.5, -1.0, 0.5], [0] * 4, 1)
    _refused(builder.model, r"tensor 2 'relu_1' has quantization scale -1.0")


@pytest.mark.parametrize("shape", [[1 << 16, 1 << 16], [1 << 30, 2], [65536, 32768], [2] * 31])
def test_element_counts_from_2_to_the_31_are_refused(shape):
    builder = _chain()
    builder.graph.tensors[1].shape = shape
    _refused(builder.model, r"tensor 1 'relu_0' has \d+ elements .*limit is 2\^31 - 1")


def test_element_count_just_below_the_limit_passes_the_count_rule():
    from tflm_gen.model.graph_check import MAX_ELEMENTS, graph_problems

    model = _chain().model
    model.subgraph.tensors[1].shape = [MAX_ELEMENTS]
    assert not any("elements" in problem for problem in graph_problems(model))
    model.subgraph.tensors[1].shape = [MAX_ELEMENTS + 1]
    assert any("elements" in problem for problem in graph_problems(model))


def test_names_with_control_characters_are_escaped():
    builder = _chain()
    builder.graph.tensors[1].name = "evil\ntflm-gen: ok: all good\x1b[2J"
    builder.graph.operators[1].inputs = [2]
    with pytest.raises(ModelError) as caught:
        read_model(write_model(builder.model))
    builder.graph.tensors[1].quantization = ir.Quantization([math.nan], [0])
    with pytest.raises(ModelError) as caught_name:
        read_model(write_model(builder.model))
    for error in (caught.value, caught_name.value):
        assert "\n" not in str(error) and "\x1b" not in str(error)
    assert r"evil\ntflm-gen: ok: all good\x1b[2J" in str(caught_name.value)


def _two_subgraphs(body_input_is_graph_input: bool) -> ir.Model:
    """Main graph: one RELU.  A second subgraph (an IF/WHILE body) reads its own input."""
    model = _chain().model
    body = ir.SubGraph(name="body", tensors=[ir.Tensor("a", [1], "float32"),
                                             ir.Tensor("b", [1], "float32")],
                       inputs=[0] if body_input_is_graph_input else [], outputs=[1],
                       operators=[ir.Operator("RELU", [0], [1])])
    model.subgraphs.append(body)
    return model


def test_each_subgraph_is_checked_with_its_own_inputs():
    read_model(write_model(_two_subgraphs(True)))
    _refused(_two_subgraphs(False), r"subgraph 1 operator 0 \(RELU\) reads tensor 0 'a'")


def test_an_empty_body_subgraph_is_allowed():
    model = _chain().model
    model.subgraphs.append(ir.SubGraph(name="identity", tensors=[ir.Tensor("a", [1], "int8")],
                                       inputs=[0], outputs=[0]))
    read_model(write_model(model))


def test_ops_that_write_nothing_by_design_are_allowed():
    builder = _chain()
    variable = builder.tensor("v", [1, 4], "int8", **QUANT)
    builder.graph.tensors[variable].is_variable = True
    builder.graph.operators.append(ir.Operator("ASSIGN_VARIABLE", [variable, 2], []))
    read_model(builder.build())


def test_every_shared_model_passes():
    corpus = need_corpus()
    models = sorted(corpus.rglob("*.tflite"))
    assert len(models) > 10
    for path in models:
        read_model(path)


def test_tensor_of_more_than_2_to_the_31_bytes_is_refused():
    builder = ModelBuilder()
    x = builder.input("x", [1 << 29, 4], "float32")  # 2^31 elements would be refused first
    builder.graph.tensors[x].shape = [1 << 29, 2]  # 2^30 elements, 2^32 bytes
    builder.output(builder.add_op("RELU", [x], [1, 1], "float32"))
    _refused(builder.model, r"tensor 0 'x' takes 4294967296 bytes; the limit is 2\^31 - 1")


def test_activations_beyond_int32_offsets_together_are_refused():
    """Each tensor fits, but no arena plan of them can (a fuzzed model overflowed the
    offline plan's int32 offsets)."""
    builder = ModelBuilder()
    x = builder.input("x", [1 << 28], "float32")  # 1 GiB each
    y = builder.add_op("RELU", [x], [1 << 28], "float32")
    builder.output(builder.add_op("RELU", [y], [1], "float32"))
    _refused(builder.model, r"subgraph 0: its activation tensors take \d+ bytes together")


def test_graph_input_listed_twice_is_refused():
    builder = _chain()
    builder.graph.inputs.append(0)
    _refused(builder.model, r"subgraph 0: graph input tensor 0 'x' is listed twice")


def test_graph_input_that_is_a_constant_is_refused():
    builder = _chain()
    constant = builder.constant("c", np.ones((1, 4), np.int8))
    builder.graph.inputs = [0, constant]
    _refused(builder.model, r"subgraph 0: graph input tensor 3 'c' is a constant")


def test_zero_points_not_matching_the_scales_are_refused():
    builder = _chain()
    builder.graph.tensors[1].quantization = ir.Quantization([0.5, 0.5, 0.5, 0.5], [0, 0], 1)
    _refused(builder.model, r"tensor 1 'relu_0' has 4 quantization scales but 2 zero points")


def test_per_channel_weight_scales_not_matching_the_output_channels_are_refused():
    """requant indexed past the scales (IndexError) before this was checked."""
    builder = ModelBuilder()
    x = builder.input("x", [1, 4, 4, 2], "int8", scale=0.5, zero_point=0)
    weights = builder.constant("w", np.ones((4, 3, 3, 2), np.int8),
                               quantization=ir.Quantization([0.1, 0.2], [0, 0], 0))
    bias = builder.constant("b", np.zeros(4, np.int32),
                            quantization=ir.Quantization([0.05] * 4, [0] * 4))
    builder.output(builder.add_op("CONV_2D", [x, weights, bias], [1, 4, 4, 4], "int8",
                                  scale=0.5, zero_point=0, options={"padding": "SAME"}))
    from tflm_gen.optimize import device_model

    with pytest.raises(ModelError, match=r"CONV_2D weights 'w' have 2 per-channel scales for 4 "
                                         r"output channels"):
        device_model(builder.build())


@pytest.mark.parametrize("dtype, zero_point", [("int8", 128), ("int8", -129), ("int8", 1000),
                                               ("int16", 40000)])
def test_zero_point_outside_the_dtype_is_refused(dtype, zero_point):
    builder = ModelBuilder()
    x = builder.input("x", [1, 4], dtype, scale=0.5, zero_point=0)
    builder.output(builder.add_op("RELU", [x], [1, 4], dtype, scale=0.5, zero_point=zero_point))
    _refused(builder.model, f"tensor 1 'relu_0' has a zero point outside the range of {dtype}")


def _zero_weights_model(weight_scale: float, bias_scale: float) -> bytes:
    """int8 FC whose weights and bias are all zero with the scales converters give them
    (Keras int16x8 GRUs carry inf and NaN scales there)."""
    builder = ModelBuilder()
    x = builder.input("x", [1, 4], "int8", scale=0.5, zero_point=-3)
    weights = builder.constant("w", np.zeros((3, 4), np.int8),
                               quantization=ir.Quantization([weight_scale] * 3, [0] * 3, 0))
    bias = builder.constant("b", np.zeros(3, np.int32),
                            quantization=ir.Quantization([bias_scale] * 3, [0] * 3, 0))
    builder.output(builder.add_op("FULLY_CONNECTED", [x, weights, bias], [1, 3], "int8",
                                  scale=0.25, zero_point=5))
    return builder.build()


@pytest.mark.parametrize("weight_scale, bias_scale", [(math.inf, math.nan), (0.0, 0.0),
                                                      (math.nan, math.inf)])
def test_degenerate_scales_on_all_zero_constants_run_like_tflm(weight_scale, bias_scale):
    from tflm_gen.verify import verify

    model = _zero_weights_model(weight_scale, bias_scale)
    read_model(model)
    report = verify(model, "tflm", runs=2)
    assert report.bit_exact, [(o.differing, o.max_abs_diff) for o in report.outputs]


def test_degenerate_scales_elsewhere_are_still_refused():
    with pytest.raises(ModelError, match="scale -1.0"):
        read_model(_zero_weights_model(-1.0, 0.5))
    builder = ModelBuilder()
    x = builder.input("x", [1, 4], "int8", scale=0.5, zero_point=0)
    weights = builder.constant("w", np.ones((3, 4), np.int8),
                               quantization=ir.Quantization([math.inf], [0]))
    builder.output(builder.add_op("FULLY_CONNECTED", [x, weights, -1], [1, 3], "int8",
                                  scale=0.25, zero_point=0))
    _refused(builder.model, r"tensor 1 'w' has quantization scale inf")


def test_zero_scale_on_a_fill_of_zeros_is_allowed():
    builder = ModelBuilder()
    x = builder.input("x", [1, 4], "int16", scale=0.5, zero_point=0)
    dims = builder.constant("dims", np.array([1, 4], np.int32))
    zero = builder.constant("zero", np.zeros((), np.int16),
                            quantization=ir.Quantization([0.0], [0]))
    state = builder.add_op("FILL", [dims, zero], [1, 4], "int16", scale=0.0, zero_point=0)
    builder.output(builder.add_op("ADD", [x, state], [1, 4], "int16", scale=0.5, zero_point=0))
    read_model(builder.build())
    builder.model.buffers[builder.graph.tensors[zero].buffer] = ir.Buffer(b"\x01\x00")
    builder.graph.tensors[zero].quantization = ir.Quantization([0.5], [0])
    _refused(builder.model, r"tensor 3 'fill_0' has quantization scale 0.0")


def test_non_finite_multipliers_quantize_to_zero():
    from tflm_gen.requant import quantize_multiplier

    assert [quantize_multiplier(v) for v in (math.inf, -math.inf, math.nan)] == [(0, 0)] * 3
