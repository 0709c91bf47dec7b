"""Magnitude pruning of int8 weights, to benchmark weight compression on pruned models
(issue 15): per tensor, the smallest-magnitude weights of each CONV_2D, DEPTHWISE_CONV_2D and
FULLY_CONNECTED int8 filter become zero.  It changes what the model computes;
`output_change` says by how much on a random batch, run by TFLM (the oracle)."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from tflm_gen.errors import InputError
from tflm_gen.inputs import random_inputs
from tflm_gen.model import ir
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.oracle import Oracle, choose_oracle

WEIGHTED_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
FILTER_INPUT = 1


@dataclass
class PruneResult:
    model: bytes
    tensors: int  # filters pruned
    weights: int  # their elements
    zeros_before: int
    zeros_after: int


def _filter_buffers(model: ir.Model) -> dict[int, ir.Tensor]:
    """Buffer index -> one int8 constant filter tensor using it (a shared buffer once)."""
    found = {}
    for op in model.subgraph.operators:
        if op.opcode not in WEIGHTED_OPS or len(op.inputs) <= FILTER_INPUT:
            continue
        index = op.inputs[FILTER_INPUT]
        tensor = model.subgraph.tensors[index] if index >= 0 else None
        if tensor is not None and tensor.dtype == "int8" and model.buffers[tensor.buffer].data:
            found.setdefault(tensor.buffer, tensor)
    return found


def _pruned(weights: np.ndarray, zero_point: int, sparsity: float) -> np.ndarray:
    """The smallest round(sparsity * n) magnitudes set to the zero point; ties go to the
    lower index (a stable sort), so the result is deterministic."""
    count = round(sparsity * weights.size)
    magnitude = np.abs(weights.astype(np.int16) - zero_point)
    result = weights.copy()
    result[np.argsort(magnitude, kind="stable")[:count]] = zero_point
    return result


def prune_weights(model_bytes: bytes, sparsity: float) -> PruneResult:
    """The model with every int8 filter of a weighted op pruned to `sparsity` (0 <= s < 1)."""
    if not 0.0 <= sparsity < 1.0:
        raise InputError(f"--sparsity must be at least 0 and below 1, not {sparsity}")
    model = copy.deepcopy(read_model(model_bytes))
    filters = _filter_buffers(model)
    if not filters:
        raise InputError("the model has no int8 CONV_2D, DEPTHWISE_CONV_2D or "
                         "FULLY_CONNECTED filter to prune")
    result = PruneResult(b"", len(filters), 0, 0, 0)
    for buffer, tensor in sorted(filters.items()):
        q = tensor.quantization
        zero_point = int(q.zero_point[0]) if q is not None and len(q.zero_point) else 0
        weights = np.frombuffer(model.buffers[buffer].data, dtype=np.int8)
        pruned = _pruned(weights, zero_point, sparsity)
        result.weights += weights.size
        result.zeros_before += int(np.count_nonzero(weights == zero_point))
        result.zeros_after += int(np.count_nonzero(pruned == zero_point))
        model.buffers[buffer] = ir.Buffer(pruned.tobytes())
    result.model = write_model(model)
    return result


@dataclass
class OutputChange:
    samples: int
    top1_agree: int  # samples whose first output's arg-max is unchanged
    mean_abs_difference: float  # of the dequantised first output
    oracle: str = "TFLM"  # which runtime ran both models (LiteRT for hybrid weights)


def _dequantised(array: np.ndarray, tensor: ir.Tensor) -> np.ndarray:
    q = tensor.quantization
    if q is None or not len(q.scale) or array.dtype.kind == "f":
        return array.astype(np.float64)
    return (array.astype(np.float64) - float(q.zero_point[0])) * float(q.scale[0])


def output_change(original: bytes, pruned: bytes, samples: int = 16) -> OutputChange:
    """How the first output moves on `samples` seeded random inputs, both models run by TFLM
    (by LiteRT where TFLM cannot run the model: hybrid weights, as `verify` chooses)."""
    model = read_model(original)
    output = model.subgraph.tensors[model.subgraph.outputs[0]]
    against, _ = choose_oracle(original)
    before, after = Oracle(original, against), Oracle(pruned, against)
    agree, differences = 0, []
    for seed in range(samples):
        inputs = random_inputs(model, seed)
        a = _dequantised(before.run(inputs)[0], output)
        b = _dequantised(after.run(inputs)[0], output)
        agree += int(np.argmax(a) == np.argmax(b))
        differences.append(float(np.mean(np.abs(a - b))))
    return OutputChange(samples, agree, float(np.mean(differences)),
                        "TFLM" if against == "tflm" else "LiteRT")
