"""Per-channel requantisation computed at generation time and stored in the model as
`tflm_gen.requant` metadata, so the device keeps it in flash instead of the arena (and an
8-bit MCU whose `double` is 32 bits still gets TFLM's exact multipliers).

Words (little-endian int32): version 1, operator count N (over all subgraphs, in order),
then N record positions (word
index from the start, 0 = none); a record is `channels, multipliers[channels],
shifts[channels]`.  The arithmetic is the runtime fallback's (kernels_c/*_common.c) and
TFLM's: the real multiplier in double, split into a Q31 significand and a shift.
"""

from __future__ import annotations

import math

from tflm_gen.errors import ModelError
from tflm_gen.model import ir
from tflm_gen.op_descriptors import describe
from tflm_gen.text import printable

METADATA_NAME = "tflm_gen.requant"
QUANTIZED = {"int8", "int16"}


def quantize_multiplier(real: float) -> tuple[int, int]:
    """(Q31 significand, shift) exactly as tflm_quantize_multiplier in C."""
    if real == 0.0 or not math.isfinite(real):
        # Non-finite: only from the NaN/inf scales converters give all-zero weights (the
        # graph check allows no others); TFLM's cast of inf/NaN to int64 leaves 0 here.
        return 0, 0
    significand, exponent = math.frexp(real)
    scaled = significand * (1 << 31)
    fixed = math.floor(abs(scaled) + 0.5) * (1 if scaled >= 0 else -1)  # C round()
    if fixed == 1 << 31:
        fixed //= 2
        exponent += 1
    if exponent < -31:
        return 0, 0
    return fixed, exponent


def _scales(tensor: ir.Tensor) -> list[float]:
    return tensor.quantization.scale if tensor.quantization else []


def _real_multipliers(graph: ir.SubGraph, op: ir.Operator) -> list[float] | None:
    """The per-channel real multipliers a kernel would compute, or None for other ops."""
    descriptor = describe(op.opcode)
    if descriptor.weights is None or len(op.inputs) <= max(descriptor.weights):
        return None
    data, weight = descriptor.weights
    tensors = graph.tensors
    source, weights = tensors[op.inputs[data]], tensors[op.inputs[weight]]
    out = tensors[op.outputs[0]]
    if source.dtype not in QUANTIZED or not (_scales(source) and _scales(weights) and _scales(out)):
        return None
    in_scale, out_scale = _scales(source)[0], _scales(out)[0]
    filter_scales = _scales(weights)
    channels = out.shape[-1] if descriptor.channels == "output" else len(filter_scales)
    if len(filter_scales) > 1 and len(filter_scales) != channels:  # TFLM refuses it too
        raise ModelError(f"{op.opcode} weights {printable(weights.name)!r} have "
                         f"{len(filter_scales)} per-channel scales for {channels} output "
                         "channels")
    scale = (lambda c: filter_scales[c]) if len(filter_scales) > 1 else (lambda c: filter_scales[0])
    return [in_scale * scale(c) / out_scale for c in range(channels)]


def channel_multipliers(graph: ir.SubGraph, op: ir.Operator) -> list[tuple[int, int]] | None:
    """The per-channel (Q31 multiplier, shift) pairs the op's kernel uses, or None."""
    reals = _real_multipliers(graph, op)
    return [quantize_multiplier(real) for real in reals] if reals else None


def requant_words(model: ir.Model) -> list[int] | None:
    """The metadata words for the operators of all subgraphs (numbered in order, as the
    runtime numbers them), or None when no op needs them."""
    ops = [(graph, op) for graph in model.subgraphs for op in graph.operators]
    header = [1, len(ops)]
    positions, records = [0] * len(ops), []
    next_word = len(header) + len(positions)
    for index, (graph, op) in enumerate(ops):
        pairs = channel_multipliers(graph, op)
        if not pairs:
            continue
        positions[index] = next_word
        record = [len(pairs), *(m for m, _ in pairs), *(s for _, s in pairs)]
        records += record
        next_word += len(record)
    return header + positions + records if records else None


def embed_requant(model: ir.Model) -> ir.Model:
    """A copy of the model carrying the requantisation metadata (replacing an older one)."""
    return model.with_metadata_words(METADATA_NAME, requant_words(model))
