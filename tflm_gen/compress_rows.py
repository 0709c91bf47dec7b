"""Row-sparse coding of FULLY_CONNECTED filters (`--compress`, issue 15), consumed in place
by the kernel (kernels_c/tflm_sparse_rows.c): a batch-1 fully connected layer uses each
weight once, so decoding into scratch would cost as much as the layer; instead the kernel
walks each row's non-zero weights and multiplies them with the inputs they meet.

Stream (little-endian), the 16-byte header of compress.py's streams:

    byte 0  SPARSE_ROWS
    byte 1  0 (the zero byte: the filter's zero point, 0 for the symmetric int8 weights)
    bytes 2, 3  0
    u32     rows C, u32 row length R, u32 payload bytes P
    payload  per row: u16 token count n; n // 4 groups of 4 tokens, each 2 gap bytes (4-bit
             gaps, token order from the low nibble of the first byte on) then its 4 int8
             literals; then the r = n % 4 last tokens: ceil(r / 2) gap bytes, r literals
             (2 + ceil(n / 2) + n bytes; the groups give the kernel one pointer and one
             halfword and one word load per 4 tokens)

Token t skips `gap` inputs, then multiplies the next one by its literal.  A run of more than
15 zeros is cut into tokens (15, 0) of 16 inputs each (a literal 0 adds nothing, and keeps
the kernel free of branches).  A row's tokens never reach past R inputs; the runtime checks
every row when the model is opened.

Size and cost (ad01_int8 pruned to 0.8 by `tflm-gen prune`, 52,840 non-zero of 264,192
weights): 4 + 8 bits per non-zero is 30.0% of the weight bytes before any overhead, and
escapes (6% more tokens), row counts and odd groups bring it to 33.3%.  Any coding that
keeps the literals as bytes needs at least the gaps' entropy, 3.31 bits per non-zero
(28.3%); a flat Rice (k = 2) coding of the gaps reaches 29.1% but costs a bit-serial decode
per token.  On the Cortex-M4 the groups of 4 tokens alone (23 instructions with the loop)
take 308 k instructions against 271 k for the whole plain invoke (FC_INT16_QUADS: 13 per
16 MACs), so this format cannot come within 10% of it; the values' entropy (3.7-5.9 bits
per tensor) is what a smaller coding would have to exploit.
"""

from __future__ import annotations

import numpy as np

from tflm_gen.model import ir

SPARSE_ROWS = 16  # the codec byte (kernels_c/tflm_sparse_rows.h TFLM_SPARSE_ROWS)
HEADER_BYTES = 16
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


def _tokens(gaps: list[int], literals: list[int]) -> bytes:
    """Gap nibbles (2 per byte, low first) then the literals, of up to 4 tokens."""
    padded = gaps + [0] * (len(gaps) % 2)
    nibbles = bytes(padded[i] | padded[i + 1] << 4 for i in range(0, len(padded), 2))
    return nibbles + np.asarray(literals, np.int8).tobytes()


def encode_row(row: np.ndarray) -> bytes:
    gaps, literals = row_tokens(row)
    return len(gaps).to_bytes(2, "little") + b"".join(
        _tokens(gaps[t:t + 4], literals[t:t + 4]) for t in range(0, len(gaps), 4))


def encode(rows: np.ndarray) -> bytes | None:
    """The stream of int8 rows [C, R], None when R is past the u16 token count (a token
    covers at least one input, so a row has at most R)."""
    if rows.shape[1] >= 1 << 16:
        return None
    payload = b"".join(encode_row(row) for row in rows.astype(np.int8))
    header = bytes((SPARSE_ROWS, 0, 0, 0)) + np.asarray(
        [rows.shape[0], rows.shape[1], len(payload)], "<u4").tobytes()
    return header + payload


def is_sparse_rows(stream: bytes) -> bool:
    """Whether the stream is one the FC kernel reads in place (either row-sparse codec)."""
    return len(stream) >= HEADER_BYTES and stream[0] in (SPARSE_ROWS, SPARSE_GROUPS)


def decode(stream: bytes) -> np.ndarray:
    """The int8 rows [C, R] of a stream (the tests' round trip; C never expands it)."""
    channels, row, _ = np.frombuffer(stream[4:HEADER_BYTES], "<u4").tolist()
    out = np.zeros((channels, row), np.int8)
    at = HEADER_BYTES
    for c in range(channels):
        count = int.from_bytes(stream[at:at + 2], "little")
        at += 2
        position = 0
        for first in range(0, count, 4):
            size = min(4, count - first)
            nibbles = stream[at:at + (size + 1) // 2]
            literals = np.frombuffer(stream[at + len(nibbles):at + len(nibbles) + size],
                                     np.int8)
            at += len(nibbles) + size
            for t in range(size):
                position += (nibbles[t // 2] >> (4 * (t % 2))) & 15
                out[c, position] = literals[t]
                position += 1
    return out


# ---- SPARSE_GROUPS: the same tokens in groups of 8, for one LDM per group ---------------

SPARSE_GROUPS = 17  # the codec byte (kernels_c/tflm_sparse_rows.h TFLM_SPARSE_GROUPS)
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
    when a row has 2^16 tokens or more."""
    groups, tails = [], []
    for row in rows.astype(np.int8):
        gaps, literals = row_tokens(row)
        if len(gaps) >= 1 << 16:
            return None
        head = len(gaps) % GROUP
        tails.append(len(gaps).to_bytes(2, "little") + _nibbles(gaps[:head]) +
                     np.asarray(literals[:head], np.int8).tobytes())
        for t in range(head, len(gaps), GROUP):
            groups.append(_nibbles(gaps[t:t + GROUP]) +
                          np.asarray(literals[t:t + GROUP], np.int8).tobytes())
    payload = (np.asarray([12 * len(groups)], "<u4").tobytes() + b"".join(groups) +
               b"".join(tails))
    header = bytes((SPARSE_GROUPS, 0, 0, 0)) + np.asarray(
        [rows.shape[0], rows.shape[1], len(payload)], "<u4").tobytes()
    return header + payload


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
    channels, row, _ = np.frombuffer(stream[4:HEADER_BYTES], "<u4").tolist()
    group_at = HEADER_BYTES + 4
    tail_at = group_at + int.from_bytes(stream[HEADER_BYTES:group_at], "little")
    out = np.zeros((channels, row), np.int8)
    for c in range(channels):
        count = int.from_bytes(stream[tail_at:tail_at + 2], "little")
        head, size = count % GROUP, (count % GROUP + 1) // 2
        tail_at += 2
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
    if index not in ir.compressed_tensors(model) or len(stream) < HEADER_BYTES + 4 or \
            stream[0] != SPARSE_GROUPS:
        return None
    return decode_groups(stream)
