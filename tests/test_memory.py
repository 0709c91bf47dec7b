"""Memory: exact arena sizes, an offline plan at the lower bound, a tail far below TFLM's,
and clean failures for every arena that is too small."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import need_corpus, need_tool

from tflm_gen.charts import memory_plan_svg
from tflm_gen.cli import main
from tflm_gen.errors import ArenaError
from tflm_gen.host import HostInterpreter
from tflm_gen.inputs import random_inputs
from tflm_gen.memory import memory_report
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.optimize import device_model
from tflm_gen.oracle import Oracle, tflm_allocations
from tflm_gen.output import write_tree
from tflm_gen.plan import embed_plan, make_plan
from tflm_gen.project import generate
from tflm_gen.verify import verify

MODELS = [
    "hello_world_int8", "hello_world_float", "micro_speech_quantized", "kws_ref_model",
    "vww_96_int8", "person_detect", "pretrainedResnet_quant", "ad01_int8", "test_conv_model",
    "simple_add_model", "model_ToyCar_quant_fullint",
]
def corpus(name: str) -> Path:
    return need_corpus() / f"{name}.tflite"


@pytest.mark.parametrize("name", MODELS)
def test_arena_below_tflm_head_at_bound_tail_lean(name):
    """The runtime's own tail (no patch stage: `fast`) is lean; a stage moves bytes from the
    head into the tail (its operators prepared per band shape), which the whole arena
    (`balanced`) pays for."""
    path = corpus(name)
    report = memory_report(path.read_bytes())
    tflm = tflm_allocations(path.read_bytes())
    assert report["arena_bytes"] <= tflm["total"]
    assert report["head_bytes"] <= 1.02 * (report["lower_bound_bytes"] + report["scratch_bytes"])
    tail = memory_report(path.read_bytes(), memory="fast")["tail_bytes"] if report["stage"] \
        else report["tail_bytes"]
    assert tail <= 0.4 * tflm["tail"]


def test_arena_geometric_mean_below_0_8_of_tflm():
    ratios = []
    for name in MODELS:
        path = corpus(name)
        ratios.append(memory_report(path.read_bytes())["arena_bytes"]
                      / tflm_allocations(path.read_bytes())["total"])
    assert float(np.exp(np.mean(np.log(ratios)))) <= 0.8


@pytest.mark.parametrize("name", ["hello_world_int8", "kws_ref_model", "vww_96_int8"])
def test_smallest_working_arena_is_the_reported_one(name):
    model, _ = device_model(corpus(name).read_bytes())
    needed = HostInterpreter(model).arena_used_bytes
    HostInterpreter(model, arena_bytes=needed)
    with pytest.raises(ArenaError, match=f"needs {needed}"):
        HostInterpreter(model, arena_bytes=needed - 1)


@pytest.mark.parametrize("name", ["vww_96_int8", "pretrainedResnet_quant", "kws_ref_model"])
def test_planned_model_runs_bit_exact_in_tflm(name, tmp_path):
    original = corpus(name).read_bytes()
    out = tmp_path / "planned.tflite"
    result = CliRunner().invoke(main, ["plan", str(corpus(name)), "-o", str(out)])
    assert result.exit_code == 0, result.output
    inputs = random_inputs(read_model(original))
    for ours, theirs in zip(Oracle(out.read_bytes()).run(inputs), Oracle(original).run(inputs)):
        assert np.array_equal(ours, theirs)
    names = [entry[0] for entry in read_model(out.read_bytes()).metadata]
    assert "OfflineMemoryAllocation" in names


def test_partial_offline_plan_is_completed_online():
    """-1 entries are planned at run time around the fixed offsets."""
    model = read_model(corpus("person_detect").read_bytes())
    plan = make_plan(model)
    for buffer in plan.buffers[::2]:
        buffer.offset = -1
    partial = write_model(embed_plan(model, plan))
    assert verify(partial, runs=1).bit_exact
    assert HostInterpreter(partial).arena_head_bytes >= make_plan(model).head_bytes


def test_nonsense_offline_plan_is_refused_cleanly():
    model = read_model(corpus("hello_world_int8").read_bytes())
    plan = make_plan(model)
    plan.buffers[0].offset = 0x7FFFFFF0
    with pytest.raises(Exception, match="rejected the model|runtime init failed"):
        HostInterpreter(write_model(embed_plan(model, plan)))


def test_inspect_memory_json_and_svg(tmp_path):
    svg = tmp_path / "plan.svg"
    result = CliRunner().invoke(main, ["inspect", "--memory", "--json", "--svg", str(svg),
                                       str(corpus("kws_ref_model"))])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert result.stderr == f"wrote the memory plan picture to {svg}\n"
    for key in ("arena_bytes", "head_bytes", "tail_bytes", "lower_bound_bytes", "plan", "scratch"):
        assert key in report
    assert report["arena_bytes"] == HostInterpreter(
        device_model(corpus("kws_ref_model").read_bytes())[0]).arena_used_bytes
    assert memory_plan_svg(report) == svg.read_text()  # the same picture from the same plan


def test_plan_picture_shows_scratch_and_tail():
    report = memory_report(corpus("kws_ref_model").read_bytes(), ("cmsis",))
    # The CMSIS convolutions ask for scratch: each lies inside the head, within its op's step.
    assert len(report["scratch"]) >= 4
    assert sum(s["bytes"] for s in report["scratch"]) == report["scratch_bytes"]
    for scratch in report["scratch"]:
        assert scratch["offset"] + scratch["bytes"] <= report["head_bytes"]
        assert scratch["first_op"] <= scratch["node"] <= scratch["last_op"]
        for other in report["plan"] + [s for s in report["scratch"] if s is not scratch]:
            same_time = (other["first_op"] <= scratch["last_op"]
                         and scratch["first_op"] <= other["last_op"])
            same_bytes = (other["offset"] < scratch["offset"] + scratch["bytes"]
                          and scratch["offset"] < other["offset"] + other["bytes"])
            assert not (same_time and same_bytes), (scratch, other)
    root = ElementTree.fromstring(memory_plan_svg(report))
    texts = [element.text for element in root.iter("{http://www.w3.org/2000/svg}text")]
    for label in ("operator step", "arena offset (bytes)", "tail: kernel data",
                  f"head: kernel scratch ({len(report['scratch'])})"):
        assert label in texts
    number = next(n for n, b in enumerate(report["plan"]) if b["tensors"] == ["input_1"])
    assert f"#{number} input_1" in texts  # the input's buffer, named where it fits
    titles = [element.text for element in root.iter("{http://www.w3.org/2000/svg}title")]
    assert len(titles) == len(report["plan"]) + len(report["scratch"])  # a tooltip each
    assert titles[-1].startswith(f"scratch of operator {report['scratch'][-1]['node']} ")


def test_svg_without_memory_is_refused(tmp_path):
    result = CliRunner().invoke(main, ["inspect", "--svg", str(tmp_path / "plan.svg"),
                                       str(corpus("hello_world_int8"))])
    assert result.exit_code == 2
    assert "--svg needs --memory" in result.output
    assert not (tmp_path / "plan.svg").exists()


_SWEEP = r"""
#include <stdio.h>
#include <stdlib.h>
#include "tflm/model_model_data.h"
#include "tflm/model_model_ops.h"
#include "tflm/tflm_interpreter.h"

/* Every arena size below the needed one must fail cleanly; malloc gives each size its own
 * block, so AddressSanitizer sees any access past the size the runtime was given. */
int main(void) {
  static tflm_interpreter_t interpreter;
  uint32_t size;
  for (size = 0; size < MODEL_ARENA_BYTES; size += STEP) {
    void *arena = malloc(size > 0 ? size : 1);
    tflm_status_t status = tflm_interpreter_init(&interpreter, model_model_data,
                                                 MODEL_MODEL_SIZE, &model_resolver,
                                                 arena, size);
    free(arena);
    if (status != TFLM_ERR_ARENA_TOO_SMALL) {
      printf("size %u gave status %d\n", (unsigned)size, (int)status);
      return 1;
    }
  }
  {
    void *arena = malloc(MODEL_ARENA_BYTES);
    int ok = tflm_interpreter_init(&interpreter, model_model_data, MODEL_MODEL_SIZE,
                                   &model_resolver, arena, MODEL_ARENA_BYTES) == TFLM_OK
             && tflm_interpreter_invoke(&interpreter) == TFLM_OK;
    free(arena);
    printf(ok ? "sweep ok\n" : "exact arena failed\n");
    return ok ? 0 : 1;
  }
}
"""


@pytest.mark.parametrize("name,step", [("hello_world_int8", 8), ("micro_speech_quantized", 40),
                                       ("kws_ref_model", 152), ("ad01_int8", 16)])
def test_every_too_small_arena_fails_cleanly_under_asan(name, step, tmp_path):
    compiler = need_tool("gcc")
    write_tree(generate(corpus(name).read_bytes()), tmp_path)
    (tmp_path / "sweep.c").write_text(_SWEEP)
    sources = ["sweep.c", *sorted(str(p.relative_to(tmp_path)) for p in tmp_path.glob("tflm/*.c"))]
    flags = ["-std=c99", "-g", "-O1", "-fsanitize=address,undefined",
             "-fno-sanitize-recover=all", f"-DSTEP={step}"]
    build = subprocess.run([compiler, *flags, *sources, "-o", "sweep", "-lm"], cwd=tmp_path,
                           capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stderr
    run = subprocess.run(["./sweep"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600, check=False)
    assert run.returncode == 0 and "sweep ok" in run.stdout, run.stdout + run.stderr[-2000:]


def test_multitenant_project_shares_one_exact_arena(tmp_path):
    """Three models (one stateful) in one arena, invoked alternately, all bit-exact; the
    arena is smaller than three separate ones, and 8 bytes less does not work."""
    need_tool("make")
    names = ["hello_world_int8", "keyword_scrambled", "micro_speech_quantized"]
    args = [arg for name in names for arg in ("--model", str(corpus(name)))]
    result = CliRunner().invoke(main, ["project", *args, "-o", str(tmp_path / "p")])
    assert result.exit_code == 0, result.output
    run = subprocess.run(["make", "-s", "test"], cwd=tmp_path / "p", capture_output=True,
                         text=True, check=False)
    assert run.returncode == 0 and "~~~ALL TESTS PASSED~~~" in run.stderr, run.stderr
    assert run.stderr.count("0 bytes differ") == 2 * len(names)
    header = tmp_path / "p" / "tflm" / "hello_world_int8_model_data.h"
    shared = int(re.search(r"HELLO_WORLD_INT8_ARENA_BYTES (\d+)u", header.read_text()).group(1))
    separate = sum(memory_report(corpus(n).read_bytes())["arena_bytes"] for n in names)
    assert shared < separate
    header.write_text(header.read_text().replace(f"{shared}u", f"{shared - 8}u"))
    run = subprocess.run(["make", "-s", "run"], cwd=tmp_path / "p", capture_output=True,
                         text=True, check=False)
    assert run.returncode != 0 and "init failed" in run.stderr
