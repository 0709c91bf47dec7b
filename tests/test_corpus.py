"""Every model of the shared corpus either runs bit-exact with TFLM on three successive
invokes (state carried across them) or is refused with one clear message."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import corpus_models, corpus_path
from op_oracle import per_op_explanation

from tflm_gen.cli import main
from tflm_gen.verify import verify

# Refused on purpose, with the reason the message must give.
REFUSED = {"kws_ref_model_float32.tflite": "hybrid operators"}
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
    assert verify(data, "tflm", runs=3).bit_exact, per_op_explanation(data)
