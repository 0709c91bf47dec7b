"""SVDF: generated C against tflite-micro, bit for bit, over several invokes and a reset.

SVDF keeps a variable state tensor, so every model is invoked three times in both runtimes
(the state carried from one invoke to the next is compared through the outputs), then both
are reset and invoked again: the outputs after the reset must match TFLM's too.  Random
models hold several independent SVDF ops over batches, ranks, memory sizes, fused
activations (float32) and state types (int16 and int8 for int8 activations).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import need_corpus
from op_oracle import assert_verifies_over_invokes, compare_invokes, seeded_model

from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder, make_options

OPS_PER_MODEL = 4
ACTIVATIONS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1", "TANH", "SIGN_BIT"]


def random_case(rng: np.random.Generator) -> dict:
    batches, units, rank, memory = (int(v) for v in rng.integers(1, [3, 9, 3, 9]))
    return {"batches": batches, "input_size": int(rng.integers(1, 24)), "units": units,
            "rank": rank, "filters": units * rank, "memory": memory}  # fmt: skip


def set_svdf_options(b: ModelBuilder, rank: int, activation: str) -> None:
    op = b.graph.operators[-1]
    op.builtin_options_type = "SVDFOptions"
    op.builtin_options = make_options(
        "SVDFOptions", {"rank": rank, "fused_activation_function": activation}
    )


def state_tensor(b: ModelBuilder, s: dict, dtype: str, quantization=None) -> int:
    state = b.tensor("state", [s["batches"], s["memory"] * s["filters"]], dtype,
                     quantization=quantization)  # fmt: skip
    b.graph.tensors[state].is_variable = True
    return state


def add_float_svdf(b: ModelBuilder, rng: np.random.Generator) -> None:
    s = random_case(rng)
    x = b.input(f"x{len(b.graph.inputs)}", [s["batches"], s["input_size"]], "float32")
    features = rng.standard_normal([s["filters"], s["input_size"]]).astype(np.float32)
    weights_time = rng.standard_normal([s["filters"], s["memory"]]).astype(np.float32)
    inputs = [x, b.constant("wf", features), b.constant("wt", weights_time)]
    # The bias stays: TFLM's SVDF crashes without one (its prepare reads the bias tensor).
    inputs.append(b.constant("b", rng.standard_normal(s["units"]).astype(np.float32)))
    inputs.append(state_tensor(b, s, "float32"))
    b.output(b.add_op("SVDF", inputs, [s["batches"], s["units"]], "float32"))
    set_svdf_options(b, s["rank"], str(rng.choice(ACTIVATIONS)))


def add_int8_svdf(b: ModelBuilder, rng: np.random.Generator, state_dtype: str) -> None:
    """Scales chosen so that state values and outputs use their range without saturating."""
    s = random_case(rng)
    in_scale, wf_scale = float(10 ** rng.uniform(-3, -1)), float(10 ** rng.uniform(-3, -1))
    wt_scale = float(10 ** rng.uniform(-4, -2))
    state_range = 3000.0 if state_dtype == "int16" else 40.0
    feature_std = np.sqrt(s["input_size"]) * 74 * 73 * in_scale * wf_scale
    state_scale = float(feature_std / state_range * 10 ** rng.uniform(-0.5, 0.5))
    wt_limit = 300 if state_dtype == "int16" else 127
    time_std = np.sqrt(s["memory"] * s["rank"]) * state_range * wt_limit / 1.7
    out_scale = float(state_scale * wt_scale * time_std / 40 * 10 ** rng.uniform(-0.5, 0.5))
    in_zp, out_zp = (int(v) for v in rng.integers(-128, 128, size=2))
    # An int8 state may be asymmetric; TFLM starts it (and resets it) at its zero point.
    state_zp = int(rng.integers(-10, 10)) if state_dtype == "int8" else 0
    x = b.input(f"x{len(b.graph.inputs)}", [s["batches"], s["input_size"]], "int8",
                quantization=ir.Quantization([in_scale], [in_zp]))  # fmt: skip
    features = rng.integers(-127, 128, size=[s["filters"], s["input_size"]]).astype(np.int8)
    weights_time = rng.integers(-wt_limit, wt_limit + 1, size=[s["filters"], s["memory"]])
    bias_scale = float(np.float32(state_scale) * np.float32(wt_scale))
    bias = rng.integers(-(2**16), 2**16, size=s["units"]).astype(np.int32)
    inputs = [
        x,
        b.constant("wf", features, quantization=ir.Quantization([wf_scale], [0])),
        b.constant("wt", weights_time.astype(state_dtype),
                   quantization=ir.Quantization([wt_scale], [0])),
        b.constant("b", bias, quantization=ir.Quantization([bias_scale], [0])),
        state_tensor(b, s, state_dtype, ir.Quantization([state_scale], [state_zp])),
    ]  # fmt: skip
    out_q = ir.Quantization([out_scale], [out_zp])
    b.output(b.add_op("SVDF", inputs, [s["batches"], s["units"]], "int8", quantization=out_q))
    set_svdf_options(b, s["rank"], str(rng.choice(["NONE", "RELU"])))


def random_model(seed: int, kind: str) -> bytes:
    if kind == "float32":
        return seeded_model(seed, OPS_PER_MODEL, add_float_svdf)
    state = "int16" if kind == "int8" else "int8"
    return seeded_model(seed, OPS_PER_MODEL, lambda b, rng: add_int8_svdf(b, rng, state))


@pytest.mark.parametrize("kind", ["float32", "int8", "int8_state"])
@pytest.mark.parametrize("seed", range(3))
def test_svdf_matches_tflm_across_invokes_and_reset(seed: int, kind: str) -> None:
    compare_invokes(random_model(7000 + seed, kind))


def test_keyword_scrambled_verifies_over_three_invokes() -> None:
    assert_verifies_over_invokes((need_corpus() / "keyword_scrambled.tflite").read_bytes())
