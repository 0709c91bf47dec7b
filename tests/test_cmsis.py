"""The `cmsis` tag (kernels_c/cmsis/): optimised int8 kernels, bit-exact with TFLM.

Randomised multi-op models (the per-op generators of test_ops_conv,
test_ops_fully_connected, test_ops_elementwise, test_ops_pooling, test_ops_binary and
test_ops_softmax: CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, AVERAGE_POOL_2D,
MAX_POOL_2D, MUL, SOFTMAX, int8 plus float32 and int16 cases that take the reference
fallbacks, and shapes aimed at the tag's fast paths: 3x3 depthwise windows of multiplier 1,
4-channel blocks, single-row and odd-row FULLY_CONNECTED, table ADDs, pooling channel counts
around the 4-, 8- and 16-channel blocks and windows of more than 256 values, same-shape and
broadcast MULs, short and long softmax rows, and output scales whose shifts fall inside and
outside the fast requantisation's range) run in the host build (plain
C version), on the Cortex-M4 (DSP version) and on the Cortex-M55 (MVE version), each compared
with the TFLM oracle.  Every shared int8 corpus model runs on the M4 with the tag, a few on the M55;
the generated project's embedded expected output comes from the oracle."""

from __future__ import annotations

import numpy as np
import pytest
import test_ops_binary as binary_cases
import test_ops_conv as conv_cases
import test_ops_elementwise as add_cases
import test_ops_fully_connected as fc_cases
import test_ops_pooling as pool_cases
import test_ops_softmax as softmax_cases
from conftest import need_corpus, need_tool
from op_oracle import FUSED_ACTIVATIONS, assert_bit_exact, out_size, run_tflm

from tflm_gen import host, qemu
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder

TAGS = ("cmsis",)
SEEDS = (0, 1)
CORPUS_INT8 = {
    "qemu-cortex-m4": ["micro_speech_quantized.tflite", "kws_ref_model.tflite",
                       "ad01_int8.tflite", "person_detect.tflite", "vww_96_int8.tflite",
                       "pretrainedResnet_quant.tflite", "test_conv_model.tflite",
                       "model_ToyCar_quant_fullint.tflite", "hello_world_int8.tflite"],
    "qemu-cortex-m55": ["micro_speech_quantized.tflite", "kws_ref_model.tflite",
                        "vww_96_int8.tflite"],
}

# Output scale factors: 1 keeps the generators' shifts (right shifts the fast requantisation
# takes), 1e-6 makes left shifts, 1e3 right shifts beyond its range of 23.
SCALE_FACTORS = (1.0, 1e-6, 1e3)


def conv_geometry(rng, depthwise: bool, kernel: int, channels: int, cout: int) -> dict:
    """A geometry for conv_cases' tensors: 3x3 / 1x1 windows, stride 1 or 2, no dilation."""
    stride = int(rng.integers(1, 3))
    g = {"batches": 1, "h": int(rng.integers(3, 9)), "w": int(rng.integers(3, 9)),
         "cin": channels, "kh": kernel, "kw": kernel, "stride": (stride, stride),
         "dilation": (1, 1), "padding": str(rng.choice(["SAME", "VALID"])),
         "activation": str(rng.choice(FUSED_ACTIVATIONS)), "bias": "yes",
         "per_channel": bool(rng.random() < 0.75), "groups": 1, "multiplier": 1,
         "cout": channels if depthwise else cout}  # fmt: skip
    g["oh"] = out_size(g["padding"], g["h"], kernel, stride, 1)
    g["ow"] = out_size(g["padding"], g["w"], kernel, stride, 1)
    return g


def padded_geometry(g: dict, stride: int) -> dict:
    """g with SAME padding, `stride` and an odd 7x9 input: pixels inside and on every edge."""
    g.update(h=7, w=9, stride=(stride, stride), padding="SAME")
    g["oh"] = out_size("SAME", 7, g["kh"], stride, 1)
    g["ow"] = out_size("SAME", 9, g["kw"], stride, 1)
    return g


def border_geometry(g: dict, h: int, w: int, stride: int, padding: str,
                    activation: str) -> dict:
    """g on an h x w input with `stride`, `padding` and `activation` (NONE keeps the whole
    int8 range: the unclamped stores)."""
    g.update(h=h, w=w, stride=(stride, stride), padding=padding, activation=activation)
    g["oh"] = out_size(padding, h, g["kh"], stride, 1)
    g["ow"] = out_size(padding, w, g["kw"], stride, 1)
    return g


# Border-heavy 3x3 depthwise shapes (h, w, stride, padding, channels, activation): kws' 5-wide
# map, 1- and 2-wide ones (two taps outside a window), stride 2 on even and odd sizes,
# VALID, channel counts with a tail after the blocks of 4.
BORDER_SHAPES = ((6, 5, 1, "SAME", 12, "NONE"), (8, 6, 2, "SAME", 10, "RELU"),
                 (2, 5, 1, "SAME", 8, "NONE"), (5, 2, 1, "SAME", 6, "RELU6"),
                 (7, 5, 1, "VALID", 9, "NONE"), (1, 3, 1, "SAME", 4, "RELU"),
                 (5, 7, 2, "SAME", 16, "NONE"), (4, 4, 1, "SAME", 7, "NONE"))


def add_conv(b: ModelBuilder, rng, g: dict, depthwise: bool, scale_factor: float,
             input_zero_point: int | None = None, output_zero_point: int | None = None):
    """One int8 CONV_2D / DEPTHWISE_CONV_2D of geometry g; returns (input data, geometry).
    input_zero_point, output_zero_point replace the random ones (real models' -128)."""
    t = conv_cases.quantized_tensors(rng, g, "int8", depthwise)
    if input_zero_point is not None:
        t["in_q"] = ir.Quantization(t["in_q"].scale, [input_zero_point])
    out_q = t["out_q"]
    out_zero_point = out_q.zero_point if output_zero_point is None else [output_zero_point]
    t["out_q"] = ir.Quantization([out_q.scale[0] * scale_factor], out_zero_point)
    in_shape = [g["batches"], g["h"], g["w"], g["cin"]]
    x = b.input(f"x{len(b.graph.inputs)}", in_shape, "int8", quantization=t["in_q"])
    inputs = [x, b.constant("w", t["weights"], quantization=t["filter_q"]),
              b.constant("b", t["bias"], quantization=t["bias_q"])]
    options = {"padding": g["padding"], "stride_h": g["stride"][0], "stride_w": g["stride"][1],
               "dilation_h_factor": g["dilation"][0], "dilation_w_factor": g["dilation"][1],
               "fused_activation_function": g["activation"]}  # fmt: skip
    if depthwise:
        options["depth_multiplier"] = g["multiplier"]
    opcode = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    shape = [g["batches"], g["oh"], g["ow"], g["cout"]]
    b.output(b.add_op(opcode, inputs, shape, "int8", quantization=t["out_q"], options=options))
    return rng.integers(-128, 128, size=in_shape).astype(np.int8), {**g, "scale": scale_factor}


def add_fc(b: ModelBuilder, rng, batches: int, depth: int, units: int):
    """One int8 FULLY_CONNECTED of `batches` rows; returns (input data, shapes)."""
    s = {"kind": "2d", "depth": depth, "units": units, "input": [batches, depth],
         "output": [batches, units], "keep": False}  # fmt: skip
    t = fc_cases.quantized_tensors(rng, s, "int8", bool(rng.random() < 0.5))
    x = b.input(f"x{len(b.graph.inputs)}", s["input"], "int8", quantization=t["in_q"])
    inputs = [x, b.constant("w", t["weights"], quantization=t["filter_q"]),
              b.constant("b", t["bias"], quantization=t["bias_q"])]
    b.output(b.add_op("FULLY_CONNECTED", inputs, s["output"], "int8", quantization=t["out_q"],
                      options={"fused_activation_function": "RELU", "keep_num_dims": False}))
    return rng.integers(-128, 128, size=s["input"]).astype(np.int8), s


def add_same_shape_add(b: ModelBuilder, rng, shape: list[int]):
    """One int8 ADD of two inputs of `shape` (large ones take the table path)."""
    case = add_cases.add_case(rng, "int8")
    case["shape1"] = case["shape2"] = shape
    return add_cases.add_add(b, "int8", case, rng), case


def narrow_cases(b: ModelBuilder, rng, factor: float) -> list:
    """1x1 stride-1 CONV_2D of the shapes conv_narrow.h runs (8 -> 16, 16 -> 32, 32 -> 32
    channels: vww's and person_detect's early layers, zero points -128 as theirs), over an
    odd pixel count (the last pixel alone) and an even one, for K = 16 and 32 (4 pixels a
    pass) every remainder after the quads and a count below 4, a near miss (8 -> 12) that
    takes the generic loop, and vww's first layer's shape (3x3x3 -> 8)."""
    cases = []
    for cin, cout, (h, w) in ((8, 16, (5, 7)), (16, 32, (4, 6)), (32, 32, (3, 5)),
                              (16, 32, (3, 3)), (32, 32, (2, 3)), (16, 32, (1, 3)),
                              (8, 16, (2, 2)), (8, 12, (3, 3))):
        g = conv_geometry(rng, False, 1, cin, cout)
        g.update(h=h, w=w, oh=h, ow=w, stride=(1, 1), padding="VALID",
                 activation=str(rng.choice(["NONE", "RELU"])))
        data, g = add_conv(b, rng, g, False, factor, input_zero_point=-128,
                           output_zero_point=-128)
        cases.append(("CONV_2D 1x1 narrow", [data], g))
    # First layers over RGB: 3x3x3 -> 8 (conv_narrow_rgb3 per 3 pixels, conv_narrow_28x8
    # and conv_narrow_last after them) at both strides over an odd 7x9 input, windows
    # inside and on every edge, 63 and 20 output pixels; SAME and VALID over odd widths,
    # 16, 49 and 15 pixels: every remainder after the groups of 3; wider rows (vww's 96
    # is SAME at stride 2: padding right and below only) whose runs of triples inside the
    # image are long (4 and 9 triples a row, rows moved by the kernel between them).
    # Stride 2 runs by bands of 12 pixels (conv_narrow_rgb_bands): vww's width 96 (4 bands
    # a row, the last into the right padding, the last row into the bottom one), an odd
    # width (padding left too: the first band's top row copied) with 2 bands and 1 pixel
    # left, VALID with 2 bands in place then a triple and a pixel read past the image's end.
    for stride, shape in ((1, None), (2, None), (2, (7, 7, "SAME")), (1, (9, 9, "VALID")),
                          (2, (8, 11, "VALID")), (2, (5, 26, "SAME")), (1, (4, 29, "VALID")),
                          (2, (4, 96, "SAME")), (2, (3, 49, "SAME")), (2, (7, 57, "VALID"))):
        g = conv_geometry(rng, False, 3, 3, 8)
        if shape is None:
            g = padded_geometry(g, stride)
        else:
            g = border_geometry(g, shape[0], shape[1], stride, shape[2], "NONE")
        g["activation"] = str(rng.choice(["NONE", "RELU"]))
        data, g = add_conv(b, rng, g, False, factor, input_zero_point=-128,
                           output_zero_point=-128)
        cases.append(("CONV_2D 3x3x3 narrow", [data], g))
    return cases


def fast_path_cases(b: ModelBuilder, rng) -> list:
    """(op, input data list, description) of the cases aimed at the tag's fast paths."""
    cases = []
    for factor in SCALE_FACTORS:
        for channels in (4, 8, 6, 27):  # 27: the MVE 16-, 8- and 4-channel blocks + 3
            g = conv_geometry(rng, True, 3, channels, channels)
            data, g = add_conv(b, rng, g, True, factor)
            cases.append(("DEPTHWISE_CONV_2D 3x3", [data], g))
        # The DSP 3x3 pixels inside the input beside edge pixels padded on every side, both
        # strides, odd sizes, channel counts with and without a tail after the 4-blocks.
        for stride, channels in ((1, 5), (2, 12), (1, 16), (2, 7)):
            g = padded_geometry(conv_geometry(rng, True, 3, channels, channels), stride)
            data, g = add_conv(b, rng, g, True, factor)
            cases.append(("DEPTHWISE_CONV_2D 3x3 padded", [data], g))
        for h, w, stride, padding, channels, activation in BORDER_SHAPES:
            g = border_geometry(conv_geometry(rng, True, 3, channels, channels), h, w, stride,
                                padding, activation)
            data, g = add_conv(b, rng, g, True, factor, input_zero_point=-128 if h > 5 else None)
            cases.append(("DEPTHWISE_CONV_2D 3x3 border", [data], g))
        # 1x1 GEMM blocks of 2 pixels x 2 or 4 channels: input channels below 4 and not a
        # multiple of 4 (the scalar tail), odd output channel counts.
        for kernel, cin, cout in ((1, 8, 8), (3, 3, 12), (3, 5, 6), (1, 6, 7), (1, 3, 5),
                                  (1, 13, 9), (1, 32, 12)):
            data, g = add_conv(b, rng, conv_geometry(rng, False, kernel, cin, cout), False,
                               factor)
            cases.append(("CONV_2D", [data], g))
        cases += narrow_cases(b, rng, factor)
    # Single rows take 4 weight rows per pass: depths below 4 and with a tail, unit counts
    # with and without a remainder after the blocks of 4.
    for batches, depth, units in ((1, 37, 5), (1, 64, 8), (3, 20, 7), (1, 3, 6),
                                  (1, 130, 12)):
        data, s = add_fc(b, rng, batches, depth, units)
        cases.append(("FULLY_CONNECTED", [data], s))
    for shape in ([1, 16, 16, 3], [1, 5, 5, 3], [1, 9, 8, 8]):
        data, case = add_same_shape_add(b, rng, shape)
        cases.append(("ADD", data, case))
    return cases


def pool_case(rng, channels: int, window: int | None = None) -> dict:
    """A random pooling geometry of `channels` channels; `window` makes one VALID window of
    window x window values over an input of that size (more than 256 values: int32 sums)."""
    case = pool_cases.random_case(rng)
    case["c"] = channels
    if window is not None:
        case.update(h=window, w=window, fh=window, fw=window, sh=1, sw=1, padding="VALID",
                    oh=1, ow=1)
    return case


def pooling_mul_softmax_cases(b: ModelBuilder, rng) -> list:
    """(op, input data list, description) of AVERAGE_POOL_2D, MAX_POOL_2D, MUL and SOFTMAX:
    channel counts around the 4-, 8- and 16-channel blocks, same-shape and broadcast MULs
    with output shifts inside and outside the fast requantisation's range, softmax rows
    shorter and longer than the DSP max's 8 (inputs below and above the exp table's 256
    elements), and float32 / int16 cases of the fallbacks (int16 only for SOFTMAX)."""
    cases = []
    for op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        for channels in (1, 4, 5, 8, 19, 32):
            case = pool_case(rng, channels)
            cases.append((op, [pool_cases.add_pool(b, op, "int8", case, rng)], case))
        case = pool_case(rng, 6, window=17)
        cases.append((op, [pool_cases.add_pool(b, op, "int8", case, rng)], case))
        for dtype in ("float32", "int16"):
            case = pool_case(rng, 3)
            cases.append((f"{op} {dtype}", [pool_cases.add_pool(b, op, dtype, case, rng)], case))
    mul_shapes = [([1, 6, 6, 5], [1, 6, 6, 5]), ([7], [7]), ([2, 3, 8], [2, 3, 8]),
                  ([1, 4, 4, 3], [1, 1, 1, 3]), ([3, 1], [1, 5])]
    for factor in SCALE_FACTORS:
        for shape1, shape2 in mul_shapes:
            case = binary_cases.make_case(rng, "int8", 4)
            case.update(shape1=shape1, shape2=shape2)
            case["quant"][2]["scale"] *= factor
            options = {"fused_activation_function": case["activation"]}
            data = binary_cases.add_binary(b, "MUL", "int8", case, rng, options)
            cases.append(("MUL", data, case))
    for dtype in ("float32", "int16"):
        case = binary_cases.make_case(rng, dtype, 3)
        data = binary_cases.add_binary(b, "MUL", dtype, case, rng, {})
        cases.append((f"MUL {dtype}", data, case))
    for out_dtype in ("int8", "int16"):
        for depth in (1, 5, 8, 13, 64, 300):
            case = softmax_cases.quantized_case(rng)
            case["shape"] = [int(rng.integers(1, 4)), depth]
            data = softmax_cases.add_softmax(b, case, "int8", out_dtype, rng)
            cases.append((f"SOFTMAX int8->{out_dtype}", [data], case))
    # The int16 fallback (float32 softmax calls expf, whose last bit differs between libms).
    case = softmax_cases.quantized_case(rng)
    case.update(scale=float(10 ** rng.uniform(-4.5, -2.5)), zero_point=0)
    cases.append(("SOFTMAX int16", [softmax_cases.add_softmax(b, case, "int16", "int16", rng)],
                  case))
    return cases


def mixed_model(seed: int):
    """One model of independent random ops: (model bytes, inputs, case descriptions)."""
    rng = np.random.default_rng(7000 + seed)
    b = ModelBuilder()
    cases = []
    for _ in range(5):
        cases.append(("CONV_2D",) + conv_cases.add_case(b, rng, "int8", False))
        cases.append(("DEPTHWISE_CONV_2D",) + conv_cases.add_case(b, rng, "int8", True))
    for _ in range(3):
        cases.append(("FULLY_CONNECTED",) + fc_cases.add_case(b, rng, "int8"))
    cases.append(("CONV_2D float32",) + conv_cases.add_case(b, rng, "float32", False))
    cases.append(("DEPTHWISE_CONV_2D int16",) + conv_cases.add_case(b, rng, "int16", True))
    cases.append(("FULLY_CONNECTED int16",) + fc_cases.add_case(b, rng, "int16"))
    cases = [(op, [data], g) for op, data, g in cases] + fast_path_cases(b, rng)
    cases += pooling_mul_softmax_cases(b, rng)
    inputs = [array for _, data, _ in cases for array in data]
    return b.build(), inputs, [(op, g) for op, _, g in cases]


def compare(ours, model, inputs, cases) -> None:
    expected = run_tflm(model, inputs, len(cases))
    assert len(ours) == len(expected) == len(cases)
    for index, case in enumerate(cases):
        try:
            assert_bit_exact(np.asarray(ours[index]), expected[index])
        except AssertionError as error:
            raise AssertionError(f"op {index} {case}: {error}") from None


def need_board(target: str) -> None:
    board = qemu.board_of(target)
    need_tool(board["toolchain"] + "gcc")
    need_tool(board["qemu"])
    need_tool("make")


def compare_on_board(target: str, model: bytes, inputs, cases) -> None:
    """The model built with the cmsis tag and run on the QEMU board `target`: the same
    outputs as the host build and bit-exact with TFLM's."""
    result = qemu.run_on_target(model, target, inputs, TAGS)
    assert result.matches_host, result.stdout
    compare(result.outputs, model, inputs, cases)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_ops_host_build(seed):
    model, inputs, cases = mixed_model(seed)
    compare(host.run_model(model, inputs, TAGS), model, inputs, cases)


@pytest.mark.parametrize("target", ["qemu-cortex-m4", "qemu-cortex-m55"])
@pytest.mark.parametrize("seed", SEEDS)
def test_random_ops_on_board(target, seed):
    need_board(target)
    model, inputs, cases = mixed_model(seed)
    compare_on_board(target, model, inputs, cases)


@pytest.mark.parametrize("target,name", [(t, n) for t, names in CORPUS_INT8.items()
                                         for n in names])
def test_corpus_model_bit_exact_with_tag(target, name):
    need_board(target)
    data = (need_corpus() / name).read_bytes()
    _, completed = qemu.run_project(data, target, TAGS)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert qemu.PASSED in completed.stdout


def test_tag_replaces_the_reference_kernels():
    from tflm_gen.kernels import kernel_files
    files = kernel_files(["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "MUL",
                          "AVERAGE_POOL_2D", "MAX_POOL_2D", "SOFTMAX"], TAGS)
    for name in ("conv.c", "depthwise_conv.c", "fully_connected.c", "add.c", "mul.c",
                 "pooling.c", "softmax.c", "cmsis_simd.h"):
        assert files[name].parent.name == "cmsis", name
    # Shared prepare and the reference loops of other types come from the reference set.
    for name in ("conv_common.c", "conv_reference.c", "depthwise_reference.c",
                 "fully_connected_reference.c", "add_common.c", "add_reference.c",
                 "mul_common.c", "mul_reference.c", "pooling_common.c", "pooling_reference.c",
                 "softmax_common.c", "softmax_reference.c"):
        assert files[name].parent.name == "kernels_c", name


# The start and the end of the requantisation checks' main.c: a fixed xorshift generator,
# the counters, and the verdict line qemu.PASSED looks for.
REQUANT_MAIN_START = r"""
#include "../tflm/cmsis_simd.h"
#include "../tflm/tflm_printf.h"

static uint32_t state = 12345u;
static int32_t next(void) {
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return (int32_t)state;
}

static uint32_t failures, checked;

static void check(const int32_t acc[4], const int32_t mul[4], const int32_t shift[4]);

/* Small accumulators (exact ties, both signs) times 2^30 at every shift from first down to
 * last. */
static void sweep_ties(int32_t first, int32_t last) {
  int32_t acc[4], mul[4], shift[4], x, e, j;
  for (e = first; e >= last; --e) {
    for (x = -4096; x < 4096; x += 4) {
      for (j = 0; j < 4; ++j) {
        acc[j] = (x + j) << (e < -12 ? 12 : -e);
        mul[j] = 1 << 30;
        shift[j] = e;
      }
      check(acc, mul, shift);
    }
  }
}
"""
REQUANT_MAIN_END = r"""  tflm_printf("checked %lu, failures %lu\n", (unsigned long)checked, (unsigned long)failures);
  if (failures == 0) tflm_printf("~~~ALL TESTS PASSED~~~\n");
  return failures != 0;
}
"""


# The MVE requantisation (cmsis_mve_mul_by_qm / cmsis_mve_requantize) against the scalar
# tflm_multiply_by_quantized_multiplier / tflm_requantize, lane by lane, on the Cortex-M55:
# a sweep of small accumulators over every right shift of a multiplier of 2^30 (exact ties,
# negative and positive), the extremes, and pseudo-random values over all shifts.
MVE_REQUANT_MAIN = REQUANT_MAIN_START + r"""
static void check(const int32_t acc[4], const int32_t mul[4], const int32_t shift[4]) {
  int32_t got[4], clamped[4], j;
  vst1q_s32(got, cmsis_mve_mul_by_qm(vld1q_s32(acc), vld1q_s32(mul), vld1q_s32(shift)));
  vst1q_s32(clamped, cmsis_mve_requantize(vld1q_s32(acc), vld1q_s32(mul), vld1q_s32(shift),
                                          -3, -128, 127));
  for (j = 0; j < 4; ++j) {
    const int32_t want = tflm_multiply_by_quantized_multiplier(acc[j], mul[j], shift[j]);
    ++checked;
    if (got[j] != want || clamped[j] != tflm_requantize(acc[j], mul[j], shift[j], -3, -128, 127)) {
      if (failures++ < 8) {
        tflm_printf("acc %ld mul %ld shift %ld: %ld != %ld\n", (long)acc[j], (long)mul[j],
                    (long)shift[j], (long)got[j], (long)want);
      }
    }
  }
}

int main(void) {
  static const int32_t extremes[] = {INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX,
                                     INT32_MAX - 1, 1 << 30, -(1 << 30)};
  int32_t acc[4], mul[4], shift[4], e, i, j, k;
  sweep_ties(0, -31);
  for (i = 0; i < 9; ++i) {
    for (k = 0; k < 9; ++k) {
      for (e = -31; e <= 30; e += 4) {
        for (j = 0; j < 4; ++j) {
          acc[j] = extremes[i];
          mul[j] = extremes[k];
          shift[j] = e + j;
        }
        check(acc, mul, shift);
      }
    }
  }
  for (i = 0; i < 20000; ++i) {
    for (j = 0; j < 4; ++j) {
      const int32_t r = next();
      acc[j] = (i & 1) ? next() : next() >> (r & 31);
      mul[j] = (i & 2) ? next() : (int32_t)(0x40000000u | ((uint32_t)r & 0x3fffffffu));
      shift[j] = (int32_t)(((uint32_t)next() % 62u)) - 31;
    }
    check(acc, mul, shift);
  }
""" + REQUANT_MAIN_END


def run_requant_check(target: str, main_c: str) -> None:
    """Builds a cmsis project of target with main_c as its main.c and runs it on the board."""
    need_board(target)
    rng = np.random.default_rng(3)
    b = ModelBuilder()
    add_conv(b, rng, conv_geometry(rng, False, 1, 8, 8), False, 1.0)
    files = qemu.project_files(b.build(), target, TAGS)
    assert "tflm/cmsis_simd.h" in files
    files[qemu.SELF_TEST_MAIN] = main_c.encode()  # the program qemu.build links
    completed = qemu.run(qemu.build(files, target))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert qemu.PASSED in completed.stdout and "checked " in completed.stdout, completed.stdout


def test_mve_requantize_is_bit_exact():
    run_requant_check("qemu-cortex-m55", MVE_REQUANT_MAIN)


# The DSP wide and strict requantisations (cmsis_requantize_wide / _strict and their 4-value
# forms with the packed clamp) against the scalar tflm_requantize on the Cortex-M4: every right shift it takes
# (2..31) with a multiplier of 2^30 over small accumulators (exact ties, both signs), the
# extremes, zeroed channels (multiplier 0, shift 0), and pseudo-random values.
WIDE_REQUANT_MAIN = REQUANT_MAIN_START + r"""
static void check(const int32_t acc[4], const int32_t mul[4], const int32_t shift[4]) {
  int8_t packed[4], strict[4];
  const int32_t is_strict = cmsis_requant_is_strict(shift, 4);
  int32_t j;
  cmsis_requantize4_wide(acc, mul, shift, -3, -100, 90, packed);
  if (is_strict) cmsis_requantize4_strict(acc, mul, shift, -3, -100, 90, strict);
  for (j = 0; j < 4; ++j) {
    const int32_t want = tflm_requantize(acc[j], mul[j], shift[j], 7, INT32_MIN, INT32_MAX);
    const int32_t want8 = tflm_requantize(acc[j], mul[j], shift[j], -3, -100, 90);
    const int32_t got = cmsis_requantize_wide(acc[j], mul[j], shift[j], 7, INT32_MIN,
                                              INT32_MAX);
    ++checked;
    if (is_strict && (cmsis_requantize_strict(acc[j], mul[j], shift[j], 7) != want ||
                      strict[j] != want8)) {
      if (failures++ < 8) tflm_printf("strict: acc %ld shift %ld\n", (long)acc[j], (long)shift[j]);
    }
    if (got != want || packed[j] != want8) {
      if (failures++ < 8) {
        tflm_printf("acc %ld mul %ld shift %ld: %ld != %ld\n", (long)acc[j], (long)mul[j],
                    (long)shift[j], (long)got, (long)want);
      }
    }
  }
}

int main(void) {
  static const int32_t extremes[] = {INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX,
                                     INT32_MAX - 1, 1 << 30, -(1 << 30)};
  static const int32_t multipliers[] = {1 << 30, (1 << 30) + 1, INT32_MAX, 0};
  int32_t acc[4], mul[4], shift[4], e, i, j, k;
  sweep_ties(-2, -31);
  for (i = 0; i < 9; ++i) {
    for (k = 0; k < 4; ++k) {
      for (e = -31; e <= -2; ++e) {
        for (j = 0; j < 4; ++j) {
          acc[j] = extremes[(i + j) % 9];
          mul[j] = multipliers[k];
          shift[j] = multipliers[k] == 0 && j == 3 ? 0 : e;
        }
        check(acc, mul, shift);
      }
    }
  }
  for (i = 0; i < 20000; ++i) {
    for (j = 0; j < 4; ++j) {
      const int32_t r = next();
      acc[j] = (i & 1) ? next() : next() >> (r & 31);
      mul[j] = (int32_t)(0x40000000u | ((uint32_t)r & 0x3fffffffu));
      shift[j] = -2 - (int32_t)(((uint32_t)next() % 30u));
    }
    check(acc, mul, shift);
  }
""" + REQUANT_MAIN_END


def test_wide_requantize_is_bit_exact():
    run_requant_check("qemu-cortex-m4", WIDE_REQUANT_MAIN)
