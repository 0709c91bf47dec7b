"""The `cmsis` tag (kernels_c/cmsis/): optimised int8 kernels, bit-exact with TFLM.

Randomised multi-op models (the per-op generators of test_ops_conv and
test_ops_fully_connected: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, int8 plus a float32 and
an int16 case that take the reference fallbacks) run in the host build (plain C version),
on the Cortex-M4 (DSP version) and on the Cortex-M55 (MVE version), each compared with the
TFLM oracle.  Every shared int8 corpus model runs on the M4 with the tag, a few on the M55;
the generated project's embedded expected output comes from the oracle."""

from __future__ import annotations

import numpy as np
import pytest
import test_ops_conv as conv_cases
import test_ops_fully_connected as fc_cases
from conftest import need_corpus, need_tool
from op_oracle import assert_bit_exact, run_tflm

from tflm_gen import host, qemu
from tflm_gen.model.builder import ModelBuilder

TAGS = ("cmsis",)
SEEDS = (0, 1)
CORPUS_INT8 = {
    "qemu-cortex-m4": ["micro_speech_quantized.tflite", "kws_ref_model.tflite",
                       "ad01_int8.tflite", "person_detect.tflite", "vww_96_int8.tflite",
                       "pretrainedResnet_quant.tflite", "test_conv_model.tflite",
                       "model_ToyCar_quant_fullint.tflite", "hello_world_int8.tflite"],
    "qemu-cortex-m55": ["micro_speech_quantized.tflite", "kws_ref_model.tflite",
                        "vww_96_int8.tflite"],
}


def mixed_model(seed: int):
    """One model of independent random ops: (model bytes, inputs, case descriptions)."""
    rng = np.random.default_rng(7000 + seed)
    b = ModelBuilder()
    cases = []
    for _ in range(5):
        cases.append(("CONV_2D",) + conv_cases.add_case(b, rng, "int8", False))
        cases.append(("DEPTHWISE_CONV_2D",) + conv_cases.add_case(b, rng, "int8", True))
    for _ in range(3):
        cases.append(("FULLY_CONNECTED",) + fc_cases.add_case(b, rng, "int8"))
    cases.append(("CONV_2D float32",) + conv_cases.add_case(b, rng, "float32", False))
    cases.append(("DEPTHWISE_CONV_2D int16",) + conv_cases.add_case(b, rng, "int16", True))
    cases.append(("FULLY_CONNECTED int16",) + fc_cases.add_case(b, rng, "int16"))
    return b.build(), [data for _, data, _ in cases], [(op, g) for op, _, g in cases]


def compare(ours, model, inputs, cases) -> None:
    expected = run_tflm(model, inputs)
    assert len(ours) == len(expected) == len(cases)
    for index, case in enumerate(cases):
        try:
            assert_bit_exact(np.asarray(ours[index]), expected[index])
        except AssertionError as error:
            raise AssertionError(f"op {index} {case}: {error}") from None


def need_board(target: str) -> None:
    board = qemu.board_of(target)
    need_tool(board["toolchain"] + "gcc")
    need_tool(board["qemu"])
    need_tool("make")


@pytest.mark.parametrize("seed", SEEDS)
def test_random_ops_host_build(seed):
    model, inputs, cases = mixed_model(seed)
    compare(host.run_model(model, inputs, TAGS), model, inputs, cases)


@pytest.mark.parametrize("target", ["qemu-cortex-m4", "qemu-cortex-m55"])
@pytest.mark.parametrize("seed", SEEDS)
def test_random_ops_on_board(target, seed):
    need_board(target)
    model, inputs, cases = mixed_model(seed)
    result = qemu.run_on_target(model, target, inputs, TAGS)
    assert result.matches_host, result.stdout
    compare(result.outputs, model, inputs, cases)


@pytest.mark.parametrize("target,name", [(t, n) for t, names in CORPUS_INT8.items()
                                         for n in names])
def test_corpus_model_bit_exact_with_tag(target, name):
    need_board(target)
    data = (need_corpus() / name).read_bytes()
    _, completed = qemu.run_project(data, target, TAGS)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert qemu.PASSED in completed.stdout


def test_tag_replaces_the_reference_kernels():
    from tflm_gen.kernels import kernel_files
    files = kernel_files(["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"], TAGS)
    for name in ("conv.c", "depthwise_conv.c", "fully_connected.c", "cmsis_simd.h"):
        assert files[name].parent.name == "cmsis", name
    # Shared prepare and the reference loops of other types come from the reference set.
    for name in ("conv_common.c", "conv_reference.c", "depthwise_reference.c",
                 "fully_connected_reference.c"):
        assert files[name].parent.name == "kernels_c", name
