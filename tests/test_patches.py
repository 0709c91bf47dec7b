"""Patch-based execution (tflm_gen.patches, docs/patch_execution.md): the row arithmetic of
bands checked against brute force, and the planner's view of a stage."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tflm_gen.patches import Rows, band_steps

# (stride, filter, dilation, input height, SAME padding?)
ROW_CASES = [(s, k, d, h, same) for s, k, d, h, same in itertools.product(
    (1, 2, 3), (1, 2, 3, 5), (1, 2), (5, 12, 17), (True, False)) if (k - 1) * d + 1 <= h]


def rows_of(stride: int, filter_size: int, dilation: int, height: int, same: bool) -> Rows:
    """TFLM's output height and leading padding (tflite/kernels/padding.h)."""
    extent = (filter_size - 1) * dilation + 1
    out = (height + stride - 1) // stride if same else (height - extent + stride) // stride
    pad = max(0, ((out - 1) * stride + extent - height) // 2) if same else 0
    return Rows(stride, extent, pad, height, out)


def read_rows(rows: Rows, dilation: int, outputs: range) -> set[int]:
    """Brute force: every input row some tap of these output rows reads."""
    taps = range(0, rows.extent, dilation)
    return {y * rows.stride - rows.pad + tap for y in outputs for tap in taps
            if 0 <= y * rows.stride - rows.pad + tap < rows.input_height}


@pytest.mark.parametrize("stride,filter_size,dilation,height,same", ROW_CASES)
def test_input_rows_are_the_rows_the_windows_read(stride, filter_size, dilation, height, same):
    rows = rows_of(stride, filter_size, dilation, height, same)
    for start in range(rows.output_height):
        for stop in range(start + 1, rows.output_height + 1):
            read = read_rows(rows, dilation, range(start, stop))
            first, end = rows.input_rows(start, stop)
            # The range holds every row read; with dilation it may also hold a row in the
            # gap between taps at either end, never a row outside the windows' span.
            assert read <= set(range(first, end))
            if dilation == 1:
                assert (first, end) == (min(read), max(read) + 1)
            else:
                assert first >= start * stride - rows.pad and end - 1 <= (
                    stop - 1) * stride - rows.pad + rows.extent - 1


def random_chain(rng: np.random.Generator, length: int) -> tuple[list[Rows], list[int]]:
    height, chain, dilations = int(rng.integers(20, 40)), [], []
    for _ in range(length):
        stride, filter_size = int(rng.integers(1, 3)), int(rng.choice([1, 3, 5]))
        dilation = int(rng.integers(1, 3)) if filter_size > 1 else 1
        same = bool(rng.integers(2)) or (filter_size - 1) * dilation >= height // 2
        chain.append(rows_of(stride, filter_size, dilation, height, same))
        dilations.append(dilation)
        height = chain[-1].output_height
    return chain, dilations


@pytest.mark.parametrize("seed", range(20))
def test_bands_compute_every_output_row_from_the_rows_they_hold(seed):
    """Every band's steps chain (each operator's input rows are the previous one's output
    rows), the bands cover the stage output once, and a kernel that sees only the band's
    input rows with the band's pad_top reads, for each output row, the same input rows as
    on the whole tensor."""
    rng = np.random.default_rng(seed)
    chain, dilations = random_chain(rng, int(rng.integers(2, 5)))
    band_rows = int(rng.integers(1, chain[-1].output_height + 1))
    bands = band_steps(chain, band_rows)
    assert [y for band in bands for y in range(band[-1].out_start, band[-1].out_start +
                                              band[-1].out_rows)] == list(range(chain[-1].output_height))
    for band in bands:
        assert all(a.out_start == b.in_start and a.out_rows == b.in_rows
                   for a, b in zip(band, band[1:]))
        for rows, dilation, step in zip(chain, dilations, band):
            view = Rows(rows.stride, rows.extent, step.pad_top, step.in_rows, step.out_rows)
            for y in range(step.out_rows):
                whole = read_rows(rows, dilation, range(step.out_start + y, step.out_start + y + 1))
                seen = read_rows(view, dilation, range(y, y + 1))
                assert {r + step.in_start for r in seen} == whole
