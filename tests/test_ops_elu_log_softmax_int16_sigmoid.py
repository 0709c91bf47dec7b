"""ELU, LOG_SOFTMAX, and int16 LOGISTIC / TANH against tflite-micro, bit for bit.

Seeded; several ops per model.  int8 inputs hold every stored value; int16 inputs cover the
full range, and both the power-of-two input scales (table indexed directly) and general
scales (rescaled by an integer multiplier) of the int16 paths.
"""

from __future__ import annotations

import numpy as np
from op_oracle import check_model, float_values, int8_values

from tflm_gen.model.builder import ModelBuilder

SPECIAL_FLOATS = [0.0, -0.0, 0.5, -0.5, -20.0, 20.0, -1e-30, 88.0, -100.0]


def random_shape(rng: np.random.Generator, min_size: int = 1) -> list[int]:
    shape = [int(d) for d in rng.integers(1, 6, size=int(rng.integers(1, 5)))]
    shape[-1] = max(shape[-1], int(np.ceil(min_size / max(1, int(np.prod(shape[:-1]))))))
    return shape


def add_unary(b: ModelBuilder, op: str, data: np.ndarray, in_quant: dict,
              out_quant: dict) -> np.ndarray:  # fmt: skip
    x = b.input(f"x{len(b.graph.inputs)}", list(data.shape), data.dtype.name, **in_quant)
    b.output(b.add_op(op, [x], list(data.shape), data.dtype.name, **out_quant))
    return data


def test_float_elu_and_log_softmax_match_tflm() -> None:
    rng = np.random.default_rng(211)
    b, cases, inputs = ModelBuilder(), [], []
    for op in ["ELU", "LOG_SOFTMAX"] * 4:
        shape = random_shape(rng, 12)
        inputs.append(add_unary(b, op, float_values(rng, shape, SPECIAL_FLOATS), {}, {}))
        cases.append((op, shape))
    check_model(b.build(), inputs, cases)


def test_int8_elu_and_log_softmax_match_tflm() -> None:
    rng = np.random.default_rng(223)
    b, cases, inputs = ModelBuilder(), [], []
    for op in ["ELU", "LOG_SOFTMAX"] * 5:
        shape = random_shape(rng, 300) if op == "ELU" else random_shape(rng, 8)
        in_quant = {"scale": float(10 ** rng.uniform(-3, 0)),
                    "zero_point": int(rng.integers(-100, 100))}  # fmt: skip
        if op == "ELU":
            out_quant = {"scale": float(10 ** rng.uniform(-3, -0.5)),
                         "zero_point": int(rng.integers(-100, 100))}  # fmt: skip
        else:  # TFLM fixes the output quantisation of LOG_SOFTMAX
            out_quant = {"scale": 16 / 256, "zero_point": 127}
        inputs.append(add_unary(b, op, int8_values(rng, shape), in_quant, out_quant))
        cases.append((op, shape, in_quant, out_quant))
    check_model(b.build(), inputs, cases)


def test_int16_logistic_and_tanh_match_tflm() -> None:
    rng = np.random.default_rng(227)
    b, cases, inputs = ModelBuilder(), [], []
    scales = [2**-12, 2**-11, 2**-10, 2**-13, 1e-4, 3e-4, 7.5e-4, 2.1e-3]
    for op in ["LOGISTIC", "TANH"]:
        for scale in scales:
            shape = random_shape(rng, 64)
            data = rng.integers(-32768, 32767, size=shape, endpoint=True).astype(np.int16)
            data.flat[0] = -32768
            in_quant = {"scale": scale, "zero_point": 0}
            out_quant = {"scale": 2**-15, "zero_point": 0}
            inputs.append(add_unary(b, op, data, in_quant, out_quant))
            cases.append((op, shape, scale))
    check_model(b.build(), inputs, cases)
