"""`tflm-gen verify`: outputs compared by count, dtype and shape before values; `--per-op`
names the first operator whose output differs; `-i` runs the user's own samples."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tflm_gen.cli import main
from tflm_gen.errors import InputError, ModelError
from tflm_gen.host import HostInterpreter
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.optimize import device_model
from tflm_gen.per_op import describe_difference, expose_intermediates, first_difference
from tflm_gen.plan import planned_lifetimes, share_buffers
from tflm_gen.samples import load_samples
from tflm_gen.verify import VerifyReport, _compare_outputs, verify

Q = {"scale": 0.05, "zero_point": -3}


def chain_model() -> bytes:
    """Two inputs through ops our planner computes in place (ADD, RELU) or aliases
    (RESHAPE), so that keeping intermediates alive really changes our memory plan."""
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 2], "int8", **Q)
    y = b.input("y", [1, 4, 4, 2], "int8", **Q)
    added = b.add_op("ADD", [x, y], [1, 4, 4, 2], "int8", name="added", **Q)
    relu = b.add_op("RELU", [added], [1, 4, 4, 2], "int8", name="relu", **Q)
    shape = b.constant("shape", np.array([1, 32], np.int32))
    flat = b.add_op("RESHAPE", [relu, shape], [1, 32], "int8", name="flat", **Q)
    weights = b.constant("w", np.arange(-48, 48, dtype=np.int8).reshape(3, 32), "int8",
                         quantization=ir.Quantization([0.01], [0]))  # fmt: skip
    logits = b.add_op("FULLY_CONNECTED", [flat, weights], [1, 3], "int8", name="logits",
                      scale=0.2, zero_point=1)  # fmt: skip
    tanh = b.add_op("TANH", [logits], [1, 3], "int8", name="tanh", scale=1 / 128, zero_point=0)
    b.output(tanh)
    return b.build()


CHAIN = chain_model()


def samples(count: int, seed: int = 0) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [[rng.integers(-128, 128, [1, 4, 4, 2]).astype(np.int8) for _ in range(2)]
            for _ in range(count)]  # fmt: skip


def our_intermediates(model_bytes: bytes, inputs) -> tuple[ir.Model, list[int], list]:
    """Every tensor an operator writes, from our runtime alone."""
    model = read_model(model_bytes)
    expanded, tensors = expose_intermediates(model)
    return model, tensors, HostInterpreter(device_model(write_model(expanded))[0]).run(inputs)


def test_chain_model_shares_memory_in_our_plan():
    """Guards the next tests' premise: the original plan computes in place and aliases."""
    model = read_model(CHAIN)
    groups = share_buffers(model, planned_lifetimes(model))
    assert max(len(group) for group in groups) >= 3


def test_per_op_on_a_bit_exact_model_names_no_operator():
    result = CliRunner().invoke(main, ["verify", "--per-op", "--runs", "2", _write(CHAIN)])
    assert result.exit_code == 0, result.output
    assert "bit-exact with tflm over 2 invokes" in result.output
    assert "per-op: all 5 tensors written by the 5 operators are bit-exact" in result.output


def test_per_op_keeps_final_outputs_of_in_place_and_aliased_ops():
    """Making intermediates outputs must not change values, in our runtime or in TFLM."""
    report = verify(CHAIN, runs=3, per_operator=True)
    assert report.bit_exact
    assert report.per_op_report.notes == [] and report.per_op_report.first is None
    assert report.per_op_report.invokes == 3 and report.per_op_report.tensors == 5


@pytest.mark.parametrize("perturbed", range(5))
def test_first_difference_names_the_perturbed_operator(perturbed):
    """Our own run against itself with one operator's output changed by one step (and
    every later one too): the finder names exactly that operator and that element."""
    model, tensors, ours = our_intermediates(CHAIN, samples(1)[0])
    theirs = [array.copy() for array in ours]
    for op_index in range(perturbed, 5):
        output = tensors.index(model.subgraph.operators[op_index].outputs[0])
        theirs[output].flat[op_index % 3] ^= 1
    found = first_difference(model, tensors, ours, theirs, "tflm")
    assert found.index == perturbed and list(found.outputs) == [0]
    assert found.outputs[0].differing == 1 and found.outputs[0].max_abs_diff == 1
    lines = describe_difference(model, found, "tflm")
    opcode = model.subgraph.operators[perturbed].opcode
    assert lines[0] == f"first operator that differs from tflm: #{perturbed} {opcode} (invoke 1)"
    assert "1 of " in lines[-1] + lines[-2] and "first at " in "".join(lines)


def test_first_difference_reports_dtype_and_shape_before_values():
    model, tensors, ours = our_intermediates(CHAIN, samples(1)[0])
    assert first_difference(model, tensors, ours, ours, "tflm") is None
    theirs = list(ours)
    relu = tensors.index(model.subgraph.operators[1].outputs[0])
    theirs[relu] = ours[relu].astype(np.int16)
    found = first_difference(model, tensors, ours, theirs, "tflm")
    assert found.index == 1 and found.outputs[0].mismatch == "ours int8 [1, 4, 4, 2], " \
        "tflm int16 [1, 4, 4, 2]"  # fmt: skip


def test_outputs_differing_in_count_dtype_or_shape_are_not_bit_exact():
    ours = [np.zeros([1, 4], np.int8), np.zeros([2], np.float32)]
    for theirs in ([ours[0]], [ours[0], np.zeros([2], np.int32)],
                   [ours[0], np.zeros([1, 2], np.float32)]):  # fmt: skip
        report = VerifyReport("tflm", 1)
        _compare_outputs(ours, theirs, report)
        assert not report.bit_exact and report.outputs[0].bit_exact
        assert report.outputs[1].mismatch
    report = VerifyReport("tflm", 1)
    _compare_outputs(ours, [a.copy() for a in ours], report)
    assert report.bit_exact


def test_a_model_without_outputs_is_an_error(tmp_path):
    model = read_model(CHAIN)
    model.subgraph.outputs = []
    with pytest.raises(ModelError, match="no outputs"):
        verify(write_model(model))
    path = tmp_path / "no_outputs.tflite"
    path.write_bytes(write_model(model))
    result = CliRunner().invoke(main, ["verify", str(path)])
    assert result.exit_code == 2 and "no outputs" in result.output
    assert "Traceback" not in result.output


def _write(data: bytes, folder=None) -> str:
    import tempfile
    from pathlib import Path

    path = Path(folder or tempfile.mkdtemp()) / "model.tflite"
    path.write_bytes(data)
    return str(path)


def test_user_samples_from_npy_npz_and_folder(tmp_path):
    given = samples(5, seed=1)
    np.save(tmp_path / "x.npy", given[0][0])
    np.save(tmp_path / "y.npy", given[0][1])
    np.savez(tmp_path / "batch.npz", input_0=np.stack([s[0] for s in given[1:3]]),
             input_1=np.stack([s[1] for s in given[1:3]]))  # fmt: skip
    (tmp_path / "folder").mkdir()
    for k in (3, 4):
        np.savez(tmp_path / "folder" / f"sample{k}.npz", *given[k])  # keys arr_0, arr_1
    paths = [str(tmp_path / name) for name in ("x.npy", "y.npy", "batch.npz", "folder")]
    loaded = load_samples(tuple(paths), read_model(CHAIN))
    assert len(loaded) == 5
    for mine, expected in zip(loaded, given):
        assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(mine, expected))
    options = [part for path in paths for part in ("-i", path)]
    result = CliRunner().invoke(main, ["verify", _write(CHAIN, tmp_path), *options])
    assert result.exit_code == 0, result.output
    assert "bit-exact with tflm over 5 invokes" in result.output


@pytest.mark.parametrize("bad, message", [
    (np.zeros([1, 4, 4, 2], np.float32), "input 0 'x' must be int8 [1, 4, 4, 2]"),
    (np.zeros([4, 4, 2], np.int8), "input 0 'x' must be int8 [1, 4, 4, 2]"),
    (np.zeros([3, 1, 4, 4, 2], np.int8), "different numbers of samples [3, 1]"),
])  # fmt: skip
def test_wrong_user_input_is_one_line_and_exit_2(tmp_path, bad, message):
    np.save(tmp_path / "a.npy", bad)
    np.save(tmp_path / "b.npy", samples(1)[0][1])
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_samples((str(tmp_path / "a.npy"), str(tmp_path / "b.npy")), read_model(CHAIN))
    result = CliRunner().invoke(main, ["verify", _write(CHAIN, tmp_path), "-i",
                                       str(tmp_path / "a.npy"), "-i", str(tmp_path / "b.npy")])
    assert result.exit_code == 2 and message in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize("files", [["a.npy"], ["empty"], ["keys.npz"], ["junk.npy"]])
def test_unusable_input_files_are_input_errors(tmp_path, files):
    np.save(tmp_path / "a.npy", samples(1)[0][0])
    (tmp_path / "empty").mkdir()
    np.savez(tmp_path / "keys.npz", first=samples(1)[0][0], second=samples(1)[0][1])
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    with pytest.raises(InputError):
        load_samples(tuple(str(tmp_path / f) for f in files), read_model(CHAIN))


def test_a_model_the_oracle_refuses_is_one_line_and_exit_2(tmp_path):
    """LiteRT rejects a quantized dimension beyond a tensor's rank (TFLM ignores it on a
    bias, as person_detect's converter wrote it)."""
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 2], "int8", **Q)
    weights = b.constant("w", np.ones([1, 2, 2, 2], np.int8), "int8",
                         quantization=ir.Quantization([0.01, 0.02], [0, 0], 3))  # fmt: skip
    options = {"padding": "VALID", "stride_h": 1, "stride_w": 1, "depth_multiplier": 1}
    bias = b.constant("b", np.zeros(2, np.int32), quantization=ir.Quantization(
        [0.0005, 0.001], [0, 0], 3))  # fmt: skip
    b.output(b.add_op("DEPTHWISE_CONV_2D", [x, weights, bias], [1, 3, 3, 2], "int8",
                      options=options,
                      scale=0.1, zero_point=0))  # fmt: skip
    result = CliRunner().invoke(main, ["verify", "--against", "litert", _write(b.build(), tmp_path)])
    assert result.exit_code == 2, result.output
    assert "litert oracle cannot load the model" in result.output
    assert len(result.output.strip().splitlines()) == 1


def _perturbing(base, position: int):
    """A runtime class like `base` whose run() changes one element of output `position`
    by one step: a test-only stand-in for a runtime that differs."""

    class Perturbed(base):
        def run(self, inputs):
            outputs = [np.array(array) for array in super().run(inputs)]
            outputs[position].flat[0] ^= 1
            return outputs

    return Perturbed


def test_cli_names_an_intermediate_difference_even_when_outputs_match(monkeypatch, tmp_path):
    import tflm_gen.per_op as per_op_module

    model, tensors, _ = our_intermediates(CHAIN, samples(1)[0])
    relu = tensors.index(model.subgraph.operators[1].outputs[0])
    monkeypatch.setattr(per_op_module, "Oracle", _perturbing(per_op_module.Oracle, relu))
    result = CliRunner().invoke(main, ["verify", "--per-op", "--runs", "1", _write(CHAIN, tmp_path)])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[1] == "bit-exact with tflm over 1 invokes"
    assert lines[2] == "first operator that differs from tflm: #1 RELU (invoke 1)"
    assert lines[3].startswith("  input 0: 'added' int8 [1, 4, 4, 2] scale 0.05 zero point -3")
    assert lines[4].endswith("1 of 32 elements differ, max abs diff 1 (ours - tflm from 1 to 1); "
                             "first at [0, 0, 0, 0]: ours -3, tflm -4")


def test_per_op_reports_final_outputs_that_change_with_intermediates_kept(monkeypatch):
    import tflm_gen.per_op as per_op_module

    monkeypatch.setattr(per_op_module, "HostInterpreter",
                        _perturbing(per_op_module.HostInterpreter, 0))  # fmt: skip
    report = verify(CHAIN, runs=2, per_operator=True).per_op_report
    assert report.invokes == 1 and len(report.notes) == 1
    assert report.notes[0].startswith("ours: output_0 changes when every intermediate is kept")
    result = CliRunner().invoke(main, ["verify", "--per-op", _write(CHAIN)])
    assert result.exit_code == 1 and "note: ours: output_0 changes" in result.output


def test_difference_counts_bits_and_signed_range():
    from tflm_gen.compare import Difference

    difference = Difference()
    difference.add(np.array([0.0, 1.0, np.nan, 5.0], np.float32),
                   np.array([-0.0, 1.0, 2.0, 3.0], np.float32), "tflm")  # fmt: skip
    assert (difference.differing, difference.elements) == (3, 4)
    assert (difference.lowest, difference.highest, difference.max_abs_diff) == (2, 2, 2)
    assert difference.first == "at [0]: ours 0.0, tflm -0.0"
    scalar = Difference()
    scalar.add(np.array(7, np.int16), np.array(9, np.int16), "litert")
    assert scalar.summary() == ("1 of 1 elements differ, max abs diff 2 (ours - litert from -2 "
                                "to -2); first at []: ours 7, litert 9")  # fmt: skip
    empty = Difference()
    empty.add(np.zeros([0, 3], np.int8), np.zeros([0, 3], np.int8), "tflm")
    assert empty.bit_exact and empty.elements == 0


def test_per_op_runs_when_the_kept_intermediates_outgrow_the_default_arenas():
    """Ten 512 KiB activations alive at once exceed TFLM's default 4 MiB arena."""
    b = ModelBuilder()
    tensor = b.input("x", [1, 256, 256, 8], "int8", **Q)
    for step in range(10):
        opcode, quant = ("RELU", Q) if step % 2 else ("TANH", {"scale": 1 / 128, "zero_point": 0})
        tensor = b.add_op(opcode, [tensor], [1, 256, 256, 8], "int8", **quant)
    b.output(tensor)
    report = verify(b.build(), runs=1, per_operator=True)
    assert report.bit_exact and report.per_op_report.tensors == 10
    assert report.per_op_report.first is None and not report.per_op_report.notes


def test_zero_runs_is_an_input_error():
    with pytest.raises(InputError, match="nothing to compare"):
        verify(CHAIN, runs=0)


def test_verify_takes_the_generation_options_of_project(monkeypatch, tmp_path):
    """--weights separate --compress verify the coded device model split from its weights,
    as `project` would generate it (the interpreter is watched: a plain model would pass
    too)."""
    from conftest import corpus_path

    import tflm_gen.verify as verify_module
    from tflm_gen.prune import prune_weights

    seen = []

    def watched(device, tags, arena_bytes, weights):
        seen.append((len(ir.compressed_tensors(read_model(device))), weights))
        return device_interpreter(device, tags, arena_bytes, weights)

    device_interpreter = verify_module.device_interpreter
    monkeypatch.setattr(verify_module, "device_interpreter", watched)
    path = tmp_path / "kws_pruned.tflite"
    path.write_bytes(prune_weights(corpus_path("kws_ref_model.tflite").read_bytes(), 0.8).model)
    result = CliRunner().invoke(main, ["verify", str(path), "--runs", "1", "--tags", "cmsis",
                                       "--weights", "separate", "--compress", "--memory", "fast"])
    assert result.exit_code == 0, result.output
    assert "bit-exact with tflm over 1 invokes" in result.output
    assert len(seen) == 1 and seen[0][0] > 0 and seen[0][1] == "separate"


SINE = Path(__file__).resolve().parent.parent / "examples" / "sine" / "sine_int8.tflite"
# The oracle's process, its runs ending in a segmentation fault as a reference runtime's
# bug would end them.
CRASHING_CHILD = """
import os, signal
from tflm_gen import oracle_child
oracle_child.Loaded.run = lambda self, inputs: os.kill(os.getpid(), signal.SIGSEGV)
oracle_child.main()
"""


def test_a_crash_of_the_reference_runtime_is_one_line_and_exit_2(monkeypatch):
    """TFLM runs in a child process: its crash ends that process only, and verify says
    which runtime crashed and how, without a traceback."""
    from tflm_gen import oracle

    monkeypatch.setattr(oracle, "CHILD_COMMAND", [sys.executable, "-c", CRASHING_CHILD])
    monkeypatch.setattr(oracle, "_CHILD", None)  # a fresh process with that command
    result = CliRunner().invoke(main, ["verify", str(SINE)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert "the reference runtime (TFLM) crashed on this model: signal 11 (SIGSEGV)" in lines[0]
    assert lines[0].endswith("; our outputs were not compared")
