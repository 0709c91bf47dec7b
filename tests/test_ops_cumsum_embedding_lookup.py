"""CUMSUM and EMBEDDING_LOOKUP against tflite-micro, bit for bit.  Seeded random shapes,
options and quantisation; several ops per model."""

from __future__ import annotations

import numpy as np
import pytest
from op_oracle import check_model

from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder


def random_shape(rng: np.random.Generator, rank: int) -> list[int]:
    return [int(d) for d in rng.integers(1, 6, size=rank)]


def random_int8(rng: np.random.Generator, shape) -> np.ndarray:
    return rng.integers(-128, 127, size=shape, endpoint=True).astype(np.int8)


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_cumsum_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng([331, len(dtype)])
    b, cases, inputs = ModelBuilder(), [], []
    for exclusive in [False, True]:
        for reverse in [False, True]:
            for _ in range(3):
                shape = random_shape(rng, int(rng.integers(1, 5)))
                axis = int(rng.integers(-len(shape), len(shape)))
                quant, out_quant = {}, {}
                if dtype == "int8":
                    scale = float(10 ** rng.uniform(-2, 0))
                    quant = {"scale": scale, "zero_point": int(rng.integers(-40, 40))}
                    out_quant = {"scale": scale * float(rng.uniform(0.5, 6)),
                                 "zero_point": int(rng.integers(-40, 40))}  # fmt: skip
                x = b.input(f"x{len(b.graph.inputs)}", shape, dtype, **quant)
                a = b.constant(f"axis{len(b.graph.tensors)}", np.array(axis, np.int32))
                options = {"exclusive": exclusive, "reverse": reverse}
                b.output(b.add_op("CUMSUM", [x, a], shape, dtype, options=options, **out_quant))
                if dtype == "int8":
                    inputs.append(random_int8(rng, shape))
                else:
                    inputs.append((rng.standard_normal(shape) * 4).astype(np.float32))
                cases.append((shape, axis, options, quant, out_quant))
    check_model(b.build(), inputs, cases)


def test_embedding_lookup_matches_tflm() -> None:
    rng = np.random.default_rng(337)
    b, cases, inputs = ModelBuilder(), [], []
    for table, out_dtype in [("float32", "float32"), ("int8", "int8"), ("int8", "float32")] * 2:
        shape = random_shape(rng, int(rng.integers(2, 4)))
        lookups = int(rng.integers(1, 7))
        ids = b.input(f"x{len(b.graph.inputs)}", [lookups], "int32")
        if table == "float32":
            value = b.constant(f"v{len(b.graph.tensors)}",
                               rng.standard_normal(shape).astype(np.float32))  # fmt: skip
        else:
            value = b.constant(f"v{len(b.graph.tensors)}", random_int8(rng, shape))
            # TFLM requires a zero zero point and reads the first scale only.
            scales = [float(10 ** rng.uniform(-3, 0)) for _ in range(1 + len(cases) % 2)]
            b.graph.tensors[value].quantization = ir.Quantization(scales, [0] * len(scales))
        quant = {"scale": 0.05, "zero_point": 3} if out_dtype == "int8" else {}
        b.output(b.add_op("EMBEDDING_LOOKUP", [ids, value], [lookups, *shape[1:]], out_dtype,
                          **quant))  # fmt: skip
        inputs.append(rng.integers(0, shape[0], size=lookups).astype(np.int32))
        cases.append((table, out_dtype, shape, lookups))
    check_model(b.build(), inputs, cases)
