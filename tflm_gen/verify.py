"""`verify`: our host run against the oracle on N deterministic random inputs, invoking
both runtimes repeatedly so that state carried across invokes is compared too."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tflm_gen.host import HostInterpreter
from tflm_gen.inputs import random_inputs
from tflm_gen.optimize import device_model
from tflm_gen.oracle import Oracle


@dataclass
class OutputComparison:
    index: int
    max_abs_diff: float = 0.0
    differing: int = 0  # elements that differ, summed over runs
    elements: int = 0


@dataclass
class VerifyReport:
    against: str
    runs: int
    outputs: list[OutputComparison] = field(default_factory=list)

    @property
    def bit_exact(self) -> bool:
        return all(o.differing == 0 for o in self.outputs)


def _compare(ours: np.ndarray, theirs: np.ndarray, result: OutputComparison) -> None:
    theirs = np.asarray(theirs).reshape(ours.shape).astype(ours.dtype)
    # Flat views: numpy cannot view a 0-d array (a scalar output) as bytes.
    same = (ours.reshape(-1).view(np.uint8) == theirs.reshape(-1).view(np.uint8))
    same = same.reshape(ours.shape + (-1,)).all(-1)
    result.differing += int(np.count_nonzero(~same))
    result.elements += int(ours.size)
    if not same.all():
        difference = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
        result.max_abs_diff = max(result.max_abs_diff, float(np.nanmax(difference)))


def verify(model_bytes: bytes, against: str = "tflm", runs: int = 3, tags=()) -> VerifyReport:
    """Compares `runs` successive invokes of our runtime, on the model as a generated
    project embeds it (offline plan, precomputed requantisation), with the oracle on the
    user's model."""
    ours = HostInterpreter(device_model(model_bytes)[0], tuple(tags))
    theirs = Oracle(model_bytes, against)
    report = VerifyReport(against, runs)
    for run in range(runs):
        inputs = random_inputs(ours.model, seed=run)
        our_outputs = ours.run(inputs)
        their_outputs = theirs.run(inputs)
        if not report.outputs:
            report.outputs = [OutputComparison(i) for i in range(len(our_outputs))]
        for mine, reference, result in zip(our_outputs, their_outputs, report.outputs):
            _compare(mine, reference, result)
    return report
