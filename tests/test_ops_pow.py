"""POW, an op TFLite has and TFLM lacks, bit for bit against LiteRT's reference kernel:
float32 with a broadcast exponent row, negative bases (NaN for fractional exponents),
zeros and infinities."""

from __future__ import annotations

import numpy as np
from op_oracle import assert_bit_exact

from tflm_gen import host
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.oracle import Oracle


def pow_model() -> bytes:
    b = ModelBuilder()
    x = b.input("x", [4, 64], "float32")
    y = b.input("y", [1, 64], "float32")
    b.output(b.add_op("POW", [x, y], [4, 64], "float32"))
    return b.build()


def test_pow_is_bit_exact_with_litert():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 64)) * 4).astype(np.float32)
    x[0, :4] = [0.0, -0.0, np.inf, -np.inf]
    y = rng.choice([-2.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 1.7], size=(1, 64)).astype(np.float32)
    model = pow_model()
    theirs = Oracle(model, "litert").run([x, y])[0]
    ours = host.run_model(model, [x, y])[0]
    assert len(np.unique(theirs[np.isfinite(theirs)])) > 100, "case too weak to fail"
    assert_bit_exact(ours, theirs)
