"""Every model of the shared corpus either runs bit-exact with its oracle (TFLM, or LiteRT's
reference kernels for what TFLM cannot run) on three successive invokes (state carried
across them) or is refused with one clear message."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import corpus_models, corpus_path
from op_oracle import per_op_explanation

from tflm_gen.cli import main
from tflm_gen.verify import verify

# Refused on purpose, with the reason the message must give (none at present).
REFUSED: dict[str, str] = {}
# Checked against LiteRT, which verify must pick by itself: hybrid CONV_2D (float32
# activations, int8 weights), which TFLM refuses.
LITERT = {"kws_ref_model_float32.tflite"}
MODELS = corpus_models() + [f"seanet/{name}" for name in corpus_models("seanet")]


@pytest.mark.parametrize("name", MODELS)
def test_corpus_model_is_bit_exact_or_refused(name):
    path = corpus_path(name)
    if name in REFUSED:
        result = CliRunner().invoke(main, ["verify", str(path)])
        assert result.exit_code == 2
        assert REFUSED[name] in result.output and "Traceback" not in result.output
        return
    data = path.read_bytes()
    report = verify(data, "auto", runs=3)
    assert report.against == ("litert" if name in LITERT else "tflm"), report.reason
    assert report.bit_exact, per_op_explanation(data)
