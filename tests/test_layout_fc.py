"""The FULLY_CONNECTED offline layout (tflm_gen/layout.py, FC_INT16_QUADS): int8 filters as
int16 quads of rows with folded bias + input_offset * sum(row), read by the cmsis kernel's
C version (host build) and DSP version (Cortex-M4: fc_quad_dot).

Shapes from real models (ad01: 640 -> 128, 128 -> 8, 8 -> 128; micro_speech: 4000 -> 4),
unit counts with and without a partial last quad, depths below 4 and with a tail after the
groups of 4, several batch rows, per-tensor and per-channel filters (the hoisted strict
requantisation and the general one).  Every output is compared with TFLM's."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import test_cmsis as cmsis_cases
import test_ops_fully_connected as fc_cases
from op_oracle import assert_informative, run_tflm
from test_layout import records, with_layout_words

from tflm_gen import host
from tflm_gen.errors import ModelError
from tflm_gen.layout import (
    CONV_FOLDED,
    CONV_INT16_PAIRS,
    CONV_INT16_PAIRS_REQUANT,
    CONV_PAIRS_IN_FILTER,
    CONV_PAIRS_REQUANT_IN_FILTER,
    DW_ROW_QUADS,
    DW_TAP_PAIRS,
    FC_INT16_QUADS,
    FC_QUADS_IN_FILTER,
    IN_FILTER,
    layout_words,
)
from tflm_gen.layout_cores import core_of_target
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model
from tflm_gen.project import GenerateOptions, project_core
from tflm_gen.targets import load_target

ROOT = Path(__file__).resolve().parent.parent
# (batches, depth, units, per_channel); at least 12 outputs each, so that TFLM's are
# informative (op_oracle.assert_informative).
LAYERS = [(1, 640, 12, False), (2, 128, 8, False), (1, 8, 13, True), (3, 4000, 4, False),
          (3, 37, 5, True), (3, 20, 7, False), (3, 3, 6, False), (2, 130, 9, True)]


def fc_model(seed: int, layers=LAYERS):
    """(model bytes, inputs, cases) of independent int8 FULLY_CONNECTED layers, each
    (batches, depth, units, per_channel)."""
    rng = np.random.default_rng(9300 + seed)
    b = ModelBuilder()
    inputs, cases = [], []
    for batches, depth, units, per_channel in layers:
        s = {"kind": "2d", "depth": depth, "units": units, "input": [batches, depth],
             "output": [batches, units], "keep": False}  # fmt: skip
        t = fc_cases.quantized_tensors(rng, s, "int8", per_channel)
        x = b.input(f"x{len(inputs)}", s["input"], "int8", quantization=t["in_q"])
        ins = [x, b.constant(f"w{len(inputs)}", t["weights"], quantization=t["filter_q"]),
               b.constant(f"b{len(inputs)}", t["bias"], quantization=t["bias_q"])]
        b.output(b.add_op("FULLY_CONNECTED", ins, s["output"], "int8", quantization=t["out_q"],
                          options={"fused_activation_function": "NONE",
                                   "keep_num_dims": False}))
        inputs.append(rng.integers(-128, 128, size=s["input"]).astype(np.int8))
        cases.append(("FULLY_CONNECTED", s))
    return b.build(), inputs, cases


def test_fc_layout_bit_exact_on_host():
    model, inputs, cases = fc_model(0)
    device = device_model(model, cmsis_cases.TAGS)[0]
    assert all(record and record[0] == FC_INT16_QUADS for record in records(device))
    expected = run_tflm(model, inputs, len(cases))
    for output in expected:
        assert_informative(output, "int8")
    cmsis_cases.compare(host.run_model(device, inputs, cmsis_cases.TAGS), model, inputs, cases)


def test_fc_layout_bit_exact_on_board():
    """The M4 project (and its host run) carry the int16 stream in place of the filters."""
    cmsis_cases.need_board("qemu-cortex-m4")
    model, inputs, cases = fc_model(1)
    m4 = device_model(model, cmsis_cases.TAGS, core=core_of_target(load_target("qemu-cortex-m4")))
    assert {record[0] for record in records(m4[0])} == {FC_QUADS_IN_FILTER}
    cmsis_cases.compare_on_board("qemu-cortex-m4", model, inputs, cases)


def _edited(words, word: int, change: int):
    """The layout words with the first record's word `word` (0: its length) moved by
    `change`."""
    words[words[2] + word] += change
    return words


def test_fc_kernel_reads_its_record_and_checks_it():
    """The first folded constant moved by 2^24 changes the first layer's output only (the
    kernel reads the constants); a record of the wrong depth is ignored (still bit-exact)."""
    model, inputs, cases = fc_model(0)
    device = device_model(model, cmsis_cases.TAGS, "fast")[0]  # operators in the model's order
    expected = run_tflm(model, inputs, len(cases))
    bumped = host.run_model(with_layout_words(device, lambda w: _edited(w, 4, 1 << 24)),
                            inputs, cmsis_cases.TAGS)  # length, kind, rows, depth, folded[0]
    assert not np.array_equal(bumped[0], expected[0])
    assert all(np.array_equal(a, b) for a, b in zip(bumped[1:], expected[1:]))
    ignored = host.run_model(with_layout_words(device, lambda w: _edited(w, 3, 4)), inputs,
                             cmsis_cases.TAGS)
    cmsis_cases.compare(ignored, model, inputs, cases)


def test_fc_record_kind_is_the_kernels():
    source = (ROOT / "kernels_c" / "cmsis" / "fully_connected.c").read_text()
    kind = re.search(r"#define CMSIS_FC_INT16_QUADS (\d+)", source)
    assert kind and int(kind.group(1)) == FC_INT16_QUADS


def test_fc_with_a_filter_zero_point_gets_no_record():
    """The kernel's layout path is for symmetric weights: no record, no flash."""
    rng = np.random.default_rng(9400)
    s = {"kind": "2d", "depth": 16, "units": 4, "input": [1, 16], "output": [1, 4],
         "keep": False}  # fmt: skip
    t = fc_cases.quantized_tensors(rng, s, "int8", False)
    t["filter_q"].zero_point[0] = 3
    b = ModelBuilder()
    x = b.input("x", s["input"], "int8", quantization=t["in_q"])
    ins = [x, b.constant("w", t["weights"], quantization=t["filter_q"]),
           b.constant("b", t["bias"], quantization=t["bias_q"])]
    b.output(b.add_op("FULLY_CONNECTED", ins, s["output"], "int8", quantization=t["out_q"],
                      options={"fused_activation_function": "NONE", "keep_num_dims": False}))
    assert layout_words(read_model(b.build())) is None


def weighted_model(seed: int):
    """(model bytes, inputs, cases): a CONV_2D, a DEPTHWISE_CONV_2D and a FULLY_CONNECTED."""
    rng = np.random.default_rng(9500 + seed)
    b = ModelBuilder()
    cases = [("CONV_2D",) + cmsis_cases.conv_cases.add_case(b, rng, "int8", False),
             ("DEPTHWISE_CONV_2D",) + cmsis_cases.conv_cases.add_case(b, rng, "int8", True),
             ("FULLY_CONNECTED",) + fc_cases.add_case(b, rng, "int8")]
    return b.build(), [data for _, data, _ in cases], [(op, g) for op, _, g in cases]


def record_kinds(device: bytes) -> set[int]:
    """The kinds of the layout records of a device model (none without the metadata)."""
    if "tflm_gen.layout" not in dict(read_model(device).metadata):
        return set()
    return {record[0] for record in records(device) if record}


def test_projects_carry_the_records_their_core_reads():
    """An M0/M3 project (portable C) gets the conv and FC records with their streams in the
    filters (no depthwise record), an M55 one the folded constants of the conv records
    (all its MVE loops read), an M4 one every record with its stream in the filter; a
    generic target (make) may run on any core and keeps them all, as the host run does."""
    model = weighted_model(0)[0]
    cores = {target: project_core(GenerateOptions(target=target))
             for target in ("qemu-cortex-m0", "qemu-cortex-m3", "qemu-cortex-m55",
                            "qemu-cortex-m4", "make")}
    assert cores == {"qemu-cortex-m0": "cortex-m0", "qemu-cortex-m3": "cortex-m3",
                     "qemu-cortex-m55": "cortex-m55", "qemu-cortex-m4": "cortex-m4",
                     "make": None}
    kinds = {target: record_kinds(device_model(model, cmsis_cases.TAGS, core=core)[0])
             for target, core in cores.items()}
    assert kinds["qemu-cortex-m0"] == kinds["qemu-cortex-m3"]
    assert FC_QUADS_IN_FILTER in kinds["qemu-cortex-m3"]
    assert not kinds["qemu-cortex-m3"] & ({DW_TAP_PAIRS, DW_ROW_QUADS} | set(IN_FILTER))
    assert kinds["qemu-cortex-m55"] == {CONV_FOLDED}
    assert FC_INT16_QUADS in kinds["make"] and \
        kinds["make"] & {CONV_INT16_PAIRS, CONV_INT16_PAIRS_REQUANT}
    assert not kinds["make"] & set(ir.FILTER_LAYOUT_KINDS)
    assert FC_QUADS_IN_FILTER in kinds["qemu-cortex-m4"]
    assert kinds["qemu-cortex-m4"] & {CONV_PAIRS_IN_FILTER, CONV_PAIRS_REQUANT_IN_FILTER}
    assert not kinds["qemu-cortex-m4"] & set(IN_FILTER)


def test_moved_filters_hold_only_their_stream_and_stay_bit_exact():
    """Each filter of an in-filter record holds exactly the stream the plain record carried
    (no int8 copy left), the model shrinks by the int8 bytes, and the host build (the
    same C files as the M4 project's, portable path) is bit-exact with TFLM."""
    model, inputs, cases = weighted_model(1)
    plain = device_model(model, cmsis_cases.TAGS)[0]
    moved = device_model(model, cmsis_cases.TAGS, core="cortex-m4")[0]
    plain_ir, moved_ir = read_model(plain), read_model(moved)
    graph = moved_ir.subgraphs[0]
    int8_bytes = 0
    for op, before, after in zip(graph.operators, records(plain), records(moved)):
        if not after or after[0] not in ir.FILTER_LAYOUT_KINDS:
            assert after == before
            continue
        kind, stream = next((k, where) for k, (kin, where) in IN_FILTER.items()
                            if kin == after[0])
        start, end = stream(before)
        filter_tensor = graph.tensors[op.inputs[1]]
        assert before[0] == kind and after == [after[0], *before[1:start], *before[end:]]
        assert moved_ir.buffers[filter_tensor.buffer].data == \
            np.asarray(before[start:end], "<i4").tobytes()
        int8_bytes += len(plain_ir.buffers[filter_tensor.buffer].data)
    assert record_kinds(moved) == {FC_QUADS_IN_FILTER, CONV_PAIRS_IN_FILTER}
    assert len(moved) <= len(plain) - int8_bytes + 64  # alignment padding at most
    cmsis_cases.compare(host.run_model(moved, inputs, cmsis_cases.TAGS), model, inputs, cases)


def test_a_moved_filter_whose_record_disagrees_fails_cleanly():
    """Its filter holds no int8 weights: the kernel refuses the node rather than fall back."""
    model, inputs, _ = fc_model(0)
    device = device_model(model, cmsis_cases.TAGS, core="cortex-m4")[0]
    bad = with_layout_words(device, lambda w: _edited(w, 3, 4))  # the record's depth
    with pytest.raises(ModelError, match="operator parameters not supported"):
        host.run_model(bad, inputs, cmsis_cases.TAGS)


def test_in_filter_kinds_are_the_kernels_and_the_readers():
    fc = (ROOT / "kernels_c" / "cmsis" / "fully_connected.c").read_text()
    conv = (ROOT / "kernels_c" / "cmsis" / "conv.c").read_text()
    base = int(re.search(r"#define CMSIS_CONV_IN_FILTER (\d+)", conv).group(1))
    assert int(re.search(r"#define CMSIS_FC_QUADS_IN_FILTER (\d+)", fc).group(1)) == \
        FC_QUADS_IN_FILTER
    assert (base + CONV_INT16_PAIRS, base + CONV_INT16_PAIRS_REQUANT) == \
        (CONV_PAIRS_IN_FILTER, CONV_PAIRS_REQUANT_IN_FILTER)
    assert int(re.search(r"#define CMSIS_CONV_FOLDED (\d+)", conv).group(1)) == CONV_FOLDED
    assert sorted(ir.FILTER_LAYOUT_KINDS) == sorted(k for k, _ in IN_FILTER.values())
