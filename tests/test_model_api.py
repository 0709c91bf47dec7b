"""The typed model API (`<name>.h`) as a user's application uses it: a small program written
here (not the app template) fills each input through `<name>_quantize_<input>`, invokes,
and prints the output, its `<name>_dequantize_<output>` values and `<name>_argmax_<output>`.
Everything it prints is checked against tflite-micro: the quantised input against TFLM's
QUANTIZE kernel on the same reals, the output against TFLM run on that quantised input,
the dequantised reals against the output's scale and zero point applied in float32, and
the argmax against the oracle's output.  On the host (gcc) and on the Cortex-M4 under QEMU;
then two projects of different `--name` merged into one `tflm/` folder and one program."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import STRICT, need_corpus, need_tool, run_with_library

from tflm_gen import qemu
from tflm_gen.cli import main
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.reader import read_model
from tflm_gen.model_api import api_values
from tflm_gen.optimize import device_model
from tflm_gen.oracle import Oracle
from tflm_gen.output import write_tree
from tflm_gen.project import GenerateOptions, generate

REPO = Path(__file__).resolve().parent.parent
SINE = REPO / "examples" / "sine" / "sine_int8.tflite"
MODELS = {"sine": "sine_int8.tflite", "kws": "kws_ref_model.tflite"}  # --name: model

# One function per model: reals k * scale / 2 for k in [-300, 300] (ties and saturation
# included) quantised by the helper, one invoke, every value printed as "<name> <kind> ...";
# then argmax again over values written with ties (0 1 2 0 1 2 ...).
_RUN_MODEL = r"""
static int run_{name}(void) {{
  uint32_t i;
  {in_type} *input;
  {out_type} *output;
  if ({name}_init() != 0) return 1;
  input = {name}_input_{input}();
  for (i = 0; i < {NAME}_INPUT_{INPUT}_COUNT; ++i) {{
    float real = (float)((int32_t)((i * 7919u) % 601u) - 300) * ({NAME}_INPUT_{INPUT}_SCALE * 0.5f);
    input[i] = {name}_quantize_{input}(real);
    tflm_printf("{name} f %lx %d\n", (unsigned long)bits(real), (int)input[i]);
  }}
  if ({name}_invoke() != 0) return 1;
  output = {name}_output_{output}();
  for (i = 0; i < {NAME}_OUTPUT_{OUTPUT}_COUNT; ++i) {{
    tflm_printf("{name} o %d %lx\n", (int)output[i],
                (unsigned long)bits({name}_dequantize_{output}(output[i])));
  }}
  tflm_printf("{name} a %d\n", {name}_argmax_{output}());
  for (i = 0; i < {NAME}_OUTPUT_{OUTPUT}_COUNT; ++i) output[i] = ({out_type})((i * 5u) % 3u);
  tflm_printf("{name} t %d\n", {name}_argmax_{output}()); /* ties: the first maximum */
  return 0;
}}
"""
_MAIN = r"""
#include <string.h>
{includes}
static uint32_t bits(float value) {{
  uint32_t word;
  memcpy(&word, &value, sizeof(word));
  return word;
}}
{functions}
int main(void) {{
  int failed = 0;
{calls}
  tflm_printf(failed ? "api failed\n" : "api done\n");
  return failed;
}}
"""


def model_bytes(name: str) -> bytes:
    return SINE.read_bytes() if name == "sine" else (need_corpus() / MODELS[name]).read_bytes()


def application(names: list[str], lib: str) -> str:
    """The C program that runs the models of project names `names` through their typed API."""
    functions = []
    for name in names:
        values = api_values(read_model(device_model(model_bytes(name))[0]), name)
        first_in, first_out = values["api_inputs"][0], values["api_outputs"][0]
        functions.append(_RUN_MODEL.format(
            name=name, NAME=name.upper(), input=first_in["id"], INPUT=first_in["ID"],
            output=first_out["id"], OUTPUT=first_out["ID"], in_type=first_in["ctype"],
            out_type=first_out["ctype"]))
    includes = "".join(f'#include "{lib}/{name}.h"\n' for name in names)
    return _MAIN.format(includes=includes + f'#include "{lib}/tflm_printf.h"\n',
                        functions="".join(functions),
                        calls="".join(f"  failed |= run_{name}();\n" for name in names))


_BASES = {"f": (16, 10), "o": (10, 16), "a": (10,), "t": (10,)}  # of the fields each kind of line prints


def printed(text: str, name: str, kind: str) -> list[list[int]]:
    """The fields of the "<name> <kind> ..." lines the application printed."""
    return [[int(field, base) for field, base in zip(line.split()[2:], _BASES[kind])]
            for line in text.splitlines() if line.startswith(f"{name} {kind} ")]


def _float32(words) -> np.ndarray:
    return np.array(words, dtype=np.uint32).view(np.float32)


def tflm_quantize(reals: np.ndarray, dtype: str, scale: float, zero_point: int) -> np.ndarray:
    """The reals through TFLM's QUANTIZE kernel with the input's parameters."""
    builder = ModelBuilder()
    x = builder.input("x", [reals.size], "float32")
    builder.output(builder.add_op("QUANTIZE", [x], [reals.size], dtype, scale=scale,
                                  zero_point=zero_point))
    return Oracle(builder.build(), "tflm").run([reals])[0]


def check_against_tflm(text: str, name: str) -> None:
    """Every value the application printed for model `name`, checked against tflite-micro."""
    model = model_bytes(name)
    graph = read_model(model).subgraphs[0]
    source, target = graph.tensors[graph.inputs[0]], graph.tensors[graph.outputs[0]]
    filled = np.array(printed(text, name, "f"))
    assert len(filled) == int(np.prod(source.shape)), text[-2000:]
    reals = _float32(filled[:, 0])
    quantised = filled[:, 1].astype(source.dtype)
    scale, zero_point = source.quantization.scale[0], source.quantization.zero_point[0]
    assert np.array_equal(tflm_quantize(reals, source.dtype, scale, zero_point), quantised)

    expected = Oracle(model, "tflm").run([quantised.reshape(source.shape)])[0].ravel()
    shown = np.array(printed(text, name, "o"))
    assert np.array_equal(shown[:, 0].astype(target.dtype), expected)
    out_scale, out_zero = target.quantization.scale[0], target.quantization.zero_point[0]
    reals_out = np.float32(out_scale) * (expected.astype(np.int32) - out_zero).astype(np.float32)
    assert np.array_equal(_float32(shown[:, 1]).view(np.uint32), reals_out.view(np.uint32))
    assert printed(text, name, "a") == [[int(np.argmax(expected))]]
    ties = np.arange(expected.size) * 5 % 3
    assert printed(text, name, "t") == [[int(np.argmax(ties))]]


def host_program(folder: Path, program: str) -> str:
    """`program` (a C file at the root of `folder`) built with every tflm/*.c and run."""
    ran = run_with_library(folder, "api_app", program, timeout=300)
    return ran.stdout + ran.stderr


@pytest.mark.parametrize("name", list(MODELS))
def test_typed_api_application_on_host_matches_tflm(name, tmp_path):
    write_tree(generate(model_bytes(name), GenerateOptions("make", name=name)), tmp_path)
    check_against_tflm(host_program(tmp_path, application([name], "tflm")), name)


@pytest.mark.parametrize("name", list(MODELS))
def test_typed_api_application_on_cortex_m4_matches_tflm(name):
    target = "qemu-cortex-m4"
    board = qemu.board_of(target)
    for tool in (board["toolchain"] + "gcc", board["qemu"], "make"):
        need_tool(tool)
    files = generate(model_bytes(name), GenerateOptions(target, name=name))
    files[qemu.SELF_TEST_MAIN] = application([name], "../tflm").encode()  # the ELF qemu runs
    completed = qemu.run(qemu.build(files, target))
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr
    check_against_tflm(completed.stdout, name)


def test_two_named_projects_merge_into_one_program(tmp_path):
    """`tflm/` of two projects of different names copied into one folder: the files both
    have are byte-identical (runtime, shared kernels), and one program runs both models."""
    merged = tmp_path / "merged" / "tflm"
    merged.mkdir(parents=True)
    for name in MODELS:
        (tmp_path / f"{name}.tflite").write_bytes(model_bytes(name))
        result = CliRunner().invoke(main, ["project", "--model", str(tmp_path / f"{name}.tflite"),
                                           "--name", name, "-o", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
        for path in sorted((tmp_path / name / "tflm").iterdir()):
            if (merged / path.name).exists():
                assert (merged / path.name).read_bytes() == path.read_bytes(), path.name
            shutil.copy(path, merged / path.name)
    text = host_program(merged.parent, application(list(MODELS), "tflm"))
    for name in MODELS:
        check_against_tflm(text, name)


def test_app_template_builds_and_runs_on_host_and_cortex_m4(tmp_path):
    """The generated main.c (the app, through `make`) with warnings as errors, on the host
    and cross-compiled for QEMU; it prints a score per invoke."""
    need_tool("make")
    host = tmp_path / "host"
    write_tree(generate(SINE.read_bytes(), GenerateOptions("make", name="sine")), host)
    flags = "CFLAGS=" + " ".join([*STRICT, "-O2"])
    subprocess.run(["make", "-s", flags], cwd=host, check=True, capture_output=True)
    ran = subprocess.run(["./build/app"], cwd=host, capture_output=True, text=True, check=False)
    assert ran.returncode == 0 and ran.stderr.count("fully_connected_2: top 0, score ") == 3, ran
    board = qemu.board_of("qemu-cortex-m4")
    need_tool(board["toolchain"] + "gcc")
    need_tool(board["qemu"])
    cross = tmp_path / "cross"
    write_tree(generate(SINE.read_bytes(), GenerateOptions("qemu-cortex-m4", name="sine")), cross)
    ran = subprocess.run(["make", "-s", "-j2", "run-app", "OPT=-O2 -Werror"], cwd=cross,
                         capture_output=True, text=True, timeout=300, check=False)
    assert ran.returncode == 0 and ran.stdout.count("score ") == 3, ran.stdout + ran.stderr


@pytest.mark.parametrize("name,why", [
    ("", "is not a project name"), ("Model", "is not a project name"),
    ("9lives", "is not a project name"), ("tflm_x", "is not a project name"),
    ("a-b", "is not a project name"), ("x" * 41, "is not a project name"),
    ("fully_connected", "is the name of a runtime or kernel file"),  # would replace a kernel
    ("conv", "is the name of a runtime or kernel file"),  # one this model does not use
])
def test_bad_names_are_refused_in_one_line(name, why, tmp_path):
    result = CliRunner().invoke(main, ["project", "--model", str(SINE), "--name", name,
                                       "-o", str(tmp_path / "p")])
    assert result.exit_code == 2 and why in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "p").exists()


@pytest.mark.parametrize("stem,name", [("sine_int8", "sine_int8"), ("KWS Ref-Model", "kws_ref_model"),
                                        ("2d-conv", "m_2d_conv"), ("tflm", "m_tflm"), ("---", "model"),
                                        ("tflm" + "x" * 50, "m_tflm" + "x" * 34),
                                        ("softmax", "m_softmax")])
def test_default_name_is_the_stem_made_an_identifier(stem, name, tmp_path):
    shutil.copy(SINE, tmp_path / f"{stem}.tflite")
    result = CliRunner().invoke(main, ["project", "--model", str(tmp_path / f"{stem}.tflite"),
                                       "-o", str(tmp_path / "p")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "p" / "tflm" / f"{name}.h").is_file()
    assert re.search(rf"^int {name}_init\(void\);$", (tmp_path / "p" / "tflm" / f"{name}.h")
                     .read_text(), re.MULTILINE)


def test_untrusted_tensor_names_become_safe_identifiers(tmp_path):
    """A name that would end the comment and start a macro, the same name twice, and an
    empty name: identifiers from the text, `input1` / `output0` where it cannot give one,
    and the header still compiles with the app."""
    need_tool("make")
    builder = ModelBuilder()
    quant = {"scale": 0.5, "zero_point": 3}
    first = builder.input("x */\n#define evil 1", [1, 4], "int8", **quant)
    second = builder.input("x */\n#define evil 1", [1, 4], "int8", **quant)
    builder.output(builder.add_op("ADD", [first, second], [1, 4], "int8", **quant))
    builder.graph.tensors[builder.graph.outputs[0]].name = ""
    write_tree(generate(builder.build(), GenerateOptions("make", name="odd")), tmp_path)
    header = (tmp_path / "tflm" / "odd.h").read_text()
    declared = re.findall(r"^\w+ \*(odd_\w+)\(void\);$", header, re.MULTILINE)
    assert declared == ["odd_input_x_define_evil_1", "odd_input_input1", "odd_output_output0"]
    assert not re.search(r"^#define evil", header, re.MULTILINE)
    assert header.count("*/") == header.count("/*")
    flags = "CFLAGS=" + " ".join([*STRICT, "-O1"])
    subprocess.run(["make", "-s", flags], cwd=tmp_path, check=True, capture_output=True)
