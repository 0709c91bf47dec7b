"""`--weights separate` (tflm_gen/weights.py): the mini flatbuffer and the weight array run
bit-exact with TFLM on the user's model, on the host with the reference and cmsis kernels
and on an emulated Cortex-M4; the arena does not change; the joined form is a .tflite
LiteRT runs; a make project builds and passes its self-test with the weights in a named
section; the C loader refuses a weight array too short or an offset past its end."""

from __future__ import annotations

import importlib.util
import json
import struct
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import REPO_ROOT, STRICT, corpus_path, need_corpus, need_tool
from op_oracle import assert_bit_exact, run_tflm
from test_runtime_c import run_sanitized

from tflm_gen import arena as arena_model
from tflm_gen import qemu
from tflm_gen.cli import main
from tflm_gen.errors import InputError
from tflm_gen.host import (
    DEFAULT_ARENA_BYTES,
    HostInterpreter,
    _aligned_copy,
    _ffi,
    device_interpreter,
)
from tflm_gen.inputs import random_inputs
from tflm_gen.inspect import weight_bytes
from tflm_gen.kernels import host_tags
from tflm_gen.model import ir
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model
from tflm_gen.oracle import Oracle
from tflm_gen.output import write_tree
from tflm_gen.project import GenerateOptions, generate
from tflm_gen.status import status_name
from tflm_gen.weights import ALIGNMENT, separate, weights_start

MODELS = ["kws_ref_model.tflite", "vww_96_int8.tflite", "pretrainedResnet_quant.tflite",
          "ad01_int8.tflite", "person_detect.tflite"]


def _device(name: str, tags: tuple[str, ...] = ()) -> bytes:
    return device_model(corpus_path(name).read_bytes(), tags)[0]


@pytest.mark.parametrize("tags", [(), ("cmsis",)], ids=["reference", "cmsis"])
@pytest.mark.parametrize("name", MODELS)
def test_separate_weights_run_bit_exact_with_tflm_and_the_same_arena(name, tags):
    original = corpus_path(name).read_bytes()
    device = _device(name, tags)
    ours = device_interpreter(device, host_tags(tags), weights="separate")
    inputs = random_inputs(ours.model, seed=1)
    for got, expected in zip(ours.run(inputs), run_tflm(original, inputs), strict=True):
        assert_bit_exact(got, expected, name)
    whole = HostInterpreter(device, host_tags(tags))
    assert ours.arena_used_bytes == whole.arena_used_bytes
    if not tags:  # the arena computed without a compiler stays the one the project declares
        used, _ = arena_model.arena_sizes(read_model(device))
        assert ours.arena_used_bytes == used


@pytest.mark.parametrize("name", MODELS)
def test_the_blob_holds_every_constant_aligned_and_the_mini_flatbuffer_none(name):
    device = _device(name)
    split = separate(device)
    assert len(split.mini) < len(device) / 2
    whole, rebuilt = read_model(device), read_model(split.joined())
    constants = {tensor.buffer for graph in whole.subgraphs for tensor in graph.tensors
                 if ir.is_constant(whole, tensor)}
    assert constants <= {each.index for each in split.buffers}
    for each in split.buffers:
        assert rebuilt.buffers[each.index] == whole.buffers[each.index]  # located at its bytes
        assert each.offset % ALIGNMENT == 0
        assert split.weights[each.offset:each.offset + each.size] == whole.buffers[each.index].data
        assert struct.pack("<Q", weights_start(len(split.mini)) + each.offset) in split.mini


def test_the_joined_model_is_a_tflite_litert_runs():
    device = _device("kws_ref_model.tflite")
    inputs = random_inputs(read_model(device), seed=2)
    joined = Oracle(separate(device).joined(), "litert").run(inputs)
    for got, expected in zip(joined, Oracle(device, "litert").run(inputs), strict=True):
        assert_bit_exact(got, expected)


def test_a_filter_and_its_bias_share_one_zero_point_vector():
    """The writer puts each distinct numeric vector once (tflm_gen/model/writer.py): a
    per-channel filter and its bias hold the same C int64 zeros, written once."""
    device = _device("kws_ref_model.tflite")
    graph = read_model(device).subgraphs[0]
    conv = next(op for op in graph.operators if op.opcode == "CONV_2D")
    filter_, bias = (graph.tensors[index] for index in conv.inputs[1:3])
    channels = len(filter_.quantization.zero_point)
    assert channels > 1 and bias.quantization.zero_point == filter_.quantization.zero_point
    vector = struct.pack("<I", channels) + bytes(8 * channels)
    assert device.count(vector) == 1
    assert separate(device).mini.count(vector) == 1


def test_the_mini_flatbuffer_saves_three_quarters_on_average_over_the_int8_corpus():
    """Issue 15's goal (the paper's average), reference kernels' device models."""
    spec = importlib.util.spec_from_file_location("weights_table",
                                                  REPO_ROOT / "benchmarks" / "weights_table.py")
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    savings = [split["saving"] for split in table.summaries((), need_corpus()).values()]
    assert len(savings) >= 5
    assert sum(savings) / len(savings) >= 0.75


def _init_status(interpreter: HostInterpreter, mini: bytes, weights: bytes | None,
                 size: int) -> str:
    """Init of the C runtime with `mini` and the first `size` bytes said of `weights`."""
    lib, model = interpreter._lib, _aligned_copy(mini)
    blob = _ffi.NULL if weights is None else _aligned_copy(weights)  # None: a whole init
    status = lib.tflm_interpreter_init_separate(
        interpreter._state, model, len(mini), blob, size, lib.tflm_host_resolver(),
        interpreter._arena, DEFAULT_ARENA_BYTES, _ffi.NULL)
    return status_name(status)


def test_the_c_loader_refuses_weights_too_short_or_offsets_past_their_end():
    split = separate(_device("kws_ref_model.tflite"))
    interpreter = HostInterpreter(split.mini, weights=split.weights)
    full = len(split.weights)
    assert _init_status(interpreter, split.mini, split.weights, full) == "TFLM_OK"
    for size in (0, 1, full - 1):
        assert _init_status(interpreter, split.mini, split.weights, size) == "TFLM_ERR_MODEL_WEIGHTS"
    assert _init_status(interpreter, split.mini, None, 0) == "TFLM_ERR_MODEL_WEIGHTS"
    last = max(split.buffers, key=lambda each: each.offset)
    start = weights_start(len(split.mini))
    offset = struct.pack("<Q", start + last.offset)
    assert split.mini.count(offset) == 1
    for corrupt in (start + full - last.size + 1, (1 << 32) + start + last.offset):
        mini = split.mini.replace(offset, struct.pack("<Q", corrupt))
        assert _init_status(interpreter, mini, split.weights, full) == "TFLM_ERR_MODEL_WEIGHTS"


def test_separate_takes_one_model_and_a_known_mode():
    model = corpus_path("kws_ref_model.tflite").read_bytes()
    with pytest.raises(InputError, match="one model"):
        generate(model, GenerateOptions(weights="separate", extra_models=(model,)))
    with pytest.raises(InputError, match="choose one of"):
        generate(model, GenerateOptions(weights="apart"))


def test_make_project_builds_strictly_and_passes_with_the_weights_in_a_section(tmp_path):
    need_tool("make")
    objdump = need_tool("objdump")
    model = corpus_path("kws_ref_model.tflite").read_bytes()
    files = generate(model, GenerateOptions("make", name="kws", weights="separate"))
    section = "tflm/kws_weights_section.h"
    assert b"#define TFLM_WEIGHTS_SECTION\n" in files[section]
    files[section] = files[section].replace(
        b"#define TFLM_WEIGHTS_SECTION\n",
        b'#define TFLM_WEIGHTS_SECTION __attribute__((section(".tflm_weights")))\n')
    write_tree(files, tmp_path)
    flags = "CFLAGS=" + " ".join([*STRICT, "-O2"])
    result = subprocess.run(["make", "-s", "test", flags], cwd=tmp_path, capture_output=True,
                            text=True, check=False, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "~~~ALL TESTS PASSED~~~" in result.stderr
    sections = subprocess.run([objdump, "-h", *tmp_path.glob("build/*test*")],
                              capture_output=True, text=True, check=True).stdout
    weights = separate(device_model(model)[0]).weights
    array = -(-len(weights) // ALIGNMENT) * ALIGNMENT  # the union is aligned, so padded, to 16
    assert f".tflm_weights {array:08x}" in " ".join(sections.split())


def test_separate_weights_pass_on_the_cortex_m4_with_cmsis():
    need_tool("arm-none-eabi-gcc")
    need_tool("qemu-system-arm")
    need_tool("make")
    model = corpus_path("kws_ref_model.tflite").read_bytes()
    _, completed = qemu.run_project(model, "qemu-cortex-m4", ("cmsis",), weights="separate")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert qemu.PASSED in completed.stdout
    whole = HostInterpreter(device_model(model, ("cmsis",))[0], host_tags(("cmsis",)))
    assert f"arena used: {whole.arena_used_bytes} of {whole.arena_used_bytes}" in completed.stdout


def test_inspect_weights_lists_every_constant_and_the_split():
    path = corpus_path("vww_96_int8.tflite")
    result = CliRunner().invoke(main, ["inspect", str(path), "--weights", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    model = read_model(path.read_bytes())
    assert sum(row["bytes"] for row in report["tensors"]) == weight_bytes(model)
    # vww's weights are mostly zeros: the rows must see that in its largest filter
    largest = max(report["tensors"], key=lambda row: row["bytes"])
    data = model.buffers[largest["buffer"]].data
    assert largest["sparsity"] == data.count(0) / len(data) > 0.5
    assert largest["distinct"] == len(set(data))
    split = separate(device_model(path.read_bytes())[0])
    assert report["separate"]["mini_bytes"] == len(split.mini)
    assert report["separate"]["weights_bytes"] == len(split.weights)


def test_run_separate_gives_the_whole_run_outputs_under_the_same_names(tmp_path):
    path = str(corpus_path("kws_ref_model.tflite"))
    saved = {}
    for mode in ("whole", "separate"):
        out = tmp_path / f"{mode}.npz"
        result = CliRunner().invoke(main, ["run", path, "--weights", mode, "-o", str(out)])
        assert result.exit_code == 0, result.output
        saved[mode] = dict(np.load(out))
    assert saved["whole"].keys() == saved["separate"].keys()
    assert len(saved["whole"]) == 2  # by tensor name and as output_0
    for key, array in saved["whole"].items():
        assert_bit_exact(saved["separate"][key], array, key)


_SEPARATE_FUZZ = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tflm/model_model_ops.h"
#include "tflm/tflm_interpreter.h"

static uint32_t read_u32(FILE *f) {
  unsigned char b[4];
  if (fread(b, 1, 4, f) != 4) return 0xFFFFFFFFu;
  return b[0] | b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* argv[1]: the weights; argv[2]: (mini length, mini, weights size) records.  The mini
 * flatbuffer and the weights each sit in a heap block of exactly their size, so that
 * AddressSanitizer reports any read past either end. */
int main(int argc, char **argv) {
  static tflm_interpreter_t it;
  static union { tflm_max_align_t align; unsigned char bytes[1 << 16]; } arena;
  FILE *w = fopen(argv[1], "rb"), *f = fopen(argv[2], "rb");
  unsigned char *all = (unsigned char *)malloc(1 << 20);
  size_t total = fread(all, 1, 1 << 20, w);
  uint32_t n;
  int ok = 0, refused = 0;
  (void)argc;
  while ((n = read_u32(f)) != 0xFFFFFFFFu) {
    unsigned char *mini = (unsigned char *)malloc(n ? n : 1), *weights;
    uint32_t size;
    if (fread(mini, 1, n, f) != n) return 2;
    size = read_u32(f);
    if (size > total) return 3;
    weights = (unsigned char *)aligned_alloc(16, (size + 15u) & ~15u);
    memcpy(weights, all, size);
    if (tflm_interpreter_init_separate(&it, mini, n, weights, size, &model_resolver,
                                       arena.bytes, sizeof(arena.bytes), 0) == TFLM_OK) {
      tflm_interpreter_invoke(&it);
      ++ok;
    } else {
      ++refused;
    }
    free(mini);
    free(weights);
  }
  printf("ran %d refused %d\n", ok, refused);
  free(all);
  return 0;
}
"""


def test_corrupt_mini_flatbuffers_and_short_weights_never_crash_the_c_loader(tmp_path):
    """Seeded mutations of the mini flatbuffer (its buffer tables sit at its end) and
    truncations of the weights through the C runtime under ASan and UBSan."""
    compiler = need_tool("gcc")
    model = corpus_path("kws_ref_model.tflite").read_bytes()
    write_tree(generate(model), tmp_path)
    split = separate(device_model(model)[0])
    rng = np.random.default_rng(0)
    records, trials = bytearray(), 1500
    for trial in range(trials):
        mini, size = bytearray(split.mini), len(split.weights)
        if trial % 3 == 0:
            size = int(rng.integers(0, size))
        else:
            low = 0 if trial % 3 == 1 else len(mini) * 3 // 4
            for _ in range(int(rng.integers(1, 9))):
                mini[int(rng.integers(low, len(mini)))] = int(rng.integers(0, 256))
        records += len(mini).to_bytes(4, "little") + bytes(mini) + size.to_bytes(4, "little")
    (tmp_path / "records.bin").write_bytes(bytes(records))
    (tmp_path / "weights.bin").write_bytes(split.weights)
    succeeded, refused = run_sanitized(compiler, tmp_path, _SEPARATE_FUZZ,
                                       ["weights.bin", "records.bin"], std="c11")
    assert succeeded + refused == trials and refused >= trials // 3  # every short weights
