"""The memory-aware operator order (tflm_gen.schedule): a hoist that lowers the per-step
head bytes is taken, a model with state keeps its order, and the reordered model gives
TFLM's bytes (each operator runs once on the same inputs)."""

from __future__ import annotations

import numpy as np
from conftest import corpus_path
from op_oracle import assert_bit_exact, run_tflm

from tflm_gen.host import HostInterpreter
from tflm_gen.model import ir
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.plan import embed_plan, head_profile, make_plan
from tflm_gen.requant import embed_requant
from tflm_gen.schedule import memory_order


def test_resnet_shortcut_runs_before_the_main_path_and_is_bit_exact():
    data = corpus_path("pretrainedResnet_quant.tflite").read_bytes()
    model = read_model(data)
    moved = memory_order(model)
    names = [op.outputs[0] for op in moved.subgraph.operators]
    original = [op.outputs[0] for op in model.subgraph.operators]
    assert sorted(names) == sorted(original) and names != original
    # Every operator still runs after the operators writing its inputs.
    written = set(moved.subgraph.inputs)
    for op in moved.subgraph.operators:
        assert all(t < 0 or t in written or ir.is_constant(model, model.subgraph.tensors[t])
                   for t in op.inputs)
        written.update(op.outputs)
    before, after = head_profile(model), head_profile(moved)
    assert sorted(after, reverse=True) < sorted(before, reverse=True)
    rng = np.random.default_rng(5)
    inputs = [rng.integers(-128, 128, size=(1, 32, 32, 3)).astype(np.int8)]
    device = embed_requant(moved)
    device = write_model(embed_plan(device, make_plan(device)))
    assert_bit_exact(np.asarray(HostInterpreter(device).run(inputs)[0]), run_tflm(data, inputs)[0])


def test_model_with_state_keeps_its_order():
    model = read_model(corpus_path("keyword_scrambled.tflite").read_bytes())
    assert memory_order(model) is model
