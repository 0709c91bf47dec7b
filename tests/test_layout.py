"""The offline weight layout (tflm_gen/layout.py, metadata `tflm_gen.layout`): CONV_2D int8
filters as int16 channel pairs with folded per-channel constants, read by the cmsis conv
kernel's C (host), DSP (Cortex-M4) and MVE (Cortex-M55) versions; DEPTHWISE_CONV_2D 3x3
filters as tap pairs with folded constants and requantisation steps, read by the cmsis
depthwise kernel's C (host) and DSP (Cortex-M4) versions (MVE keeps the plain filter).

The depthwise layers are those of vww, person_detect and kws (3x3, 8 to 512 channels,
stride 1 and 2, SAME and VALID padding, per-channel scales), channel counts with a tail
after the blocks of 4 and beyond one border chunk of 32, a depth multiplier of 2 and left
shifts (no record: the plain path).  The convolution layers are drawn from real models'
ranges (vww, person_detect, kws, resnet): 1x1 over
8 to 128 input channels, output channel counts around the kernels' chunks of 16 and odd,
input channels not a multiple of 4, first layers of 1-3 input channels with 3x3 windows,
stride 2 and SAME padding, input zero point -128 and random, output shifts right, left and
beyond the fast requantisation's range.  Every output is compared with TFLM's."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import test_cmsis as cmsis_cases
import test_ops_conv as conv_cases
from op_oracle import run_tflm
from test_overlap import tight_plan

from tflm_gen import host, project, qemu
from tflm_gen.layout import (
    CONV_FOLDED,
    CONV_INT16_PAIRS,
    CONV_INT16_PAIRS_REQUANT,
    CONV_PAIR_RECORDS,
    CONV_PAIR_RECORDS_IN_FILTER,
    CONV_PAIRS_REQUANT_IN_FILTER,
    CONV_RGB_BAND,
    CONV_RGB_BAND_IN_FILTER,
    DW_QUAD_BYTES,
    DW_ROW_QUADS,
    DW_TAP_PAIRS,
    METADATA_NAME,
    PAIR_MARK,
    embed_layout,
    layout_bytes,
    layout_words,
    rgb_band_stream,
)
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.optimize import device_model
from tflm_gen.plan import embed_plan

ROOT = Path(__file__).resolve().parent.parent
# (kernel, input channels, output channels, stride): 1x1 layers of MobileNet-like models,
# first layers (3x3 over 1-3 channels, stride 2), and patches that are not whole words.
LAYERS = [(1, 8, 16, 1), (1, 16, 32, 1), (1, 32, 33, 1), (1, 64, 24, 1), (1, 128, 40, 1),
          (1, 13, 9, 1), (1, 3, 5, 2), (3, 3, 8, 2), (3, 1, 16, 2), (3, 2, 7, 2),
          (3, 8, 12, 1)]


# Layers of real models whose requantisation the DSP kernel fuses (CONV_INT16_PAIRS_REQUANT:
# even channel counts, output zero point -128, RELU or none): vww / person_detect 1x1 over
# 8-256 channels (and 512) and their 3x3 stride-2 first layer over 3, kws' first layer over
# 1, resnet's 3x3 over 16 and 32 (stride 1 and 2) and its 1x1 stride-2 shortcut; 3x3 with
# dilation (rows apart: read straight from the image; taps apart: gathered); 3x3 over 3
# channels at stride 1 too (windows widened from the image, rgb_patch_words, beside
# border ones copied).  A fifth entry is the dilation (h, w).
REQUANT_LAYERS = [(1, 8, 16, 1), (1, 16, 32, 1), (1, 32, 32, 1), (1, 64, 128, 1),
                  (1, 256, 64, 1), (3, 3, 8, 2), (3, 1, 64, 2), (3, 16, 16, 1), (3, 32, 64, 2),
                  (1, 16, 32, 2), (1, 512, 32, 1), (3, 16, 8, 1, (2, 1)),
                  (3, 8, 8, 1, (1, 2)), (3, 3, 6, 1)]


def layout_model(seed: int, layers=LAYERS, requant_tail: bool = False):
    """(model bytes, inputs, cases) of independent CONV_2D layers, each scale factor once;
    requant_tail: output zero point -128 and RELU or no activation, scales whose shifts
    are right shifts (1: the generators' own; 1e3 for two 1x1 layers: beyond the output's
    range, channels of one value; the others keep outputs that depend on every tap)."""
    rng = np.random.default_rng(9100 + seed)
    b = ModelBuilder()
    cases = []
    for index, (kernel, cin, cout, stride, *dilation) in enumerate(layers):
        g = cmsis_cases.conv_geometry(rng, False, kernel, cin, cout)
        if kernel == 3:
            g = cmsis_cases.padded_geometry(g, stride)
        if dilation:
            g["dilation"] = dilation[0]
            g["oh"] = conv_cases.out_size(g["padding"], g["h"], kernel, stride, dilation[0][0])
            g["ow"] = conv_cases.out_size(g["padding"], g["w"], kernel, stride, dilation[0][1])
        factor = cmsis_cases.SCALE_FACTORS[index % len(cmsis_cases.SCALE_FACTORS)]
        zero_point = -128 if index % 2 == 0 else None
        output_zero_point = None
        if requant_tail:
            g["activation"] = ("RELU", "NONE")[index % 2]
            factor, zero_point, output_zero_point = (1.0, 1e3)[index % 5 == 4], -128, -128
        data, g = cmsis_cases.add_conv(b, rng, g, False, factor, zero_point, output_zero_point)
        cases.append(("CONV_2D", [data], g))
    inputs = [array for _, data, _ in cases for array in data]
    return b.build(), inputs, [(op, g) for op, _, g in cases]


# (channels, stride, padding, input height, width, depth multiplier, output scale factor):
# the 3x3 depthwise layers of vww / person_detect (8..256 channels, both strides), kws (64,
# VALID), 512 channels, tails after the blocks of 4 (27) and after a border chunk of 32
# blocks (36 = 9 blocks), multiplier 2 and left shifts (1e-6), which get no record, and
# multipliers 8 and 4 (person_detect's first layer: 1 input channel, 8 outputs, gets the
# one-input-channel record DW_ROW_QUADS; 2 input channels of multiplier 4 get none).
DW_LAYERS = [(8, 1, "SAME", 9, 9, 1, 1.0), (16, 2, "SAME", 10, 10, 1, 1.0),
             (32, 1, "SAME", 6, 7, 1, 1.0), (64, 2, "SAME", 7, 7, 1, 1.0),
             (64, 1, "VALID", 6, 5, 1, 1.0), (128, 1, "SAME", 4, 4, 1, 1.0),
             (256, 1, "SAME", 3, 3, 1, 1.0), (512, 2, "VALID", 3, 4, 1, 1.0),
             (27, 1, "SAME", 5, 6, 1, 1.0), (36, 2, "SAME", 5, 5, 1, 1.0),
             (4, 1, "VALID", 4, 3, 1, 1.0), (8, 1, "SAME", 5, 5, 2, 1.0),
             (12, 1, "SAME", 5, 5, 1, 1e-6), (1, 2, "SAME", 9, 8, 8, 1.0),
             (2, 1, "VALID", 5, 6, 4, 1.0)]


def depthwise_model(seed: int):
    """(model bytes, inputs, cases, the record kind each layer gets or None) of DW_LAYERS."""
    rng = np.random.default_rng(9300 + seed)
    b = ModelBuilder()
    cases, expected = [], []
    for index, (cin, stride, padding, h, w, multiplier, factor) in enumerate(DW_LAYERS):
        g = cmsis_cases.conv_geometry(rng, True, 3, cin, cin)
        g.update(h=h, w=w, stride=(stride, stride), padding=padding, multiplier=multiplier,
                 cout=cin * multiplier, per_channel=True)
        g["oh"] = conv_cases.out_size(padding, h, 3, stride, 1)
        g["ow"] = conv_cases.out_size(padding, w, 3, stride, 1)
        data, g = cmsis_cases.add_conv(b, rng, g, True, factor,
                                       -128 if index % 2 == 0 else None)
        cases.append(("DEPTHWISE_CONV_2D", [data], g))
        expected.append(DW_TAP_PAIRS if multiplier == 1 and factor == 1.0 else
                        DW_ROW_QUADS if cin == 1 and multiplier % 4 == 0 else None)
    inputs = [array for _, data, _ in cases for array in data]
    return b.build(), inputs, [(op, g) for op, _, g in cases], expected


def records(model_bytes: bytes) -> list[list[int]]:
    """The layout records of a device model, in operator order (empty for none)."""
    model = read_model(model_bytes)
    assert METADATA_NAME in dict(model.metadata)
    return [record or [] for record in ir.layout_records(model)]


def with_layout_words(model_bytes: bytes, edit) -> bytes:
    """The device model with its layout words passed through edit(words) -> words."""
    model = read_model(model_bytes)
    buffer = dict(model.metadata)[METADATA_NAME]
    words = np.frombuffer(model.buffers[buffer].data, dtype="<i4").copy()
    model.buffers[buffer] = ir.Buffer(np.asarray(edit(words), dtype="<i4").tobytes())
    return write_model(model)


@pytest.mark.parametrize("seed", (0, 1))
def test_layout_layers_bit_exact_on_host(seed):
    model, inputs, cases = layout_model(seed)
    device = device_model(model, cmsis_cases.TAGS)[0]
    kinds = {CONV_INT16_PAIRS, CONV_INT16_PAIRS_REQUANT, CONV_PAIR_RECORDS}
    assert all(record and record[0] in kinds for record in records(device))
    cmsis_cases.compare(host.run_model(device, inputs, cmsis_cases.TAGS), model, inputs, cases)


@pytest.mark.parametrize("target", ["qemu-cortex-m4", "qemu-cortex-m55"])
def test_layout_layers_bit_exact_on_board(target):
    cmsis_cases.need_board(target)
    model, inputs, cases = layout_model(0)
    cmsis_cases.compare_on_board(target, model, inputs, cases)


def requant_tail_bit_exact_on_host(model, inputs, cases) -> None:
    """Every layer gets a requantising record (the 1x1 ones over K a multiple of 4 but
    conv_narrow.h's shapes CONV_PAIR_RECORDS); the host build is bit-exact with TFLM."""
    device = device_model(model, cmsis_cases.TAGS)[0]
    requantising = {CONV_INT16_PAIRS_REQUANT, CONV_PAIR_RECORDS}
    assert all(record[0] in requantising for record in records(device))
    cmsis_cases.compare(host.run_model(device, inputs, cmsis_cases.TAGS), model, inputs, cases)


def test_requant_tail_layers_bit_exact_on_host():
    model, inputs, cases = layout_model(0, REQUANT_LAYERS, requant_tail=True)
    requant_tail_bit_exact_on_host(model, inputs, cases)


@pytest.mark.parametrize("target", ["qemu-cortex-m4", "qemu-cortex-m55"])
def test_requant_tail_layers_bit_exact_on_board(target):
    cmsis_cases.need_board(target)
    model, inputs, cases = layout_model(0, REQUANT_LAYERS, requant_tail=True)
    cmsis_cases.compare_on_board(target, model, inputs, cases)


# Odd pixel counts, whose last pixel runs alone (cmsis_dot_pairs_requant1): (kernel, input
# channels, output channels, stride, input height, width) of vww / person_detect's 3x3-output
# 1x1 layers over 128, 256 and 512 channels, one pixel, and a 3x3 stride-2 first layer of 5x5
# outputs (padded edge pixels and the last one gathered).
ODD_PIXEL_LAYERS = [(1, 128, 256, 1, 3, 3), (1, 256, 256, 1, 3, 3), (1, 512, 32, 1, 3, 3),
                    (1, 64, 16, 1, 1, 1), (3, 3, 8, 2, 9, 9)]

# Layers the DSP kernel runs three pixels at a time (cmsis_dot_pairs_requant3: input
# channels a multiple of 4, or 1x1 in place), in the same form: pixel counts of 3n, 3n + 1
# and 3n + 2 (the last one or two through the pair kernels), 1 to 36 groups of 4 inputs
# (with the REQUANT_LAYERS every entry into its loop of 32 steps: groups of every residue
# modulo 16, over odd channel-pair counts; vww's 128 -> 128 at 6x6; 1x1 layers over K a
# multiple of 4 take CONV_PAIR_RECORDS: 4n, 4n + 1, 4n + 2 and 4n + 3 pixels four at a time,
# cmsis_dot_records4, and the rest one at a time, cmsis_dot_records1, groups of every
# residue modulo 32 (the entries into their loops of 64 steps and 16 groups) with the
# REQUANT_LAYERS' 1x1 ones over 256 and 512 inputs), 1x1 in place at stride 1
# and 2, 3x3 windows on every border (taps of the zero point) beside inside ones, kws' 1x1
# over 64 channels and resnet's 3x3 over 16; filter rows of whole words over 1-3 input
# channels (kws' first layer: 1 channel, 4 columns), border windows value by value.
TRIPLE_LAYERS = [(1, 4, 8, 1, 4, 4), (1, 24, 6, 1, 5, 4), (1, 20, 10, 2, 7, 7),
                 (3, 4, 8, 1, 5, 7), (3, 12, 6, 2, 7, 8), (3, 16, 16, 1, 6, 6),
                 (1, 64, 64, 1, 5, 5), (1, 28, 4, 1, 3, 1), (4, 1, 8, 2, 9, 8),
                 (2, 2, 6, 1, 5, 5), (4, 3, 4, 1, 6, 5), (1, 12, 10, 1, 5, 5),
                 (1, 40, 6, 2, 7, 5), (1, 52, 14, 1, 3, 5), (1, 56, 8, 1, 4, 4),
                 (1, 60, 18, 1, 3, 3), (1, 128, 128, 1, 6, 6), (1, 36, 6, 1, 4, 3),
                 (1, 44, 10, 1, 5, 3), (1, 48, 4, 1, 3, 4), (1, 8, 6, 1, 4, 2),
                 (1, 16, 10, 1, 4, 2), (1, 28, 6, 1, 2, 4), (1, 32, 64, 1, 4, 4),
                 (1, 60, 8, 1, 4, 1), (1, 68, 6, 1, 3, 3), (1, 84, 4, 1, 2, 3),
                 (1, 104, 8, 1, 7, 1), (1, 124, 2, 1, 4, 1), (1, 132, 10, 2, 5, 5),
                 (1, 72, 2, 1, 1, 1), (1, 76, 4, 1, 2, 1), (1, 80, 2, 1, 3, 1),
                 (1, 88, 4, 1, 5, 1), (1, 92, 2, 1, 1, 2), (1, 96, 4, 1, 2, 2),
                 (1, 100, 2, 1, 3, 2), (1, 108, 2, 1, 1, 3), (1, 112, 4, 1, 4, 2),
                 (1, 116, 2, 1, 1, 4), (1, 120, 2, 1, 1, 5)]


def pixel_model(layers, odd: bool = False):
    """(model bytes, inputs, cases) of `layers` with a requantisation tail; odd: every
    layer has an odd pixel count."""
    rng = np.random.default_rng(9300)
    b = ModelBuilder()
    cases = []
    for index, (kernel, cin, cout, stride, height, width) in enumerate(layers):
        g = cmsis_cases.conv_geometry(rng, False, kernel, cin, cout)
        g.update(h=height, w=width, stride=(stride, stride), padding="SAME",
                 activation=("RELU", "NONE")[index % 2])
        g["oh"] = conv_cases.out_size("SAME", height, kernel, stride, 1)
        g["ow"] = conv_cases.out_size("SAME", width, kernel, stride, 1)
        assert not odd or g["oh"] * g["ow"] % 2 == 1
        data, g = cmsis_cases.add_conv(b, rng, g, False, 1.0, -128, -128)
        cases.append(("CONV_2D", [data], g))
    inputs = [array for _, data, _ in cases for array in data]
    return b.build(), inputs, [(op, g) for op, _, g in cases]


def odd_pixel_model():
    """(model bytes, inputs, cases) of ODD_PIXEL_LAYERS with a requantisation tail."""
    return pixel_model(ODD_PIXEL_LAYERS, odd=True)


def test_odd_pixel_counts_bit_exact_on_host():
    model, inputs, cases = odd_pixel_model()
    requant_tail_bit_exact_on_host(model, inputs, cases)


def test_odd_pixel_counts_bit_exact_on_m4():
    cmsis_cases.need_board("qemu-cortex-m4")
    model, inputs, cases = odd_pixel_model()
    cmsis_cases.compare_on_board("qemu-cortex-m4", model, inputs, cases)


def test_pixel_triples_bit_exact_on_host():
    model, inputs, cases = pixel_model(TRIPLE_LAYERS)
    requant_tail_bit_exact_on_host(model, inputs, cases)


@pytest.mark.parametrize("target", ["qemu-cortex-m4", "qemu-cortex-m33"])
def test_pixel_triples_bit_exact_on_board(target):
    cmsis_cases.need_board(target)
    model, inputs, cases = pixel_model(TRIPLE_LAYERS)
    cmsis_cases.compare_on_board(target, model, inputs, cases)


def first_tail(words) -> int:
    """Word index of the first CONV_INT16_PAIRS_REQUANT record's requantisation tail."""
    start = next(start for start in words[2: 2 + words[1]]
                 if start and words[start + 1] == CONV_INT16_PAIRS_REQUANT)
    return start + 1 + words[start] - 4 * words[start + 2]


def test_a_requant_tail_that_disagrees_is_ignored():
    """A tail whose first multiplier is not the node's: the layer runs without the record,
    still bit-exact."""
    model, inputs, cases = layout_model(1, REQUANT_LAYERS, requant_tail=True)
    device = device_model(model, cmsis_cases.TAGS, "fast")[0]  # model order

    def wrong_multiplier(words):
        tail = first_tail(words)
        words[tail + 2] = words[tail + 2] + 1 if words[tail + 2] else 1 << 30
        return words

    ours = host.run_model(with_layout_words(device, wrong_multiplier), inputs,
                          cmsis_cases.TAGS)
    cmsis_cases.compare(ours, model, inputs, cases)


def pair_record_words(words) -> tuple[int, int, int]:
    """(word index of the first CONV_PAIR_RECORDS record's first pair, words per pair, pair
    count) in the layout words."""
    for start in words[2: 2 + words[1]]:
        if start and words[start + 1] == CONV_PAIR_RECORDS:
            channels, patch = words[start + 2], words[start + 3]
            return start + 4 + channels, 8 + patch, channels // 2
    raise AssertionError("no CONV_PAIR_RECORDS record")


@pytest.mark.parametrize("edit", ["multiplier", "mark", "last"])
def test_a_pair_record_that_disagrees_is_ignored(edit):
    """A CONV_PAIR_RECORDS record whose first multiplier is not the node's, whose first
    mark is missing or whose last pair is not marked last (which the DSP kernels need to
    stop; with a weight changed too, so that a record taken would show in the host
    build's outputs): the layer runs without it, still bit-exact."""
    model, inputs, cases = layout_model(1, REQUANT_LAYERS, requant_tail=True)
    device = device_model(model, cmsis_cases.TAGS, "fast")[0]  # model order

    def wrong(words):
        first, size, pairs = pair_record_words(words)
        tail = first + size - 6  # constant b, shift a | mark, multiplier a, ...
        if edit == "multiplier":  # a quarter more or less, or 0.5 for a constant channel
            words[tail + 2] = words[tail + 2] ^ (1 << 29) if words[tail + 2] else 1 << 30
        elif edit == "mark":
            words[tail + 1] &= 0xFF
        else:
            words[tail + (pairs - 1) * size + 4] &= 0x7FFFFFFF
        if edit != "multiplier":
            words[first + 2] ^= 0x20002  # the first weight word's two doubled weights
        return words

    ours = host.run_model(with_layout_words(device, wrong), inputs, cmsis_cases.TAGS)
    cmsis_cases.compare(ours, model, inputs, cases)


def test_kernel_reads_the_folded_constants():
    """One folded constant moved by 2^24 (and its double in the requantisation tail) changes
    that layer's output: the kernel uses them."""
    model, inputs, cases = layout_model(0)
    device = device_model(model, cmsis_cases.TAGS, "fast")[0]  # model order

    def bump_first_constant(words):
        words[words[2] + 4] += 1 << 24  # record: length, kind, channels, patch, folded[0]
        if words[words[2] + 1] == CONV_INT16_PAIRS_REQUANT:
            words[first_tail(words)] += 1 << 25
        return words

    ours = host.run_model(with_layout_words(device, bump_first_constant), inputs,
                          cmsis_cases.TAGS)
    expected = run_tflm(model, inputs, len(cases))
    assert not np.array_equal(ours[0], expected[0])
    for index in range(1, len(cases)):
        assert np.array_equal(ours[index], expected[index])


def test_a_record_that_disagrees_with_the_node_is_ignored():
    """A record of the wrong channel count runs the plain filter, still bit-exact."""
    model, inputs, cases = layout_model(1)
    device = device_model(model, cmsis_cases.TAGS, "fast")[0]  # model order

    def wrong_channels(words):
        words[words[2] + 2] += 2  # record: length, kind, channels
        return words

    ours = host.run_model(with_layout_words(device, wrong_channels), inputs, cmsis_cases.TAGS)
    cmsis_cases.compare(ours, model, inputs, cases)


def test_float_and_grouped_convolutions_get_no_record():
    b = ModelBuilder()
    x = b.input("x", [1, 4, 4, 4], "float32")
    w = b.constant("w", np.ones([2, 1, 1, 4], np.float32))
    b.output(b.add_op("CONV_2D", [x, w, -1], [1, 4, 4, 2], "float32",
                      options={"padding": "VALID", "stride_h": 1, "stride_w": 1}))
    q = ir.Quantization([0.1], [0])
    y = b.input("y", [1, 4, 4, 4], "int8", quantization=q)
    grouped = b.constant("g", np.ones([2, 1, 1, 2], np.int8), quantization=q)
    b.output(b.add_op("CONV_2D", [y, grouped, -1], [1, 4, 4, 2], "int8", quantization=q,
                      options={"padding": "VALID", "stride_h": 1, "stride_w": 1}))
    assert layout_words(read_model(b.build())) is None


def test_record_kind_is_the_kernels():
    source = (ROOT / "kernels_c" / "cmsis" / "conv.c").read_text()
    for name, value in (("INT16_PAIRS", CONV_INT16_PAIRS),
                        ("INT16_PAIRS_REQUANT", CONV_INT16_PAIRS_REQUANT),
                        ("PAIR_RECORDS", CONV_PAIR_RECORDS),
                        ("PAIR_RECORDS_IN_FILTER", CONV_PAIR_RECORDS_IN_FILTER),
                        ("RGB_BAND", CONV_RGB_BAND),
                        ("RGB_BAND_IN_FILTER", CONV_RGB_BAND_IN_FILTER)):
        kind = re.search(rf"#define CMSIS_CONV_{name} (\d+)", source)
        assert kind and int(kind.group(1)) == value
    mark = re.search(r"#define CMSIS_PAIR_MARK (0x[0-9a-f]+)", source)
    assert mark and int(mark.group(1), 16) == PAIR_MARK


# vww's first layer (3x3x3 -> 8, stride 2: CONV_RGB_BAND on a DSP core) and the same at
# stride 1 (no band record).
RGB_LAYERS = [(3, 3, 8, 2), (3, 3, 8, 1)]


def rgb_devices() -> tuple[bytes, list, list, dict]:
    """(model, inputs, cases, device model per core: None generic, M4, M3, M55) of
    RGB_LAYERS with requantisation tails, in model order."""
    model, inputs, cases = layout_model(0, RGB_LAYERS, requant_tail=True)
    devices = {core: device_model(model, cmsis_cases.TAGS, "fast", core=core)[0]
               for core in (None, "cortex-m4", "cortex-m3", "cortex-m55")}
    return model, inputs, cases, devices


def test_rgb_band_record_on_dsp_cores_only():
    """On a DSP core the stride-2 RGB layer's record is CONV_RGB_BAND whose filter buffer
    holds the band kernel's weights (rgb_band_stream of the requantising stream) then the
    tail, the record the rest of CONV_INT16_PAIRS_REQUANT's words: the model is no larger
    than the M3's (the re-laid weights replace the stream).  Stride 1 keeps its kind, and
    the portable, MVE and generic builds the kinds they read.  The host build of the M4
    model (the portable C over the band record, rgb_band_dot) is bit-exact with TFLM."""
    model, inputs, cases, devices = rgb_devices()
    kinds = {core: [record[0] for record in records(device)]
             for core, device in devices.items()}
    assert kinds == {None: [CONV_INT16_PAIRS_REQUANT] * 2,
                     "cortex-m4": [CONV_RGB_BAND_IN_FILTER, CONV_PAIRS_REQUANT_IN_FILTER],
                     "cortex-m3": [CONV_PAIRS_REQUANT_IN_FILTER] * 2,
                     "cortex-m55": [CONV_FOLDED] * 2}
    before, after = records(devices[None])[0], records(devices["cortex-m4"])[0]
    start, end = 3 + 8, 3 + 8 + 112  # kind, channels, K, folded[8]; 4 pairs of 28 words
    assert after == [CONV_RGB_BAND_IN_FILTER, *before[1:start]]
    m4 = read_model(devices["cortex-m4"])
    graph = m4.subgraphs[0]
    laid = rgb_band_stream(before[start:end]) + before[end:]
    assert m4.buffers[graph.tensors[graph.operators[0].inputs[1]].buffer].data == \
        np.asarray(laid, "<i4").tobytes()
    assert len(devices["cortex-m4"]) <= len(devices["cortex-m3"]) + 16  # alignment at most
    cmsis_cases.compare(host.run_model(devices["cortex-m4"], inputs, cmsis_cases.TAGS),
                        model, inputs, cases)


def test_kernel_reads_the_rgb_band_record():
    """One weight word of the band record's filter buffer changed changes the first
    layer's output on the host (rgb_band_dot reads it; the M4's band kernel is checked
    bit-exact by test_cmsis's RGB cases), not the second's."""
    model, inputs, cases, devices = rgb_devices()
    m4 = read_model(devices["cortex-m4"])
    graph = m4.subgraphs[0]
    buffer = graph.tensors[graph.operators[0].inputs[1]].buffer
    words = np.frombuffer(m4.buffers[buffer].data, "<i4").copy()
    words[0] ^= 0x20002  # two doubled weights of the first word
    m4.buffers[buffer] = ir.Buffer(words.tobytes())
    edited = write_model(m4)
    expected = run_tflm(model, inputs, len(cases))
    ours = host.run_model(edited, inputs, cmsis_cases.TAGS)
    assert not np.array_equal(ours[0], expected[0])
    assert np.array_equal(ours[1], expected[1])


def test_only_the_cmsis_kernels_pay_for_layouts():
    """The reference kernels never read a layout: their device model carries none, and the
    cmsis one grows by exactly the layout bytes (the flash growth bench reports)."""
    model = layout_model(0)[0]
    plain = device_model(model)[0]
    with_layouts = device_model(model, cmsis_cases.TAGS)[0]
    assert METADATA_NAME not in {name for name, _ in read_model(plain).metadata}
    assert records(with_layouts)
    growth = len(with_layouts) - len(plain)
    assert 0 < growth - layout_bytes(read_model(model)) < 128  # + a metadata entry, a buffer


@pytest.mark.parametrize("seed", (0, 1))
def test_depthwise_layout_bit_exact_on_host(seed):
    model, inputs, cases, expected = depthwise_model(seed)
    device = device_model(model, cmsis_cases.TAGS)[0]
    kinds = [record[0] if record else None for record in records(device)]
    assert kinds == expected
    cmsis_cases.compare(host.run_model(device, inputs, cmsis_cases.TAGS), model, inputs, cases)


@pytest.mark.parametrize("target", ["qemu-cortex-m4", "qemu-cortex-m55"])
def test_depthwise_layout_bit_exact_on_board(target):
    cmsis_cases.need_board(target)
    model, inputs, cases, _ = depthwise_model(0)
    cmsis_cases.compare_on_board(target, model, inputs, cases)


# Layers of the DSP pair runs (channels, stride, padding, height, width, activation).
# Stride 1 (layout_pairs): every edge and corner variant (row above / below, column left /
# right: widths 6 and 4 pair the row's last pixels, 7 and 5 leave one alone, kws' 5-wide
# rows), VALID, 2 and 3 rows or columns, clamped (RELU) and not.  Stride 2 (layout_pairs2):
# SAME of even sizes (the last pair's column 4 right of the input, the last row's row 2
# below it), an odd count of output pixels (10 wide: 5), odd sizes (padding left and above:
# not paired), VALID with every window inside (9 wide) or a last pixel alone (8 wide),
# clamped (RELU: not paired), rows of 2 and 1 pixels (no pair but the last, none).  Eight
# channels (vww's 48x48: its rows in triples, unclamped_triples8 inside; 1 and 2 inner
# pairs; odd widths and stride 2 take the other runs).
PAIR_LAYERS = [(16, 1, "SAME", 5, 6, "NONE"), (24, 1, "SAME", 4, 7, "NONE"),
               (64, 1, "SAME", 3, 5, "NONE"), (32, 1, "SAME", 5, 6, "RELU"),
               (48, 1, "VALID", 4, 6, "NONE"), (192, 1, "SAME", 2, 4, "NONE"),
               (16, 1, "SAME", 4, 3, "NONE"), (96, 1, "SAME", 3, 8, "RELU6"),
               (16, 2, "SAME", 8, 8, "NONE"), (32, 2, "SAME", 6, 10, "NONE"),
               (24, 2, "SAME", 7, 7, "NONE"), (48, 2, "VALID", 7, 9, "NONE"),
               (64, 2, "VALID", 5, 8, "NONE"), (16, 2, "SAME", 6, 8, "RELU"),
               (16, 2, "SAME", 4, 4, "NONE"), (32, 2, "VALID", 3, 3, "NONE"),
               (8, 1, "SAME", 48, 48, "NONE"), (8, 1, "SAME", 5, 6, "NONE"),
               (8, 1, "SAME", 6, 8, "NONE"), (8, 1, "SAME", 5, 7, "NONE"),
               (8, 1, "SAME", 6, 6, "RELU6"), (8, 2, "SAME", 9, 10, "NONE"),
               (8, 2, "SAME", 7, 7, "NONE"), (8, 2, "SAME", 48, 48, "NONE")]
PAIR_PIXEL_LCM = 192  # a multiple of every PAIR_LAYERS pixel (channels)


# Layers of the DSP triple runs (layout_triples: stride 1, SAME, unclamped), same fields:
# widths 3k (the row's last triple with column 4 outside: vww's 6, 12, 24 and 48), 3k + 2
# (a right pair after the triples: kws' 5, 11) and 3k + 1 (an inner and a right pair: 7,
# 13), one inner triple or none or many, 8 to 256 channels (12: 3 blocks; 36: 9), the top
# and bottom rows (pairs), 3 rows (one row of triples) and 4 wide (no triple: pairs);
# clamped (RELU6: no triple) and VALID (no plan) beside them.
DW_TRIPLE_LAYERS = [(32, 1, "SAME", 5, 6, "NONE"), (64, 1, "SAME", 4, 12, "NONE"),
                    (128, 1, "SAME", 3, 6, "NONE"), (16, 1, "SAME", 4, 24, "NONE"),
                    (8, 1, "SAME", 3, 48, "NONE"), (64, 1, "SAME", 6, 5, "NONE"),
                    (12, 1, "SAME", 4, 11, "NONE"), (36, 1, "SAME", 3, 7, "NONE"),
                    (20, 1, "SAME", 4, 13, "NONE"), (256, 1, "SAME", 3, 9, "NONE"),
                    (24, 1, "SAME", 5, 4, "NONE"), (16, 1, "SAME", 4, 9, "RELU6"),
                    (16, 1, "VALID", 4, 9, "NONE"), (32, 1, "SAME", 4, 7, "NONE")]


def pairs_model(seed: int, layers=PAIR_LAYERS):
    """(model bytes, inputs, cases) of `layers` (PAIR_LAYERS), inputs of zero point -128
    (real models')."""
    rng = np.random.default_rng(9400 + seed)
    b, cases = ModelBuilder(), []
    for channels, stride, padding, h, w, activation in layers:
        g = cmsis_cases.conv_geometry(rng, True, 3, channels, channels)
        g.update(h=h, w=w, stride=(stride, stride), padding=padding, activation=activation,
                 per_channel=True)
        g["oh"] = conv_cases.out_size(padding, h, 3, stride, 1)
        g["ow"] = conv_cases.out_size(padding, w, 3, stride, 1)
        data, g = cmsis_cases.add_conv(b, rng, g, True, 1.0, -128)
        cases.append(("DEPTHWISE_CONV_2D", [data], g))
    inputs = [array for _, data, _ in cases for array in data]
    return b.build(), inputs, [(op, g) for op, _, g in cases]


def test_depthwise_pairs_bit_exact_on_board():
    cmsis_cases.need_board("qemu-cortex-m4")
    model, inputs, cases = pairs_model(0)
    cmsis_cases.compare_on_board("qemu-cortex-m4", model, inputs, cases)


def test_depthwise_pairs_backwards_on_board(monkeypatch):
    """The pair runs last pair first, each output a whole number of pixels into its input
    (as deep as the backward walk allows, rounded up)."""
    cmsis_cases.need_board("qemu-cortex-m4")
    model, inputs, cases = pairs_model(1)
    plan, pairs = tight_plan(model, slack=0, backward=True, unit=PAIR_PIXEL_LCM)
    assert pairs >= len(PAIR_LAYERS) // 2
    device = write_model(embed_plan(embed_layout(read_model(model)), plan))
    for module in (project, qemu):  # the project embeds this plan instead of its own
        monkeypatch.setattr(module, "supported_device_model", lambda *_, **__: (device, plan))
    result = qemu.run_on_target(model, "qemu-cortex-m4", inputs, cmsis_cases.TAGS)
    assert result.matches_host, result.stdout
    cmsis_cases.compare(result.outputs, model, inputs, cases)


def compare_with_plan(target: str, model: bytes, inputs, cases, plan, monkeypatch) -> None:
    """`model` run on `target` with the cmsis tag and `plan` (buffers placed by the test)."""
    device = write_model(embed_plan(embed_layout(read_model(model)), plan))
    for module in (project, qemu):  # the project embeds this plan instead of its own
        monkeypatch.setattr(module, "supported_device_model", lambda *_, **__: (device, plan))
    result = qemu.run_on_target(model, target, inputs, cmsis_cases.TAGS)
    assert result.matches_host, result.stdout
    cmsis_cases.compare(result.outputs, model, inputs, cases)


@pytest.mark.parametrize("target", ["qemu-cortex-m4", "qemu-cortex-m33", "qemu-cortex-m7"])
def test_depthwise_triples_bit_exact_on_board(target):
    cmsis_cases.need_board(target)
    model, inputs, cases = pairs_model(2, DW_TRIPLE_LAYERS)
    cmsis_cases.compare_on_board(target, model, inputs, cases)


# Each output over its input: as deep as the planner places it (slack 0: a triple's third
# pixel overwrites channel c of the column its first pixel read already), 256 bytes deeper
# (a whole pixel or more), or 16 (the arena's alignment: a whole pixel or more for 8 and 16
# channels, else no triple, which would overwrite channels not read yet), all rows raster;
# and last pixel first, a whole number of pixels (256 bytes) into the input (the rows past
# what the rows before read in triples).
@pytest.mark.parametrize("slack", [0, -256, -16, "backward"])
def test_depthwise_triples_over_their_input_on_board(slack, monkeypatch):
    cmsis_cases.need_board("qemu-cortex-m4")
    layers = [layer for layer in DW_TRIPLE_LAYERS if 256 % layer[0] == 0]
    model, inputs, cases = pairs_model(3, layers)
    if slack == "backward":
        plan, pairs = tight_plan(model, slack=0, backward=True, unit=256)
    else:
        plan, pairs = tight_plan(model, slack=slack)
    assert pairs >= len(layers) // 2
    compare_with_plan("qemu-cortex-m4", model, inputs, cases, plan, monkeypatch)


def record_edit(model: bytes, inputs, cases, edit_record):
    """(ours on the host, expected) for `model` whose first layout record went through
    edit_record(words, start) (start: the index of its kind in the layout words)."""
    device = device_model(model, cmsis_cases.TAGS, "fast")[0]  # model order

    def edit(words):
        edit_record(words, words[2] + 1)
        return words

    ours = host.run_model(with_layout_words(device, edit), inputs, cmsis_cases.TAGS)
    return ours, run_tflm(model, inputs, len(cases))


def depthwise_record_edit(edit_record):
    model, inputs, cases, _ = depthwise_model(0)
    return record_edit(model, inputs, cases, edit_record)


def test_depthwise_kernel_reads_the_record():
    """Channel 0's folded constant moved by 2^24 changes that channel of that layer only:
    the kernel sums from the record."""
    def bump_folded(words, start):
        words[start + 2] += 1 << 24  # kind, channels, folded[0]

    ours, expected = depthwise_record_edit(bump_folded)
    assert not np.array_equal(ours[0][..., 0], expected[0][..., 0])
    assert np.array_equal(ours[0][..., 1:], expected[0][..., 1:])
    for index in range(1, len(expected)):
        assert np.array_equal(ours[index], expected[index])


def test_depthwise_record_that_disagrees_is_ignored():
    """A record whose requantisation step is not the node's own (a multiplier off by one)
    runs the plain filter: still bit-exact."""
    def wrong_multiplier(words, start):
        words[start + 2 + 26] += 1  # kind, channels, then block 0's first step

    ours, expected = depthwise_record_edit(wrong_multiplier)
    for index in range(len(expected)):
        assert np.array_equal(ours[index], expected[index]), index


def test_depthwise_record_kind_is_the_kernels():
    source = (ROOT / "kernels_c" / "cmsis" / "depthwise_conv.c").read_text()
    kind = re.search(r"#define DW_TAP_PAIRS (\d+)", source)
    assert kind and int(kind.group(1)) == DW_TAP_PAIRS
    for name, value in (("DW_ROW_QUADS", DW_ROW_QUADS), ("DW_QUAD_BYTES", DW_QUAD_BYTES)):
        found = re.search(rf"#define {name} (\d+)", source)
        assert found and int(found.group(1)) == value, name

def test_requant_tail_layers_at_size_optimisation():
    """The requantising pairs kernel enters its unrolled loop at a computed address, right
    wherever the compiler places the function (-Os once put the loop's label on a halfword:
    a 16-bit ADR rounded it down and the kernel branched to itself forever)."""
    cmsis_cases.need_board("qemu-cortex-m4")
    model = layout_model(0, REQUANT_LAYERS, requant_tail=True)[0]
    completed = qemu.run_project(model, "qemu-cortex-m4", cmsis_cases.TAGS, opt="-Os")[1]
    assert qemu.PASSED in completed.stdout, completed.stdout + completed.stderr


# (filter h, w, depth multiplier, stride, padding, input h, w) of one input channel: the
# DW_ROW_QUADS record (micro_speech's 10x8 filter of 8 channels, stride 2, SAME), 3x3 and
# 10x8, multipliers 4 and 8, both strides and paddings, inputs narrower than the padded
# window rows (every pixel from the border copy) and wider (pixels read in place); 3-row
# filters of one quad run by rows on DSP cores (row_quads3) up to 16 channels: 3x2 of 16,
# and 3x3 of 20 (too many: per pixel).
ONE_CHANNEL_LAYERS = [(10, 8, 8, 2, "SAME", 49, 40), (10, 8, 4, 1, "VALID", 13, 11),
                      (3, 3, 8, 1, "SAME", 7, 9), (3, 3, 4, 2, "VALID", 8, 10),
                      (10, 8, 8, 1, "SAME", 12, 7), (3, 3, 4, 1, "SAME", 3, 3),
                      (3, 2, 16, 2, "SAME", 9, 11), (3, 3, 20, 1, "SAME", 5, 6)]
# 8 channels of a 3-row filter of one quad whose activation keeps the whole int8 range (NONE)
# run 3 pixels per pass on DSP cores (depthwise_narrow.h): both strides and paddings, output
# rows of 7, 8 and 9 pixels (the last 1 or 2 as a triple repeating the last one), windows
# leaving the input on every side, a 3x2 filter.
NARROW_ONE_CHANNEL_LAYERS = [(3, 3, 8, 2, "SAME", 13, 13), (3, 3, 8, 1, "SAME", 6, 8),
                             (3, 3, 8, 1, "VALID", 5, 11), (3, 2, 8, 2, "VALID", 9, 14)]


def one_channel_model(seed: int):
    """(model bytes, inputs, cases) of ONE_CHANNEL_LAYERS, per-channel or per-tensor scales,
    input zero point -128 (micro_speech's) or random."""
    rng = np.random.default_rng(9400 + seed)
    b = ModelBuilder()
    cases = []
    for index, (kh, kw, multiplier, stride, padding, h, w) in enumerate(
            ONE_CHANNEL_LAYERS + NARROW_ONE_CHANNEL_LAYERS):
        g = cmsis_cases.conv_geometry(rng, True, 3, 1, 1)
        g.update(h=h, w=w, kh=kh, kw=kw, stride=(stride, stride), padding=padding,
                 multiplier=multiplier, cout=multiplier)
        if index >= len(ONE_CHANNEL_LAYERS):
            g["activation"] = "NONE"
        g["oh"] = conv_cases.out_size(padding, h, kh, stride, 1)
        g["ow"] = conv_cases.out_size(padding, w, kw, stride, 1)
        data, g = cmsis_cases.add_conv(b, rng, g, True, 1.0, -128 if index % 2 == 0 else None)
        cases.append(("DEPTHWISE_CONV_2D", [data], g))
    inputs = [array for _, data, _ in cases for array in data]
    return b.build(), inputs, [(op, g) for op, _, g in cases]


@pytest.mark.parametrize("seed", (0, 1))
def test_one_channel_depthwise_bit_exact_on_host(seed):
    model, inputs, cases = one_channel_model(seed)
    device = device_model(model, cmsis_cases.TAGS)[0]
    assert [record[0] for record in records(device)] == [DW_ROW_QUADS] * len(cases)
    cmsis_cases.compare(host.run_model(device, inputs, cmsis_cases.TAGS), model, inputs, cases)


@pytest.mark.parametrize("target", ["qemu-cortex-m4", "qemu-cortex-m55"])
def test_one_channel_depthwise_bit_exact_on_board(target):
    cmsis_cases.need_board(target)
    model, inputs, cases = one_channel_model(0)
    cmsis_cases.compare_on_board(target, model, inputs, cases)


def one_channel_record_edit(edit_record):
    return record_edit(*one_channel_model(0), edit_record)


def test_one_channel_kernel_reads_the_record():
    """Channel 0's first weight in the record moved by 1000 changes that channel of that
    layer only; a record whose filter width is not the node's is ignored (bit-exact)."""
    def bump_weight(words, start):
        words[start + 5] += 1000  # kind, channels, FH, FW, Q, block 0 row 0 (w0, w2) of ch 0

    ours, expected = one_channel_record_edit(bump_weight)
    assert not np.array_equal(ours[0][..., 0], expected[0][..., 0])
    assert np.array_equal(ours[0][..., 1:], expected[0][..., 1:])
    for index in range(1, len(expected)):
        assert np.array_equal(ours[index], expected[index])

    def wrong_width(words, start):
        words[start + 3] -= 1

    ours, expected = one_channel_record_edit(wrong_width)
    for index in range(len(expected)):
        assert np.array_equal(ours[index], expected[index]), index
