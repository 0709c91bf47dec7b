"""End to end: generate a project, build it with the host compiler, run it, compare with
TFLM; plus the contracts of the generated tree (drag-and-drop compile, exact arena)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import CORPUS_DIR, STRICT, assert_make_test_passes, need_corpus, need_tool

from tflm_gen.cli import main
from tflm_gen.errors import ArenaError, OutputDirError, UnsupportedModelError
from tflm_gen.host import HostInterpreter
from tflm_gen.optimize import device_model
from tflm_gen.output import write_tree
from tflm_gen.project import generate
from tflm_gen.verify import verify

REPO = Path(__file__).resolve().parent.parent
SINE = REPO / "examples" / "sine"

# Models that must run bit-exact with TFLM (issue 3's list).
BIT_EXACT_MODELS = [
    "hello_world_int8.tflite", "hello_world_float.tflite", "micro_speech_quantized.tflite",
    "kws_ref_model.tflite", "vww_96_int8.tflite", "person_detect.tflite",
    "pretrainedResnet_quant.tflite", "ad01_int8.tflite", "test_conv_model.tflite",
    "simple_add_model.tflite", "model_ToyCar_quant_fullint.tflite",
    "sine_int8.tflite", "sine_float.tflite",
]

_projects: dict[str, Path] = {}


def model_path(name: str) -> Path:
    if name.startswith("sine_"):
        return SINE / name
    return need_corpus() / name


@pytest.fixture(scope="session")
def project_of(tmp_path_factory):
    """Generates (once per session) the make project of a model; returns its folder."""

    def build(name: str) -> Path:
        if name not in _projects:
            folder = tmp_path_factory.mktemp(name.replace(".", "_"))
            write_tree(generate(model_path(name).read_bytes()), folder / "project")
            _projects[name] = folder / "project"
        return _projects[name]

    return build


@pytest.mark.parametrize("name", BIT_EXACT_MODELS)
def test_verify_bit_exact_with_tflm(name):
    report = verify(model_path(name).read_bytes(), "tflm", runs=3)
    assert report.bit_exact, [(o.index, o.differing, o.max_abs_diff) for o in report.outputs]


@pytest.mark.parametrize("name", BIT_EXACT_MODELS)
def test_make_test_passes(name, project_of):
    assert_make_test_passes(project_of(name))


@pytest.mark.parametrize("compiler", ["gcc", "arm-none-eabi-gcc"])
def test_every_c_file_compiles_without_flags(compiler, project_of, tmp_path):
    """Drag and drop: each .c compiles alone, with no -I and no -D, warnings as errors."""
    need_tool(compiler)
    project = project_of(BIT_EXACT_MODELS[0])
    cpu = ["-mcpu=cortex-m4", "-mthumb"] if compiler.startswith("arm") else []
    for source in sorted(project.rglob("*.c")):
        command = [compiler, *STRICT, *cpu, "-c", str(source), "-o", str(tmp_path / "x.o")]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        assert result.returncode == 0, f"{source.name}: {result.stderr}"


def test_generated_arena_constant_is_exact(project_of):
    project = project_of(BIT_EXACT_MODELS[0])
    header = (project / "tflm" / "model_model_data.h").read_text()
    constant = int(header.split("MODEL_ARENA_BYTES ")[1].split("u")[0])
    model, _ = device_model(model_path(BIT_EXACT_MODELS[0]).read_bytes())
    assert HostInterpreter(model).arena_used_bytes == constant
    HostInterpreter(model, arena_bytes=constant)  # exactly enough works
    with pytest.raises(ArenaError, match=f"needs {constant}"):
        HostInterpreter(model, arena_bytes=constant - 8)


def test_too_small_arenas_fail_cleanly():
    model = model_path("hello_world_int8.tflite").read_bytes()
    needed = HostInterpreter(model).arena_used_bytes
    for size in range(0, needed, 24):
        with pytest.raises(ArenaError):
            HostInterpreter(model, arena_bytes=size)


def test_generation_is_deterministic():
    model = model_path("hello_world_int8.tflite").read_bytes()
    assert generate(model) == generate(model)


def test_only_used_kernels_are_copied(project_of):
    names = {p.name for p in (project_of(BIT_EXACT_MODELS[0]) / "tflm").iterdir()}
    assert "fully_connected.c" in names
    assert "conv.c" not in names and "softmax.c" not in names
    resolver = (project_of(BIT_EXACT_MODELS[0]) / "tflm" / "model_model_ops.c").read_text()
    assert resolver.count("&tflm_op_") == 1


def test_output_dir_with_foreign_files_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(OutputDirError, match="notes.txt"):
        write_tree({"a.c": b""}, tmp_path)


def test_regenerating_into_own_directory_works(tmp_path):
    write_tree({"a.c": b"1", "b.c": b"2"}, tmp_path)
    write_tree({"a.c": b"3"}, tmp_path)
    assert (tmp_path / "a.c").read_bytes() == b"3" and not (tmp_path / "b.c").exists()


def test_unsupported_ops_are_all_listed():
    from tflm_gen.model.builder import ModelBuilder

    builder = ModelBuilder()
    x = builder.input("x", [1, 4], "float32")
    y = builder.add_op("MATRIX_DIAG", [x], [1, 4, 4], "float32")
    builder.output(builder.add_op("REVERSE_SEQUENCE", [y, x], [1, 4, 4], "float32"))
    with pytest.raises(UnsupportedModelError,
                       match=r"MATRIX_DIAG \(version 1, op 0\).*REVERSE_SEQUENCE \(version 1, op 1\)"):
        generate(builder.build())


def test_cli_project_run_verify(tmp_path):
    model = str(model_path("hello_world_int8.tflite"))
    runner = CliRunner()
    result = runner.invoke(main, ["project", "--model", model, "-o", str(tmp_path / "p")])
    assert result.exit_code == 0, result.output
    np.save(tmp_path / "x.npy", np.array([[7]], dtype=np.int8))
    result = runner.invoke(main, ["run", model, "-i", str(tmp_path / "x.npy"),
                                  "-o", str(tmp_path / "y.npz")])
    assert result.exit_code == 0, result.output
    ours = np.load(tmp_path / "y.npz")["output_0"]
    from tflm_gen.oracle import Oracle

    assert np.array_equal(ours, Oracle(Path(model).read_bytes()).run([np.array([[7]], np.int8)])[0])
    assert runner.invoke(main, ["verify", model, "--runs", "2"]).exit_code == 0


def test_cli_wrong_input_is_one_line_exit_2(tmp_path):
    model = str(model_path("hello_world_int8.tflite"))
    np.save(tmp_path / "x.npy", np.zeros((2, 2), dtype=np.float32))
    result = CliRunner().invoke(main, ["run", model, "-i", str(tmp_path / "x.npy")])
    assert result.exit_code == 2
    assert "must be int8 [1, 1] (or with a leading sample axis), got float32 [2, 2]" in \
        result.output


def test_cli_arena_too_small_says_needed(tmp_path):
    model = str(model_path("hello_world_int8.tflite"))
    result = CliRunner().invoke(main, ["run", model, "--arena-bytes", "64"])
    assert result.exit_code == 2 and "needs" in result.output


def test_corpus_dir_is_where_conftest_says():
    import os

    default = REPO.parent / "shared" / "models"
    assert CORPUS_DIR == Path(os.environ.get("TFLM_GEN_CORPUS") or default)


@pytest.mark.parametrize("name", BIT_EXACT_MODELS)
def test_make_run_clean_under_sanitizers(name, project_of, tmp_path):
    """AddressSanitizer and UndefinedBehaviorSanitizer see nothing on a whole run."""
    need_tool("make")
    flags = "-std=c99 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all"
    build = tmp_path / "build"
    subprocess.run(["cp", "-r", str(project_of(name)), str(build)], check=True)
    result = subprocess.run(["make", "-s", "test", f"CFLAGS={flags}"], cwd=build,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "~~~ALL TESTS PASSED~~~" in result.stderr


def test_regenerating_over_a_built_project_works(tmp_path):
    need_tool("make")
    model = model_path("sine_int8.tflite").read_bytes()
    write_tree(generate(model), tmp_path)
    subprocess.run(["make", "-s"], cwd=tmp_path, check=True, capture_output=True)
    write_tree(generate(model), tmp_path)
    assert (tmp_path / "build" / "app").is_file()


def test_force_writes_beside_a_foreign_file_and_keeps_it(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    write_tree({"a.c": b"1"}, tmp_path, force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tflm-gen-files", "a.c", "notes.txt"]
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_writing_leaves_no_temporary_folders(tmp_path):
    out = tmp_path / "out"
    write_tree({"a.c": b"1"}, out)
    write_tree({"b.c": b"2"}, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert sorted(p.name for p in out.iterdir()) == [".tflm-gen-files", "b.c"]


def test_cli_force_flag(tmp_path):
    (tmp_path / "mine.txt").write_text("x")
    model = str(model_path("hello_world_int8.tflite"))
    refused = CliRunner().invoke(main, ["project", "--model", model, "-o", str(tmp_path)])
    assert refused.exit_code == 2 and "--force" in refused.output
    forced = CliRunner().invoke(main, ["project", "--model", model, "-o", str(tmp_path), "--force"])
    assert forced.exit_code == 0 and (tmp_path / "mine.txt").read_text() == "x"
