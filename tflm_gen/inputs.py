"""Deterministic test inputs: numpy seed, full range of integer types, and for float
inputs the range a following QUANTIZE can represent (else [-1, 1])."""

from __future__ import annotations

import numpy as np

from tflm_gen.model import ir


def _float_range(model: ir.Model, tensor_index: int) -> tuple[float, float]:
    for op in model.subgraph.operators:
        if op.opcode == "QUANTIZE" and op.inputs and op.inputs[0] == tensor_index:
            out = model.subgraph.tensors[op.outputs[0]]
            q = out.quantization
            if q and q.scale:
                info = np.iinfo(ir.dtype_info(out.dtype).numpy)
                zero = q.zero_point[0] if q.zero_point else 0
                return q.scale[0] * (info.min - zero), q.scale[0] * (info.max - zero)
    return -1.0, 1.0


def random_inputs(model: ir.Model, seed: int = 0) -> list[np.ndarray]:
    """One array per graph input, reproducible from `seed`."""
    rng = np.random.default_rng(seed)
    arrays = []
    for index in model.subgraph.inputs:
        tensor = model.subgraph.tensors[index]
        dtype = np.dtype(ir.dtype_info(tensor.dtype).numpy)
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            array = rng.integers(info.min, info.max, size=tensor.shape, endpoint=True)
        elif dtype.kind == "b":
            array = rng.integers(0, 1, size=tensor.shape, endpoint=True)
        else:
            low, high = _float_range(model, index)
            array = rng.uniform(low, high, size=tensor.shape)
        arrays.append(np.asarray(array).astype(dtype))
    return arrays
