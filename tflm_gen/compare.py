"""Bit-for-bit comparison of our arrays with the oracle's: dtype and shape first, never a
cast or a reshape, then every element's bytes (so -0.0 against 0.0 and NaN payloads count)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def describe(array: np.ndarray) -> str:
    return f"{array.dtype} {list(array.shape)}"


def _element_bytes(array: np.ndarray) -> np.ndarray:
    """One row of raw bytes per element (works for 0-d and empty arrays too)."""
    flat = np.ascontiguousarray(array).reshape(-1)
    return flat.view(np.uint8).reshape(flat.size, array.dtype.itemsize)


@dataclass
class Difference:
    """How one tensor of ours differs from the oracle's, summed over invokes."""

    differing: int = 0  # elements whose bytes differ
    elements: int = 0
    max_abs_diff: float = 0.0  # NaN against a number is counted in `differing` only
    lowest: float = np.inf  # the least and greatest (ours - oracle) of differing elements
    highest: float = -np.inf
    mismatch: str = ""  # dtype or shape disagree: the elements were not compared
    first: str = ""  # the first differing element, "at [i, j]: ours a, tflm b"
    against: str = "oracle"  # the name of the other side, for the summary

    @property
    def bit_exact(self) -> bool:
        return self.differing == 0 and not self.mismatch

    def add(self, ours: np.ndarray, theirs: np.ndarray, against: str) -> None:
        ours, theirs = np.asarray(ours), np.asarray(theirs)
        self.against = against
        if ours.dtype != theirs.dtype or ours.shape != theirs.shape:
            self.mismatch = f"ours {describe(ours)}, {against} {describe(theirs)}"
            return
        same = (_element_bytes(ours) == _element_bytes(theirs)).all(axis=1)
        self.elements += ours.size
        if same.all():
            return
        self.differing += int(np.count_nonzero(~same))
        signed = (ours.astype(np.float64) - theirs.astype(np.float64)).reshape(-1)[~same]
        finite = signed[~np.isnan(signed) & (signed != 0)]  # -0.0 against 0.0 differs by 0
        if finite.size:
            self.lowest = min(self.lowest, float(finite.min()))
            self.highest = max(self.highest, float(finite.max()))
            self.max_abs_diff = max(self.max_abs_diff, float(np.abs(finite).max()))
        if not self.first:
            flat = int(np.flatnonzero(~same)[0])
            at = [int(i) for i in np.unravel_index(flat, ours.shape)] if ours.ndim else []
            self.first = (f"at {at}: ours {ours.reshape(-1)[flat]}, "
                          f"{against} {theirs.reshape(-1)[flat]}")

    def summary(self) -> str:
        if self.mismatch:
            return f"dtype or shape differ ({self.mismatch})"
        text = f"{self.differing} of {self.elements} elements differ"
        if self.differing:
            text += f", max abs diff {self.max_abs_diff:g}"
            if self.lowest <= self.highest:
                text += f" (ours - {self.against} from {self.lowest:g} to {self.highest:g})"
            text += f"; first {self.first}"
        return text
