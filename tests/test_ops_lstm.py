"""UNIDIRECTIONAL_SEQUENCE_LSTM: generated C against tflite-micro, bit for bit, over several
invokes and a reset.

The hidden and cell states are variable tensors, so each model is invoked three times in
both runtimes, then both are reset and invoked three times again.  Random models cover
batch-major and time-major layouts, batches, steps, cell clipping, tanh or no cell
activation, and for int8 and int16 (16x8) the cell-state scales 2^-11..2^-15 (each takes a different
path through TFLM's tanh rescaling), and for int8 asymmetric inputs and hidden states.  The sigmoid table
that the int16 gates share with TFLM is re-measured from the oracle and compared with ours.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import need_corpus
from op_oracle import assert_verifies_over_invokes, compare_invokes, run_tflm, seeded_model

from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder, make_options

REPO = Path(__file__).resolve().parent.parent
OPS_PER_MODEL = 3
GATES = 4  # input, forget, cell, output


def random_case(rng: np.random.Generator) -> dict:
    batches, steps, input_size, units = (int(v) for v in rng.integers(1, [3, 6, 12, 10]))
    time_major = bool(rng.random() < 0.4)
    shape = [steps, batches] if time_major else [batches, steps]
    return {"batches": batches, "input_size": input_size, "units": units,
            "time_major": time_major, "input": shape + [input_size], "output": shape + [units],
            "cell_clip": float(rng.choice([0.0, 0.0, 0.5, 3.0])),
            "activation": str(rng.choice(["TANH", "TANH", "TANH", "NONE"]))}  # fmt: skip


def variable(b: ModelBuilder, name: str, shape, dtype: str, quantization=None) -> int:
    index = b.tensor(name, shape, dtype, quantization=quantization)
    b.graph.tensors[index].is_variable = True
    return index


def add_lstm(
    b: ModelBuilder,
    s: dict,
    x: int,
    weights: list,
    biases: list,
    hidden: int,
    cell: int,
    dtype: str,
    out_q=None,
) -> None:
    inputs = [x, *weights[:GATES], *weights[GATES:], -1, -1, -1, *biases, -1, -1, hidden, cell]
    inputs += [-1] * 4
    b.output(b.add_op("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, s["output"], dtype,
                      quantization=out_q))  # fmt: skip
    op = b.graph.operators[-1]
    op.builtin_options_type = "UnidirectionalSequenceLSTMOptions"
    op.builtin_options = make_options(op.builtin_options_type, {
        "fused_activation_function": s["activation"], "cell_clip": s["cell_clip"],
        "time_major": s["time_major"]})  # fmt: skip


def add_float_lstm(b: ModelBuilder, rng: np.random.Generator) -> None:
    s = random_case(rng)
    x = b.input(f"x{len(b.graph.inputs)}", s["input"], "float32")
    shapes = [[s["units"], s["input_size"]]] * GATES + [[s["units"], s["units"]]] * GATES
    weights = [b.constant("w", (rng.standard_normal(shape) * 0.5).astype(np.float32))
               for shape in shapes]  # fmt: skip
    biases = [b.constant("b", rng.standard_normal(s["units"]).astype(np.float32))
              for _ in range(GATES)]  # fmt: skip
    state = [s["batches"], s["units"]]
    hidden = variable(b, "hidden", state, "float32")
    add_lstm(b, s, x, weights, biases, hidden, variable(b, "cell", state, "float32"), "float32")


def add_int8_lstm(b: ModelBuilder, rng: np.random.Generator, dtype: str = "int8") -> None:
    """int8 activations, or int16 ones (TFLM's 16x8 LSTM: zero points 0, int64 biases) with
    scales 256 times finer, so both cover the same real ranges."""
    s = random_case(rng)
    wide = dtype == "int16"
    finer = 256.0 if wide else 1.0
    in_q = ir.Quantization([float(10 ** rng.uniform(-2.5, -1)) / finer],
                           [0 if wide else int(rng.integers(-128, 128))])  # fmt: skip
    hidden_q = ir.Quantization([float(10 ** rng.uniform(-2.5, -1.5)) / finer],
                               [0 if wide else int(rng.choice([0, int(rng.integers(-20, 20))]))])  # fmt: skip
    cell_q = ir.Quantization([2.0 ** -int(rng.integers(11, 16))], [0])
    x = b.input(f"x{len(b.graph.inputs)}", s["input"], dtype, quantization=in_q)
    weights, biases = [], []
    for gate in range(2 * GATES):
        depth = s["input_size"] if gate < GATES else s["units"]
        # Gate pre-activations should span a few units of Q3.12: scale ~ 1 / (128 sqrt(depth)).
        w_scale = float(10 ** rng.uniform(-0.3, 0.3) * 40 / (128 * np.sqrt(depth) * 64))
        data = rng.integers(-127, 128, size=[s["units"], depth]).astype(np.int8)
        weights.append(b.constant("w", data, quantization=ir.Quantization([w_scale], [0])))
        if gate < GATES:
            bias_scale = float(np.float32(in_q.scale[0]) * np.float32(w_scale))
            reach = 2**12 * int(finer)
            bias = rng.integers(-reach, reach, size=s["units"]).astype(
                np.int64 if wide else np.int32
            )
            biases.append(b.constant("b", bias, quantization=ir.Quantization([bias_scale], [0])))
    state = [s["batches"], s["units"]]
    hidden = variable(b, "hidden", state, dtype, hidden_q)
    cell = variable(b, "cell", state, "int16", cell_q)
    add_lstm(b, s, x, weights, biases, hidden, cell, dtype, hidden_q)


def random_model(seed: int, dtype: str) -> bytes:
    if dtype == "float32":
        return seeded_model(seed, OPS_PER_MODEL, add_float_lstm)
    return seeded_model(seed, OPS_PER_MODEL, lambda b, rng: add_int8_lstm(b, rng, dtype))


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
@pytest.mark.parametrize("seed", range(4))
def test_lstm_matches_tflm_across_invokes_and_reset(seed: int, dtype: str) -> None:
    compare_invokes(random_model(8000 + seed, dtype))


def test_trained_lstm_int8_verifies_over_three_invokes() -> None:
    assert_verifies_over_invokes((need_corpus() / "trained_lstm_int8.tflite").read_bytes())


def derive_sigmoid_table() -> list[int]:
    """TFLM's 256-entry sigmoid table, measured: int16 TANH with input scale 2^-12 maps x to
    t(3x), where t interpolates entries (3x >> 8) and (3x >> 8) + 1 with weight 3x & 255.
    Walking the segments from entry 0 (sigmoid(0) = 32768), each next entry is the one
    value that reproduces every output of its segment."""
    b = ModelBuilder()
    x = b.input("x", [65536], "int16", scale=2.0**-12, zero_point=0)
    b.output(b.add_op("TANH", [x], [65536], "int16", scale=2.0**-15, zero_point=0))
    values = np.arange(0, 32768, dtype=np.int16)
    data = np.concatenate([values, -values - 1]).astype(np.int16)
    outputs = run_tflm(b.build(), [data])[0][: values.size].astype(np.int64)
    scaled = 3 * values.astype(np.int64)
    table = [32768]
    for segment in range(255):
        chosen = scaled >> 8 == segment
        weight, expected = scaled[chosen] & 255, outputs[chosen]
        low = table[-1]
        candidates = [
            high for high in range(low, 65536)
            if np.array_equal(((low << 8) + weight * (high - low) - (1 << 23) + 128) >> 8, expected)
        ]  # fmt: skip
        assert len(candidates) == 1, (segment, candidates[:4])
        table.append(candidates[0])
    return table


def test_sigmoid_table_matches_tflm() -> None:
    text = (REPO / "kernels_c" / "tflm_sigmoid_lut.c").read_text()
    body = text.split("tflm_sigmoid_table_uint16[256] = {", 1)[1].split("};", 1)[0]
    ours = [int(value) for value in re.findall(r"\d+", body)]
    assert ours == derive_sigmoid_table()
