"""The multi-subgraph runtime: IF, WHILE, CALL_ONCE and resource variables, bit-exact with
TFLM over several invokes and a reset, with every subgraph's tensors planned in one arena
whose exact size the generator computes; on the host, in a generated project and on an
emulated Cortex-M4."""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import need_tool
from control_flow_models import (
    if_model,
    int32_handle_model,
    nested_model,
    recursive_model,
    variables_model,
    while_int8_model,
    while_model,
    while_passing_model,
)
from op_oracle import compare_invokes

from tflm_gen import qemu
from tflm_gen.cli import main
from tflm_gen.errors import ArenaError, ModelError, UnsupportedModelError
from tflm_gen.host import HostInterpreter
from tflm_gen.inspect import inspect_model
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model
from tflm_gen.output import write_tree
from tflm_gen.plan import make_plan
from tflm_gen.project import generate
from tflm_gen.support import check_supported
from tflm_gen.verify import verify

MODELS = {"if": if_model, "while": while_model, "while_int8": while_int8_model,
          "nested": nested_model, "variables": variables_model}
CONTROL_FLOW_OPS = {"IF", "WHILE", "CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"}


def test_if_runs_both_branches_bit_exact():
    rng = np.random.default_rng(3)
    x = [rng.uniform(-1, 1, size=(1, 4)).astype(np.float32) for _ in range(2)]
    flags = [np.array([value]) for value in (True, False)]
    runs = [[flags[0], x[0]], [flags[1], x[0]], [flags[1], x[1]], [flags[0], x[1]]]
    seen = compare_invokes(if_model(), inputs=runs)
    # Same x, other branch: TFLM's outputs differ, so both branches were compared.
    assert not np.array_equal(seen[0][0], seen[1][0])
    assert not np.array_equal(seen[2][0], seen[3][0])


@pytest.mark.parametrize("name", ["while", "while_int8", "nested"])
def test_while_trip_count_follows_the_data(name):
    """Loop-carried tensors (a counter and a state) over a data-dependent number of
    iterations; the first output is the counter."""
    seen = compare_invokes(MODELS[name](), runs=4)
    trips = {int(outputs[0]) for outputs in seen}
    assert len(trips) > 1, trips
    assert min(trips) >= 1


def test_variables_persist_across_invokes_and_reset_as_tflm():
    """CALL_ONCE sets "acc" at the first invoke only; both variables carry state over 3
    invokes; a reset refills them with their zero point and does not run CALL_ONCE again
    (TFLM's semantics: CALL_ONCE has no reset)."""
    seen = compare_invokes(variables_model(), runs=3)
    first, after_reset = seen[:3], seen[3:]
    # The float variable started from the init subgraph's values before the reset, from 0
    # after it: the same inputs give other outputs.
    assert not np.array_equal(first[0][0], after_reset[0][0])
    # The int8 variable starts from its zero point both times.
    assert np.array_equal(first[0][1], after_reset[0][1])
    assert not np.array_equal(first[1][1], first[0][1])


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32", "int64", "uint8",
                                   "uint32", "bool"])
def test_while_carries_every_dtype_tflm_does(dtype):
    """The (WHILE, dtype) pairs of TFLM's matrix: a tensor of that type carried round the
    loop three times (the kernel copies bytes, whatever the type)."""
    seen = compare_invokes(while_passing_model(dtype))
    assert {int(outputs[0]) for outputs in seen} == {3}


def test_assign_variable_takes_an_int32_handle():
    """TFLM's ASSIGN_VARIABLE also takes the id as an int32 tensor (a constant here)."""
    seen = compare_invokes(int32_handle_model())
    assert not np.array_equal(seen[1][0], seen[0][0])


def test_if_with_a_non_bool_condition_is_refused():
    """TFLM's IF takes a bool condition only: refused at generation, naming the op."""
    model = read_model(if_model())
    model.subgraph.tensors[model.subgraph.inputs[0]].dtype = "int8"
    with pytest.raises(UnsupportedModelError, match=r"IF op 1 \(int8 input #0 'cond'"):
        check_supported(model)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_device_model_is_bit_exact(name):
    """The model as a project embeds it: offline plan of all subgraphs, requantisation."""
    report = verify(MODELS[name](), runs=3)
    assert report.bit_exact and report.outputs


@pytest.mark.parametrize("name", sorted(MODELS))
def test_arena_size_is_exact(name):
    model = device_model(MODELS[name]())[0]
    needed = HostInterpreter(model).arena_used_bytes
    HostInterpreter(model, arena_bytes=needed).invoke()
    with pytest.raises(ArenaError, match=f"needs {needed}"):
        HostInterpreter(model, arena_bytes=needed - 8)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_tflm_runs_the_planned_model_unchanged(name):
    """The offline plan covers all subgraphs in TFLM's format: TFLM itself runs the device
    model with the same outputs as the user's model."""
    from tflm_gen.inputs import random_inputs
    from tflm_gen.oracle import Oracle

    original = MODELS[name]()
    planned = device_model(original)[0]
    assert b"OfflineMemoryAllocation" in planned
    plain, offline = Oracle(original), Oracle(planned)
    for seed in range(3):
        inputs = random_inputs(read_model(original), seed)
        for mine, theirs in zip(offline.run(inputs), plain.run(inputs), strict=True):
            assert np.asarray(mine).tobytes() == np.asarray(theirs).tobytes()


def _overlap(a, b) -> bool:
    return a.first <= b.last and b.first <= a.last and a.offset < b.offset + b.size \
        and b.offset < a.offset + a.size


@pytest.mark.parametrize("name", sorted(MODELS))
def test_offline_plan_separates_everything_live_together(name):
    """Subgraph tensors get their own bytes while the calling operator runs, and share
    bytes with tensors that are dead then (the cond and body of a WHILE share)."""
    plan = make_plan(read_model(MODELS[name]()))
    clashes = [(a.tensors, b.tensors) for i, a in enumerate(plan.buffers)
               for b in plan.buffers[i + 1:] if _overlap(a, b)]
    assert not clashes
    assert plan.head_bytes < sum(buffer.size for buffer in plan.buffers)


def test_recursive_subgraphs_are_refused(monkeypatch):
    with pytest.raises(UnsupportedModelError, match="recursively"):
        check_supported(read_model(recursive_model()))
    # The C runtime refuses the model by itself too (given a library with IF anyway).
    import tflm_gen.host

    library = tflm_gen.host.library_files(read_model(if_model()), if_model(), ())
    monkeypatch.setattr(tflm_gen.host, "library_files", lambda *_: library)
    with pytest.raises(ModelError, match="rejected the model"):
        HostInterpreter(recursive_model())


def test_ops_and_inspect_know_control_flow(tmp_path):
    result = CliRunner().invoke(main, ["ops", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert not CONTROL_FLOW_OPS & set(report["summary"]["tflm_missing"])
    rows = {row["op"]: row["dtypes"] for row in report["ops"]}
    assert rows["IF"] == ["bool"] and rows["READ_VARIABLE"] == ["resource"]
    path = tmp_path / "nested.tflite"
    path.write_bytes(nested_model())
    summary = inspect_model(path)
    assert summary["unsupported_ops"] == []
    assert [sub["index"] for sub in summary["subgraphs"]] == [1, 2, 3, 4]
    path.write_bytes(variables_model())  # CALL_ONCE has no tensors, hence no dtype
    assert inspect_model(path)["unsupported_ops"] == []


@pytest.mark.parametrize("name", ["variables", "while_int8"])
def test_generated_project_passes_its_self_test(name, tmp_path):
    need_tool("make")
    write_tree(generate(MODELS[name]()), tmp_path / "p")
    result = subprocess.run(["make", "-s", "run"], cwd=tmp_path / "p", capture_output=True,
                            text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "~~~ALL TESTS PASSED~~~" in result.stderr


@pytest.mark.parametrize("tags", [(), ("cmsis",)])
def test_cortex_m4_runs_control_flow_bit_exact(tags):
    board = qemu.board_of("qemu-cortex-m4")
    need_tool(board["toolchain"] + "gcc")
    need_tool(board["qemu"])
    need_tool("make")
    _, completed = qemu.run_project(while_int8_model(), "qemu-cortex-m4", tags)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert qemu.PASSED in completed.stdout
    used, declared = re.search(r"arena used: (\d+) of (\d+)", completed.stdout).groups()
    assert used == declared


@pytest.mark.parametrize("name", ["if", "variables"])
def test_corrupt_control_flow_models_never_crash_the_c_loader(name, tmp_path):
    """Seeded mutations of multi-subgraph models (subgraph indices, resource names, tensor
    types) under AddressSanitizer and UBSan: errors, never bad reads, never endless
    recursion.  (Models with a WHILE are left out: a mutated condition may loop for ever,
    in TFLM as here.)"""
    from test_runtime_c import fuzz_c_loader

    ran, refused = fuzz_c_loader(MODELS[name](), tmp_path, trials=3000, seed=1, most_mutations=4)
    assert ran > 0 and refused > 0
