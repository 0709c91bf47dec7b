"""Every generated project has a README.md that tells the truth about it: its sizes are
the ones the project declares, the C example it shows compiles and runs against the
project, the regenerate command rebuilds the very same tree, and the command `project`
prints next works."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import STRICT, need_tool

from tflm_gen.cli import main
from tflm_gen.project import GenerateOptions, generate
from tflm_gen.readme import README, has_section
from tflm_gen.targets import list_targets, load_target

REPO = Path(__file__).resolve().parent.parent
SINE = REPO / "examples" / "sine" / "sine_int8.tflite"
SECTIONS = ("## What is inside", "## Using the model", "## Build and run", "## The self-test",
            "## Regenerate", "## License")


def _project(target: str) -> dict[str, bytes]:
    return generate(SINE.read_bytes(), GenerateOptions(target))


def _fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.DOTALL)


@pytest.mark.parametrize("target", list_targets())
def test_readme_states_the_projects_own_sizes_and_steps(target):
    assert has_section(target), f"templates/readme/{target}.md.j2 is missing"
    files = _project(target)
    text = files[README].decode()
    assert text.startswith("<!-- SPDX-License-Identifier: Apache-2.0 -->\n")
    assert [line for line in text.splitlines() if line.startswith("## ")] == list(SECTIONS)
    library = load_target(target).library_dir
    header = files[f"{library}/model_model_data.h"].decode()  # the default name: model
    arena = re.search(r"#define MODEL_ARENA_BYTES (\d+)", header).group(1)
    model = re.search(r"#define MODEL_MODEL_SIZE (\d+)", header).group(1)
    assert f"| arena | {arena} bytes of RAM" in text
    assert f"| model | {model} bytes of flash" in text
    for path, size in re.findall(r"^\| `([^`]+)` \| (\d+) \|", text, re.MULTILINE):
        owned = [data for name, data in files.items() if name == path or
                 (path.endswith("/") and name.startswith(path))]
        assert owned and sum(len(data) for data in owned) == int(size), path
    assert "--target " + target in text


def test_readme_example_compiles_and_runs_against_the_project(tmp_path):
    gcc = need_tool("gcc")
    files = _project("make")
    example = _fenced(files[README].decode(), "c")
    assert len(example) == 1
    sources = [tmp_path / "example.c"]
    sources[0].write_text(example[0])
    for path, data in files.items():
        if path.startswith("tflm/"):
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_bytes(data)
            if path.endswith(".c"):
                sources.append(tmp_path / path)
    program = tmp_path / "example"
    subprocess.run([gcc, *STRICT, *map(str, sources), "-o", str(program), "-lm"], check=True)
    run = subprocess.run([str(program)], check=False, capture_output=True, text=True)
    assert run.returncode == 0, run
    assert run.stdout == f"class 0: {_oracle_value_for_zero_input():f}\n"


def _oracle_value_for_zero_input() -> float:
    """The sine model's dequantised output, by the oracle, for the input the example
    writes (0.0 quantised), as the example computes it (float32 scale times integer)."""
    from tflm_gen.model.reader import read_model
    from tflm_gen.oracle import Oracle

    model = read_model(SINE.read_bytes())
    graph = model.subgraphs[0]
    source, sink = graph.tensors[graph.inputs[0]], graph.tensors[graph.outputs[0]]
    zero = np.full(source.shape, source.quantization.zero_point[0], dtype=np.int8)
    value = int(Oracle(SINE.read_bytes(), "tflm").run([zero])[0].reshape(-1)[0])
    scale = np.float32(sink.quantization.scale[0])
    return float(scale * np.float32(value - sink.quantization.zero_point[0]))


def test_project_prints_a_next_command_that_works(tmp_path):
    need_tool("make")
    out = tmp_path / "sine"
    result = CliRunner().invoke(main, ["project", "--model", str(SINE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("next: "))
    command = line[len("next: "):]
    assert command == f"make -C {shlex.quote(str(out))} test"
    run = subprocess.run(shlex.split(command), check=False, capture_output=True, text=True)
    assert run.returncode == 0 and "~~~ALL TESTS PASSED~~~" in run.stdout + run.stderr


@pytest.mark.parametrize("target", list_targets())
def test_next_command_names_the_target_and_folder(target, tmp_path):
    out = tmp_path / "x"
    result = CliRunner().invoke(main, ["project", "--model", str(SINE), "--target", target,
                                       "-o", str(out)])
    assert result.exit_code == 0, result.output
    hint = [line for line in result.output.splitlines() if line.startswith("next: ")]
    assert len(hint) == 1 and str(out) in hint[0]


def test_regenerate_command_rebuilds_the_same_tree(tmp_path):
    first = tmp_path / "first"
    args = ["project", "--model", str(SINE), "--target", "cmake", "--tags", "cmsis",
            "-o", str(first)]
    assert CliRunner().invoke(main, args).exit_code == 0
    block = _fenced((first / README).read_text(), "sh")[-1].strip()
    words = shlex.split(block)
    assert words[:2] == ["tflm-gen", "project"] and "--tags" in words and "cmsis" in words
    second = tmp_path / "second"
    words[words.index("--output") + 1] = str(second)
    assert CliRunner().invoke(main, words[1:]).exit_code == 0
    tree = {p.relative_to(first): p.read_bytes() for p in first.rglob("*") if p.is_file()}
    again = {p.relative_to(second): p.read_bytes() for p in second.rglob("*") if p.is_file()}
    readme = Path(README)
    assert tree.pop(readme).replace(str(first).encode(), b"") == \
        again.pop(readme).replace(str(second).encode(), b"")
    assert tree == again
