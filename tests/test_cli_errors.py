"""Every failure a user can cause is one line on stderr and exit status 2: crafted models,
bad options, output paths the OS refuses, the runtime's own log, names holding control
characters.  Most cases run in-process (CliRunner); the ones where C writes to the real
stderr run the CLI as a subprocess."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tflm_gen.cli import main
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.reader import read_model

REPO = Path(__file__).resolve().parent.parent
SINE = REPO / "examples" / "sine" / "sine_int8.tflite"
FORGED = "evil\ntflm-gen: ok: all good\x1b[2J"


def cli(*args: str, cwd: Path | None = None):
    """Runs the CLI in-process; returns click's result (stderr kept apart)."""
    if cwd is None:
        return CliRunner().invoke(main, [str(arg) for arg in args])
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [str(arg) for arg in args])
    finally:
        os.chdir(old)


def assert_one_line(result, pattern: str = "") -> str:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tflm-gen: error: "), result.stderr
    assert pattern in lines[0], lines[0]
    return lines[0]


def cli_process(*args: str, env: dict | None = None, cwd: Path | None = None):
    """The CLI as a real process, so that anything C writes to fd 2 is seen."""
    environment = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "tflm_gen.cli", *map(str, args)],
                          capture_output=True, text=True, env=environment, cwd=cwd,
                          timeout=600, check=False)


def assert_process_one_line(completed, pattern: str = "") -> None:
    assert completed.returncode == 2, (completed.returncode, completed.stderr)
    lines = completed.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tflm-gen: error: "), completed.stderr
    assert pattern in lines[0], lines[0]


def _save(tmp_path: Path, builder: ModelBuilder, name: str = "m.tflite") -> Path:
    path = tmp_path / name
    path.write_bytes(builder.build())
    return path


def _fully_connected(input_width: int = 2) -> ModelBuilder:
    builder = ModelBuilder()
    x = builder.input("x", [1, input_width], "float32")
    weights = builder.constant("w", np.ones((3, 2), np.float32))
    builder.output(builder.add_op("FULLY_CONNECTED", [x, weights, -1], [1, 3], "float32"))
    return builder


def _int8_chain() -> ModelBuilder:
    builder = ModelBuilder()
    x = builder.input("x", [1, 4], "int8", scale=0.5, zero_point=0)
    w = builder.constant("w", np.ones((4, 4), np.int8),
                         quantization=ir.Quantization([0.25], [0]))
    builder.output(builder.add_op("FULLY_CONNECTED", [x, w, -1], [1, 4], "int8",
                                  scale=0.5, zero_point=0))
    return builder


COMMANDS = {
    "inspect": lambda model, tmp: ["inspect", model],
    "project": lambda model, tmp: ["project", "--model", model, "-o", tmp / "p"],
    "run": lambda model, tmp: ["run", model],
    "verify": lambda model, tmp: ["verify", model],
    "plan": lambda model, tmp: ["plan", model, "-o", tmp / "planned.tflite"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_operator_without_outputs_is_one_line_for_every_command(tmp_path, command):
    builder = _int8_chain()
    builder.graph.operators[0].outputs = []
    model = _save(tmp_path, builder)
    assert_one_line(cli(*COMMANDS[command](model, tmp_path)), "has no outputs")


@pytest.mark.parametrize("scale", [math.nan, math.inf, 0.0, -0.25])
@pytest.mark.parametrize("command", ["project", "run", "plan"])
def test_bad_scales_are_one_line(tmp_path, scale, command):
    builder = _int8_chain()
    builder.graph.tensors[1].quantization = ir.Quantization([scale], [0])
    model = _save(tmp_path, builder)
    assert_one_line(cli(*COMMANDS[command](model, tmp_path)), "finite and positive")


def test_two_to_the_32_elements_is_one_line(tmp_path):
    builder = _fully_connected()
    builder.graph.tensors[0].shape = [65536, 65536]
    assert_one_line(cli("run", _save(tmp_path, builder)), "4294967296 elements")


def test_model_without_operators_is_one_line(tmp_path):
    builder = ModelBuilder()
    builder.output(builder.input("x", [1, 4], "float32"))
    assert_one_line(cli("project", "--model", _save(tmp_path, builder), "-o", tmp_path / "p"),
                    "model has no operators")


@pytest.mark.parametrize("args, pattern", [
    (["run", SINE, "-o", "missing_dir/x.npz"], "cannot write missing_dir/x.npz"),
    (["plan", SINE, "-o", "missing_dir/x.tflite"], "cannot write missing_dir/x.tflite"),
    (["inspect", SINE, "--memory", "--svg", "missing_dir/x.svg"], "missing_dir/x.svg"),
    (["plan", SINE, "-o", "."], "is a directory"),
    (["project", "--model", SINE, "-o", "/proc/tflm-gen-test/p"], "/proc/tflm-gen-test"),
    (["project", "--model", SINE, "-o", "a_file/p"], "cannot write a_file/p: File exists"),
    (["run", SINE, "-o", "a_file/y.npz"], "cannot write a_file/y.npz: Not a directory"),
])
def test_output_paths_the_os_refuses_are_one_line(tmp_path, args, pattern):
    (tmp_path / "a_file").write_text("the user's")
    assert_one_line(cli(*args, cwd=tmp_path), pattern)
    assert sorted(os.listdir(tmp_path)) == ["a_file"]
    assert (tmp_path / "a_file").read_text() == "the user's"


def test_run_writes_npz_and_adds_the_suffix(tmp_path):
    assert cli("run", SINE, "-o", tmp_path / "y").exit_code == 0
    graph = read_model(SINE.read_bytes()).subgraph
    name = graph.tensors[graph.outputs[0]].name  # keyed by name; output_0 kept as an alias
    assert sorted(np.load(tmp_path / "y.npz")) == sorted([name, "output_0"])


def test_unwritable_cache_is_one_line(tmp_path):
    # A fresh tag set so the library is not in a cache yet; /proc refuses new folders.
    completed = cli_process("run", _save(tmp_path, _fully_connected()),
                            env={"TFLM_GEN_CACHE": "/proc/tflm-gen-cache"})
    assert_process_one_line(completed, "cannot write the build cache")


@pytest.mark.parametrize("value, pattern", [
    ("-1", "'--arena-bytes'"), ("1e20", "not a valid integer"),
    ("4294967296", "'--arena-bytes'"), ("99999999999999999999", "'--arena-bytes'"),
])
def test_bad_arena_sizes_are_one_line(value, pattern):
    assert_one_line(cli("run", SINE, "--arena-bytes", value), pattern)


@pytest.mark.parametrize("args, pattern", [
    (["project"], "Missing option '--model'"),
    (["project", "--model", SINE, "-o", "x", "--bogus"], "No such option '--bogus'"),
    (["nosuch"], "No such command 'nosuch'"),
    (["run"], "Missing argument 'MODEL_PATH'"),
    (["verify", SINE, "--runs", "0"], "'--runs'"),
    (["verify", SINE, "--against", "numpy"], "'--against'"),
    (["project", "--model", SINE, "-o", "p", "--target", "../../x"], "'--target'"),
    (["project", "--model", SINE, "-o", "p", "--target", "/etc/passwd"], "'--target'"),
    (["run", SINE, "--target", "nowhere"], "'--target'"),
    (["inspect", SINE, "--memory", "--target", "../make"], "'--target'"),
    (["bench", SINE, "--target", "make"], "'--target'"),
    (["bench", SINE, "--opt", "-fplugin=x.so"], "'--opt'"),
    (["project", "--model", SINE, "-o", "p", "--tags", "../../kernels_c"], "unknown tag"),
    (["run", SINE, "--tags", "cmsis,bogus"], "unknown tag 'bogus'"),
    (["verify", SINE, "--tags", "/tmp"], "unknown tag '/tmp'"),
    (["bench", SINE, "--tags", "x\ny"], r"unknown tag 'x\ny'"),
])
def test_usage_errors_are_one_line(tmp_path, args, pattern):
    assert_one_line(cli(*args, cwd=tmp_path), pattern)
    assert sorted(os.listdir(tmp_path)) == []


def test_help_lists_targets_and_tags():
    text = cli("project", "--help").output
    assert "qemu-cortex-m4" in text and "cmsis" in text and "semihost" in text


def test_bare_command_prints_help_and_succeeds():
    result = cli()
    assert result.exit_code == 0 and "Commands:" in result.output


def test_runtime_log_is_folded_into_the_one_line(tmp_path):
    """The C kernel refuses the shapes in prepare and logs why: that text reaches the user
    inside the one error line, not as lines of its own."""
    completed = cli_process("run", _save(tmp_path, _fully_connected(input_width=5)))
    assert_process_one_line(completed, "runtime log: tflm: op 0: check failed")


def test_python_api_error_carries_the_runtime_log(tmp_path):
    from tflm_gen.errors import ModelError
    from tflm_gen.host import HostInterpreter

    with pytest.raises(ModelError, match=r"TFLM_ERR_BAD_SHAPE.*runtime log: tflm: op 0") as caught:
        HostInterpreter(_fully_connected(input_width=5).build())
    assert "\n" not in str(caught.value)


def test_forged_tensor_name_is_escaped_in_errors_and_inspect(tmp_path):
    builder = _int8_chain()
    builder.graph.tensors[0].name = FORGED
    inspected = cli("inspect", _save(tmp_path, builder, "named.tflite"))
    assert inspected.exit_code == 0
    assert r"evil\ntflm-gen: ok: all good\x1b[2J: 1x4 int8" in inspected.output
    assert not any(line.startswith("tflm-gen: ok") for line in inspected.output.splitlines())
    builder.graph.operators[0].inputs[0] = 2  # now a self-loop naming the output
    builder.graph.tensors[2].name = FORGED
    line = assert_one_line(cli("run", _save(tmp_path, builder, "loop.tflite")))
    assert r"evil\ntflm-gen: ok: all good\x1b[2J" in line


def test_forged_custom_op_name_is_escaped(tmp_path):
    builder = _fully_connected()
    builder.graph.operators[0].opcode = "CUSTOM"
    builder.graph.operators[0].custom_code = FORGED
    model = _save(tmp_path, builder)
    line = assert_one_line(cli("project", "--model", model, "-o", tmp_path / "p"))
    assert r"evil\ntflm-gen: ok: all good\x1b[2J (version 1, op 0)" in line
    inspected = cli("inspect", model).output
    assert "\x1b" not in inspected and "\nunsupported operators:\n  evil\\n" in inspected


def test_an_unexpected_error_is_one_line_too(monkeypatch):
    import tflm_gen.cli.verify

    def broken(*_args, **_kwargs):
        raise ValueError("a bug\nwith two lines")

    monkeypatch.setattr(tflm_gen.cli.verify, "verify", broken)
    line = assert_one_line(cli("verify", SINE))
    assert "internal error: ValueError: a bug | with two lines" in line
    monkeypatch.setenv("TFLM_GEN_TRACEBACK", "1")
    assert isinstance(cli("verify", SINE).exception, ValueError)


@pytest.mark.parametrize("target", ["/", ".."])
def test_dangerous_output_folders_are_refused_at_once(tmp_path, target):
    (tmp_path / "work").mkdir()
    assert_one_line(cli("project", "--model", SINE, "-o", target, cwd=tmp_path / "work"),
                    "refusing to write a project into")


def test_current_folder_with_foreign_files_is_refused_even_with_force(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    for extra in ([], ["--force"]):
        assert_one_line(cli("project", "--model", SINE, "-o", ".", *extra, cwd=tmp_path),
                        "holds entries tflm-gen did not write (notes.txt)")
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]


def test_current_folder_of_ours_is_regenerated_in_place(tmp_path):
    assert cli("project", "--model", SINE, "-o", ".", cwd=tmp_path).exit_code == 0
    inode = tmp_path.stat().st_ino
    result = cli("project", "--model", SINE, "-o", ".", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert tmp_path.stat().st_ino == inode and (tmp_path / "Makefile").is_file()
    assert not [name for name in os.listdir(tmp_path.parent) if name.startswith(".tflm-gen")]


def test_reference_runtime_log_is_folded_into_one_refusal(capfd):
    """TFLM's binding prints its reasons to fd 2 (the oracle process's log file) and raises
    a bare RuntimeError: the refusal holds what it printed meanwhile, in one line."""
    from tflm_gen.oracle_child import RuntimeRefusal, _logged

    os.write(2, b"an earlier model's complaint\n")

    def refused():
        os.write(2, b"Didn't find op for builtin opcode 'X'\nFailed to get registration\n")
        raise RuntimeError("TFLM failed to allocate tensors")

    with pytest.raises(RuntimeRefusal) as caught:
        _logged("tflm", "load", refused)
    assert str(caught.value) == (
        "the tflm oracle cannot load the model: TFLM failed to allocate tensors; its "
        "log: Didn't find op for builtin opcode 'X' | Failed to get registration")
    assert _logged("tflm", "run", lambda: 3) == 3
    capfd.readouterr()
