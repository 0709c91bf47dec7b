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
the Cortex-M4 the assembly spends 32 instructions per 8 tokens (2 per token to find and load
its input, 5 per 4 to pair and multiply, 3 per group to load and split, 2 per pass of two
groups to loop) and about 38 per row (tail entry, folded start, requantisation), from the
FC_SPARSE_FOLDED record's folded constants (tflm_gen/layout.py: the input offset is folded,
the inputs are read raw): 292,822 instructions per invoke (--memory fast) against 271,194
for the plain filter (+8.0%; 298,022 with one group per pass).  `pays`
keeps a filter plain whose rows are too short for that (ad01's 8-input layer).  Any coding
that keeps the literals as bytes needs at least the gaps' entropy, 3.31 bits per non-zero
(28.3%): below 30% the literals need fewer bits (their entropy is 3.7-5.9 bits per tensor),
which this loop has no instruction to spare for: 10-bit tokens (gap nibble, sign, 5-bit
|w| - t, the 1,348 larger values in a correction list of 3 bytes each) would take 29.2%,
but the M4 reads a field only as a clean byte lane (UXTAB, SXTB16 / UXTAB16 with the offset
t) or after one AND per 4 fields, and sub-byte values with a sign-dependent offset cost at
least 3 more instructions per 4 tokens (about +40,000 per invoke, +25% over plain).

SPARSE_NARROW (codec 19, `--compress-goal size`) spends those instructions for bytes: tokens
of a gap nibble and a W-bit code (W = 2 .. 7, per tensor, the smallest stream): code 0 is
weight 0, codes below 2^(W-1) the weights -t .. -(t + 2^(W-1) - 2), the others t .. t +
2^(W-1) - 1 (t the tensor's smallest |weight|, since pruning leaves none below it).  A row's
walk starts at input -1 and a token moves g inputs on before it multiplies, so g = 0 puts
one more code on the same input: a weight outside the codes is a sum of a few codes
(`narrow_sums`, breadth first), which keeps the kernel free of correction lists and
branches.  Stream (little-endian):

    byte 0  SPARSE_NARROW, byte 1 0, byte 2 flags (COUNT_BYTE), byte 3 W
    u32     rows C, u32 row length R, u32 t
    rows    per row: its token count n (u8 under COUNT_BYTE, else u16), its tail (its first
            n % 8 tokens: gap nibbles as a SPARSE_GROUPS tail, then their codes placed as a
            group's last ones, after (8 - n % 8) W % 8 padding bits) and its n // 8 groups
            (a word of 8 gap nibbles, then 8 codes of W bits, LSB first, in W bytes)
    3 zero bytes (the M4 loop reads the codes a word at a time)

ad01 at 0.8: 73,999 B with the metadata (28.0%; W = 4 to 7), 422,252 instructions on the
Cortex-M4 (cmsis, FC_SPARSE_FOLDED constants, --memory fast; 441,402 before the loop's row
entry and the weight table's set-up were trimmed): per token 5 (uxtab and ldrsb for the
input, ubfx and ldrsb for the weight from the layer's table of 2^W weights, smlabb), per
group 6 or 7 (5.9 per token fitted), per row 18 to 22 in the loop (the count by a
post-incremented LDRB or LDRH, one loop per count width and W; the tail's code bytes by W's
own shifts and adds; the rows counted down in a register) and about 13 of requantisation
(34 fitted), plus the tokens a rare weight adds (escapes (15, 0) as SPARSE_GROUPS's).  Both
floors are near: 5 per token is the table look-up's, and the row's requantisation is the
plain kernel's too.  Two groups per pass (as SPARSE_GROUPS) would save 1 per 8 tokens
(about 7,600 on ad01) for 150 more bytes of text in each of the 12 loops.

Why the balanced goal does not mix the codings per layer to reach 30% at +10% on ad01 (its
line: 79,257 B and 298,313 instructions): SPARSE_NARROW costs 1.9 instructions more per
token than SPARSE_GROUPS and saves 0.1-0.3 B per token, so every layer it takes costs 6-10
instructions per byte saved, and 30% needs 7,800 B less than SPARSE_GROUPS's 87,051.  The
smallest-cost mix of plain, SPARSE_GROUPS and SPARSE_NARROW under 30% (each layer's fitted
costs, which put all SPARSE_GROUPS 2% above the measured) is +37%; with a 12-bit coding
free of escape tokens (a row-level list instead) at SPARSE_GROUPS's speed, +15%; that one
plus a SPARSE_NARROW of 4.6 instructions per token, +9.8%: both lines need a sub-12-bit
token at about 4.6 per token, not the table look-up's 5 plus the group's share.
"""

from __future__ import annotations

import functools

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
    return len(stream) >= HEADER_BYTES and stream[0] in (SPARSE_GROUPS, SPARSE_NARROW)


GROUP = 8  # tokens per group: a word of gap nibbles, two words of literals (12 bytes)
# Cortex-M4 instructions (cmsis), fitted on ad01 pruned to 0.8: the SPARSE_GROUPS assembly
# spends about 32 per group of 8 tokens and 38 per row (its tail entry, the requantisation);
# the plain filter's FC_INT16_QUADS loop 13 per 16 weights and 28 per row.
TOKEN_COST, ROW_COST = 32 / 8, 38
WEIGHT_COST, PLAIN_ROW_COST = 13 / 16, 28
# SPARSE_NARROW's assembly, fitted the same way: about 5.9 per token and 34 per row.
NARROW_TOKEN_COST, NARROW_ROW_COST = 5.9, 34
MAX_COST_RATIO = 1.25  # coded when its estimate is at most this times the plain one's


def pays(rows: np.ndarray, stream: bytes | None = None) -> bool:
    """Whether the rows' estimated instructions coded (SPARSE_GROUPS, or the given
    SPARSE_NARROW stream) stay within MAX_COST_RATIO of plain: rows of one or two weights
    (ad01's 8-input layer) cost more per row than they save."""
    if stream is not None and stream[0] == SPARSE_NARROW:
        coded = NARROW_TOKEN_COST * sum(narrow_counts(stream)) + NARROW_ROW_COST * len(rows)
    else:
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
    """The int8 rows of an operator's filter that `--compress` coded row-sparse (listed in
    the model's compressed tensors), None for any other filter."""
    if len(op.inputs) < 2 or op.inputs[1] < 0:
        return None
    position = next(i for i, g in enumerate(model.subgraphs) if g is graph)
    index = sum(len(g.tensors) for g in model.subgraphs[:position]) + op.inputs[1]
    stream = model.buffers[graph.tensors[op.inputs[1]].buffer].data
    if index not in ir.compressed_tensors(model) or not is_sparse_rows(stream):
        return None
    return decode_groups(stream) if stream[0] == SPARSE_GROUPS else decode_narrow(stream)


# SPARSE_NARROW (codec 19): the size-first row-sparse coding (`--compress-goal size`).
SPARSE_NARROW = 19  # the codec byte (kernels_c/tflm_sparse_rows.h TFLM_SPARSE_NARROW)
NARROW_WIDTHS = range(2, 8)  # the code widths tried (8 would need t < 1)
NARROW_PADDING = 3  # zero bytes after the rows: a group's codes are read as words


def narrow_values(threshold: int, width: int) -> dict[int, int]:
    """Code -> weight: 0 -> 0; 1 .. 2^(width-1) - 1 -> -(threshold + 2^(width-1) - 1 - code);
    2^(width-1) .. 2^width - 1 -> threshold + code - 2^(width-1)."""
    half = 1 << (width - 1)
    return {0: 0, **{code: (-(threshold + half - 1 - code) if code < half else
                            threshold + code - half) for code in range(1, 2 * half)}}


@functools.lru_cache(maxsize=64)
def narrow_sums(threshold: int, width: int) -> dict[int, list[int]] | None:
    """int8 weight -> the fewest codes whose weights sum to it (breadth first over sums in
    [-256, 256]), None when some weight has none."""
    codes = {w: c for c, w in narrow_values(threshold, width).items() if c}
    found: dict[int, list[int]] = {0: []}
    frontier = [0]
    while frontier and not all(w in found for w in range(-128, 128)):
        following = []
        for total in frontier:
            for weight, code in codes.items():
                if abs(total + weight) <= 256 and total + weight not in found:
                    found[total + weight] = found[total] + [code]
                    following.append(total + weight)
        frontier = following
    return found if all(w in found for w in range(-128, 128)) else None


def narrow_tokens(row: np.ndarray, sums: dict[int, list[int]]) -> list[tuple[int, int]]:
    """(gap, code) tokens of an int8 row: a token moves `gap` inputs on (from input -1) and
    multiplies the input there by its code's weight; a weight no code holds takes several
    tokens at one input (gap 0 after the first); a move of more than 15 takes escapes (15,
    code 0)."""
    tokens, position = [], -1
    for index in np.flatnonzero(row).tolist():
        gap = index - position
        while gap > MAX_GAP:
            tokens.append((MAX_GAP, 0))
            gap -= MAX_GAP
        codes = sums[int(row[index])]
        tokens += [(gap, codes[0])] + [(0, code) for code in codes[1:]]
        position = index
    return tokens


def _codes(codes: list[int], width: int) -> bytes:
    """Codes of `width` bits, LSB first, in whole bytes; t < 8 codes (a tail) where a group's
    last t codes lie in its last ceil(t W / 8) bytes (after (8 - t) W % 8 padding bits), so
    that the M4 loop reads them as a group's and enters it at slot 8 - t."""
    skip = (GROUP - len(codes)) * width % 8
    number = sum(code << (width * i + skip) for i, code in enumerate(codes))
    return number.to_bytes((width * len(codes) + 7) // 8, "little")


def _narrow_row(tokens: list[tuple[int, int]], width: int, count_bytes: int) -> bytes:
    """A row's count, tail (its first n % 8 tokens: gap nibbles as a SPARSE_GROUPS tail,
    then their codes) and groups (8 gap nibbles, then 8 codes in `width` bytes)."""
    head = len(tokens) % GROUP
    gaps, codes = [g for g, _ in tokens], [c for _, c in tokens]
    out = [len(tokens).to_bytes(count_bytes, "little"), _nibbles(gaps[:head]),
           _codes(codes[:head], width)]
    for t in range(head, len(tokens), GROUP):
        out += [_nibbles(gaps[t:t + GROUP]), _codes(codes[t:t + GROUP], width)]
    return b"".join(out)


def _token_counts(rows: np.ndarray, threshold: int, width: int,
                  escapes: np.ndarray) -> np.ndarray | None:
    """Each row's SPARSE_NARROW token count in `width` (None: no codes for some weight):
    its weights, the more tokens those no code holds take, its escapes."""
    sums = narrow_sums(threshold, width) if threshold + (1 << (width - 1)) <= 128 else None
    if sums is None:
        return None
    tokens = np.array([len(sums[w]) if w else 0 for w in range(-128, 128)])
    return tokens[rows.astype(np.int32) + 128].sum(axis=1) + escapes


def _narrow_bytes(counts: np.ndarray, width: int) -> int:
    """The stream's bytes for rows of `counts` tokens."""
    tails = counts % GROUP
    return int(HEADER_BYTES + NARROW_PADDING + (1 if counts.max(initial=0) < 256 else 2) *
               len(counts) + ((tails + 1) // 2 + (tails * width + 7) // 8 +
                              counts // GROUP * (4 + width)).sum())


def _escapes(rows: np.ndarray) -> np.ndarray:
    """Each row's escapes (15, 0): one per 15 inputs a token moves beyond the first 15."""
    out = np.zeros(len(rows), np.int64)
    for r, row in enumerate(rows):
        gaps = np.diff(np.flatnonzero(row), prepend=-1)
        out[r] = ((gaps - 1) // MAX_GAP).sum()
    return out


def narrow_width(rows: np.ndarray) -> int | None:
    """The code width of the smallest SPARSE_NARROW stream of the rows (None: none)."""
    nonzero = np.abs(rows[rows != 0].astype(np.int32))
    threshold = int(nonzero.min()) if nonzero.size else 1
    escapes = _escapes(rows)
    sizes = {}
    for width in NARROW_WIDTHS:
        counts = _token_counts(rows, threshold, width, escapes)
        if counts is not None and counts.max(initial=0) < 1 << 16:
            sizes[width] = _narrow_bytes(counts, width)
    return min(sizes, key=lambda w: (sizes[w], w), default=None)


def encode_narrow(rows: np.ndarray, width: int | None = None) -> bytes | None:
    """The SPARSE_NARROW stream of int8 rows [C, R] (kernels_c/tflm_sparse_rows.h) with
    codes of `width` bits (None: the smallest stream, `narrow_width`), None when no code
    set holds the weights or a row has 2^16 tokens or more."""
    rows = rows.astype(np.int8)
    width = narrow_width(rows) if width is None else width
    nonzero = np.abs(rows[rows != 0].astype(np.int32))
    threshold = int(nonzero.min()) if nonzero.size else 1
    if width is None or threshold + (1 << (width - 1)) > 128 or \
            narrow_sums(threshold, width) is None:
        return None
    tokens = [narrow_tokens(row, narrow_sums(threshold, width)) for row in rows]
    longest = max((len(t) for t in tokens), default=0)
    if longest >= 1 << 16:
        return None
    count_bytes = 1 if longest < 1 << 8 else 2
    header = bytes((SPARSE_NARROW, 0, COUNT_BYTE if count_bytes == 1 else 0, width)) + \
        np.asarray([rows.shape[0], rows.shape[1], threshold], "<u4").tobytes()
    return header + b"".join(_narrow_row(t, width, count_bytes) for t in tokens) + \
        bytes(NARROW_PADDING)


def narrow_pays_at_best(rows: np.ndarray) -> bool:
    """Whether a SPARSE_NARROW stream of the rows could pass `pays` (one token per weight):
    spares the balanced goal encoding it for dense layers."""
    lower = NARROW_TOKEN_COST * np.count_nonzero(rows) + NARROW_ROW_COST * len(rows)
    return lower <= MAX_COST_RATIO * (WEIGHT_COST * rows.size + PLAIN_ROW_COST * len(rows))


def _read_codes(data: bytes, count: int, width: int) -> list[int]:
    number = int.from_bytes(data, "little") >> (GROUP - count) * width % 8
    return [number >> (width * i) & ((1 << width) - 1) for i in range(count)]


def _narrow_rows(stream: bytes):
    """(byte offset after its count, token count) of each row of a SPARSE_NARROW stream."""
    channels, width = int.from_bytes(stream[4:8], "little"), stream[3]
    count_bytes = 1 if stream[2] & COUNT_BYTE else 2
    at = HEADER_BYTES
    for _ in range(channels):
        count = int.from_bytes(stream[at:at + count_bytes], "little")
        yield at + count_bytes, count
        head = count % GROUP
        at += count_bytes + (head + 1) // 2 + (head * width + 7) // 8 + \
            count // GROUP * (4 + width)


def narrow_counts(stream: bytes) -> list[int]:
    """The token count of each row of a SPARSE_NARROW stream."""
    return [count for _, count in _narrow_rows(stream)]


def decode_narrow(stream: bytes) -> np.ndarray:
    """The int8 rows [C, R] of a SPARSE_NARROW stream (the tests' round trip)."""
    channels, row, threshold = np.frombuffer(stream[4:HEADER_BYTES], "<u4").tolist()
    width = stream[3]
    values = narrow_values(threshold, width)
    out = np.zeros((channels, row), np.int32)
    for c, (at, count) in enumerate(_narrow_rows(stream)):
        head = count % GROUP
        size = (head + 1) // 2
        tokens = list(zip(_unpack(stream[at:at + size], head),
                          _read_codes(stream[at + size:at + size + (head * width + 7) // 8],
                                      head, width)))
        at += size + (head * width + 7) // 8
        for _ in range(count // GROUP):
            tokens += zip(_unpack(stream[at:at + 4], GROUP),
                          _read_codes(stream[at + 4:at + 4 + width], GROUP, width))
            at += 4 + width
        position = -1
        for gap, code in tokens:
            position += gap
            out[c, position] += values[code]
    return out.astype(np.int8)
