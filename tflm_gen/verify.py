"""`verify`: our host run against the oracle on N deterministic random inputs (or on the
user's own samples), invoking both runtimes in turn so that state carried across invokes
is compared too.  Output count, dtype and shape are compared before any value: our outputs
are never cast or reshaped to the oracle's."""

from __future__ import annotations

from dataclasses import dataclass, field

from tflm_gen.compare import Difference
from tflm_gen.errors import InputError, ModelError
from tflm_gen.host import device_interpreter
from tflm_gen.inputs import random_inputs
from tflm_gen.model import ir
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import supported_device_model
from tflm_gen.oracle import Oracle, arena_upper_bound, choose_oracle
from tflm_gen.patches import DEFAULT_MEMORY, read_stage
from tflm_gen.per_op import PerOpReport, describe_difference, per_op
from tflm_gen.progress import tracked
from tflm_gen.text import printable


@dataclass
class OutputComparison(Difference):
    index: int = 0


@dataclass
class VerifyReport:
    against: str
    runs: int
    reason: str = ""  # why this oracle (see oracle.choose_oracle)
    outputs: list[OutputComparison] = field(default_factory=list)
    per_op_report: PerOpReport | None = None  # with per_operator=True

    @property
    def bit_exact(self) -> bool:
        return bool(self.outputs) and all(o.bit_exact for o in self.outputs)

    @property
    def passed(self) -> bool:
        """Bit-exact outputs, and with per_operator no differing operator either."""
        found = self.per_op_report
        return self.bit_exact and not (found and (found.first or found.notes))


def _compare_outputs(ours: list, theirs: list, report: VerifyReport) -> None:
    if not report.outputs:
        count = max(len(ours), len(theirs))
        report.outputs = [OutputComparison(index=i) for i in range(count)]
    for result in report.outputs:
        if result.index >= min(len(ours), len(theirs)):
            owner = "ours" if len(ours) > len(theirs) else report.against
            result.mismatch = f"only {owner} has output {result.index}"
        else:
            result.add(ours[result.index], theirs[result.index], report.against)


def verify(model_bytes: bytes, against: str = "tflm", runs: int = 3, tags=(),
           samples: list | None = None, per_operator: bool = False,
           memory: str = DEFAULT_MEMORY, weights: str = "whole",
           compress: bool = False) -> VerifyReport:
    """Compares successive invokes of our runtime, on the model as a generated project
    embeds it (offline plan, precomputed requantisation, the patch stage `memory` asks
    for, coded filters with `compress`, split as `weights` splits it), with the oracle on
    the user's model: one invoke per sample, or `runs` invokes on seeded random inputs.
    With `per_operator`, also finds the first operator whose output differs (every tensor
    an output but a patch stage's inner ones; filters coded with `compress`)."""
    model = read_model(model_bytes)
    if not model.subgraph.outputs:
        raise ModelError("the model has no outputs: there is nothing to verify")
    device = supported_device_model(model_bytes, tuple(tags), memory, compress)[0]
    ours = device_interpreter(device, tuple(tags), None, weights)
    against, reason = choose_oracle(model_bytes, against)
    theirs = Oracle(model_bytes, against, arena_bytes=arena_upper_bound(model))
    if samples is None:
        samples = [random_inputs(ours.model, seed=run) for run in range(runs)]
    if not samples:
        raise InputError("nothing to compare: give at least one run or one sample")
    report = VerifyReport(against, len(samples), reason=reason)
    finals = []
    for inputs in tracked(samples, f"verifying against {against}"):
        finals.append((ours.run(inputs), theirs.run(inputs)))
        _compare_outputs(*finals[-1], report)
    if per_operator:
        report.per_op_report = per_op(model_bytes, samples, against, tags, finals,
                                      read_stage(read_model(device)), compress=compress)
    return report


def _name_text(names: list[str], index: int) -> str:
    """` 'name'` of output `index`, or nothing for an output only one runtime has."""
    return f" '{printable(names[index])}'" if index < len(names) and names[index] else ""


def report_lines(report: VerifyReport, model: ir.Model) -> list[str]:
    """What `tflm-gen verify` prints: each output, the verdict, and with per_operator the
    first operator that differs (or that none does)."""
    names = [model.subgraph.tensors[index].name for index in model.subgraph.outputs]
    lines = [f"output_{result.index}{_name_text(names, result.index)}: {result.summary()}"
             for result in report.outputs]
    verdict = "bit-exact" if report.bit_exact else "NOT bit-exact"
    lines.append(f"{verdict} with {report.against} over {report.runs} invokes")
    found = report.per_op_report
    if found is None:
        return lines
    lines += [f"note: {note}" for note in found.notes]
    if found.first is not None:
        lines += describe_difference(model, found.first, report.against)
    elif not found.notes:
        lines.append(f"per-op: all {found.tensors} tensors written by the {found.operators} "
                     f"operators are bit-exact over {found.invokes} invokes")
    if found.stage:
        first, last, inner = found.stage
        lines.append(f"per-op: operators {first}-{last} ran as one patch stage; its {inner} "
                     "inner tensors exist only as band tiles and are not compared")
    return lines
