"""Every tensor of the real models on the boards, bit-exact with TFLM.

A model's final outputs can hide a wrong kernel: vww_96_int8 ends in two saturated
classes, and a deliberately broken first layer still gave its bit-exact outputs.  Here
each model is rewritten so that every tensor an operator writes is also a graph output
(`verify --per-op`'s rewrite), built with the cmsis tag for the QEMU board, and each of
those tensors is compared with TFLM's on the same rewrite.  The assembly paths (DSP on the
M4/M33, MVE on the M55) thus meet the oracle layer by layer on real shapes and weights.
With every intermediate alive no layer runs in place and no patch stage is taken: those
paths are covered by test_cmsis' and test_patches' cases."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import corpus_path
from op_oracle import assert_bit_exact, run_tflm
from test_cmsis import TAGS, need_board

from tflm_gen import qemu
from tflm_gen.model import ir
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.per_op import expose_intermediates
from tflm_gen.schedule import memory_order

MODELS = {
    "qemu-cortex-m4": ["vww_96_int8", "person_detect", "kws_ref_model",
                       "pretrainedResnet_quant", "micro_speech_quantized", "ad01_int8"],
    "qemu-cortex-m33": ["person_detect"],
    "qemu-cortex-m55": ["vww_96_int8", "kws_ref_model"],
}


def exposed_model(name: str) -> tuple[bytes, ir.Model, list[int]]:
    """The model with every operator output as a graph output, in the order we run it."""
    model = memory_order(read_model(corpus_path(f"{name}.tflite").read_bytes()))
    expanded, tensors = expose_intermediates(model)
    return write_model(expanded), expanded, tensors


def full_range_inputs(model: ir.Model, seed: int) -> list[np.ndarray]:
    """Random inputs over the whole range of each input's integer type."""
    rng = np.random.default_rng(seed)
    inputs = []
    for index in model.subgraph.inputs:
        tensor = model.subgraph.tensors[index]
        kind = np.dtype(ir.dtype_info(tensor.dtype).numpy)
        bounds = np.iinfo(kind)
        inputs.append(rng.integers(bounds.min, bounds.max, size=tensor.shape,
                                   endpoint=True).astype(kind))
    return inputs


@pytest.mark.parametrize("target,name", [(t, n) for t, names in MODELS.items()
                                         for n in names])
def test_every_tensor_bit_exact_on_board(target, name):
    need_board(target)
    data, model, tensors = exposed_model(name)
    inputs = full_range_inputs(model, seed=len(name))
    result = qemu.run_on_target(data, target, inputs, TAGS)
    assert result.matches_host, result.stdout
    expected = run_tflm(data, inputs, len(tensors), arena_size=1 << 24)
    assert len(result.outputs) == len(expected) == len(tensors)
    operators = model.subgraph.operators
    writer = {tensor: index for index, op in enumerate(operators) for tensor in op.outputs}
    for ours, theirs, tensor in zip(result.outputs, expected, tensors):
        assert_bit_exact(np.asarray(ours), theirs,
                         f"tensor {tensor} written by operator {writer[tensor]} "
                         f"({operators[writer[tensor]].opcode})")
