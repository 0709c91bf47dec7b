"""The CLI teaches itself and never shows a traceback: every command's --help has examples,
every option value of a grid of odd ones ends in success or one line on stderr, `doctor`
names the package of a missing tool, `inspect --memory` works for every target and tag,
`run` names its outputs by tensor name, and progress appears only on a terminal."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import corpus_path, need_tool

from tflm_gen import progress
from tflm_gen.cli import main
from tflm_gen.errors import ToolchainError
from tflm_gen.kernels import TAG_DESCRIPTIONS, known_tags
from tflm_gen.oracle import Oracle
from tflm_gen.project import GenerateOptions, generate
from tflm_gen.qemu import board_of, need_tools
from tflm_gen.targets import list_targets
from tflm_gen.toolchains import TOOLS, WSL

REPO = Path(__file__).resolve().parent.parent
SINE = REPO / "examples" / "sine" / "sine_int8.tflite"
MEMORY_MODEL = "kws_ref_model.tflite"  # convolutions: the cmsis tag changes its scratch


def invoke(*args, env=None):
    return CliRunner().invoke(main, [str(arg) for arg in args], env=env)


@pytest.mark.parametrize("name", sorted(main.commands))
def test_every_command_help_has_an_example(name):
    result = invoke(name, "--help")
    assert result.exit_code == 0, result.output
    examples = result.output.split("Examples:", 1)
    assert len(examples) == 2, result.output
    assert re.search(rf"^\s+tflm-gen {name}\b", examples[1], re.MULTILINE), result.output


def test_group_help_has_examples_and_every_tag_has_a_description():
    assert "Examples:" in invoke("--help").output
    assert set(TAG_DESCRIPTIONS) == set(known_tags())
    text = invoke("tags").output
    for tag in known_tags():
        assert re.search(rf"^{tag}\n    {re.escape(TAG_DESCRIPTIONS[tag][:30])}", text, re.MULTILINE)
    assert re.search(r"implied by the targets: [^\n]*qemu-cortex-m4", text), text


@pytest.mark.parametrize("name", ["run", "verify", "project", "bench", "inspect"])
def test_target_and_tags_are_listed_choices(name):
    text = invoke(name, "--help").output
    assert "cmsis|" in text and "semihost" in text  # --tags metavar lists the known tags
    if name != "verify":
        assert "qemu-cortex-m4" in text


# Odd values per option kind; every one must end in success or one error line.
ODD_CHOICES = ["", "nope", "../etc", " make", "MAKE", "qemu-cortex-m4\n"]
ODD_TAGS = ["", ",", "nope", "../x", "cmsis,,cmsis", "cmsis;semihost", "CMSIS"]
ODD_INTS = ["-1", "0", "4294967296", "1e3", "x", "99999999999999999999"]
ODD_PATHS = ["", "/", "/proc/tflm-gen-nope/x", "{tmp}", "{tmp}/missing.npy", "{tmp}/model"]
ODD_MODELS = ["", "/", "{tmp}", "{tmp}/missing.tflite", "{tmp}/empty.tflite", "{tmp}/text.tflite"]

# How each command is called when one option is varied (a fast, valid call where one
# exists; bench gets an empty model so that nothing reaches QEMU).  A new command must
# be added here.
BASE_ARGS = {
    "inspect": ["{model}"],
    "project": ["--model", "{model}", "-o", "{tmp}/project"],
    "run": ["{model}"],
    "verify": ["{model}", "--runs", "1"],
    "targets": [],
    "tags": [],
    "bench": ["{tmp}/empty.tflite"],
    "plan": ["{model}", "-o", "{tmp}/planned.tflite"],
    "partition": ["{model}", "--accelerator", "conv_only", "-o", "{tmp}/partitioned.tflite"],
    "ops": [],
    "prune": ["{model}", "--sparsity", "0.5", "-o", "{tmp}/pruned.tflite"],
    "doctor": [],
    "report": ["{model}", "-o", "{tmp}/report.html"],
}


def _odd_values(option) -> list[str]:
    kind = type(option.type).__name__
    if option.is_flag:
        return []
    if kind == "TagList":
        return ODD_TAGS
    if kind == "Choice":
        return ODD_CHOICES
    if kind in ("IntRange", "IntParamType"):
        return ODD_INTS
    return ODD_PATHS


def _grid() -> list[tuple[str, list[str]]]:
    cases = []
    for name, command in sorted(main.commands.items()):
        base = BASE_ARGS.get(name, ["<add this command to BASE_ARGS>"])
        cases.append((name, base))
        for option in command.params:
            if option.param_type_name == "argument":
                cases += [(name, [model if part == "{model}" else part for part in base])
                          for model in ODD_MODELS if "{model}" in base]
                continue
            flag = option.opts[-1]
            if option.is_flag:
                cases.append((name, [*base, flag]))
            cases += [(name, [*base, flag, value]) for value in _odd_values(option)]
            if flag == "--model":
                cases += [(name, ["--model", model, "-o", "{tmp}/p"]) for model in ODD_MODELS]
    return cases


def _assert_clean(result) -> None:
    """Success, verify's or bench's exit 1 (a verdict), or exactly one error line."""
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.exception)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, \
        result.stderr
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("tflm-gen: error: "), result.stderr
    else:
        assert result.exception is None or isinstance(result.exception, SystemExit), \
            result.exception


def test_no_option_value_shows_a_traceback(tmp_path):
    (tmp_path / "empty.tflite").write_bytes(b"")
    (tmp_path / "text.tflite").write_text("not a model\n")
    (tmp_path / "model").write_bytes(SINE.read_bytes())
    cases = _grid()
    assert len(cases) > 150 and {name for name, _ in cases} == set(main.commands)
    for name, args in cases:
        args = [str(part).replace("{tmp}", str(tmp_path)).replace("{model}", str(SINE))
                for part in args]
        assert not any("<add this command" in part for part in args), name
        result = invoke(name, *args)
        try:
            _assert_clean(result)
        except AssertionError as error:
            raise AssertionError(f"tflm-gen {name} {args}: {error}") from None


def test_doctor_names_the_package_of_a_missing_tool(tmp_path, monkeypatch):
    cc = need_tool("cc")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "cc").symlink_to(cc)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("CC", raising=False)
    result = invoke("doctor")
    assert result.exit_code == 0, result.output
    assert re.search(r"^host cc\s+\S.*\d+\.\d+", result.output, re.MULTILINE), result.output
    assert re.search(r"^arm-none-eabi-gcc\s+MISSING", result.output, re.MULTILINE)
    assert "sudo apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi" in result.output
    assert "brew install qemu" in result.output and "winget install" in result.output
    assert f"1 of {len(TOOLS)} tools found" in result.output
    assert re.search(r"^all missing ones on Debian/Ubuntu: sudo apt-get install make "
                     r"gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm .*simavr clang "
                     r"libclang-rt-14-dev chromium$",
                     result.output, re.MULTILINE)
    assert "DECIMAL_DIG" in result.output  # the arduino-builder workaround


def test_not_found_errors_carry_the_install_hint(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ToolchainError, match="apt-get install gcc-arm-none-eabi .*winget"):
        need_tools(board_of("qemu-cortex-m4"))
    with pytest.raises(ToolchainError, match="apt-get install gcc-riscv64-unknown-elf"):
        need_tools(board_of("qemu-riscv32"))
    # The host compiler, on a fresh cache so the library must be built.
    monkeypatch.setenv("TFLM_GEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CC", raising=False)
    result = invoke("run", SINE)
    assert result.exit_code == 2
    assert "no C compiler found" in result.stderr and "apt-get install gcc" in result.stderr


def _arena(output: str) -> int:
    return int(re.search(r"^arena: ([\d,]+) bytes", output, re.MULTILINE).group(1).replace(",", ""))


def test_inspect_memory_works_for_every_target_and_tag():
    need_tool("cc")
    model = corpus_path(MEMORY_MODEL)
    arenas = {}
    for tags in ("", "cmsis"):
        for target in list_targets():
            result = invoke("inspect", model, "--memory", "--target", target, "--tags", tags)
            assert result.exit_code == 0, (target, tags, result.stderr)
            assert f"on {target}" in result.output
            arenas.setdefault(tags, set()).add(_arena(result.output))
        # the same on every target, and what a project declares
        declared = generate(model.read_bytes(), GenerateOptions("make", tuple(filter(None, [tags]))))
        size = re.search(rb"MODEL_ARENA_BYTES (\d+)u", declared["tflm/model_model_data.h"])
        assert arenas[tags] == {int(size.group(1))}, (tags, arenas)


def test_run_names_outputs_and_inputs_by_tensor_name(tmp_path):
    need_tool("cc")
    result = invoke("run", SINE, "-o", tmp_path / "random.npz")
    assert result.exit_code == 0 and "random inputs" in result.stderr
    x = np.array([[17]], dtype=np.int8)
    np.savez(tmp_path / "x.npz", **{_input_name(): x})
    result = invoke("run", SINE, "-i", tmp_path / "x.npz", "-o", tmp_path / "y.npz")
    assert result.exit_code == 0 and result.stderr == "", result.stderr
    saved = np.load(tmp_path / "y.npz")
    name = _output_name()
    assert set(saved.files) == {name, "output_0"} and f"output_0 '{name}'" in result.output
    expected = Oracle(SINE.read_bytes(), "tflm").run([x])[0]
    assert np.array_equal(saved[name], expected) and np.array_equal(saved["output_0"], expected)
    verified = invoke("verify", SINE, "--runs", "1", "-i", tmp_path / "x.npz")
    assert verified.exit_code == 0 and f"output_0 '{name}': 0 of 1 elements differ" in \
        verified.output


def _tensor_name(kind: str) -> str:
    from tflm_gen.model.reader import read_model

    graph = read_model(SINE.read_bytes()).subgraph
    return graph.tensors[getattr(graph, kind)[0]].name


def _input_name() -> str:
    return _tensor_name("inputs")


def _output_name() -> str:
    return _tensor_name("outputs")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_drawn_on_a_terminal_only(monkeypatch):
    drawn = _Terminal()

    def console():
        from rich.console import Console

        return Console(file=drawn, force_terminal=True, width=100)

    monkeypatch.setattr(progress, "_console", console)
    monkeypatch.setattr(progress, "on_terminal", lambda: True)
    with progress.activity("outer step"):
        assert list(progress.tracked(range(3), "inner loop")) == [0, 1, 2]
    assert "outer step" in drawn.getvalue() and "inner loop" in drawn.getvalue()
    monkeypatch.setattr(progress, "on_terminal", lambda: False)
    before = drawn.getvalue()
    with progress.activity("hidden"):
        assert list(progress.tracked(range(2), "hidden too")) == [0, 1]
    assert drawn.getvalue() == before


def test_readme_and_ci_name_the_packages_of_the_toolchain_table():
    readme = (REPO / "README.md").read_text()
    ci_packages = set(re.search(r"apt-get install -y -q --no-install-recommends \\\n(.*?)\n\n",
                                (REPO / ".ci" / "run").read_text(), re.DOTALL).group(1).split())
    for tool in TOOLS:
        windows = "WSL (Ubuntu)" if tool.windows == WSL else f"`{tool.windows}`"
        row = rf"\| {re.escape(tool.name)} \| .* \| `{re.escape(tool.debian)}` \| "
        row += rf"`{re.escape(tool.macos)}` \| {re.escape(windows)}"
        assert re.search(row, readme), tool.name
        packages = set(tool.debian.split("install", 1)[1].split())
        assert packages <= ci_packages, (tool.name, packages - ci_packages)
