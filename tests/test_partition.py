"""Issue 14: accelerator offload by graph partitioning.  The partitioned model (each
maximal group of ops an accelerator runs moved into a subgraph called by one CUSTOM op)
must compute the original's outputs bit for bit, the original must equal TFLM, the file
must stay a valid .tflite that TFLM rejects only for the unknown op, and a generated
project must pass its self-test with the reference backend."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import tflite
from click.testing import CliRunner
from conftest import STRICT, assert_make_test_passes, corpus_path, need_tool

from tflm_gen import qemu
from tflm_gen.accelerator import load_accelerator, shipped_accelerators
from tflm_gen.cli import main
from tflm_gen.host import HostInterpreter
from tflm_gen.inputs import random_inputs
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.partition_op import PARTITION_MAGIC, partition_subgraph
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.oracle import Oracle
from tflm_gen.output import write_tree
from tflm_gen.partition import partition_model, plan_partition
from tflm_gen.project import generate

REPO = Path(__file__).resolve().parent.parent
SPECS = ["conv_only", "all_but_softmax", "small_pool"]
INT8_MODELS = ["ad01_int8.tflite", "hello_world_int8.tflite", "kws_ref_model.tflite",
               "micro_speech_quantized.tflite", "person_detect.tflite",
               "pretrainedResnet_quant.tflite", "simple_add_model.tflite",
               "trained_lstm_int8.tflite", "vww_96_int8.tflite"]
PROJECT_CASES = [("vww_96_int8.tflite", "all_but_softmax"), ("kws_ref_model.tflite", "conv_only"),
                 ("person_detect.tflite", "conv_only")]

_partitioned: dict[tuple[str, str], bytes] = {}


def partitioned(name: str, spec: str, cuts: tuple[str, ...] = ()) -> bytes:
    """The corpus model `name` partitioned for `spec` (computed once per session)."""
    key = (name, spec, *cuts)
    if key not in _partitioned:
        model = read_model(corpus_path(name).read_bytes())
        accelerator = load_accelerator(spec)
        plan = plan_partition(model, accelerator, cuts)
        _partitioned[key] = write_model(partition_model(model, accelerator, plan))
    return _partitioned[key]


def two_invokes(model_bytes: bytes, runtime) -> list[np.ndarray]:
    model = read_model(model_bytes)
    outputs = []
    for seed in (0, 1):
        outputs += runtime.run(random_inputs(model, seed))
    return outputs


def assert_same(first: list[np.ndarray], second: list[np.ndarray]) -> None:
    assert len(first) == len(second)
    for a, b in zip(first, second):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


def test_shipped_specs_load():
    assert set(SPECS) <= set(shipped_accelerators())
    for spec in SPECS:
        accelerator = load_accelerator(spec)
        assert re.fullmatch(r"[A-Za-z_]\w*", accelerator.custom_op)
        assert accelerator.ops


@pytest.mark.parametrize("name", INT8_MODELS)
def test_partitioned_outputs_equal_the_original_and_tflm(name):
    original = corpus_path(name).read_bytes()
    ours = two_invokes(original, HostInterpreter(original))
    assert_same(ours, two_invokes(original, Oracle(original, "tflm")))
    offloaded = 0
    for spec in SPECS:
        data = partitioned(name, spec)
        model = read_model(data)
        offloaded += sum(partition_subgraph(op) is not None for op in model.subgraph.operators)
        assert_same(two_invokes(data, HostInterpreter(data)), ours)
    assert offloaded > 0, f"no spec offloads anything of {name}"


def test_groups_are_maximal_and_acyclic_for_resnet():
    """The ADDs of the residual blocks stay on the CPU under conv_only: one group per run of
    convolutions between them, and each group's ops appear in dependency order."""
    model = read_model(corpus_path("pretrainedResnet_quant.tflite").read_bytes())
    plan = plan_partition(model, load_accelerator("conv_only"))
    assert len(plan.groups) == 5
    assert all(model.subgraph.operators[i].opcode == "CONV_2D" for g in plan.groups for i in g)
    assert {model.subgraph.operators[i].opcode for i in plan.refusals} >= {"ADD", "SOFTMAX"}


def test_a_group_never_swallows_a_path_through_the_cpu(tmp_path):
    """a = x + x (accelerator); b = relu(a) (CPU); c = a + b (accelerator): a and c in one
    group would need b both before and after it, so they are two groups."""
    builder = ModelBuilder()
    x = builder.input("x", [1, 8], "float32")
    a, b, c = (builder.tensor(name, [1, 8], "float32") for name in "abc")
    builder.operator("ADD", [x, x], [a])
    builder.operator("RELU", [a], [b])
    builder.operator("ADD", [a, b], [c])
    builder.output(c)
    data = builder.build()
    spec = tmp_path / "adder.toml"
    spec.write_text('name = "adder"\ncustom_op = "ADDER"\n[ops.ADD]\ndtypes = ["float32"]\n')
    model = read_model(data)
    accelerator = load_accelerator(str(spec))
    plan = plan_partition(model, accelerator)
    assert plan.groups == [[0], [2]]
    result = write_model(partition_model(model, accelerator, plan))
    assert [op.custom_code or op.opcode for op in read_model(result).subgraph.operators] == [
        "ADDER", "RELU", "ADDER"]
    assert_same(two_invokes(result, HostInterpreter(result)), two_invokes(data, HostInterpreter(data)))


def test_cut_forces_a_boundary():
    name = "kws_ref_model.tflite"
    model = read_model(corpus_path(name).read_bytes())
    cut = model.subgraph.tensors[model.subgraph.operators[4].outputs[0]].name
    whole = plan_partition(model, load_accelerator("all_but_softmax"))
    split = plan_partition(model, load_accelerator("all_but_softmax"), (cut,))
    assert len(whole.groups) == 1 and len(split.groups) == 2
    data = partitioned(name, "all_but_softmax", (cut,))
    original = corpus_path(name).read_bytes()
    assert_same(two_invokes(data, HostInterpreter(data)), two_invokes(original, HostInterpreter(original)))


def test_partitioned_file_is_valid_tflite_that_tflm_cannot_resolve(capfd):
    from tflite_micro.python.tflite_micro import runtime

    data = partitioned("kws_ref_model.tflite", "conv_only")
    schema = tflite.Model.GetRootAsModel(data, 0)
    codes = [schema.OperatorCodes(i) for i in range(schema.OperatorCodesLength())]
    custom = [code.CustomCode() for code in codes if code.BuiltinCode() == 32]
    assert custom == [b"TFLM_GEN_CONV_NPU"]
    assert schema.SubgraphsLength() == 2
    options = schema.Subgraphs(0).Operators(1).CustomOptionsAsNumpy().tobytes()
    assert options == PARTITION_MAGIC + (1).to_bytes(4, "little")
    capfd.readouterr()
    with pytest.raises(RuntimeError):
        runtime.Interpreter.from_bytes(data, arena_size=1 << 22)
    log = capfd.readouterr()
    # TFLM's micro_interpreter.cc names the op code it could not resolve; a corrupt file
    # fails earlier (schema version, verifier) with another message.
    assert "Failed to get registration from op code CUSTOM" in log.out + log.err


def test_repartitioning_is_refused_in_one_line(tmp_path):
    first = tmp_path / "once.tflite"
    first.write_bytes(partitioned("kws_ref_model.tflite", "conv_only"))
    result = CliRunner().invoke(main, ["partition", str(first), "--accelerator", "conv_only",
                                       "-o", str(tmp_path / "twice.tflite")])
    assert result.exit_code == 2
    assert "partitioned already" in result.output and len(result.output.splitlines()) == 1
    assert not (tmp_path / "twice.tflite").exists()


@pytest.mark.parametrize("spec_text,message", [
    ("name = \n", "not valid TOML"),
    ('custom_op = "has space"\n[ops.ADD]\n', "C identifier"),
    ('custom_op = "X"\nspeed = 3\n[ops.ADD]\n', "unknown keys"),
    ('custom_op = "X"\n[ops.ADD]\nmax_kernal = [3, 3]\n', "constraints must be"),
])
def test_bad_spec_is_one_line(tmp_path, spec_text, message):
    spec = tmp_path / "bad.toml"
    spec.write_text(spec_text)
    result = CliRunner().invoke(main, ["partition", str(corpus_path("kws_ref_model.tflite")),
                                       "--accelerator", str(spec), "-o", str(tmp_path / "o.tflite")])
    assert result.exit_code == 2 and message in result.output
    assert len(result.output.splitlines()) == 1


def test_cli_partition_and_inspect(tmp_path):
    model = str(corpus_path("kws_ref_model.tflite"))
    out = tmp_path / "kws_npu.tflite"
    result = CliRunner().invoke(main, ["partition", model, "--accelerator", "conv_only", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "1 accelerator subgraph(s); 8 of 13 ops offloaded" in result.output
    shown = CliRunner().invoke(main, ["inspect", model, "--accelerator", "conv_only"])
    assert shown.exit_code == 0, shown.output
    assert re.search(r"0\s+CONV_2D\s+[\d,]+\s+cpu\s+max_kernel: window 10x4 exceeds 5x5", shown.output)
    assert re.search(r"1\s+DEPTHWISE_CONV_2D\s+[\d,]+\s+conv-npu #0", shown.output)
    listed = CliRunner().invoke(main, ["inspect", str(out)])
    assert listed.exit_code == 0, listed.output
    assert "accelerator op #1 'TFLM_GEN_CONV_NPU' runs subgraph 1: 8 ops" in listed.output
    assert "supported: all operators" in listed.output


def test_c_magic_matches_python():
    source = (REPO / "runtime_c" / "tflm_model.c").read_text()
    chars = re.search(r"options\[0\] != '(.)' \|\| options\[1\] != '(.)' \|\| "
                      r"options\[2\] != '(.)' \|\| options\[3\] != '(.)'", source)
    assert "".join(chars.groups()).encode() == PARTITION_MAGIC


@pytest.fixture(scope="session")
def partitioned_project(tmp_path_factory):
    projects: dict[tuple[str, str], Path] = {}

    def build(name: str, spec: str) -> Path:
        if (name, spec) not in projects:
            folder = tmp_path_factory.mktemp(f"partition_{name.split('.')[0]}") / "project"
            write_tree(generate(partitioned(name, spec)), folder)
            projects[(name, spec)] = folder
        return projects[(name, spec)]

    return build


@pytest.mark.parametrize("name,spec", PROJECT_CASES)
def test_partitioned_make_project_passes_its_self_test(name, spec, partitioned_project):
    need_tool("make")
    folder = partitioned_project(name, spec)
    driver = (folder / "tflm" / f"delegate_{load_accelerator(spec).custom_op.lower()}.c").read_text()
    assert "tflm_reference_delegate" in driver
    assert re.search(r'"TFLM_GEN_\w+_NPU", TFLM_BUILTIN_CUSTOM,', (folder / "tflm" / "model_model_delegates.c").read_text())
    assert_make_test_passes(folder)


@pytest.mark.parametrize("compiler", ["gcc", "arm-none-eabi-gcc"])
def test_delegate_files_compile_strictly(compiler, partitioned_project, tmp_path):
    need_tool(compiler)
    library = partitioned_project("kws_ref_model.tflite", "conv_only") / "tflm"
    for name in ["tflm_delegate.c", "model_model_delegates.c", "delegate_tflm_gen_conv_npu.c",
                 "tflm_model.c"]:
        command = [compiler, *STRICT, "-c", str(library / name), "-o", str(tmp_path / "x.o")]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name,spec", PROJECT_CASES)
def test_partitioned_model_passes_on_cortex_m4(name, spec):
    board = qemu.board_of("qemu-cortex-m4")
    for tool in (board["toolchain"] + "gcc", board["qemu"], "make"):
        need_tool(tool)
    _, completed = qemu.run_project(partitioned(name, spec), "qemu-cortex-m4")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert qemu.PASSED in completed.stdout
    used, declared = re.search(r"arena used: (\d+) of (\d+)", completed.stdout).groups()
    assert used == declared


def test_bench_shows_the_cpu_accelerator_split(tmp_path):
    board = qemu.board_of("qemu-cortex-m4")
    for tool in (board["toolchain"] + "gcc", board["qemu"], "make"):
        need_tool(tool)
    model = tmp_path / "kws_npu.tflite"
    model.write_bytes(partitioned("kws_ref_model.tflite", "conv_only"))
    result = CliRunner().invoke(main, ["bench", str(model), "--target", "qemu-cortex-m4",
                                       "--json", str(tmp_path / "bench.json")])
    assert result.exit_code == 0, result.output
    rows = json.loads((tmp_path / "bench.json").read_text())["ops"]
    assert [row["runs_on"] for row in rows] == ["cpu", "accelerator"] + ["cpu"] * 4
    assert rows[1]["op"] == "TFLM_GEN_CONV_NPU (8 ops)" and rows[1]["instructions"] > 0
    assert re.search(r"1\s+TFLM_GEN_CONV_NPU \(8 ops\)\s+accelerator\s+[\d,]+", result.output)
    assert "accelerator ops" in result.output and "bit-exact" in result.output


def test_verify_runs_the_inlined_original_as_reference(tmp_path):
    """TFLM cannot run the accelerator op: `verify` compares the partitioned model with
    TFLM running the original ops (the subgraphs inlined back)."""
    model = tmp_path / "resnet_npu.tflite"
    model.write_bytes(partitioned("pretrainedResnet_quant.tflite", "conv_only"))
    result = CliRunner().invoke(main, ["verify", str(model), "--runs", "2"])
    assert result.exit_code == 0, result.output
    assert "bit-exact with tflm over 2 invokes" in result.output
