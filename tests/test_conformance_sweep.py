"""Conformance sweep of the cmsis fast paths: seeded random int8 CONV_2D, DEPTHWISE_CONV_2D
and FULLY_CONNECTED layers drawn from the ranges real models use, several dozen per model so
that one build covers many cases, compared with TFLM on the host build and on the
Cortex-M4 (DSP inline assembly, offline layouts); and chains of conv / depthwise layers
run in bands (`--memory small`: a patch stage, each band's kernels called on row views).

The ranges are those of the corpus models (vww, person_detect, kws, resnet, ad01, micro
speech) and a little beyond: channel counts 1..256 including odd ones and non-multiples of
4, strides 1 and 2, windows 1x1, 3x3, 5x5, 10x4 (kws' first layer) and 10x8, dilation 2 now
and then, SAME and VALID padding, depth multipliers 1/2/4/8, per-channel filter scales
spread over 1.5 decades, absent biases, input zero points at -128, -127, +126, +127 or
random, output zero points at -128, +127 or spanning the outputs, output shifts right, left
and past the fast requantisation's range, maps of 1x1 to 12x12 where border pixels
dominate, fully-connected rows and depths not a multiple of 4.

`python3 tests/test_conformance_sweep.py FIRST LAST [host|qemu-cortex-m4|...] [layers|chain]`
runs the broad sweep (seeds FIRST..LAST) outside CI; CI runs the fixed selection below:
two layer models and four chains on the host, one layer model on the M4 (one build)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import test_cmsis as cmsis_cases
import test_ops_conv as conv_cases
import test_ops_fully_connected as fc_cases
from op_oracle import FUSED_ACTIVATIONS, assert_bit_exact, out_size, real_rms

from tflm_gen import host, qemu
from tflm_gen.errors import ModelError
from tflm_gen.host import HostInterpreter
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model
from tflm_gen.oracle import Oracle
from tflm_gen.patches import STAGE_METADATA
from tflm_gen.verify import verify

TAGS = ("cmsis",)
CHANNELS = (1, 2, 3, 4, 5, 7, 8, 12, 13, 16, 24, 27, 32, 33, 36, 40, 64, 68, 96, 128, 256)
WINDOWS = ((1, 1), (1, 1), (3, 3), (3, 3), (5, 5), (10, 4), (10, 8), (1, 3))
MAPS = (1, 2, 3, 5, 6, 7, 9, 12)
INPUT_ZERO_POINTS = (-128, -128, -127, 126, 127, None)
SCALE_FACTORS = (1.0,) * 10 + (1e-6, 1e3)
CLAMPS = {"RELU": (0.0, np.inf), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}
MAX_MACS = 1 << 20  # per layer: keeps one QEMU run of a few dozen layers within seconds


def _pick(rng, values):
    return values[int(rng.integers(len(values)))]


def _quantize(
    t: dict, rng, axis: int | None, activation: str, in_q: ir.Quantization | None = None
) -> dict:
    """t requantised for an extreme input zero point: filter scales spread over up to three
    decades (bias scales follow, as the converter writes them), the input scale aimed at a
    real accumulator RMS, and the output scale and zero point spanning the real outputs'
    expected range (from the weights' per-channel sums) after the activation, so outputs
    vary; now and then an output shift far left / right or an output zero point of +127 or
    -128, where the clamps decide.  in_q: the input's quantisation when it is fixed (a chain's
    previous layer), the filter scales then aim at the RMS instead."""
    in_zp = _pick(rng, INPUT_ZERO_POINTS) if in_q is None else in_q.zero_point[0]
    in_zp = t["in_q"].zero_point[0] if in_zp is None else in_zp
    w = t["weights"].astype(np.float64)
    channel_axis = 3 if axis == 3 else 0
    other = tuple(a for a in range(w.ndim) if a != channel_axis)
    sums, squares = w.sum(axis=other), (w * w).sum(axis=other)
    count = len(sums)
    scales = np.resize(np.asarray(t["filter_q"].scale, np.float64), count)
    if len(t["filter_q"].scale) > 1 and rng.random() < 0.5:
        scales = scales * 10 ** rng.uniform(-0.75, 0.75, size=count)
    scales = scales.astype(np.float32).astype(np.float64)
    mean_x, var_x = -0.5 - in_zp, 65536 / 12  # inputs uniform over int8, minus the zero point
    spread = np.sqrt(var_x * squares + (mean_x * sums) ** 2)
    target = real_rms(rng, activation)
    if in_q is None:
        in_scale = float(np.float32(target / np.mean(scales * spread)))
    else:
        in_scale = in_q.scale[0]
        scales = (scales * target / (in_scale * np.mean(scales * spread))).astype(np.float32)
        scales = scales.astype(np.float64)
    k = in_scale * scales
    centre = k * (mean_x * sums + t["bias"])
    lo, hi = (
        float(np.min(centre - 2.5 * k * np.sqrt(var_x * squares))),
        float(np.max(centre + 2.5 * k * np.sqrt(var_x * squares))),
    )
    low_clamp, high_clamp = CLAMPS.get(activation, (-np.inf, np.inf))
    lo, hi = max(lo, low_clamp), min(hi, high_clamp)
    out_scale = max(hi - lo, 1e-6) / 255
    out_zp = int(np.clip(np.round(-128 - lo / out_scale), -128, 127))
    if in_q is None:  # a chain's layers keep their outputs informative for the next
        draw = rng.random()  # the clamp paths and the fused -128 requantisation tails
        out_zp = 127 if draw < 0.1 else -128 if draw < 0.3 else out_zp
        out_scale *= _pick(rng, SCALE_FACTORS)
    per_tensor = len(t["filter_q"].scale) == 1
    filter_scales = [float(scales[0])] if per_tensor else [float(v) for v in scales]
    return {
        **t,
        "in_q": ir.Quantization([in_scale], [in_zp]),
        "out_q": ir.Quantization([out_scale], [out_zp]),
        "filter_q": ir.Quantization(
            filter_scales, [0] * len(filter_scales), quantized_dimension=channel_axis
        ),
        "bias_q": ir.Quantization(
            [float(np.float32(in_scale) * v) for v in scales], [0] * count, quantized_dimension=0
        ),
    }


def _maybe_without_bias(rng, t: dict, absent: bool | None = None) -> dict:
    """t without bias (the op's bias input absent: Keras' use_bias=False) when `absent`,
    one time in ten when None."""
    if rng.random() < 0.1 if absent is None else absent:
        return {**t, "bias": np.zeros_like(t["bias"]), "no_bias": True}
    return t


def _bias(b: ModelBuilder, t: dict) -> int:
    """The op's bias input: a constant, or -1 (absent)."""
    return -1 if t.get("no_bias") else b.constant("b", t["bias"], quantization=t["bias_q"])


def conv_layer(rng, depthwise: bool) -> dict:
    """A conv / depthwise geometry within MAX_MACS (redrawn until it fits)."""
    while True:
        (kh, kw), stride = _pick(rng, WINDOWS), int(rng.integers(1, 3))
        padding = str(rng.choice(["SAME", "VALID"]))
        h, w = _pick(rng, MAPS), _pick(rng, MAPS)
        multiplier = _pick(rng, (1, 1, 1, 2, 4, 8)) if depthwise else 1
        cin = _pick(rng, CHANNELS)
        cout = cin * multiplier if depthwise else _pick(rng, CHANNELS)
        if depthwise and (kh, kw) in ((10, 4), (10, 8)):
            kh, kw = 3, 3  # the corpus' depthwise windows are 3x3 (and kws' 3x3 VALID)
        dilation = 2 if rng.random() < 0.1 and kh == kw == 3 else 1
        g = {"batches": 1, "h": h, "w": w, "cin": cin, "kh": kh, "kw": kw,
             "stride": (stride, stride), "dilation": (dilation, dilation), "padding": padding,
             "activation": str(rng.choice(FUSED_ACTIVATIONS)), "bias": "yes",
             "per_channel": bool(rng.random() < 0.85), "groups": 1, "multiplier": multiplier,
             "cout": cout}  # fmt: skip
        g["oh"] = out_size(padding, h, kh, stride, dilation)
        g["ow"] = out_size(padding, w, kw, stride, dilation)
        depth = kh * kw * (1 if depthwise else cin)
        if g["oh"] > 0 and g["ow"] > 0 and g["oh"] * g["ow"] * cout * depth <= MAX_MACS:
            return g


def add_conv(
    b: ModelBuilder,
    rng,
    depthwise: bool,
    g: dict | None = None,
    x: tuple[int, ir.Quantization] | None = None,
    output: bool = True,
    absent_bias: bool | None = None,
):
    """One int8 CONV_2D / DEPTHWISE_CONV_2D of geometry g (drawn when None) reading a new
    graph input, or x = (tensor, its quantisation) in a chain; returns (input data or None,
    (opcode, description), (output tensor, its quantisation))."""
    g = g or conv_layer(rng, depthwise)
    t = _quantize(
        _maybe_without_bias(
            rng, conv_cases.quantized_tensors(rng, g, "int8", depthwise), absent_bias
        ),
        rng,
        3 if depthwise else 0,
        g["activation"],
        x[1] if x else None,
    )
    in_shape = [1, g["h"], g["w"], g["cin"]]
    data = None
    if x is None:
        x = (b.input(f"x{len(b.graph.inputs)}", in_shape, "int8", quantization=t["in_q"]),)
        data = rng.integers(-128, 128, size=in_shape).astype(np.int8)
    inputs = [
        x[0],
        b.constant("w", t["weights"], quantization=t["filter_q"]),
        _bias(b, t),
    ]
    options = {"padding": g["padding"], "stride_h": g["stride"][0], "stride_w": g["stride"][1],
               "dilation_h_factor": g["dilation"][0],
               "dilation_w_factor": g["dilation"][1],
               "fused_activation_function": g["activation"]}  # fmt: skip
    if depthwise:
        options["depth_multiplier"] = g["multiplier"]
    opcode = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    y = b.add_op(
        opcode,
        inputs,
        [1, g["oh"], g["ow"], g["cout"]],
        "int8",
        quantization=t["out_q"],
        options=options,
    )
    if output:
        b.output(y)
    description = {
        k: g[k]
        for k in (
            "h",
            "w",
            "cin",
            "cout",
            "kh",
            "kw",
            "stride",
            "padding",
            "multiplier",
            "activation",
            "per_channel",
        )
    }
    description.update(
        in_zp=t["in_q"].zero_point[0],
        out_zp=t["out_q"].zero_point[0],
        dilation=g["dilation"][0],
        bias=not t.get("no_bias"),
    )
    return data, (opcode, description), (y, t["out_q"])


def add_fc(b: ModelBuilder, rng):
    batches = _pick(rng, (1, 1, 1, 2, 3))
    depth = _pick(rng, (1, 3, 5, 8, 13, 37, 64, 130, 250, 256, 640))
    units = _pick(rng, (1, 2, 3, 5, 7, 10, 12, 13, 33, 64, 128))
    activation = str(rng.choice(["NONE", "RELU", "RELU6"]))
    s = {"kind": "2d", "depth": depth, "units": units, "input": [batches, depth],
         "output": [batches, units], "keep": False, "activation": activation}  # fmt: skip
    t = _quantize(
        _maybe_without_bias(rng, fc_cases.quantized_tensors(rng, s, "int8", rng.random() < 0.5)),
        rng,
        None,
        activation,
    )
    x = b.input(f"x{len(b.graph.inputs)}", s["input"], "int8", quantization=t["in_q"])
    inputs = [
        x,
        b.constant("w", t["weights"], quantization=t["filter_q"]),
        _bias(b, t),
    ]
    b.output(
        b.add_op(
            "FULLY_CONNECTED",
            inputs,
            s["output"],
            "int8",
            quantization=t["out_q"],
            options={"fused_activation_function": activation, "keep_num_dims": False},
        )
    )
    description = {
        "batches": batches,
        "depth": depth,
        "units": units,
        "activation": activation,
        "in_zp": t["in_q"].zero_point[0],
        "out_zp": t["out_q"].zero_point[0],
    }
    return rng.integers(-128, 128, size=s["input"]).astype(np.int8), (
        "FULLY_CONNECTED",
        description,
    )


def sweep_model(seed: int, layers: int = 36):
    """(model bytes, inputs, case descriptions): `layers` independent layers, half conv,
    a third depthwise, the rest fully connected."""
    rng = np.random.default_rng(12000 + seed)
    b = ModelBuilder()
    inputs, cases = [], []
    for index in range(layers):
        kind = index % 6
        data, case = add_fc(b, rng) if kind == 5 else add_conv(b, rng, kind >= 3)[:2]
        inputs.append(data)
        cases.append(case)
    return b.build(), inputs, cases


def informative(output: np.ndarray) -> bool:
    """TFLM's output of a layer tells a wrong kernel from a right one: at least 8 distinct
    values, not nearly all at the clamps (half at -128 is a RELU's zero)."""
    output = np.asarray(output)
    return np.unique(output).size >= 8 and np.mean((output == -128) | (output == 127)) < 0.8


def chain_geometry(rng, h: int, w: int, cin: int, depthwise: bool) -> dict:
    """The next layer of a chain over an h x w x cin map (3x3 / 5x5 / 1x1, stride 1 or 2)."""
    while True:
        kernel, stride = _pick(rng, (1, 3, 3, 5)), int(rng.integers(1, 3))
        padding = str(rng.choice(["SAME", "SAME", "VALID"]))
        multiplier = _pick(rng, (1, 1, 2)) if depthwise else 1
        cout = cin * multiplier if depthwise else _pick(rng, (3, 5, 8, 12, 16, 24, 32))
        g = {
            "batches": 1,
            "h": h,
            "w": w,
            "cin": cin,
            "kh": kernel,
            "kw": kernel,
            "stride": (stride, stride),
            "dilation": (1, 1),
            "padding": padding,
            "activation": str(rng.choice(["RELU", "RELU6", "NONE"])),
            "bias": "yes",
            "per_channel": True,
            "groups": 1,
            "multiplier": multiplier,
            "cout": cout,
        }
        g["oh"] = out_size(padding, h, kernel, stride, 1)
        g["ow"] = out_size(padding, w, kernel, stride, 1)
        if g["oh"] >= 2 and g["ow"] >= 2:
            return g


def chain_model(seed: int, layers: int = 5):
    """(model bytes, inputs, cases) of one chain of conv / depthwise layers from a map of
    16..40 rows: the head a patch stage (`--memory small`) runs band by band, each band's
    first and last rows at a border."""
    rng = np.random.default_rng(13000 + seed)
    b = ModelBuilder()
    h, w, channels = int(rng.integers(16, 41)), int(rng.integers(6, 25)), _pick(rng, (1, 3, 8))
    x, data, cases = None, None, []
    for index in range(layers):
        g = chain_geometry(rng, h, w, channels, depthwise=index % 2 == 1)
        first, case, x = add_conv(b, rng, index % 2 == 1, g, x, output=index == layers - 1)
        data = first if data is None else data
        cases.append(case)
        h, w, channels = g["oh"], g["ow"], g["cout"]
    return b.build(), [data], [("chain", cases)]


def mismatches(ours, model, inputs, cases) -> tuple[list[str], int]:
    """(the cases whose output differs from TFLM's, each with its parameters; how many of
    TFLM's outputs are informative)."""
    expected = Oracle(model).run(inputs)  # as verify runs TFLM (an absent bias left out)
    assert len(expected) == len(cases)
    wrong = []
    for index, case in enumerate(cases):
        try:
            assert_bit_exact(np.asarray(ours[index]), expected[index])
        except AssertionError as error:
            wrong.append(f"layer {index} {case}: {str(error).splitlines()[0]}")
    return wrong, sum(informative(output) for output in expected)


CI_SEEDS = (0, 1)
# Tiny maps, single channels, the far shifts and the +127 output zero point make some
# layers' outputs nearly constant on purpose (clamp paths); most must still vary.
MIN_INFORMATIVE = 0.6


@pytest.mark.parametrize("seed", CI_SEEDS)
def test_sweep_bit_exact_on_host(seed):
    model, inputs, cases = sweep_model(seed)
    wrong, useful = mismatches(host.run_model(model, inputs, TAGS), model, inputs, cases)
    assert not wrong
    assert useful >= MIN_INFORMATIVE * len(cases), useful


def test_sweep_bit_exact_on_m4():
    cmsis_cases.need_board("qemu-cortex-m4")
    model, inputs, cases = sweep_model(CI_SEEDS[0])
    result = qemu.run_on_target(model, "qemu-cortex-m4", inputs, TAGS)
    assert result.matches_host, result.stdout
    wrong, useful = mismatches(result.outputs, model, inputs, cases)
    assert not wrong
    assert useful >= MIN_INFORMATIVE * len(cases), useful


# Chains whose `--memory small` plan is a patch stage (asserted: the test sees the bands).
CI_CHAIN_SEEDS = (1, 2, 3, 15)


@pytest.mark.parametrize("seed", CI_CHAIN_SEEDS)
def test_chain_in_bands_bit_exact_on_host(seed):
    model, inputs, cases = chain_model(seed)
    device = device_model(model, TAGS, "small")[0]
    assert STAGE_METADATA in dict(read_model(device).metadata)
    wrong, useful = mismatches(HostInterpreter(device, TAGS).run(inputs), model, inputs, cases)
    assert not wrong
    assert useful == 1


def run(model: bytes, inputs, target: str, memory: str) -> list:
    """One invoke with the cmsis tag on the host build or on a QEMU board."""
    if target == "host":
        return HostInterpreter(device_model(model, TAGS, memory)[0], TAGS).run(inputs)
    result = qemu.run_on_target(model, target, inputs, TAGS, memory=memory)
    assert result.matches_host, result.stdout
    return result.outputs


def main(first: int, last: int, target: str = "host", kind: str = "layers") -> None:
    """The broad sweep: seeds first..last of sweep_model (kind layers, default memory) or
    chain_model (kind chain, --memory small), every mismatch printed with its parameters."""
    make, memory = (chain_model, "small") if kind == "chain" else (sweep_model, "balanced")
    for seed in range(first, last + 1):
        model, inputs, cases = make(seed)
        try:
            wrong, useful = mismatches(run(model, inputs, target, memory), model, inputs, cases)
        except Exception as error:  # noqa: BLE001 - a sweep reports every failure and goes on
            wrong, useful = [f"{type(error).__name__}: {error}"[:2000]], 0
        print(
            f"seed {seed} {target} {kind}: {len(cases)} outputs ({useful} informative), "
            f"{len(wrong)} wrong",
            flush=True,
        )
        for line in wrong:
            print("   ", line, flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), *sys.argv[3:])


@pytest.mark.parametrize("against", ["tflm", "litert"])
def test_depthwise_without_bias_is_verified_not_crashed(against):
    """A DEPTHWISE_CONV_2D whose bias is absent (input -1) crashed `verify` and `project`
    with a segmentation fault (TFLM's kernel reads index -1 as a tensor; LiteRT refuses
    it).  The oracle leaves the input out, the same computation: verify compares, and our
    runtime is bit-exact with both tags."""
    b = ModelBuilder()
    rng = np.random.default_rng(14000)
    g = chain_geometry(rng, 7, 9, 8, depthwise=True)
    add_conv(b, rng, True, g, absent_bias=True)
    model = b.build()
    assert read_model(model).subgraph.operators[0].inputs[2] == -1
    for tags in ((), TAGS):
        report = verify(model, against, runs=1, tags=tags)
        assert report.bit_exact and report.against == against, report.reason


def test_requantisation_shift_above_30_is_refused():
    """A real multiplier near 1e10 (output scale 3.9e-15, found by the sweep, seed 185
    layer 18): TFLM would shift an int32 left by 36 there, undefined in C++ (x86 and Arm
    differ), so no output is TFLM's; the model is refused, naming the operator."""
    model, _, cases = sweep_model(185)
    assert cases[18][1]["cin"] == 68
    with pytest.raises(ModelError, match=r"operator 18 \(CONV_2D\) requantises with a left "
                       r"shift of 36 bits"):
        read_model(model)
    with pytest.raises(ModelError, match="left shift of 36 bits"):
        device_model(model)
