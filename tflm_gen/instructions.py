"""Estimated instructions of the kernels, for `--memory balanced`: a patch stage is taken
only when the instructions its halos and band calls add stay within a share of the model's
(tflm_gen.patches).  MACs alone misjudge it: an operator with few MACs per output (a first
convolution over one channel) costs mostly per output, and its halo rows cost as much.

One kernel call costs, per (kernels, op), a linear sum of what it computes: its MACs,
output elements, output pixels times window taps, output pixels, and one call.  The
coefficients are Cortex-M4 instruction counts (QEMU, -O2) fitted with non-negative least
squares on relative errors over the corpus CNNs by `benchmarks/stage_instructions.py`,
which also prints the measured cost of each chosen stage beside this estimate.
"""

from __future__ import annotations

from tflm_gen.inspect import operator_macs
from tflm_gen.model import ir
from tflm_gen.overlap import window_size

# (kernels, op) -> instructions per MAC, per output element, per output pixel and window
# tap, per output pixel, per call.  "other": every op without its own row.
COSTS = {
    ("reference", "CONV_2D"): (7.12, 127.83, 381.25, 0.0, 52.34),
    ("reference", "DEPTHWISE_CONV_2D"): (37.93, 4.21, 26.42, 2.94, 0.0),
    ("reference", "AVERAGE_POOL_2D"): (0.0, 106.12, 437.09, 0.0, 0.0),
    ("reference", "MAX_POOL_2D"): (0.0, 80.35, 10.04, 2.51, 0.07),
    ("cmsis", "CONV_2D"): (0.85, 6.4, 15.5, 0.0, 1640.1),
    ("cmsis", "DEPTHWISE_CONV_2D"): (2.73, 0.3, 0.0, 0.0, 3994.86),
    ("cmsis", "AVERAGE_POOL_2D"): (0.0, 49.53, 161.09, 0.0, 0.0),
    ("cmsis", "MAX_POOL_2D"): (0.0, 19.98, 2.5, 0.62, 0.02),
}
OTHER = {"reference": (7.89, 0.0, 20.7, 20.7, 110.76), "cmsis": (1.54, 0.0, 23.76, 23.76, 106.42)}


def kernels_of(tags: tuple[str, ...]) -> str:
    """The kernel set whose costs apply: the cmsis tag's, or the reference kernels'."""
    return "cmsis" if "cmsis" in tags else "reference"


def features(graph: ir.SubGraph, op: ir.Operator, share: float = 1.0) -> tuple[float, ...]:
    """What one call computes when it writes `share` of the op's output rows: MACs, output
    elements, output pixels times window taps, output pixels, 1."""
    out = graph.tensors[op.outputs[0]] if op.outputs and op.outputs[0] >= 0 else None
    elements = ir.element_count(out) if out is not None else 0
    pixels = elements // max(1, out.shape[-1]) if out is not None and out.shape else elements
    window = window_size(graph, op) or (1, 1)
    return (operator_macs(graph, op) * share, elements * share,
            pixels * window[0] * window[1] * share, pixels * share, 1.0)


def call_instructions(graph: ir.SubGraph, op: ir.Operator, kernels: str,
                      share: float = 1.0) -> float:
    """Estimated instructions of one kernel call over `share` of the op's output rows."""
    costs = COSTS.get((kernels, op.opcode), OTHER[kernels])
    return sum(c * f for c, f in zip(costs, features(graph, op, share)))


def model_instructions(model: ir.Model, kernels: str) -> float:
    """Estimated instructions of one invoke: every operator run once, whole."""
    return sum(call_instructions(graph, op, kernels)
               for graph in model.subgraphs for op in graph.operators)
