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
import test_cmsis as cmsis_cases
import test_ops_fully_connected as fc_cases
from op_oracle import assert_informative, run_tflm
from test_layout import records, with_layout_words

from tflm_gen import host
from tflm_gen.layout import FC_INT16_QUADS, layout_words
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model

ROOT = Path(__file__).resolve().parent.parent
# (batches, depth, units, per_channel); at least 12 outputs each, so that TFLM's are
# informative (op_oracle.assert_informative).
LAYERS = [(1, 640, 12, False), (2, 128, 8, False), (1, 8, 13, True), (3, 4000, 4, False),
          (3, 37, 5, True), (3, 20, 7, False), (3, 3, 6, False), (2, 130, 9, True)]


def fc_model(seed: int):
    """(model bytes, inputs, cases) of independent int8 FULLY_CONNECTED layers."""
    rng = np.random.default_rng(9300 + seed)
    b = ModelBuilder()
    inputs, cases = [], []
    for batches, depth, units, per_channel in LAYERS:
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
    cmsis_cases.need_board("qemu-cortex-m4")
    model, inputs, cases = fc_model(1)
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
    device = device_model(model, cmsis_cases.TAGS)[0]
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
