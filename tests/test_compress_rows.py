"""Row-sparse FULLY_CONNECTED filters (tflm_gen/compress_rows.py, kernels_c/tflm_sparse_rows.c):
the coding round-trips in Python; `--compress` chooses it for pruned int8 FC filters; the
kernels consume it in place bit-exact with TFLM on the host (reference and cmsis: also
tests/test_compress.py's corpus grid) and on the Cortex-M4; a corrupt stream is refused
when the interpreter starts, never read out of bounds."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest
import test_cmsis as cmsis_cases
from conftest import corpus_path, need_tool
from op_oracle import assert_informative, run_tflm
from test_layout import records
from test_layout_fc import fc_model

from tflm_gen import compress, compress_rows, host, layout, qemu
from tflm_gen.errors import TflmGenError
from tflm_gen.host import HostInterpreter
from tflm_gen.inputs import random_inputs
from tflm_gen.layout_cores import core_of_target
from tflm_gen.model import ir
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.optimize import device_model
from tflm_gen.oracle import Oracle
from tflm_gen.prune import prune_weights
from tflm_gen.targets import load_target


def _rows(seed: int, shape: tuple[int, int], zeros: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = rng.integers(-128, 128, size=shape).astype(np.int8)
    rows[rng.random(shape) < zeros] = 0
    rows[0, :] = 0  # an empty row
    if shape[1] > 40:
        rows[-1, 3:40] = 0  # runs of 15, 16 and more zeros in one row
        rows[-1, 20] = 5
    return rows


@pytest.mark.parametrize("shape,zeros", [((3, 700), 0.9), ((64, 9), 0.5), ((17, 40), 0.0),
                                         ((8, 300), 0.8), ((1, 1), 1.0), ((40, 64), 0.97)])
def test_rows_round_trip(shape, zeros):
    rows = _rows(sum(shape), shape, zeros)
    assert np.array_equal(compress_rows.decode_groups(compress_rows.encode_groups(rows)), rows)


def _pruned_rows(seed: int, shape: tuple[int, int], sparsity: float, threshold: int):
    """Rows as magnitude pruning leaves them: values in [-127, -t] U [t, 127], `sparsity`
    of them zero."""
    rng = np.random.default_rng(seed)
    magnitudes = rng.integers(threshold, 128, size=shape)
    rows = np.where(rng.random(shape) < 0.5, -magnitudes, magnitudes).astype(np.int8)
    rows[rng.random(shape) < sparsity] = 0
    return rows


# (rows, row length, sparsity, threshold): the ranges of the shared models' FC layers
PRUNED_CASES = [(128, 640, 0.5, 8), (40, 640, 0.8, 30), (64, 128, 0.95, 1), (8, 128, 0.8, 100),
                (128, 8, 0.8, 20), (17, 333, 0.65, 3)]


@pytest.mark.parametrize("rows,depth,sparsity,threshold", PRUNED_CASES)
def test_pruned_rows_round_trip(rows, depth, sparsity, threshold):
    """The counts take a byte exactly when every row has fewer than 256 tokens."""
    pruned = _pruned_rows(rows + depth, (rows, depth), sparsity, threshold)
    stream = compress_rows.encode_groups(pruned)
    assert np.array_equal(compress_rows.decode_groups(stream), pruned)
    longest = max(len(compress_rows.row_tokens(row)[0]) for row in pruned)
    assert bool(stream[2] & compress_rows.COUNT_BYTE) == (longest < 256)


def _pruned_ad01() -> bytes:
    return prune_weights(corpus_path("ad01_int8.tflite").read_bytes(), 0.8).model


def _device(tags=()) -> bytes:
    return device_model(_pruned_ad01(), tags, compress=True)[0]


def test_pruned_fc_filters_are_coded_row_sparse():
    """Every pruned filter but the 8-input layer's (rows of one or two weights, which cost
    the coded kernel more per row than they save: compress_rows.pays)."""
    model = read_model(_pruned_ad01())
    found = compress.codings(model)
    narrow = {id(t) for t in model.subgraph.tensors if t.shape and t.shape[-1] == 8}
    assert {c for key, (c, _) in found.items() if key not in narrow} == {"sparse-groups"}
    assert {c for key, (c, _) in found.items() if key in narrow} == {"none"}


def test_pruned_ad01_streams_take_both_count_widths():
    """The 640-input layer has rows of 256 tokens or more (u16 counts), the others u8: the
    M4 run below goes through both assembly loops."""
    device = read_model(_device(("cmsis",)))
    flags = {device.buffers[device.subgraph.tensors[i].buffer].data[2] & compress_rows.COUNT_BYTE
             for i in ir.compressed_tensors(device)}
    assert flags == {0, compress_rows.COUNT_BYTE}


def _corrupted(device: bytes, change) -> bytes:
    """The device model with `change(bytearray)` applied to its first coded stream."""
    model = copy.deepcopy(read_model(device))
    buffer = model.subgraph.tensors[min(ir.compressed_tensors(model))].buffer
    stream = bytearray(model.buffers[buffer].data)
    assert compress_rows.is_sparse_rows(stream)
    change(stream)
    model.buffers[buffer] = ir.Buffer(bytes(stream))
    return write_model(model)


def _tails(stream: bytearray) -> int:
    return 16 + int.from_bytes(stream[12:16], "little")


def _first_count(stream: bytearray, value: int) -> None:
    width = 1 if stream[2] & compress_rows.COUNT_BYTE else 2
    stream[_tails(stream):_tails(stream) + width] = value.to_bytes(width, "little")


def _gaps_past_the_row(stream: bytearray) -> None:
    """Every gap of the first row's groups 15: its tokens reach past its inputs."""
    width = 1 if stream[2] & compress_rows.COUNT_BYTE else 2
    count = int.from_bytes(stream[_tails(stream):_tails(stream) + width], "little")
    for group in range(count // 8):
        stream[16 + 12 * group:20 + 12 * group] = b"\xff" * 4


CHANGES = {
    "count": lambda s: _first_count(s, 255),
    "count width": lambda s: s.__setitem__(2, s[2] ^ compress_rows.COUNT_BYTE),
    "unknown flag": lambda s: s.__setitem__(2, s[2] | 2),
    "gaps": _gaps_past_the_row,
    "rows": lambda s: s.__setitem__(slice(4, 8), (12345).to_bytes(4, "little")),
    "depth": lambda s: s.__setitem__(slice(8, 12), (7).to_bytes(4, "little")),
    "group bytes": lambda s: s.__setitem__(slice(12, 16), (24).to_bytes(4, "little")),
    "group bytes past the end": lambda s: s.__setitem__(slice(12, 16), b"\xff" * 4),
    "truncated": lambda s: s.__delitem__(slice(len(s) - 3, None)),
    "reserved": lambda s: s.__setitem__(1, 1),
}


@pytest.mark.parametrize("tags", [(), ("cmsis",)])
@pytest.mark.parametrize("change", list(CHANGES))
def test_a_corrupt_row_stream_is_refused_at_init(change, tags):
    corrupt = _corrupted(_device(tags), CHANGES[change])
    with pytest.raises(TflmGenError, match=re.compile("model|prepare", re.IGNORECASE)):
        HostInterpreter(corrupt, tags)


@pytest.mark.parametrize("goal", [compress.BALANCED, compress.SIZE])
def test_random_damage_is_refused_or_runs_within_bounds(goal):
    """Bytes of the stream changed at random (SPARSE_GROUPS, SPARSE_NARROW): prepare's
    whole-stream check either refuses the model or the kernel reads only what it checked
    (no crash, outputs of the shape)."""
    device = device_model(_pruned_ad01(), compress=goal)[0]
    rng = np.random.default_rng(15)
    inputs = random_inputs(read_model(device), 0)
    refused = 0
    for _ in range(24):
        positions = rng.integers(0, 400, size=3)

        def damage(stream, positions=positions):
            for p in positions:
                stream[int(p) % len(stream)] = int(rng.integers(0, 256))

        try:
            outputs = HostInterpreter(_corrupted(device, damage)).run(inputs)
        except TflmGenError:
            refused += 1
            continue
        assert outputs[0].shape == (1, 640)
    assert refused > 0


def test_row_sparse_model_runs_bit_exact_on_the_cortex_m4_with_cmsis():
    board = qemu.board_of("qemu-cortex-m4")
    for tool in (board["toolchain"] + "gcc", board["qemu"], "make"):
        need_tool(tool)
    _, completed = qemu.run_project(_pruned_ad01(), "qemu-cortex-m4", ("cmsis",),
                                    compress=True)
    assert qemu.PASSED in completed.stdout, completed.stdout + completed.stderr


def test_row_sparse_batches_bit_exact_with_tflm():
    """ad01 pruned, coded, two random inputs: the reference and cmsis kernels equal TFLM."""
    original = _pruned_ad01()
    oracle = Oracle(original)
    for tags in ((), ("cmsis",)):
        ours = HostInterpreter(_device(tags), tags)
        for seed in range(2):
            inputs = random_inputs(read_model(original), seed)
            for a, b in zip(ours.run(inputs), oracle.run(inputs)):
                assert np.array_equal(a, b)


def test_row_sparse_filters_leave_the_arena_as_it_was():
    """Consumed in place: no decode scratch, no scratch handle, the arena of the plain model."""
    plain = HostInterpreter(device_model(_pruned_ad01())[0])
    coded = HostInterpreter(_device())
    assert (coded.arena_used_bytes, coded.arena_tail_bytes) == (plain.arena_used_bytes,
                                                                plain.arena_tail_bytes)


def test_dense_fc_filters_stay_plain():
    """ad01 as it is (9% zeros): no row-sparse saving, and no block codec for FC filters,
    whose decoding would cost more than the layer every invoke."""
    model = read_model(corpus_path("ad01_int8.tflite").read_bytes())
    assert {coding for coding, _ in compress.codings(model).values()} == {"none"}


# (batches, depth, units, per-channel): odd depths, rows of one or two weights (and empty
# ones) once pruned, long zero runs (escape tokens), several batch rows.
GROUP_LAYERS = [(1, 640, 13, False), (2, 37, 9, True), (1, 203, 11, False), (3, 130, 7, True),
                (2, 9, 24, False)]


def _grouped_model():
    """(pruned model, inputs, cases) of independent int8 FULLY_CONNECTED layers."""
    model, inputs, cases = fc_model(17, GROUP_LAYERS)
    return prune_weights(model, 0.8).model, inputs, cases


def _entries(device: bytes) -> set[int]:
    """n % 16 of every row of the device model's SPARSE_GROUPS streams: where the M4 loop
    (two groups per pass) enters the row."""
    model = read_model(device)
    found = set()
    for index in ir.compressed_tensors(model):
        stream = model.buffers[model.subgraph.tensors[index].buffer].data
        assert stream[0] == compress_rows.SPARSE_GROUPS
        found |= {len(compress_rows.row_tokens(row)[0]) % 16
                  for row in compress_rows.decode_groups(stream)}
    return found


def test_sparse_groups_bit_exact_on_host_and_cortex_m4(monkeypatch):
    """Every layer coded (the cost rule set aside), rows of every n % 16 (tails of every
    length, in a pass's first or second group):
    the reference and cmsis kernels on the host and the M4 assembly (which reads the
    FC_SPARSE_FOLDED records its project keeps) equal TFLM."""
    monkeypatch.setattr(compress_rows, "MAX_COST_RATIO", float("inf"))
    monkeypatch.setattr(compress_rows, "encode_narrow", lambda rows: None)
    model, inputs, cases = _grouped_model()
    for output in run_tflm(model, inputs, len(cases)):
        assert_informative(output, "int8")
    device = device_model(model, ("cmsis",), compress=True)[0]
    assert len(ir.compressed_tensors(read_model(device))) == len(GROUP_LAYERS)
    assert _entries(device) == set(range(16))
    for tags in ((), ("cmsis",)):
        ours = host.run_model(device_model(model, tags, compress=True)[0], inputs, tags)
        cmsis_cases.compare(ours, model, inputs, cases)
    cmsis_cases.need_board("qemu-cortex-m4")
    m4 = device_model(model, ("cmsis",), compress=True,
                      core=core_of_target(load_target("qemu-cortex-m4")))[0]
    assert {record[0] for record in records(m4) if record} == {layout.FC_SPARSE_FOLDED}
    result = qemu.run_on_target(model, "qemu-cortex-m4", inputs, ("cmsis",), compress=True)
    assert result.matches_host, result.stdout
    cmsis_cases.compare(result.outputs, model, inputs, cases)


# ---- SPARSE_NARROW (codec 19, `--compress-goal size`) ----------------------------------


def _narrow_cases():
    """Random rows (long runs, an empty row) and pruned ones of the models' ranges."""
    cases = [_rows(sum(shape), shape, zeros) for shape, zeros in
             [((3, 700), 0.9), ((64, 9), 0.5), ((17, 40), 0.0), ((40, 64), 0.97)]]
    return cases + [_pruned_rows(r + d, (r, d), s, t) for r, d, s, t in PRUNED_CASES]


@pytest.mark.parametrize("case", range(4 + len(PRUNED_CASES)))
def test_narrow_rows_round_trip_in_every_width(case):
    """Each code width that holds the tensor's threshold round-trips; the widest ones hold
    every weight in one token, the narrowest need several at one input for some."""
    rows = _narrow_cases()[case]
    streams = {w: compress_rows.encode_narrow(rows, w) for w in compress_rows.NARROW_WIDTHS}
    for width, stream in streams.items():
        if stream is not None:
            assert np.array_equal(compress_rows.decode_narrow(stream), rows), width
    assert len(compress_rows.encode_narrow(rows)) == min(len(s) for s in streams.values() if s)
    threshold = int(np.abs(rows[rows != 0].astype(int)).min())
    assert (streams[7] is not None) == (threshold <= 64)


def test_narrow_weights_outside_the_codes_take_several_tokens():
    """Width 2 with threshold 10 codes the weights -10, 10 and 11 only: 100 and -127 take
    several tokens at their input (gap 0 after the first), long runs take escapes."""
    rows = np.zeros((2, 40), np.int8)
    rows[0, [1, 30]] = [100, -127]
    rows[1, 39] = 10
    values = compress_rows.narrow_values(10, 2)
    assert sorted(values.values()) == [-10, 0, 10, 11]
    tokens = compress_rows.narrow_tokens(rows[0], compress_rows.narrow_sums(10, 2))
    assert sum(values[c] for _, c in tokens) == 100 - 127
    assert [g for g, _ in tokens].count(0) > 10 and (15, 0) in tokens
    stream = compress_rows.encode_narrow(rows, 2)
    assert np.array_equal(compress_rows.decode_narrow(stream), rows)


# (batches, depth, units, per-channel), the code width forced and the sparsity: every width's
# loop, tails of every length, long runs, weights that take several tokens, u8 and u16 counts
# (the last layer's rows: about 350 tokens).
NARROW_LAYERS = [((1, 640, 13, False), 5, 0.8), ((2, 37, 9, True), 2, 0.6),
                 ((1, 203, 11, False), 3, 0.9), ((3, 130, 7, True), 4, 0.95),
                 ((2, 9, 24, False), 6, 0.5), ((1, 300, 17, True), 7, 0.8),
                 ((1, 700, 16, False), 7, 0.5)]


def _narrow_model():
    """(model, inputs, cases) of independent FC layers whose weights are zeroed at random
    (thresholds of 1 or 2: every width holds them), and rows shape -> forced width."""
    model, inputs, cases = fc_model(19, [layer for layer, _, _ in NARROW_LAYERS])
    parsed = copy.deepcopy(read_model(model))
    rng = np.random.default_rng(19)
    widths = {}
    for candidate, (_, width, sparsity) in zip(compress.candidates(parsed), NARROW_LAYERS):
        rows = candidate.rows * (rng.random(candidate.rows.shape) >= sparsity)
        parsed.buffers[candidate.tensor.buffer] = ir.Buffer(rows.astype(np.int8).tobytes())
        widths[candidate.rows.shape] = width
    return write_model(parsed), inputs, cases, widths


def test_sparse_narrow_bit_exact_on_host_and_cortex_m4(monkeypatch):
    """Under the size goal every layer coded SPARSE_NARROW in its forced width (whatever
    its size): the
    reference and cmsis kernels on the host and the M4 assembly (one loop per width, with
    the FC_SPARSE_FOLDED records) equal TFLM."""
    model, inputs, cases, widths = _narrow_model()
    encode = compress_rows.encode_narrow
    monkeypatch.setattr(compress_rows, "encode_narrow",
                        lambda rows, width=None: encode(rows, widths[rows.shape]))
    monkeypatch.setattr(compress_rows, "encode_groups", lambda rows: None)
    monkeypatch.setattr(compress, "MIN_SAVING", -100.0)  # coded even where it grows
    for output in run_tflm(model, inputs, len(cases)):
        assert_informative(output, "int8")
    device = read_model(device_model(model, ("cmsis",), compress=compress.SIZE)[0])
    streams = [device.buffers[device.subgraph.tensors[i].buffer].data
               for i in ir.compressed_tensors(device)]
    assert {s[3] for s in streams} == set(compress_rows.NARROW_WIDTHS)
    assert {s[0] for s in streams} == {compress_rows.SPARSE_NARROW}
    assert {s[2] & compress_rows.COUNT_BYTE for s in streams} == {0, compress_rows.COUNT_BYTE}
    tails = {len(compress_rows.narrow_tokens(row, compress_rows.narrow_sums(
        int.from_bytes(s[12:16], "little"), s[3]))) % 8
        for s in streams for row in compress_rows.decode_narrow(s)}
    assert tails == set(range(8))
    for tags in ((), ("cmsis",)):
        ours = host.run_model(device_model(model, tags, compress=compress.SIZE)[0], inputs,
                              tags)
        cmsis_cases.compare(ours, model, inputs, cases)
    cmsis_cases.need_board("qemu-cortex-m4")
    result = qemu.run_on_target(model, "qemu-cortex-m4", inputs, ("cmsis",),
                                compress=compress.SIZE)
    assert result.matches_host, result.stdout
    cmsis_cases.compare(result.outputs, model, inputs, cases)


def _narrow_device(tags=()) -> bytes:
    return device_model(_pruned_ad01(), tags, compress=compress.SIZE)[0]


def _narrow_first_gap(stream: bytearray, gap: int) -> None:
    """The first row's first token moved `gap` inputs (0: onto input -1)."""
    width = 1 if stream[2] & compress_rows.COUNT_BYTE else 2
    count = int.from_bytes(stream[16:16 + width], "little")
    at, high = 16 + width, count % 8 % 2  # the tail's first slot, or the first group's
    stream[at] = stream[at] & (0x0f if high else 0xf0) | gap << (4 * high)


def _narrow_gaps_past_the_row(stream: bytearray) -> None:
    """Every gap of the first row's groups 15."""
    width = 1 if stream[2] & compress_rows.COUNT_BYTE else 2
    count, code_width = int.from_bytes(stream[16:16 + width], "little"), stream[3]
    tail = count % 8
    at = 16 + width + (tail + 1) // 2 + (tail * code_width + 7) // 8
    for group in range(count // 8):
        stream[at + (4 + code_width) * group:at + (4 + code_width) * group + 4] = b"\xff" * 4


NARROW_CHANGES = {
    "count": lambda s: s.__setitem__(16, 255),
    "count width": lambda s: s.__setitem__(2, s[2] ^ compress_rows.COUNT_BYTE),
    "width 8": lambda s: s.__setitem__(3, 8),
    "width 1": lambda s: s.__setitem__(3, 1),
    "threshold 0": lambda s: s.__setitem__(slice(12, 16), bytes(4)),
    "threshold past the codes": lambda s: s.__setitem__(12, 127),
    "first gap 0": lambda s: _narrow_first_gap(s, 0),
    "gaps": _narrow_gaps_past_the_row,
    "rows": lambda s: s.__setitem__(slice(4, 8), (12345).to_bytes(4, "little")),
    "depth": lambda s: s.__setitem__(slice(8, 12), (7).to_bytes(4, "little")),
    "no padding": lambda s: s.__delitem__(slice(len(s) - 3, None)),
    "reserved": lambda s: s.__setitem__(1, 1),
}


@pytest.mark.parametrize("change", list(NARROW_CHANGES))
def test_a_corrupt_narrow_stream_is_refused_at_init(change):
    """The shared prepare's check (kernels_c/tflm_sparse_rows.c, every tag's)."""
    model = copy.deepcopy(read_model(_narrow_device()))
    buffer = model.subgraph.tensors[min(ir.compressed_tensors(model))].buffer
    stream = bytearray(model.buffers[buffer].data)
    assert stream[0] == compress_rows.SPARSE_NARROW
    NARROW_CHANGES[change](stream)
    model.buffers[buffer] = ir.Buffer(bytes(stream))
    with pytest.raises(TflmGenError, match=re.compile("model|prepare", re.IGNORECASE)):
        HostInterpreter(write_model(model))


def test_narrow_first_gap_of_one_runs():
    """The check's other side: the same edit with a gap of 1 is a valid stream."""
    model = copy.deepcopy(read_model(_narrow_device()))
    buffer = model.subgraph.tensors[min(ir.compressed_tensors(model))].buffer
    stream = bytearray(model.buffers[buffer].data)
    _narrow_first_gap(stream, 1)
    model.buffers[buffer] = ir.Buffer(bytes(stream))
    outputs = HostInterpreter(write_model(model)).run(random_inputs(model, 0))
    assert outputs[0].shape == (1, 640)
