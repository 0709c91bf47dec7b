"""Regression: the planner let an in-place op at the last step (TANH, ADD, ...) write over
its input when that input was itself a graph output (or shared bytes with one through a
RESHAPE), because a graph output's lifetime ends at the last step like a tensor that dies
there.  Found by `verify --per-op`, which makes every intermediate a graph output."""

from __future__ import annotations

import numpy as np

from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.verify import verify


def logits_model() -> tuple[ModelBuilder, int]:
    """A builder holding FULLY_CONNECTED logits of an input: (builder, logits)."""
    b = ModelBuilder()
    x = b.input("x", [1, 8], "int8", scale=0.05, zero_point=-3)
    weights = b.constant("w", np.arange(-16, 16, dtype=np.int8).reshape(4, 8), "int8",
                         quantization=ir.Quantization([0.02], [0]))  # fmt: skip
    logits = b.add_op("FULLY_CONNECTED", [x, weights], [1, 4], "int8", scale=0.05, zero_point=2)
    return b, logits


def finish_with_tanh(b: ModelBuilder, logits: int, *outputs: int) -> None:
    squashed = b.add_op("TANH", [logits], [1, 4], "int8", scale=1 / 128, zero_point=0)
    b.output(*outputs, squashed)


def assert_verified(b: ModelBuilder) -> None:
    report = verify(b.build(), runs=2)
    assert len(report.outputs) == 2
    assert report.bit_exact, [o.summary() for o in report.outputs]


def test_a_graph_output_read_by_the_last_in_place_op_keeps_its_values():
    b, logits = logits_model()
    finish_with_tanh(b, logits, logits)
    assert_verified(b)


def test_a_graph_output_aliasing_the_last_in_place_op_input_keeps_its_values():
    """The graph output is a RESHAPE of the tensor that TANH would overwrite in place."""
    b, logits = logits_model()
    shape = b.constant("shape", np.array([2, 2], np.int32))
    square = b.add_op("RESHAPE", [logits, shape], [2, 2], "int8", scale=0.05, zero_point=2)
    finish_with_tanh(b, logits, square)
    assert_verified(b)
