"""The C sources themselves: strict compilation, generated tables kept current."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import STRICT, need_corpus, need_tool, run_with_library

from tflm_gen.schema_header import HEADER_PATH, render_schema_header
from tflm_gen.status import status_code, status_table

REPO = Path(__file__).resolve().parent.parent


def test_schema_header_is_current():
    assert HEADER_PATH.read_text() == render_schema_header(), (
        "run python -m tflm_gen.schema_header"
    )


def test_status_table_read_from_header():
    names = [name for name, _ in status_table()]
    assert names[0] == "TFLM_OK" and "TFLM_ERR_ARENA_TOO_SMALL" in names
    assert status_code("TFLM_OK") == 0


@pytest.mark.parametrize("compiler,cpu", [
    ("gcc", []),
    ("arm-none-eabi-gcc", ["-mcpu=cortex-m4", "-mthumb"]),
    ("arm-none-eabi-gcc", ["-mcpu=cortex-m0", "-mthumb"]),
])
def test_runtime_and_kernels_compile_strict(compiler, cpu, tmp_path):
    """Every runtime and reference kernel file, flat in one folder, as a project has them."""
    need_tool(compiler)
    for folder in ("runtime_c", "kernels_c"):
        for path in (REPO / folder).glob("*.[ch]"):
            (tmp_path / path.name).write_bytes(path.read_bytes())
    for source in sorted(tmp_path.glob("*.c")):
        if source.name == "tflm_debug_log.c" and compiler.startswith("arm"):
            continue  # the hosted DebugLog uses stdio; ports replace it
        command = [compiler, *STRICT, *cpu, "-c", str(source), "-o", str(tmp_path / "x.o")]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        assert result.returncode == 0, f"{source.name}: {result.stderr}"


def test_headers_compile_as_cpp_with_c_linkage(tmp_path):
    """Arduino and Mbed compile C++: every header must be usable there, with C linkage."""
    compiler = need_tool("g++")
    for folder in ("runtime_c", "kernels_c"):
        for path in (REPO / folder).glob("*.[ch]"):
            (tmp_path / path.name).write_bytes(path.read_bytes())
    headers = sorted(p.name for p in tmp_path.glob("*.h"))
    (tmp_path / "all.cpp").write_text("".join(f'#include "{h}"\n' for h in headers))
    command = [compiler, "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c",
               str(tmp_path / "all.cpp"), "-o", str(tmp_path / "all.o")]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    for header in headers:
        text = (tmp_path / header).read_text()
        code = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
        if re.search(r"\)\s*;", code):
            assert 'extern "C"' in text, f"{header} declares functions without C linkage"


_CUSTOM_OP_HARNESS = r"""
#include <stdio.h>
#include "tflm_interpreter.h"
#include "model.h"

/* A user's custom operator: doubles its float input; options say nothing here. */
static tflm_status_t twice_eval(tflm_context_t *ctx, tflm_node_t *node) {
  tflm_tensor_t view;
  const float *in = (const float *)tflm_node_input_data(ctx, node, 0);
  float *out = (float *)tflm_node_output_data(ctx, node, 0);
  int32_t i;
  TFLM_KERNEL_CHECK(ctx, node, tflm_node_input(ctx, node, 0, &view) == TFLM_OK, TFLM_ERROR);
  for (i = 0; i < tflm_tensor_elements(&view); ++i) out[i] = 2.0f * in[i];
  return TFLM_OK;
}

static const tflm_registration_t twice = {"TimesTwo", 32, NULL, NULL, twice_eval, NULL, NULL};
static const tflm_registration_t other = {"TimesThree", 32, NULL, NULL, twice_eval, NULL, NULL};
static const tflm_registration_t *const good_ops[] = {&twice};
static const tflm_registration_t *const wrong_ops[] = {&other};
static union { tflm_max_align_t align; unsigned char bytes[4096]; } arena;

int main(void) {
  static tflm_interpreter_t it;
  const tflm_resolver_t good = {good_ops, 1}, wrong = {wrong_ops, 1};
  float *in, *out;
  if (tflm_interpreter_init(&it, model_bytes, sizeof(model_bytes), &wrong, arena.bytes,
                            sizeof(arena.bytes)) != TFLM_ERR_UNSUPPORTED_OP) return 1;
  if (tflm_interpreter_init(&it, model_bytes, sizeof(model_bytes), &good, arena.bytes,
                            sizeof(arena.bytes)) != TFLM_OK) return 2;
  in = (float *)tflm_interpreter_input_data(&it, 0);
  in[0] = 1.5f; in[1] = -2.0f; in[2] = 0.25f; in[3] = 8.0f;
  if (tflm_interpreter_invoke(&it) != TFLM_OK) return 3;
  out = (float *)tflm_interpreter_output_data(&it, 0);
  if (out[0] != 3.0f || out[1] != -4.0f || out[2] != 0.5f || out[3] != 16.0f) return 4;
  printf("custom op ok\n");
  return 0;
}
"""


def test_custom_op_registered_by_name(tmp_path):
    """A custom operator resolves by its name; another name does not match it."""
    from tflm_gen.model.builder import ModelBuilder

    compiler = need_tool("gcc")
    builder = ModelBuilder()
    x = builder.input("x", [1, 4], "float32")
    y = builder.add_op("CUSTOM", [x], [1, 4], "float32")
    builder.graph.operators[-1].custom_code = "TimesTwo"
    builder.output(y)
    model = builder.build()
    values = ",".join(str(b) for b in model)
    (tmp_path / "model.h").write_text(
        f"static const union {{ unsigned char b[{len(model)}]; double d; }} model_union = "
        f"{{{{{values}}}}};\n#define model_bytes model_union.b\n")
    for path in (REPO / "runtime_c").glob("*.[ch]"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    (tmp_path / "harness.c").write_text(_CUSTOM_OP_HARNESS)
    sources = sorted(p.name for p in tmp_path.glob("*.c"))
    build = subprocess.run([compiler, *STRICT, *sources, "-o", "harness"], cwd=tmp_path,
                           capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stderr
    run = subprocess.run(["./harness"], cwd=tmp_path, capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0 and "custom op ok" in run.stdout, (run.returncode, run.stderr)


_PROFILE_HARNESS = r"""
#include <stdio.h>
#include "tflm/model_model_data.h"
#include "tflm/model_model_ops.h"
#include "tflm/tflm_interpreter.h"
#include "tflm/tflm_profile.h"

static union { tflm_max_align_t align; unsigned char bytes[MODEL_ARENA_BYTES]; } arena;

int main(void) {
  static tflm_interpreter_t it;
  static uint32_t ticks[3];
  static tflm_op_profile_t profile;
  int i;
  tflm_op_profile_start(&profile, ticks, 3);
  if (tflm_interpreter_init_profiled(&it, model_model_data, MODEL_MODEL_SIZE, &model_resolver,
                                     arena.bytes, sizeof(arena.bytes),
                                     tflm_op_profile_hooks(&profile)) != TFLM_OK) return 1;
  for (i = 0; i < 2; ++i) {
    if (tflm_interpreter_invoke(&it) != TFLM_OK) return 2;
  }
  tflm_op_profile_print(&profile);
  /* The test timer ticks once per read: every span is exactly one tick. */
  if (profile.init_ticks != 1 || ticks[0] != 2 || ticks[1] != 2 || ticks[2] != 2) return 3;
  return 0;
}
"""

_COUNTING_TIMER = """#include "tflm_timer.h"
static uint32_t now;
uint32_t tflm_timer_ticks(void) { return now++; }
"""


def test_profiler_hooks_cover_init_and_every_operator(tmp_path):
    """A board's timer (here one that ticks per read) is read around init and each eval."""
    from tflm_gen.output import write_tree
    from tflm_gen.project import generate

    model = (REPO / "examples" / "sine" / "sine_int8.tflite").read_bytes()
    write_tree(generate(model), tmp_path)
    (tmp_path / "tflm" / "tflm_timer.c").write_text(_COUNTING_TIMER)
    run = run_with_library(tmp_path, "harness", _PROFILE_HARNESS)
    assert "profile: op 2 2 ticks" in run.stderr


TRIALS = 5000
_FUZZ_HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include "tflm/model_model_ops.h"
#include "tflm/tflm_interpreter.h"

/* Reads (length, bytes) records and runs init (and invoke when init succeeds) on each,
 * every model in its own heap block so AddressSanitizer sees any read past its end. */
int main(int argc, char **argv) {
  static tflm_interpreter_t it;
  static union { tflm_max_align_t align; unsigned char bytes[1 << 16]; } arena;
  FILE *f = fopen(argv[1], "rb");
  unsigned char header[4];
  int ok = 0, refused = 0;
  (void)argc;
  while (fread(header, 1, 4, f) == 4) {
    uint32_t n = header[0] | header[1] << 8 | (uint32_t)header[2] << 16 | (uint32_t)header[3] << 24;
    unsigned char *model = (unsigned char *)malloc(n ? n : 1);
    if (fread(model, 1, n, f) != n) return 2;
    if (tflm_interpreter_init(&it, model, n, &model_resolver, arena.bytes,
                              sizeof(arena.bytes)) == TFLM_OK) {
      tflm_interpreter_invoke(&it);
      ++ok;
    } else {
      ++refused;
    }
    free(model);
  }
  printf("ran %d refused %d\n", ok, refused);
  return 0;
}
"""


def fuzz_c_loader(model: bytes, tmp_path, trials: int = TRIALS, seed: int = 0,
                  most_mutations: int = 8) -> tuple[int, int]:
    """Seeded byte mutations and truncations of the model (as a project embeds it) through
    the C runtime of its generated project under AddressSanitizer and UBSan; returns how
    many inits succeeded (and were invoked) and how many were refused."""
    import numpy as np

    from tflm_gen.optimize import device_model
    from tflm_gen.output import write_tree
    from tflm_gen.project import generate

    compiler = need_tool("gcc")
    write_tree(generate(model), tmp_path / "p")
    planned, _ = device_model(model)
    rng = np.random.default_rng(seed)
    records = bytearray()
    for trial in range(trials):
        data = bytearray(planned)
        if trial % 5 == 0:
            data = data[: int(rng.integers(0, len(data)))]
        else:
            for _ in range(int(rng.integers(1, most_mutations + 1))):
                data[int(rng.integers(0, len(data)))] = int(rng.integers(0, 256))
        records += len(data).to_bytes(4, "little") + bytes(data)
    return run_fuzz_harness(compiler, tmp_path / "p", bytes(records), trials)


def run_sanitized(compiler: str, folder: Path, harness: str, arguments: list[str],
                  std: str = "c99") -> tuple[int, int]:
    """Compiles `harness` with the generated runtime in `folder` (its tflm/*.c) under
    AddressSanitizer and UBSan, runs it with `arguments`, and returns the two counts it
    prints (`ran N refused M`)."""
    (folder / "fuzz.c").write_text(harness)
    sources = ["fuzz.c", *sorted(f"tflm/{p.name}" for p in (folder / "tflm").glob("*.c"))]
    # Every report is fatal, signed overflow and float-to-int conversions included: the
    # kernels' accumulators wrap through unsigned arithmetic, so a corrupt weight or bias
    # gives garbage out, never undefined behaviour.
    flags = [f"-std={std}", "-g", "-O1", "-fsanitize=address,undefined,float-cast-overflow",
             "-fno-sanitize-recover=all"]
    build = subprocess.run([compiler, *flags, *sources, "-o", "fuzz", "-lm"], cwd=folder,
                           capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stderr
    run = subprocess.run(["./fuzz", *arguments], cwd=folder,
                         capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    ran, refused = map(int, run.stdout.split()[1::2])
    return ran, refused


def run_fuzz_harness(compiler: str, project: Path, records: bytes,
                     trials: int) -> tuple[int, int]:
    """Runs `records` (length-prefixed models) through the C runtime of the generated
    `project` under AddressSanitizer and UBSan; returns (inits that ran, refused)."""
    (project / "models.bin").write_bytes(records)
    ran, refused = run_sanitized(compiler, project, _FUZZ_HARNESS, ["models.bin"])
    assert ran + refused == trials
    return ran, refused


@pytest.mark.parametrize("name", ["sine_int8", "test_conv_model", "keyword_scrambled",
                                  "trained_lstm_int8"])
def test_corrupt_models_never_crash_the_c_loader(name, tmp_path):
    """Seeded byte mutations and truncations of real models through the C runtime under
    AddressSanitizer and UndefinedBehaviorSanitizer: errors, never bad reads."""
    if name == "sine_int8":
        model = (REPO / "examples" / "sine" / "sine_int8.tflite").read_bytes()
    else:
        model = (need_corpus() / f"{name}.tflite").read_bytes()
    _, refused = fuzz_c_loader(model, tmp_path)
    assert refused > TRIALS // 6


def test_float_kernels_never_fuse_multiply_add_even_in_gnu_mode(tmp_path):
    """IDEs compile with GNU dialects, where gcc fuses a*b+c on an FPU with FMA; TFLM's
    float results need the two roundings, so the kernels forbid the fusion themselves."""
    compiler = need_tool("arm-none-eabi-gcc")
    for folder in ("runtime_c", "kernels_c"):
        for path in (REPO / folder).glob("*.[ch]"):
            (tmp_path / path.name).write_bytes(path.read_bytes())
    for source in ("conv_reference.c", "fully_connected_reference.c", "depthwise_reference.c"):
        assembly = subprocess.run(
            [compiler, "-std=gnu11", "-O2", "-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16",
             "-mfloat-abi=hard", "-S", "-o", "-", str(tmp_path / source)],
            capture_output=True, text=True, check=True).stdout
        assert not re.search(r"\bv(fma|fms|mla|mls)\.f32", assembly), source
