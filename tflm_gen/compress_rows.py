"""Row-sparse coding of FULLY_CONNECTED filters (`--compress`, issue 15), consumed in place
by the kernel (kernels_c/tflm_sparse_rows.c, kernels_c/cmsis/fully_connected.c): a batch-1
fully connected layer uses each weight once, so decoding into scratch would cost as much as
the layer; instead the kernel walks each row's non-zero weights and multiplies them with the
inputs they meet.

A row is a list of tokens: token t skips `gap` inputs (0 .. 15), then multiplies the next
one by its int8 literal.  A run of more than 15 zeros is cut into tokens (15, 0) of 16
inputs each (a literal 0 adds nothing, and keeps the kernel free of branches).  A row's
tokens never reach past R inputs; the runtime checks every row when the model is opened.

Stream SPARSE_GROUPS (little-endian), the 16-byte header of compress.py's streams:

    byte 0  SPARSE_GROUPS
    byte 1  0 (the zero byte: the filter's zero point, 0 for the symmetric int8 weights)
    byte 2  flags: COUNT_BYTE when every row's token count is a u8 (else u16)
    byte 3  0
    u32     rows C, u32 row length R, u32 G: the bytes of the groups
    groups  of all rows in order, 12 bytes each: a word of 8 gap nibbles (token 2i's in the
            low nibble of byte i), then the 8 int8 literals: one LDM on the Cortex-M4, whose
            loop splits the nibbles into bytes (AND with 0x0f0f0f0f) for UXTAB
    tails   per row: its token count n (u8 under COUNT_BYTE, else u16), then its first
            t = n % 8 tokens: ceil(t / 2) gap bytes (an odd tail's first low nibble is
            padding) and t literals, so that an unaligned load puts them in a group's last t
            slots and the loop enters the group there; the row's n // 8 groups follow its tail

Size and cost (ad01_int8 pruned to 0.8 by `tflm-gen prune`: 52,840 non-zero of 264,192
weights, 56,057 tokens): 12 bits per token, 32.9% of the weight bytes with the counts (u8
but in the 640-input layer; 83,778 B of tokens, 4,826 of them escapes, 1,672 of counts,
385 of tail padding, 144 of headers, 1,024 for the plain 8-input layer, 48 of metadata).  On
the Cortex-M4 the assembly spends 33 instructions per 8 tokens (2 per token to find and load
its input, 5 per 4 to pair and multiply, 5 per group to load and split) and about 45 per row
(tail entry, folded start, requantisation), from the FC_SPARSE_FOLDED record's folded
constants (tflm_gen/layout.py: the input offset is folded, the inputs are read raw):
297,893 instructions per invoke against 271,194 for the plain filter (+9.8%).  `pays`
keeps a filter plain whose rows are too short for that (ad01's 8-input layer).  Any coding
that keeps the literals as bytes needs at least the gaps' entropy, 3.31 bits per non-zero
(28.3%): below 30% the literals need fewer bits (their entropy is 3.7-5.9 bits per tensor),
which this loop has no instruction to spare for: 10-bit tokens (gap nibble, sign, 5-bit
|w| - t, the 1,348 larger values in a correction list of 3 bytes each) would take 29.2%,
but the M4 reads a field only as a clean byte lane (UXTAB, SXTB16 / UXTAB16 with the offset
t) or after one AND per 4 fields, and sub-byte values with a sign-dependent offset cost at
least 3 more instructions per 4 tokens (about +40,000 per invoke, +25% over plain).
"""

from __future__ import annotations

import numpy as np

from tflm_gen.model import ir

SPARSE_GROUPS = 17  # the codec byte (kernels_c/tflm_sparse_rows.h TFLM_SPARSE_GROUPS)
HEADER_BYTES = 16
COUNT_BYTE = 1  # header byte 2: the rows' token counts are u8 (TFLM_SPARSE_COUNT_BYTE)
MAX_GAP = 15


def row_tokens(row: np.ndarray) -> tuple[list[int], list[int]]:
    """(gaps, literals) of one int8 row."""
    gaps, literals, run = [], [], 0
    for value in row.tolist():
        if value == 0:
            run += 1
            continue
        while run > MAX_GAP:
            gaps.append(MAX_GAP)
            literals.append(0)
            run -= MAX_GAP + 1
        gaps.append(run)
        literals.append(value)
        run = 0
    return gaps, literals


def is_sparse_rows(stream: bytes) -> bool:
    """Whether the stream is one the FC kernel reads in place (either coding)."""
    return (len(stream) >= HEADER_BYTES and stream[0] == SPARSE_GROUPS) or \
        (len(stream) >= NARROW_HEADER_BYTES and stream[0] == SPARSE_NARROW)


GROUP = 8  # tokens per group: a word of gap nibbles, two words of literals (12 bytes)
# Cortex-M4 instructions (cmsis), fitted on ad01 pruned to 0.8: the SPARSE_GROUPS assembly
# spends about 33 per group of 8 tokens and 45 per row (its tail entry, the requantisation);
# the plain filter's FC_INT16_QUADS loop 13 per 16 weights and 28 per row.
TOKEN_COST, ROW_COST = 33 / 8, 45
WEIGHT_COST, PLAIN_ROW_COST = 13 / 16, 28
MAX_COST_RATIO = 1.25  # coded when its estimate is at most this times the plain one's


def pays(rows: np.ndarray) -> bool:
    """Whether the rows' estimated instructions coded stay within MAX_COST_RATIO of plain:
    rows of one or two weights (ad01's 8-input layer) cost more per row than they save."""
    tokens = sum(len(row_tokens(row)[0]) for row in rows)
    coded = TOKEN_COST * tokens + ROW_COST * len(rows)
    return coded <= MAX_COST_RATIO * (WEIGHT_COST * rows.size + PLAIN_ROW_COST * len(rows))


def _nibbles(gaps: list[int]) -> bytes:
    """Gaps two per byte, the first in the low nibble (an odd count is padded in front)."""
    padded = [0] * (len(gaps) % 2) + gaps
    return bytes(padded[i] | padded[i + 1] << 4 for i in range(0, len(padded), 2))


def encode_groups(rows: np.ndarray) -> bytes | None:
    """The SPARSE_GROUPS stream of int8 rows [C, R] (kernels_c/tflm_sparse_rows.h), None
    when a row has 2^16 tokens or more.  The counts take one byte when they all fit."""
    tokens = [row_tokens(row) for row in rows.astype(np.int8)]
    longest = max((len(gaps) for gaps, _ in tokens), default=0)
    if longest >= 1 << 16:
        return None
    count_bytes = 1 if longest < 1 << 8 else 2
    groups, tails = [], []
    for gaps, literals in tokens:
        head = len(gaps) % GROUP
        tails.append(len(gaps).to_bytes(count_bytes, "little") + _nibbles(gaps[:head]) +
                     np.asarray(literals[:head], np.int8).tobytes())
        for t in range(head, len(gaps), GROUP):
            groups.append(_nibbles(gaps[t:t + GROUP]) +
                          np.asarray(literals[t:t + GROUP], np.int8).tobytes())
    flags = COUNT_BYTE if count_bytes == 1 else 0
    header = bytes((SPARSE_GROUPS, 0, flags, 0)) + np.asarray(
        [rows.shape[0], rows.shape[1], 12 * len(groups)], "<u4").tobytes()
    return header + b"".join(groups) + b"".join(tails)


def _place(out: np.ndarray, gaps: list[int], literals: np.ndarray, position: int) -> int:
    for gap, literal in zip(gaps, literals.tolist()):
        position += gap
        out[position] = literal
        position += 1
    return position


def _unpack(data: bytes, count: int) -> list[int]:
    gaps = [n for b in data for n in (b & 15, b >> 4)]
    return gaps[len(gaps) - count:]


def decode_groups(stream: bytes) -> np.ndarray:
    """The int8 rows [C, R] of a SPARSE_GROUPS stream (the tests' round trip)."""
    channels, row, group_bytes = np.frombuffer(stream[4:HEADER_BYTES], "<u4").tolist()
    count_bytes = 1 if stream[2] & COUNT_BYTE else 2
    group_at = HEADER_BYTES
    tail_at = group_at + group_bytes
    out = np.zeros((channels, row), np.int8)
    for c in range(channels):
        count = int.from_bytes(stream[tail_at:tail_at + count_bytes], "little")
        head, size = count % GROUP, (count % GROUP + 1) // 2
        tail_at += count_bytes
        literals = np.frombuffer(stream, np.int8, head, tail_at + size)
        position = _place(out[c], _unpack(stream[tail_at:tail_at + size], head), literals, 0)
        tail_at += size + head
        for _ in range(count // GROUP):
            literals = np.frombuffer(stream, np.int8, GROUP, group_at + 4)
            position = _place(out[c], _unpack(stream[group_at:group_at + 4], GROUP),
                              literals, position)
            group_at += 12
    return out


def grouped_filter(model: ir.Model, graph: ir.SubGraph, op: ir.Operator) -> np.ndarray | None:
    """The int8 rows of an operator's filter that `--compress` coded SPARSE_GROUPS (listed
    in the model's compressed tensors), None for any other filter."""
    if len(op.inputs) < 2 or op.inputs[1] < 0:
        return None
    position = next(i for i, g in enumerate(model.subgraphs) if g is graph)
    index = sum(len(g.tensors) for g in model.subgraphs[:position]) + op.inputs[1]
    stream = model.buffers[graph.tensors[op.inputs[1]].buffer].data
    if index not in ir.compressed_tensors(model) or len(stream) < HEADER_BYTES or \
            stream[0] != SPARSE_GROUPS:
        return None
    return decode_groups(stream)


# SPARSE_NARROW (codec 19): the size-first row-sparse coding (`--compress-goal size`).
SPARSE_NARROW = 19  # the codec byte (kernels_c/tflm_sparse_rows.h TFLM_SPARSE_NARROW)
NARROW_HEADER_BYTES = 20
ZERO_CODE, CORRECTION_CODE = 0, 1  # literal codes: an escape; a literal from the list
MAX_SKIP = 16 * 16  # an escape (e, ZERO_CODE) skips 16 (e + 1) inputs
NARROW_WIDTHS = range(3, 9)  # the literal code widths tried


def narrow_tokens(row: np.ndarray) -> list[tuple[int, int]]:
    """(gap, weight) tokens of one int8 row for SPARSE_NARROW: a run of 16 zeros or more
    before a weight takes escapes (e, 0) of 16 (e + 1) inputs each (weight 0: an escape)."""
    tokens, run = [], 0
    for value in row.tolist():
        if value == 0:
            run += 1
            continue
        while run > MAX_GAP:
            skip = min(run // 16, 16)
            tokens.append((skip - 1, 0))
            run -= 16 * skip
        tokens.append((run, value))
        run = 0
    return tokens


def narrow_code(weight: int, threshold: int, width: int) -> int | None:
    """The literal code of a non-zero weight (None: outside the codes, a correction).
    Codes 2^(width-1) and up: threshold and up; 2 .. 2^(width-1) - 1: -threshold and down."""
    half = 1 << (width - 1)
    code = weight - threshold + half if weight > 0 else weight + threshold + half - 1
    low = half if weight > 0 else 2
    return code if low <= code < (half if weight < 0 else 1 << width) else None


def narrow_weight(code: int, threshold: int, width: int) -> int:
    """The weight of a literal code >= 2 (narrow_code's inverse)."""
    half = 1 << (width - 1)
    return code - half + threshold if code >= half else code - half + 1 - threshold


def _pack(values: list[int], bits: int) -> bytes:
    """values of `bits` bits each, LSB first, into bytes (the last one padded with zeros)."""
    number = sum(v << (bits * i) for i, v in enumerate(values))
    return number.to_bytes((bits * len(values) + 7) // 8, "little")


def encode_narrow(rows: np.ndarray, width: int | None = None) -> bytes | None:
    """The SPARSE_NARROW stream of int8 rows [C, R] (kernels_c/tflm_sparse_rows.h) with
    literal codes of `width` bits (None: the smallest stream), None when a row has 2^16
    tokens or more.  Layout: header, the rows' token counts, every token's gap nibble, every
    token's literal code, the corrections (int8, one per CORRECTION_CODE, in token order)."""
    if width is None:
        streams = [encode_narrow(rows, w) for w in NARROW_WIDTHS]
        return min((s for s in streams if s is not None), key=len, default=None)
    rows = rows.astype(np.int8)
    tokens = [narrow_tokens(row) for row in rows]
    longest = max((len(t) for t in tokens), default=0)
    if longest >= 1 << 16:
        return None
    nonzero = np.abs(rows[rows != 0].astype(np.int32))
    threshold = int(nonzero.min()) if nonzero.size else 1
    count_bytes = 1 if longest < 1 << 8 else 2
    gaps, codes, corrections = [], [], []
    for gap, weight in (token for row in tokens for token in row):
        code = ZERO_CODE if weight == 0 else narrow_code(weight, threshold, width)
        if code is None:
            code = CORRECTION_CODE
            corrections.append(weight)
        gaps.append(gap)
        codes.append(code)
    header = bytes((SPARSE_NARROW, 0, COUNT_BYTE if count_bytes == 1 else 0, width)) + \
        np.asarray([rows.shape[0], rows.shape[1], len(gaps),
                    len(corrections) | threshold << 24], "<u4").tobytes()
    counts = b"".join(len(t).to_bytes(count_bytes, "little") for t in tokens)
    return header + counts + _pack(gaps, 4) + _pack(codes, width) + \
        np.asarray(corrections, np.int8).tobytes()


def decode_narrow(stream: bytes) -> np.ndarray:
    """The int8 rows [C, R] of a SPARSE_NARROW stream (the tests' round trip)."""
    channels, row, total, last = np.frombuffer(stream[4:NARROW_HEADER_BYTES], "<u4").tolist()
    width, threshold, count_bytes = stream[3], last >> 24, 1 if stream[2] & COUNT_BYTE else 2
    at = NARROW_HEADER_BYTES + channels * count_bytes
    counts = [int.from_bytes(stream[NARROW_HEADER_BYTES + count_bytes * c:][:count_bytes],
                             "little") for c in range(channels)]
    gap_bytes, code_bytes = (total + 1) // 2, (total * width + 7) // 8
    gaps = int.from_bytes(stream[at:at + gap_bytes], "little")
    codes = int.from_bytes(stream[at + gap_bytes:at + gap_bytes + code_bytes], "little")
    corrections = iter(np.frombuffer(stream, np.int8, offset=at + gap_bytes + code_bytes).tolist())
    out, k = np.zeros((channels, row), np.int8), 0
    for c in range(channels):
        position = 0
        for _ in range(counts[c]):
            gap, code = gaps >> (4 * k) & 15, codes >> (width * k) & ((1 << width) - 1)
            k += 1
            if code == ZERO_CODE:
                position += 16 * (gap + 1)
                continue
            position += gap
            out[c, position] = next(corrections) if code == CORRECTION_CODE else \
                narrow_weight(code, threshold, width)
            position += 1
    return out
