"""Shared by the data-movement / reduction op tests: a model under construction with seeded
random inputs, and a TFLM comparison over every graph output (ops may have several)."""

from __future__ import annotations

import numpy as np
from op_oracle import assert_bit_exact, run_tflm

from tflm_gen import host
from tflm_gen.model.builder import ModelBuilder, make_options

QRANGE = {"int8": (-128, 127), "int16": (-32768, 32767)}


class Case:
    """One model of independent ops sharing a dtype; collects the input arrays."""

    def __init__(self, dtype: str, seed: list[int]):
        self.b = ModelBuilder()
        self.rng = np.random.default_rng(seed)
        self.dtype = dtype
        self.inputs: list[np.ndarray] = []
        self.labels: list[str] = []

    def quant(self, zero_point: int | None = None) -> dict:
        if self.dtype not in QRANGE:
            return {}
        zp = int(self.rng.integers(-50, 50)) if self.dtype == "int8" else 0
        scale = float(10 ** self.rng.uniform(-3, -1))
        return {"scale": scale, "zero_point": zp if zero_point is None else zero_point}

    def data(self, shape, dtype=None) -> np.ndarray:
        dtype = dtype or self.dtype
        if dtype == "float32":
            return (self.rng.standard_normal(shape) * 4).astype(np.float32)
        if dtype == "bool":
            return self.rng.integers(0, 2, size=shape).astype(bool)
        lo, hi = QRANGE.get(dtype, (-1000, 1000))
        return self.rng.integers(lo, hi + 1, size=shape).astype(dtype)

    def input(self, shape, quant: dict | None = None, dtype=None, data=None) -> int:
        dtype = dtype or self.dtype
        array = self.data(shape, dtype) if data is None else data
        self.inputs.append(array)
        return self.b.input(f"x{len(self.inputs)}", list(shape), dtype, **(quant or {}))

    def op(
        self, opcode, inputs, out_shapes, quant=None, options=None, dtype=None, options_type=None
    ) -> None:
        """Adds an op with one output per shape in out_shapes; all become graph outputs.
        options_type names the BuiltinOptions table where the builder cannot derive it
        (ReducerOptions, BatchMatMulOptions)."""
        dtype = dtype or self.dtype
        quant = quant or {}
        given = None if options_type else options
        first = self.b.add_op(opcode, inputs, out_shapes[0], dtype, options=given, **quant)
        if options_type:
            self.b.graph.operators[-1].builtin_options_type = options_type
            self.b.graph.operators[-1].builtin_options = make_options(options_type, options or {})
        outputs = [first]
        for shape in out_shapes[1:]:
            outputs.append(self.b.tensor(f"{opcode.lower()}_out", shape, dtype, **quant))
        self.b.graph.operators[-1].outputs = outputs
        self.b.output(*outputs)
        self.labels.extend(
            f"{opcode} #{len(self.labels) + i} {options}" for i in range(len(outputs))
        )

    def check(self, arena_size: int = 1 << 22) -> None:
        """Every graph output of our host run equals TFLM's, bit for bit (`arena_size`: TFLM's
        arena, for models of real-size tensors)."""
        model = self.b.build()
        ours = host.run_model(model, self.inputs)
        theirs = run_tflm(model, self.inputs, len(self.labels), arena_size)
        assert len(ours) == len(theirs) == len(self.labels)
        for mine, reference, label in zip(ours, theirs, self.labels):
            assert_bit_exact(mine, reference, label)
