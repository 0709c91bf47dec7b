"""SIGN, an op TFLite has and TFLM lacks, checked bit for bit against LiteRT's reference
kernel (the oracle where TFLM cannot run a model): float32 (with -0.0, NaNs of both signs,
infinities and denormals), float64 and int32 (with both limits)."""

from __future__ import annotations

import numpy as np
import pytest
from op_oracle import assert_bit_exact

from tflm_gen import host
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.oracle import Oracle

SIZE = 1024


def sign_model(dtype: str) -> bytes:
    b = ModelBuilder()
    x = b.input("x", [2, SIZE // 2], dtype)
    b.output(b.add_op("SIGN", [x], [2, SIZE // 2], dtype))
    return b.build()


def sign_input(dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "int32":
        data = rng.integers(-1000, 1000, size=SIZE)
        data[:3] = [0, np.iinfo(np.int32).min, np.iinfo(np.int32).max]
    else:
        data = rng.standard_normal(SIZE) * 3.0
        data[rng.random(SIZE) < 0.1] = 0.0
        data[:7] = [-0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-40, -1e-40]
    return rng.permutation(data).astype(dtype).reshape(2, SIZE // 2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_sign_is_bit_exact_with_litert(dtype):
    model, inputs = sign_model(dtype), [sign_input(dtype, 7)]
    theirs = Oracle(model, "litert").run(inputs)[0]
    ours = host.run_model(model, inputs)[0]
    finite = theirs[~np.isnan(theirs)] if dtype != "int32" else theirs
    assert set(np.unique(finite).tolist()) == {-1, 0, 1}, "case too weak to fail"
    if dtype == "float64":  # assert_bit_exact compares float32 bits only; NaN bits count here
        ours, theirs = ours.view(np.uint64), theirs.view(np.uint64)
    assert_bit_exact(ours, theirs)
