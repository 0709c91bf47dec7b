"""Shared by the per-op tests: run a model in TFLM (the oracle) and in our host runtime,
and compare outputs bit for bit."""

from __future__ import annotations

import numpy as np
from tflite_micro.python.tflite_micro import runtime

from tflm_gen import host
from tflm_gen.model.reader import read_model


def run_tflm(
    model: bytes, inputs: list[np.ndarray], outputs: int | None = None, arena_size: int = 1 << 22
) -> list:
    """Outputs of one TFLM invoke: all the model's outputs, which must be `outputs` when
    given (so a caller never compares fewer than the model has); `arena_size` for models
    of real-size tensors."""
    interpreter = runtime.Interpreter.from_bytes(model, arena_size=arena_size)
    for index, value in enumerate(inputs):
        interpreter.set_input(value, index)
    interpreter.invoke()
    count = len(read_model(model).subgraph.outputs)
    assert outputs is None or outputs == count, f"the model has {count} outputs, not {outputs}"
    return [interpreter.get_output(index) for index in range(count)]


def assert_bit_exact(ours: np.ndarray, theirs: np.ndarray, context=None) -> None:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (
        f"ours {ours.dtype} {list(ours.shape)}, tflm {theirs.dtype} {list(theirs.shape)}; {context}"
    )
    if ours.dtype == np.float32:  # compare bits: -0.0 vs 0.0 and NaN payloads count
        ours, theirs = ours.view(np.uint32), theirs.view(np.uint32)
    mismatches = np.flatnonzero(ours != theirs)
    assert mismatches.size == 0, (
        f"{mismatches.size} of {ours.size} differ; first at {mismatches[:5]}: "
        f"ours {ours.flat[mismatches[:5]]} tflm {theirs.flat[mismatches[:5]]}; {context}"
    )


def check_model(model: bytes, inputs: list[np.ndarray], cases: list,
                informative: bool = False) -> None:
    """Runs both runtimes; output i (case i) must match bit for bit, and with `informative`
    TFLM's output i must be able to tell a wrong kernel (assert_informative) first."""
    ours = host.run_model(model, inputs)
    theirs = run_tflm(model, inputs, len(cases))
    assert len(ours) == len(theirs) == len(cases)
    for index, (mine, reference, case) in enumerate(zip(ours, theirs, cases)):
        if informative:
            assert_informative(reference, f"op {index} {case}")
        assert_bit_exact(mine, reference, f"op {index} {case}")


def seeded_model(seed: int, count: int, add_case) -> bytes:
    """A model of `count` independent ops, each added by add_case(builder, rng) from one
    seeded generator (the host library compiles once per model)."""
    from tflm_gen.model.builder import ModelBuilder

    rng = np.random.default_rng(seed)
    builder = ModelBuilder()
    for _ in range(count):
        add_case(builder, rng)
    return builder.build()


def assert_verifies_over_invokes(model: bytes, runs: int = 3) -> None:
    """A stateful model: `verify` over `runs` invokes is bit-exact, and so is every invoke
    before and after a reset (compare_invokes)."""
    from tflm_gen.verify import verify

    report = verify(model, runs=runs)
    assert report.bit_exact, report.outputs
    compare_invokes(model, runs)


def per_op_explanation(model: bytes, runs: int = 3, tags=()) -> str:
    """For an assertion message: `verify --per-op`'s account of where the model first
    differs (run only when an assertion has already failed)."""
    from tflm_gen.verify import report_lines, verify

    report = verify(model, "auto", runs, tags, per_operator=True)
    return "\n".join(report_lines(report, read_model(model)))


def compare_invokes(model: bytes, runs: int = 3, inputs: list | None = None) -> list:
    """`runs` invokes in both runtimes, a reset of both, then `runs` invokes again: state
    carried across invokes and cleared by reset must match TFLM's.  `inputs` (one list of
    arrays per invoke) replaces the seeded random inputs.  Returns TFLM's outputs of every
    invoke, so a test can check that its inputs reached what it means to test."""
    from tflm_gen.inputs import random_inputs
    from tflm_gen.oracle import Oracle

    ours, theirs = host.HostInterpreter(model), Oracle(model)
    runs = len(inputs) if inputs is not None else runs
    seen = []
    for phase in ("first", "after reset"):
        for run in range(runs):
            arrays = inputs[run] if inputs is not None else random_inputs(ours.model, seed=run)
            mine, reference = ours.run(arrays), theirs.run(arrays)
            assert len(mine) == len(reference), f"{len(mine)} outputs, tflm {len(reference)}"
            for index, (one, other) in enumerate(zip(mine, reference)):
                assert_bit_exact(one, other, f"{phase} invoke {run + 1}, output {index}")
            seen.append([np.asarray(each) for each in reference])
        ours.reset()
        theirs.reset()
    return seen


# --- quantisation that makes a weighted op's output informative -----------------------
# Scales chosen blindly make most outputs constant (all zero point, or all saturated).
# Instead: estimate the RMS of the integer accumulator from the value distributions, pick
# the input scale so the real accumulator suits the fused activation, and the output scale
# so that about the central 99% (+-2.6 RMS) of it spans the output type.

QRANGE = {"int8": (-128, 127), "int16": (-32768, 32767)}
# The fused activations of TFLite's weighted, pooling and binary ops, and the bias type
# TFLM takes per activation type of the weighted ops (16x8: int64).
FUSED_ACTIVATIONS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]
BIAS_DTYPE = {"float32": "float32", "int8": "int32", "int16": "int64"}
# Fewer outputs cannot show enough distinct values (MIN_DISTINCT) to tell kernels apart.
MIN_OUTPUT_ELEMENTS = 32
WEIGHT_SQUARE = 127 * 128 / 3  # E[w^2] of int8 weights drawn uniformly from -127..127
# Real RMS of the accumulator per fused activation: RELU6 and RELU_N1_TO_1 clamp in real
# units, so the values must be of that size or the output is almost only the clamp.
ACTIVATION_RMS = {"RELU6": 3.0, "RELU_N1_TO_1": 0.5}
MIN_DISTINCT = 8
MAX_SATURATED = 0.2


def centred_square(dtype: str, zero_point: int) -> float:
    """E[(x - zero_point)^2] for x drawn uniformly from the integers of `dtype`."""
    lo, hi = QRANGE[dtype]
    count = hi - lo + 1
    return (count * count - 1) / 12 + ((lo + hi) / 2 - zero_point) ** 2


def accumulator_rms(depth: int, dtype: str, in_zero_point: int) -> float:
    """RMS of a sum of `depth` products of an input with zero-mean int8 weights."""
    return float(np.sqrt(depth * WEIGHT_SQUARE * centred_square(dtype, in_zero_point)))


def real_rms(rng: np.random.Generator, activation: str) -> float:
    """The real accumulator RMS to aim at: set by a clamping activation, else free."""
    return ACTIVATION_RMS.get(activation) or float(10 ** rng.uniform(-1.3, 1.7))


def output_quantization(rng: np.random.Generator, dtype: str, rms: float) -> tuple[float, int]:
    """(scale, zero point): +-2.6 `rms` (real) spans the type; zero point near the middle."""
    lo, hi = QRANGE[dtype]
    zero_point = int(rng.integers(-20, 21)) if dtype == "int8" else 0
    return 2 * 2.6 * rms / (hi - lo), zero_point


def assert_informative(theirs: np.ndarray, context=None) -> None:
    """TFLM's output of a generated case can tell a wrong kernel from a right one: at least
    MIN_DISTINCT values and under MAX_SATURATED of them at the type's limits."""
    theirs = np.asarray(theirs)
    distinct = np.unique(theirs).size
    assert distinct >= MIN_DISTINCT, f"only {distinct} distinct output values; {context}"
    if theirs.dtype.kind == "i":
        info = np.iinfo(theirs.dtype)
        saturated = float(np.mean((theirs == info.min) | (theirs == info.max)))
        assert saturated < MAX_SATURATED, f"{saturated:.0%} of outputs saturate; {context}"


def float_values(rng: np.random.Generator, shape: list[int], specials: list[float]) -> np.ndarray:
    """Normal float32 values times 4 holding `specials` (signed zeros, ties, extremes) at
    random places."""
    size = int(np.prod(shape))
    data = (rng.standard_normal(size) * 4).astype(np.float32)
    count = min(size, len(specials))
    data[:count] = np.array(specials[:count], np.float32)
    return rng.permutation(data).reshape(shape)


def int8_values(rng: np.random.Generator, shape: list[int], low: int = -128) -> np.ndarray:
    """Every value of [low, 127] at least once when the shape holds enough elements."""
    size = int(np.prod(shape))
    every = np.arange(low, 128)
    data = rng.integers(low, 127, size=size, endpoint=True)
    data[: min(size, every.size)] = every[: min(size, every.size)]
    return rng.permutation(data).astype(np.int8).reshape(shape)


def out_size(padding: str, size: int, kernel: int, stride: int, dilation: int = 1) -> int:
    """TFLite's output size of one spatial dimension of a windowed op (conv, pool)."""
    effective = (kernel - 1) * dilation + 1
    if padding == "SAME":
        return (size + stride - 1) // stride
    return (size + stride - effective) // stride
