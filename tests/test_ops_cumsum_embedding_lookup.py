"""CUMSUM, EMBEDDING_LOOKUP, L2_POOL_2D, REDUCE_ALL and int8 DIV against tflite-micro, bit
for bit.  Seeded random shapes, options and quantisation; several ops per model."""

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


def test_l2_pool_matches_tflm() -> None:
    rng = np.random.default_rng(347)
    b, cases, inputs = ModelBuilder(), [], []
    for padding in ["SAME", "VALID"] * 4:
        shape = [int(rng.integers(1, 3)), *[int(d) for d in rng.integers(2, 8, size=2)],
                 int(rng.integers(1, 4))]  # fmt: skip
        fh, fw = (int(rng.integers(1, min(d, 3) + 1)) for d in shape[1:3])
        sh, sw = (int(v) for v in rng.integers(1, 4, size=2))
        if padding == "SAME":
            out = [shape[0], -(-shape[1] // sh), -(-shape[2] // sw), shape[3]]
        else:
            out = [shape[0], (shape[1] - fh) // sh + 1, (shape[2] - fw) // sw + 1, shape[3]]
        options = {"padding": padding, "stride_h": sh, "stride_w": sw, "filter_height": fh,
                   "filter_width": fw,
                   "fused_activation_function": str(rng.choice(["NONE", "RELU6", "RELU_N1_TO_1"]))}  # fmt: skip
        x = b.input(f"x{len(b.graph.inputs)}", shape, "float32")
        b.output(b.add_op("L2_POOL_2D", [x], out, "float32", options=options))
        inputs.append((rng.standard_normal(shape) * 3).astype(np.float32))
        cases.append((shape, options))
    check_model(b.build(), inputs, cases)


def test_reduce_all_matches_tflm() -> None:
    rng = np.random.default_rng(349)
    b, cases, inputs = ModelBuilder(), [], []
    for _ in range(8):
        shape = random_shape(rng, int(rng.integers(1, 5)))
        axes = sorted({int(a) for a in rng.integers(0, len(shape), size=rng.integers(1, 3))})
        keep = bool(rng.random() < 0.5)
        out = [1 if k in axes else d for k, d in enumerate(shape)]
        out = out if keep else [d for k, d in enumerate(shape) if k not in axes]
        x = b.input(f"x{len(b.graph.inputs)}", shape, "bool")
        signed = [a - len(shape) if rng.random() < 0.3 else a for a in axes]
        axis = b.constant(f"axis{len(b.graph.tensors)}", np.array(signed, np.int32))
        b.output(b.add_op("REDUCE_ALL", [x, axis], out, "bool", options={"keep_dims": keep}))
        inputs.append(rng.random(shape) < 0.85)  # mostly true, so some rows stay true
        cases.append((shape, axes, keep))
    check_model(b.build(), inputs, cases)


def test_div_int8_matches_tflm() -> None:
    rng = np.random.default_rng(353)
    b, cases, inputs = ModelBuilder(), [], []
    for _ in range(24):
        out = random_shape(rng, int(rng.integers(1, 5)))
        shapes = [[d if rng.random() < 0.7 else 1 for d in out] for _ in range(2)]
        shapes[1] = shapes[1][int(rng.integers(0, len(out))) :]
        out = list(np.broadcast_shapes(*(tuple(s) for s in shapes)))
        quant = [{"scale": float(10 ** rng.uniform(-2.5, 0)),
                  "zero_point": int(rng.integers(-60, 60))} for _ in range(3)]  # fmt: skip
        activation = str(rng.choice(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]))
        x = b.input(f"x{len(b.graph.inputs)}", shapes[0], "int8", **quant[0])
        y = b.input(f"x{len(b.graph.inputs)}", shapes[1], "int8", **quant[1])
        b.output(b.add_op("DIV", [x, y], out, "int8",
                          options={"fused_activation_function": activation}, **quant[2]))  # fmt: skip
        divisor = random_int8(rng, shapes[1])
        divisor[divisor.astype(np.int32) == quant[1]["zero_point"]] += 1  # no zero divisor
        numerator = random_int8(rng, shapes[0])
        numerator.flat[0] = quant[0]["zero_point"]  # a zero numerator
        inputs += [numerator, divisor]
        cases.append((shapes, quant, activation))
    check_model(b.build(), inputs, cases)
