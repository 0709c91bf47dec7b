"""`tflm-gen prune`: magnitude pruning of int8 filters for the compression benchmarks
(issue 15).  The pruned model is an ordinary model: TFLM and our runtime agree on it."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import corpus_path

from tflm_gen.cli import main
from tflm_gen.errors import InputError
from tflm_gen.host import run_model
from tflm_gen.inputs import random_inputs
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.reader import read_model
from tflm_gen.oracle import Oracle
from tflm_gen.prune import FILTER_INPUT, WEIGHTED_OPS, prune_weights


def _filters(model):
    return {model.subgraph.tensors[op.inputs[FILTER_INPUT]].buffer
            for op in model.subgraph.operators if op.opcode in WEIGHTED_OPS}


@pytest.fixture(scope="module")
def kws():
    return corpus_path("kws_ref_model.tflite").read_bytes()


@pytest.mark.parametrize("sparsity", [0.0, 0.5, 0.8, 0.95])
def test_each_filter_reaches_the_sparsity_and_nothing_else_changes(kws, sparsity):
    before = read_model(kws)
    after = read_model(prune_weights(kws, sparsity).model)
    filters = _filters(before)
    for index, (old, new) in enumerate(zip(before.buffers, after.buffers)):
        if index not in filters:
            assert old.data == new.data
            continue
        w_old = np.frombuffer(old.data, np.int8)
        w_new = np.frombuffer(new.data, np.int8)
        zeros = np.count_nonzero(w_new == 0)
        assert zeros == max(round(sparsity * w_old.size), np.count_nonzero(w_old == 0))
        kept = w_new != 0
        assert np.array_equal(w_new[kept], w_old[kept])  # survivors untouched
        if kept.any() and (~kept).any():  # the smallest magnitudes went first
            assert np.abs(w_old[~kept].astype(int)).max() <= np.abs(w_old[kept].astype(int)).min()


def test_pruned_model_is_deterministic_and_bit_exact_with_tflm(kws):
    pruned = prune_weights(kws, 0.8).model
    assert pruned == prune_weights(kws, 0.8).model
    inputs = random_inputs(read_model(pruned), seed=3)
    expected = Oracle(pruned).run(inputs)
    for ours, theirs in zip(run_model(pruned, inputs), expected):
        assert np.array_equal(ours, theirs)


def test_cli_writes_the_model_and_says_the_outputs_change(kws, tmp_path):
    source, target = tmp_path / "kws.tflite", tmp_path / "pruned.tflite"
    source.write_bytes(kws)
    result = CliRunner().invoke(main, ["prune", str(source), "--sparsity", "0.8", "-o",
                                       str(target), "--samples", "4"])
    assert result.exit_code == 0, result.output
    assert "-> 80.0%" in result.output and "changes the model's outputs" in result.output
    assert target.read_bytes() == prune_weights(kws, 0.8).model


@pytest.mark.parametrize("value", ["1", "1.5", "-0.1", "lots"])
def test_bad_sparsity_is_one_line(kws, tmp_path, value):
    source = tmp_path / "kws.tflite"
    source.write_bytes(kws)
    result = CliRunner().invoke(main, ["prune", str(source), "--sparsity", value, "-o",
                                       str(tmp_path / "out.tflite")])
    assert result.exit_code == 2 and "--sparsity" in result.output
    assert "Traceback" not in result.output
    with pytest.raises(InputError):
        prune_weights(kws, 1.0)


def test_model_without_filters_is_refused():
    b = ModelBuilder()
    x = b.input("x", [1, 4], "float32")
    b.output(b.add_op("RELU", [x], [1, 4], "float32"))
    with pytest.raises(InputError, match="no int8"):
        prune_weights(b.build(), 0.5)


def test_hybrid_model_is_pruned_and_measured_by_litert(tmp_path):
    """A hybrid model (float activations, int8 weights), which TFLM cannot run: its int8
    filters are pruned and the output change is measured by LiteRT, as verify chooses."""
    target = tmp_path / "pruned.tflite"
    source = corpus_path("kws_ref_model_float32.tflite")
    result = CliRunner().invoke(main, ["prune", str(source), "--sparsity", "0.8", "-o",
                                       str(target), "--samples", "2"])
    assert result.exit_code == 0, result.output
    assert "-> 80.0%" in result.output and "random inputs (LiteRT)" in result.output
    assert target.read_bytes() == prune_weights(source.read_bytes(), 0.8).model
