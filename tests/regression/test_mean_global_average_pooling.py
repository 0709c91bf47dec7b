"""Regression: quantised MEAN with equal input and output quantisation divided with
truncation where TFLM rescales, one off on the global average pooling that ends most
PyTorch classifiers (MobileNetV2's 7x7x1280 among them).  Small random shapes cannot tell
truncation from rounding, so the cases are real classifiers' sizes."""

from __future__ import annotations

import numpy as np
import pytest
from layout_cases import Case

DTYPES = ["float32", "int8", "int16"]


# Global average pooling as real classifiers end: (height, width, channels, keep_dims).
# PyTorch's converters emit MEAN with equal input and output quantisation; Keras' often
# with different ones.  A 7x7 mean of 1280 channels is MobileNetV2 224's; 1x1 and 2x2
# reduce one or a few elements, 32x32 and 10x49 are long audio/image reductions.
POOLS = [(7, 7, 1280, True), (7, 7, 1280, False), (3, 3, 576, True), (1, 1, 1024, False),
         (2, 2, 96, True), (32, 32, 16, True), (10, 49, 64, False)]


def add_global_pool(c: Case, h: int, w: int, channels: int, keep: bool, same: bool) -> None:
    axis = c.b.constant("axis", np.asarray([1, 2], np.int32))
    q_in = c.quant()
    q_out = q_in if same else c.quant()
    out = [1, 1, 1, channels] if keep else [1, channels]
    c.op("MEAN", [c.input([1, h, w, channels], q_in), axis], [out], q_out,
         {"keep_dims": keep}, options_type="ReducerOptions")


@pytest.mark.parametrize("dtype", DTYPES)
def test_global_average_pooling_matches_tflm_at_real_sizes(dtype: str) -> None:
    c = Case(dtype, [DTYPES.index(dtype), 4949])
    for h, w, channels, keep in POOLS:
        for same in (True, False):
            add_global_pool(c, h, w, channels, keep, same)
    c.check()
