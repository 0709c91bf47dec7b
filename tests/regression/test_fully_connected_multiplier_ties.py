"""Regression: the per-tensor FULLY_CONNECTED multiplier computed from the scale product
rounded to float (as TFLM's source reads) put outputs near rounding ties one off: the
installed tflite-micro computes it in double.  Found against TFLM on int16x8 models."""

from __future__ import annotations

import numpy as np
import pytest
from op_oracle import assert_bit_exact, run_tflm

from tflm_gen import host
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.optimize import device_model

BIAS_DTYPE = {"int8": "int32", "int16": "int64"}


# Scales from a 16x8 model whose float product has a Q31 multiplier ending in exactly 0x8000,
# where the 64-bit requantisation's Q15 multiplier rounds up from the float product but
# down from the double one.
Q15_TIE_SCALES = (2.5728176115080714e-4, 2.920374274253845e-3, 2.0**-12)


def add_tie_fc(b: ModelBuilder, rng: np.random.Generator, dtype: str, inputs: list,
               scales=None) -> None:  # fmt: skip
    """A per-tensor FC whose outputs sit near rounding ties: the bias alone (zero input)
    lands each output within 0.01 of a half, with an effective scale of 1e-7..0.5 and
    accumulators up to 2^30, so a multiplier a few ulps off rounds some the other way."""
    in_scale = float(np.float32(10 ** rng.uniform(-5, -2)))
    w_scale = float(np.float32(10 ** rng.uniform(-3.5, -1.5)))
    effective = float(10 ** rng.uniform(-7, np.log10(0.5)))
    if scales:
        in_scale, w_scale, out_scale = scales
        effective = float(np.float32(in_scale) * np.float32(w_scale)) / out_scale
    bias_scale = float(np.float32(in_scale) * np.float32(w_scale))
    out_scale = bias_scale / effective
    units, depth = 64, 4
    top = min(30000 if dtype == "int16" else 120, 2**30 * effective)
    target = rng.uniform(-top, top, units).round() + rng.choice([0.5, -0.5, 0.49, 0.51], units)
    bias = np.round(target / effective).astype(BIAS_DTYPE[dtype])
    x = b.input(f"x{len(inputs)}", [1, depth], dtype, scale=in_scale, zero_point=0)
    weights = rng.integers(-127, 128, size=[units, depth]).astype(np.int8)
    w = b.constant("w", weights, quantization=ir.Quantization([w_scale], [0]))
    bb = b.constant("b", bias, quantization=ir.Quantization([bias_scale], [0]))
    b.output(b.add_op("FULLY_CONNECTED", [x, w, bb], [1, units], dtype, scale=out_scale,
                      zero_point=0))  # fmt: skip
    inputs.append(np.zeros([1, depth], dtype))


@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_per_tensor_multiplier_rounds_ties_like_tflm(dtype: str) -> None:
    """Regression: the per-tensor multiplier with the scale product rounded to float (as
    TFLM's source reads) put some of these int8 outputs and the int16 ones of
    Q15_TIE_SCALES one off."""
    rng = np.random.default_rng([331, len(dtype)])
    b, inputs = ModelBuilder(), []
    for _ in range(48):
        add_tie_fc(b, rng, dtype, inputs)
    add_tie_fc(b, rng, dtype, inputs, Q15_TIE_SCALES)
    model = b.build()
    theirs = run_tflm(model, inputs, len(inputs))
    # Both the kernels' own multipliers and those the generator stores in flash.
    for variant, candidate in (("arena", model), ("flash", device_model(model)[0])):
        ours = host.run_model(candidate, inputs)
        for index, (mine, reference) in enumerate(zip(ours, theirs)):
            assert_bit_exact(mine, reference, f"{variant} FC {index}")
