"""Cross-compiled projects on emulated boards: every listed model runs under QEMU bit-exact
with TFLM (the expected output embedded by the generator comes from the oracle), `run
--target` returns the board's outputs, `bench` counts instructions exactly run to run, and a
model too big for a board gets a clear error.  Cross builds are cached by content hash."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import need_corpus, need_tool

from tflm_gen import qemu
from tflm_gen.bench import JSON_KEYS, bench
from tflm_gen.cli import main
from tflm_gen.cli import main as main_cli
from tflm_gen.errors import UnsupportedModelError
from tflm_gen.host import HostInterpreter
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.optimize import device_model
from tflm_gen.output import write_tree
from tflm_gen.project import GenerateOptions, generate

REPO = Path(__file__).resolve().parent.parent
SINE = REPO / "examples" / "sine"

# Every supported corpus model on the M4; a spread of op sets and dtypes on the others.
BOARD_MODELS = {
    "qemu-cortex-m4": [
        "hello_world_int8.tflite", "hello_world_float.tflite", "sine_int8.tflite",
        "sine_float.tflite", "micro_speech_quantized.tflite", "kws_ref_model.tflite",
        "ad01_int8.tflite", "person_detect.tflite", "vww_96_int8.tflite",
        "pretrainedResnet_quant.tflite", "test_conv_model.tflite", "simple_add_model.tflite",
        "model_ToyCar_quant_fullint.tflite",
        "kws_ref_model_float32.tflite",  # hybrid: its expected output comes from LiteRT
    ],
    "qemu-cortex-m7": ["hello_world_int8.tflite", "sine_float.tflite", "kws_ref_model.tflite",
                       "ad01_int8.tflite", "test_conv_model.tflite"],
    "qemu-cortex-m55": ["hello_world_float.tflite", "sine_int8.tflite",
                        "micro_speech_quantized.tflite", "pretrainedResnet_quant.tflite",
                        "person_detect.tflite"],
    "qemu-riscv32": ["hello_world_int8.tflite", "sine_float.tflite",
                     "micro_speech_quantized.tflite", "kws_ref_model.tflite",
                     "test_conv_model.tflite"],
}
CASES = [(target, name) for target, names in BOARD_MODELS.items() for name in names]
# Every board; the corpus runs of the M0, M3 and M33 are in test_cores.py.
BOARDS = [*BOARD_MODELS, "qemu-cortex-m0", "qemu-cortex-m3", "qemu-cortex-m33"]


def model_bytes(name: str) -> bytes:
    if name.startswith("sine_"):
        return (SINE / name).read_bytes()
    return (need_corpus() / name).read_bytes()


def need_board(target: str) -> dict:
    board = qemu.board_of(target)
    need_tool(board["toolchain"] + "gcc")
    need_tool(board["qemu"])
    need_tool("make")
    return board


@pytest.mark.parametrize("target,name", CASES)
def test_model_runs_bit_exact_on_board(target, name):
    need_board(target)
    _, completed = qemu.run_project(model_bytes(name), target)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert qemu.PASSED in completed.stdout
    # The arena the generator computed on the 64-bit host is exactly what the 32-bit
    # runtime uses: the project declares it, and the board reports the same number.
    used, declared = re.search(r"arena used: (\d+) of (\d+)", completed.stdout).groups()
    assert used == declared


@pytest.mark.parametrize("target", BOARDS)
def test_generated_project_make_run(target, tmp_path):
    """The user's path: `tflm-gen project --target ...`, `make run` (the self-test, as
    `make test`), then the app with `make run-app`."""
    need_board(target)
    model = SINE / "sine_int8.tflite"
    runner = CliRunner()
    result = runner.invoke(main, ["project", "--model", str(model), "--target", target,
                                  "-o", str(tmp_path / "p")])
    assert result.exit_code == 0, result.output
    made = subprocess.run(["make", "-s", "-j2", "run"], cwd=tmp_path / "p", capture_output=True,
                          text=True, check=False, timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    assert qemu.PASSED in made.stdout
    app = subprocess.run(["make", "-s", "-j2", "run-app"], cwd=tmp_path / "p",
                         capture_output=True, text=True, check=False, timeout=300)
    assert app.returncode == 0 and app.stdout.count("score ") == 3, app.stdout + app.stderr


def test_wrong_output_gives_failing_exit_code():
    """A differing byte must reach the shell as a non-zero exit (SYS_EXIT_EXTENDED)."""
    target = "qemu-cortex-m4"
    need_board(target)
    files = qemu.project_files(model_bytes("sine_int8.tflite"), target)
    text = files["test/test_data.h"].decode()
    head, tail = text.split("expected_output_0", 1)
    body, rest = tail.split("0x", 1)
    flipped = f"{int(rest[:2], 16) ^ 1:02x}"
    files["test/test_data.h"] = (head + "expected_output_0" + body + "0x" + flipped + rest[2:]).encode()
    completed = qemu.run(qemu.build(files, target))
    assert completed.returncode == 1, completed.stdout
    assert "~~~SOME TESTS FAILED~~~" in completed.stdout


@pytest.mark.parametrize("target,name", [("qemu-cortex-m4", "micro_speech_quantized.tflite"),
                                         ("qemu-riscv32", "hello_world_float.tflite")])
def test_run_on_target_returns_outputs(target, name, tmp_path):
    need_board(target)
    data = model_bytes(name)
    host = HostInterpreter(device_model(data)[0])
    rng = np.random.default_rng(7)
    inputs = []
    for index, (shape, dtype) in enumerate(host.input_details()):
        if dtype.kind == "f":
            array = rng.uniform(-1, 1, size=shape).astype(dtype)
        else:
            array = rng.integers(-128, 127, size=shape, endpoint=True).astype(dtype)
        np.save(tmp_path / f"in{index}.npy", array)
        inputs.append(array)
    arguments = ["run", str(need_corpus() / name), "--target", target, "-o", str(tmp_path / "o.npz")]
    for index in range(len(inputs)):
        arguments += ["-i", str(tmp_path / f"in{index}.npy")]
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 0, result.output
    assert "outputs equal to the host run's" in result.output
    saved = np.load(tmp_path / "o.npz")
    for index, expected in enumerate(host.run(inputs)):
        assert saved[f"output_{index}"].dtype == expected.dtype
        assert saved[f"output_{index}"].tobytes() == expected.tobytes()


def test_run_rejects_a_host_only_target():
    result = CliRunner().invoke(main, ["run", str(SINE / "sine_int8.tflite"), "--target", "make"])
    assert result.exit_code == 2
    assert "'make' is not one of" in result.output and "qemu-cortex-m4" in result.output


@pytest.mark.parametrize("target,name", [("qemu-cortex-m4", "kws_ref_model.tflite"),
                                         ("qemu-riscv32", "hello_world_int8.tflite")])
def test_bench_is_exact_run_to_run(target, name):
    need_board(target)
    data = model_bytes(name)
    first, second = bench(data, target), bench(data, target)
    assert first["bit_exact"]
    for key in ("instructions_per_invoke", "init_instructions", "ops"):
        assert first[key] == second[key], key
    kernels = sum(op["instructions"] for op in first["ops"])
    assert 0 < kernels < first["instructions_per_invoke"]
    assert all(op["instructions"] > 0 for op in first["ops"])


def test_bench_json_has_the_issue_keys(tmp_path):
    need_board("qemu-cortex-m4")
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(main, ["bench", str(SINE / "sine_int8.tflite"), "--target",
                                       "qemu-cortex-m4", "--json", str(out)])
    assert result.exit_code == 0, result.output
    figures = json.loads(out.read_text())
    assert set(JSON_KEYS) <= set(figures)
    assert {"index", "op", "instructions", "cycles", "runs_on"} == set(figures["ops"][0])
    assert figures["text"] >= figures["text_runtime"] + figures["text_kernels"] + figures["model_bytes"]
    assert figures["model_bytes"] >= len(model_bytes("sine_int8.tflite"))
    assert figures["bss"] >= figures["arena_bytes"] > 0


def test_model_too_big_for_board_is_a_clear_error(tmp_path):
    """2.5 MB of float weights cannot fit the 2 MB SRAM that holds the Cortex-M55 board's
    constants: the project command says so with the sizes, before any build."""
    builder = ModelBuilder()
    x = builder.input("x", [1, 256], "float32")
    weights = np.random.default_rng(0).uniform(-1, 1, size=(2500, 256)).astype(np.float32)
    w = builder.constant("w", weights)
    builder.output(builder.add_op("FULLY_CONNECTED", [x, w], [1, 2500], "float32"))
    with pytest.raises(UnsupportedModelError, match=r"model \(\d+ bytes\) does not fit "
                                                    r"qemu-cortex-m55: SRAM holds 2097152"):
        generate(builder.build(), GenerateOptions("qemu-cortex-m55"))
    (tmp_path / "big.tflite").write_bytes(builder.build())
    result = CliRunner().invoke(main_cli, ["project", "--model", str(tmp_path / "big.tflite"),
                                           "--target", "qemu-cortex-m55", "-o",
                                           str(tmp_path / "out")])
    assert result.exit_code == 2 and "does not fit" in result.output
    assert "Traceback" not in result.output


def test_write_tree_of_qemu_project_is_complete(tmp_path):
    """The board files are part of the tree and the Makefile names every source."""
    files = generate(SINE.joinpath("sine_int8.tflite").read_bytes(), GenerateOptions("qemu-riscv32"))
    write_tree(files, tmp_path / "p")
    makefile = (tmp_path / "p" / "Makefile").read_text()
    for name in ("startup.c", "tflm/tflm_interpreter.c", "tflm/model_model_data.c"):
        assert f"\t{name}" in makefile
    assert "APP_SOURCES = main.c\n" in makefile and "TEST_SOURCES = test/main.c\n" in makefile
    assert "-M virt" in makefile and "picolibc" in makefile
    assert "semihost_call" in (tmp_path / "p" / "tflm" / "tflm_debug_log.c").read_text()


@pytest.mark.parametrize("target", BOARDS)
def test_every_c_file_compiles_strictly_for_the_board(target, tmp_path):
    """Drag and drop on the board: each .c alone, no -I or -D, warnings as errors."""
    board = need_board(target)
    files = generate(SINE.joinpath("sine_float.tflite").read_bytes(), GenerateOptions(target))
    write_tree(files, tmp_path / "p")
    strict = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", *board["cpu_flags"]]
    for source in sorted(p for p in files if p.endswith(".c")):
        command = [board["toolchain"] + "gcc", *strict, "-c", source, "-o", str(tmp_path / "x.o")]
        result = subprocess.run(command, cwd=tmp_path / "p", capture_output=True, text=True,
                                check=False)
        assert result.returncode == 0, f"{source}:\n{result.stderr}"
