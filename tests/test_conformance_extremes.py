"""Real models stay bit-exact with TFLM on inputs at the ends of their range, not only on the
uniform random inputs `verify` draws: every input element at the type's minimum, at its
maximum, and at the input's zero point (a real zero).  Constant inputs drive the
accumulators to their extremes and every requantisation, residual ADD and average pool into
its saturating branch, which random inputs almost never reach.

Host runs with the reference kernels and with `--tags cmsis` (the portable C of the cmsis
kernels, reading the same offline layouts as the boards), at `--memory small`, so that the
patch stage's bands, residual joins and reductions see the extremes too.  The boards' DSP
and MVE paths with the same inputs: `benchmarks/conformance_matrix.py --inputs min,max,zero`
(too slow to build here for every case)."""

from __future__ import annotations

import pytest
from conftest import corpus_path

from benchmarks.conformance_matrix import EXTREMES, extreme_inputs
from tflm_gen.model.reader import read_model
from tflm_gen.verify import verify

# A residual network (ADD joins in the patch stage), a conv/depthwise chain, a depthwise +
# FC model whose input zero point is not -128.
MODELS = ["pretrainedResnet_quant.tflite", "kws_ref_model.tflite",
          "micro_speech_quantized.tflite"]


@pytest.mark.parametrize("tags", [(), ("cmsis",)], ids=["reference", "cmsis"])
@pytest.mark.parametrize("name", MODELS)
def test_inputs_at_the_ends_of_the_range_stay_bit_exact(name, tags):
    data = corpus_path(name).read_bytes()
    model = read_model(data)
    samples = [extreme_inputs(model, pick) for pick in EXTREMES]
    report = verify(data, "tflm", tags=tags, samples=samples, memory="small")
    assert report.runs == 3
    assert report.bit_exact, report.outputs
