"""Lossless weight compression of the device model (`--compress`, issue 15).

Every int8 filter of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (input 1, used by that
one operator only) is seen as rows, one per output channel: conv [Cout, FH*FW*Cin], fully
connected [Cout, K], depthwise [C, FH*FW] (its [1, FH, FW, C] filter transposed, so that a
channel's weights are contiguous).  The rows are cut into blocks of G channels, each coded
on its own, so that a kernel decodes one block at a time into scratch
(kernels_c/tflm_decode.c).  The codec is chosen per tensor by coded size; a tensor that no
codec shrinks stays as it is.  Two codings are read in place instead: FULLY_CONNECTED's
row-sparse ones (compress_rows.py: SPARSE_GROUPS, or under the size goal SPARSE_NARROW
when smaller) and, for int8 1x1 convolutions with few pixels, SPARSE_CONV
(compress_sparse_conv.py).  For those convolutions the cost model (compress_sparse_conv:
the sparse kernel, the plain kernel of the layer's class, the block codecs) picks among
SPARSE_CONV, plain and the block coding, saving the most estimated instructions per byte
added first, while the coded filters stay within SPARSE_MAX_SHARE of their bytes (`choices`).

The tensor's buffer then holds the coded stream (little-endian), and the model's
`tflm_gen.compress` metadata lists the compressed tensors (words: version 1, count K, K
global tensor indices ascending, then the byte count T of the model-wide Huffman table and
its T bytes, padded to a word; T = 0 when no stream uses it), which lets the runtime accept
a buffer shorter than the tensor.  The table is the code lengths (as in a HUFFMAN stream),
then, when the model's filters are large enough (LOOKUP_MAX_SHARE), its two decoding
look-up tables (`lookup_tables`, 1 KB), which spares every coded operator building them on
each invoke (about 10 K instructions on a Cortex-M4):

    byte 0  codec: 1 ZRLE, 2 HUFFMAN, 3 HUFFMAN_SHARED (the metadata's table)
    byte 1  the zero byte (the filter's zero point) that runs stand for
    byte 2  width of a block offset: 2 or 4
    byte 3  flags: LIVE_MAP (1) when the live map follows the offsets, else 0
    u32     channels C, u32 row length R (C * R = the tensor's elements), u32 G
    offsets[B + 1]  B = ceil(C / G): block b is payload[offsets[b], offsets[b + 1])
    live    LIVE_MAP: ceil(C / 8) bytes, bit c (low bit first) set when channel c has a
            weight other than 0; written when the zero byte is 0 and a block holds a run of
            at least ceil(MIN_DEAD_BYTES / R) all-zero channels (pruned filters often do),
            which int8 CONV_2D kernels skip: their output is the requantised bias at every
            pixel (kernels_c/tflm_decode.c tflm_decode_run)
    table   HUFFMAN: code lengths of the ALPHABET symbols, 4 bits each (low nibble first)
    payload

ZRLE (zero-run-length, bytes): a count r < 255 means r zero bytes then one literal byte; 255
means 255 zero bytes; a block stops when its G * R bytes are written (a trailing run carries
no literal).  HUFFMAN: two canonical Huffman codes (each complete, at most MAX_CODE_BITS
bits, MSB first) whose symbols alternate: a run symbol 256 + r (r < RUNS - 1) stands for r
zero bytes followed by a literal, coded with the literal code (symbols 0..255), and FULL_RUN
for RUNS - 1 zero bytes followed by another run symbol; a block stops when full, and its
last byte is padded with 0 bits.  Coding the literal apart spares it the bits that would
tell it from a run (pruned kws: 28.4% -> 25.7% of the weights before tables and index).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from tflm_gen import compress_rows, compress_sparse_conv
from tflm_gen.model import ir

METADATA_NAME = ir.COMPRESS_METADATA
ZRLE, HUFFMAN, HUFFMAN_SHARED = 1, 2, 3
SPARSE_GROUPS = compress_rows.SPARSE_GROUPS  # FULLY_CONNECTED, read in place (compress_rows.py)
SPARSE_NARROW = compress_rows.SPARSE_NARROW  # FULLY_CONNECTED, the size goal's coding
SPARSE_CONV = compress_sparse_conv.SPARSE_CONV  # 1x1 CONV_2D, computed from the stream
CODEC_NAMES = {ZRLE: "zero-rle", HUFFMAN: "huffman", HUFFMAN_SHARED: "huffman-shared",
               SPARSE_GROUPS: "sparse-groups", SPARSE_NARROW: "sparse-narrow",
               SPARSE_CONV: "sparse-conv"}
# `--compress-goal`: balanced takes the smallest FULLY_CONNECTED coding whose estimated cost
# stays within compress_rows.MAX_COST_RATIO of the plain kernel's; size the smallest.
BALANCED, SIZE = "balanced", "size"
GOALS = (BALANCED, SIZE)
RUNS = 64  # run symbols of the Huffman alphabet
ALPHABET = 256 + RUNS
FULL_RUN = ALPHABET - 1  # RUNS - 1 zero bytes without a literal
MAX_CODE_BITS = 8  # the C decoder's look-up table has 2^MAX_CODE_BITS entries
HEADER_BYTES = 16
LIVE_MAP = 1  # header flag: a bitmap of the channels that have a nonzero weight
MIN_DEAD_BYTES = 256  # shorter runs of all-zero channels are computed: a call costs more
# The model-wide look-up tables are stored when they add at most this share of the filters'
# bytes (kws, 22 KB of filters, builds them: 1 KB would be 4.6% of its weights).
LOOKUP_MAX_SHARE = 0.02
MIN_SAVING = 0.1  # a tensor is coded when that saves at least this share of its bytes
SPARSE_MAX_SHARE = 0.30  # the #15 size goal, which SPARSE_CONV codings may spend up to
CONV_BLOCK_CHANNELS = 32
# A CONV_2D filter this small is one block: each more block costs its kernel a pass over
# every pixel (cmsis: the patches gathered and widened again), and one block runs pixels
# outer as the uncoded kernel does, so its output may overlap its input.
CONV_WHOLE_BYTES = 4096
MIN_BLOCK_BYTES = 1024  # blocks of whole channels at least this long (scratch vs index)
WEIGHTED_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")
FILTER_INPUT = 1


@dataclass(frozen=True)
class Coded:
    codec: int
    stream: bytes


# ---- rows and blocks -----------------------------------------------------------------


def channel_rows(opcode: str, weights: np.ndarray) -> np.ndarray:
    """The filter as rows of one output channel each (depthwise: transposed)."""
    if opcode == "DEPTHWISE_CONV_2D":
        return np.ascontiguousarray(weights.reshape(-1, weights.shape[-1]).T)
    return weights.reshape(weights.shape[0], -1)


def dense_filter(opcode: str, rows: np.ndarray, shape: list[int]) -> np.ndarray:
    """The inverse of channel_rows."""
    if opcode == "DEPTHWISE_CONV_2D":
        return np.ascontiguousarray(rows.T).reshape(shape)
    return rows.reshape(shape)


def channels_per_block(channels: int, row: int, minimum: int = 1) -> int:
    """The fewest channels (at least `minimum`) whose block holds MIN_BLOCK_BYTES, even when
    above 1 (the cmsis kernels run channels in pairs), never more than all of them."""
    group = max(minimum, -(-MIN_BLOCK_BYTES // max(row, 1)))
    group += group % 2 if group > 1 else 0
    return min(group, channels)


def blocks(rows: np.ndarray, group: int) -> list[bytes]:
    return [rows[c:c + group].tobytes() for c in range(0, len(rows), group)]


# ---- zero-run-length -----------------------------------------------------------------


def zrle_encode(block: bytes, zero: int) -> bytes:
    out, run = bytearray(), 0
    for value in block:
        if value == zero:
            run += 1
            if run == 255:
                out.append(255)
                run = 0
            continue
        out += bytes((run, value))
        run = 0
    if run:
        out.append(run)
    return bytes(out)


def zrle_decode(data: bytes, size: int, zero: int) -> bytes:
    out, pos = bytearray(), 0
    while len(out) < size and pos < len(data):
        run = data[pos]
        pos += 1
        out += bytes([zero]) * min(run, size - len(out))
        if run < 255 and len(out) < size and pos < len(data):
            out.append(data[pos])
            pos += 1
    return bytes(out) + bytes([zero]) * (size - len(out))


# ---- Huffman -------------------------------------------------------------------------


def symbols(block: bytes, zero: int) -> list[int]:
    """The block as run symbols, each but FULL_RUN followed by its literal: 256 + r for r
    zero bytes (r < RUNS - 1) then a literal, FULL_RUN for RUNS - 1 zero bytes alone; a
    trailing run ends the block without its literal."""
    result, run = [], 0
    for value in block:
        if value == zero:
            run += 1
            if run == RUNS - 1:
                result.append(FULL_RUN)
                run = 0
            continue
        result += [256 + run, value]
        run = 0
    if run:
        result.append(256 + run)
    return result


def _tree_lengths(counts: dict[int, int]) -> dict[int, int]:
    heap = [(count, symbol, (symbol,)) for symbol, count in sorted(counts.items())]
    heapq.heapify(heap)
    depth = dict.fromkeys(counts, 0)
    while len(heap) > 1:
        a, b = heapq.heappop(heap), heapq.heappop(heap)
        for symbol in a[2] + b[2]:
            depth[symbol] += 1
        heapq.heappush(heap, (a[0] + b[0], min(a[1], b[1]), a[2] + b[2]))
    return depth


def _one_code(counts: dict[int, int], first: int, last: int) -> dict[int, int]:
    """Lengths of at most MAX_CODE_BITS for the symbols first..last (rare counts halved
    until the tree fits), complete: a lone or missing symbol gets partners."""
    counts = {s: c for s, c in counts.items() if first <= s <= last}
    for spare in (first, first + 1):
        if len(counts) < 2:
            counts.setdefault(spare, 1)
    while True:
        lengths = _tree_lengths(counts)
        if max(lengths.values()) <= MAX_CODE_BITS:
            return lengths
        counts = {s: max(1, c >> 1) for s, c in counts.items()}


def code_lengths(counts: dict[int, int]) -> dict[int, int]:
    """The two codes' lengths: literals (0..255) and run symbols (256..ALPHABET - 1)."""
    return {**_one_code(counts, 0, 255), **_one_code(counts, 256, ALPHABET - 1)}


def canonical_codes(lengths: dict[int, int]) -> dict[int, tuple[int, int]]:
    """symbol -> (code, length), each code's symbols given codes in (length, symbol) order."""
    codes = {}
    for part in ([s for s in lengths if s < 256], [s for s in lengths if s >= 256]):
        code, previous = 0, 0
        for symbol in sorted(part, key=lambda s: (lengths[s], s)):
            code <<= lengths[symbol] - previous
            previous = lengths[symbol]
            codes[symbol] = (code, previous)
            code += 1
    return codes


def huffman_block(block_symbols: list[int], codes: dict[int, tuple[int, int]]) -> bytes:
    bits = "".join(format(codes[s][0], f"0{codes[s][1]}b") for s in block_symbols)
    bits += "0" * (-len(bits) % 8)
    return int(bits, 2).to_bytes(len(bits) // 8, "big") if bits else b""


def huffman_table(lengths: dict[int, int]) -> bytes:
    nibbles = [lengths.get(s, 0) for s in range(ALPHABET)]
    return bytes(nibbles[i] | nibbles[i + 1] << 4 for i in range(0, ALPHABET, 2))


def lookup_tables(lengths: dict[int, int]) -> bytes:
    """The C decoder's look-up tables (tflm_decode.c build_lut), literals then runs, each
    2^MAX_CODE_BITS little-endian uint16: entry i holds the symbol (less its code's first)
    whose code begins i's bits, as symbol << 4 | length."""
    table = np.zeros(2 << MAX_CODE_BITS, "<u2")
    for symbol, (code, length) in canonical_codes(lengths).items():
        first = (code << (MAX_CODE_BITS - length)) + (symbol >= 256 and 1 << MAX_CODE_BITS)
        table[first:first + (1 << (MAX_CODE_BITS - length))] = (symbol & 255) << 4 | length
    return table.tobytes()


def huffman_decode(data: bytes, size: int, zero: int, lengths: dict[int, int]) -> bytes:
    """Run symbols and literals alternate as `symbols` wrote them."""
    by_code = {(s >= 256, length, code): s
               for s, (code, length) in canonical_codes(lengths).items()}
    out, code, length, want_run = bytearray(), 0, 0, True
    for bit in "".join(format(b, "08b") for b in data):
        code, length = code << 1 | int(bit), length + 1
        symbol = by_code.get((want_run, length, code))
        if symbol is None:
            continue
        code, length = 0, 0
        if want_run:
            out += bytes([zero]) * (RUNS - 1 if symbol == FULL_RUN else symbol - 256)
            want_run = symbol == FULL_RUN
        else:
            out.append(symbol)
            want_run = True
        if len(out) >= size:
            break
    return bytes(out[:size])


# ---- streams -------------------------------------------------------------------------


def skips_channels(live: np.ndarray, row: int, group: int) -> bool:
    """Whether a kernel skips dead channels (tflm_decode_run): a block holds a run of at
    least ceil(MIN_DEAD_BYTES / row) of them."""
    need = -(-MIN_DEAD_BYTES // row)
    for start in range(0, len(live), group):
        run = 0
        for channel_live in live[start:start + group]:
            run = 0 if channel_live else run + 1
            if run >= need:
                return True
    return False


def live_map(rows: np.ndarray, zero: int, group: int) -> bytes:
    """The LIVE_MAP bitmap of the rows, empty when no kernel would skip a channel or the
    zero byte is not 0 (a channel of zero points is not a channel of zeros)."""
    live = np.any(rows != 0, axis=1)
    if zero or not skips_channels(live, rows.shape[1], group):
        return b""
    return np.packbits(live, bitorder="little").tobytes()


def keeps_pixel_order(opcode: str, stream: bytes) -> bool:
    """Whether the kernel decoding `stream` writes its output in the uncoded kernel's
    order (one block, and no dead channels that CONV_2D skips in a pass of their own), so
    that the planner's partial overlaps of its input and output still hold."""
    if compress_sparse_conv.is_sparse_conv(stream):
        # Its kernel reads a batch's whole input (widened into scratch) before writing any of
        # that batch's outputs: whatever a later output overwrites was already read.
        return True
    channels, _, group = np.frombuffer(stream[4:HEADER_BYTES], "<u4").tolist()
    return group >= channels and not (opcode == "CONV_2D" and stream[3] & LIVE_MAP)


def _stream(codec: int, zero: int, rows: np.ndarray, group: int, table: bytes,
            coded_blocks: list[bytes]) -> bytes:
    ends = np.cumsum([0] + [len(b) for b in coded_blocks])
    width = 2 if ends[-1] < 1 << 16 else 4
    live = live_map(rows, zero, group)
    header = bytes((codec, zero, width, LIVE_MAP if live else 0)) + np.asarray(
        [rows.shape[0], rows.shape[1], group], "<u4").tobytes()
    index = np.asarray(ends, "<u2" if width == 2 else "<u4").tobytes()
    return header + index + live + table + b"".join(coded_blocks)


def symbol_counts(rows: np.ndarray, zero: int, group: int | None = None) -> dict[int, int]:
    """How often each Huffman symbol occurs in the rows' blocks of `group` channels."""
    raw = rows.view(np.uint8)
    counts: dict[int, int] = {}
    for block in blocks(raw, group or channels_per_block(*raw.shape)):
        for symbol in symbols(block, zero & 0xFF):
            counts[symbol] = counts.get(symbol, 0) + 1
    return counts


def shared_lengths(counts: dict[int, int]) -> dict[int, int]:
    """Code lengths of the model-wide table: from every candidate's symbols, so each one a
    tensor holds has a code."""
    return code_lengths(counts)


def encode(rows: np.ndarray, zero: int, codec: int, shared: dict[int, int] | None = None,
           group: int | None = None) -> bytes:
    """The stream of int8 rows [C, R] with `codec` (HUFFMAN_SHARED codes with `shared`) in
    blocks of `group` channels (default channels_per_block)."""
    raw = rows.view(np.uint8)
    group = group or channels_per_block(*raw.shape)
    zero &= 0xFF
    if codec == ZRLE:
        return _stream(ZRLE, zero, raw, group, b"",
                       [zrle_encode(b, zero) for b in blocks(raw, group)])
    lengths = shared if codec == HUFFMAN_SHARED else code_lengths(
        symbol_counts(rows, zero, group) or {256: 1})
    codes = canonical_codes(lengths)
    table = huffman_table(lengths) if codec == HUFFMAN else b""
    return _stream(codec, zero, raw, group, table,
                   [huffman_block(symbols(b, zero), codes) for b in blocks(raw, group)])


def best(rows: np.ndarray, zero: int, shared: dict[int, int] | None = None,
         group: int | None = None) -> Coded | None:
    """The smallest stream over the codecs (the shared table's too when given), None when
    it saves less than MIN_SAVING of the rows (decoding costs instructions every invoke)."""
    codecs = (HUFFMAN, ZRLE, HUFFMAN_SHARED) if shared else (HUFFMAN, ZRLE)
    candidates = [Coded(c, encode(rows, zero, c, shared, group)) for c in codecs]
    smallest = min(candidates, key=lambda c: (len(c.stream), c.codec))
    return smallest if len(smallest.stream) <= (1 - MIN_SAVING) * rows.size else None


def choose(candidate: Candidate, shared: dict[int, int] | None = None,
           goal: str = BALANCED) -> Coded | None:
    """The coding of a candidate.  An int8 FULLY_CONNECTED filter takes a row-sparse
    stream its kernel consumes without decoding (`fc_coding`), else stays plain: its
    weights are used once per invoke (batch 1), so a block decoded into scratch costs the
    whole layer again and more (ad01 as it is, Huffman: 6.4 M instructions instead of
    0.27 M on the Cortex-M4).  A DEPTHWISE_CONV_2D of channel multiplier above 1 stays
    plain: its coded kernels leave the fast loops (person_detect's first layer: 72 bytes,
    0.9 M instructions more than plain on the M4 with cmsis).  Others: `best`."""
    if candidate.opcode == "DEPTHWISE_CONV_2D" and candidate.multiplier != 1:
        return None
    if (candidate.opcode == "FULLY_CONNECTED" and candidate.zero == 0
            and candidate.source_dtype == "int8"):
        return fc_coding(candidate.rows, goal)
    return best(candidate.rows, candidate.zero, shared, candidate.group)


def fc_coding(rows: np.ndarray, goal: str = BALANCED) -> Coded | None:
    """The smallest row-sparse coding of FULLY_CONNECTED rows (SPARSE_GROUPS or
    SPARSE_NARROW) that saves MIN_SAVING, under the balanced goal among those whose
    estimated instructions stay within compress_rows.MAX_COST_RATIO of the plain kernel's
    (`compress_rows.pays`: SPARSE_NARROW's 5.9 per token seldom do), under the size goal
    whatever they cost.  None: plain."""
    streams = [Coded(SPARSE_GROUPS, compress_rows.encode_groups(rows))]
    if goal == SIZE or compress_rows.narrow_pays_at_best(rows):
        streams.append(Coded(SPARSE_NARROW, compress_rows.encode_narrow(rows)))
    fitting = [c for c in streams
               if c.stream is not None and len(c.stream) <= (1 - MIN_SAVING) * rows.size
               and (goal == SIZE or compress_rows.pays(rows, c.stream))]
    return min(fitting, key=lambda c: (len(c.stream), c.codec), default=None)


def _pointwise_costs(candidate: Candidate,
                     coded: Coded | None) -> dict[Coded | None, tuple[float, int]]:
    """Coding -> (estimated instructions, bytes) of a 1x1 CONV_2D with few pixels (the cost
    model of compress_sparse_conv): plain, `coded` (choose's: a block coding, or None:
    plain) and SPARSE_CONV when it saves MIN_SAVING of the plain bytes; {} for other ops."""
    pixels, size = candidate.pixels, candidate.rows.size
    if not pixels:
        return {}
    channels, row = candidate.rows.shape
    costs = {None: (compress_sparse_conv.plain_instructions(channels, row, pixels), size)}
    if coded is not None:
        costs[coded] = (compress_sparse_conv.block_instructions(channels, row, pixels),
                        len(coded.stream))
    stream = compress_sparse_conv.encode(candidate.rows) if compress_sparse_conv.fits(
        row, pixels) else None
    if stream is not None and len(stream) <= (1 - MIN_SAVING) * size:
        costs[Coded(SPARSE_CONV, stream)] = (compress_sparse_conv.instructions(stream, pixels),
                                             len(stream))
    return costs


def _pointwise_options(costs: dict[Coded | None, tuple[float, int]],
                       coded: Coded | None) -> list[tuple[float, float, int, Coded | None]]:
    """(instructions saved per byte added, estimated instructions, bytes added, coding) of
    each coding in `costs` that the cost model finds faster than `coded`."""
    now, now_bytes = costs[coded]
    return [((now - cost) / max(length - now_bytes, 1), cost, length - now_bytes, option)
            for option, (cost, length) in costs.items() if cost < now]


def choices(found: list[Candidate], shared: dict[int, int] | None,
            goal: str = BALANCED) -> dict[int, Coded | None]:
    """Tensor index -> its coding (None: plain): `choose` per tensor, then for the 1x1
    convolutions with few pixels the codings (SPARSE_CONV, or plain) that the cost model
    finds faster, those saving the most instructions per byte added first, each taken when
    it is faster than the tensor's coding so far and the coded filters (metadata included)
    stay within SPARSE_MAX_SHARE of their plain bytes (or shrink).  A coding that adds bytes
    is taken only while those layers together are estimated slower than plain: a model that
    the sparse kernels already make faster keeps its smaller codings (vww_96_int8 as it is).
    Ties go to the lower tensor index, so the choice does not depend on the operators' order
    (memory_order)."""
    chosen = {c.tensor_index: choose(c, shared, goal) for c in found}
    costs = {c.tensor_index: _pointwise_costs(c, chosen[c.tensor_index]) for c in found}
    estimate = {index: cost[chosen[index]][0] for index, cost in costs.items() if cost}
    overhead = sum(estimate[index] - costs[index][None][0] for index in estimate)
    options = [(option, c) for c in found if costs[c.tensor_index]
               for option in _pointwise_options(costs[c.tensor_index], chosen[c.tensor_index])]
    budget = SPARSE_MAX_SHARE * sum(c.rows.size for c in found)
    for (_, cost, added, coded), candidate in sorted(options, key=lambda o: (-o[0][0],
                                                                             o[1].tensor_index)):
        index = candidate.tensor_index
        if cost >= estimate[index] or (added > 0 and overhead <= 0):
            continue
        trial = {**chosen, index: coded}
        if coded_total(found, trial, shared) <= max(budget, coded_total(found, chosen, shared)):
            chosen, overhead, estimate[index] = trial, overhead + cost - estimate[index], cost
    return chosen


def coded_total(found: list[Candidate], chosen: dict[int, Coded | None],
                shared: dict[int, int] | None) -> int:
    """Bytes of the filters coded as `chosen`, the metadata included."""
    streams = sum(len(chosen[c.tensor_index].stream) if chosen[c.tensor_index] else c.rows.size
                  for c in found)
    return streams + 4 * len(metadata_words(found, chosen, shared))


def decode_scratch_bytes(stream: bytes) -> int:
    """The scratch a kernel requests to decode the stream (tflm_decode_scratch_bytes): the
    Huffman look-up tables (literals and runs, 2^MAX_CODE_BITS uint16 each) and one block."""
    _, row, group = np.frombuffer(stream[4:HEADER_BYTES], "<u4").tolist()
    return (4 << MAX_CODE_BITS if stream[0] != ZRLE else 0) + group * row


def table_lengths(table: bytes) -> dict[int, int]:
    nibbles = [n for b in table[:ALPHABET // 2] for n in (b & 15, b >> 4)]
    return {s: n for s, n in enumerate(nibbles) if n}


def decode(stream: bytes, shared: dict[int, int] | None = None) -> np.ndarray:
    """The int8 rows [C, R] of a stream (the round trip of the tests; C decodes on device)."""
    if compress_sparse_conv.is_sparse_conv(stream):
        return compress_sparse_conv.decode(stream)
    codec, zero, width = stream[0], stream[1], stream[2]
    channels, row, group = np.frombuffer(stream[4:HEADER_BYTES], "<u4").tolist()
    count = -(-channels // group)
    ends = np.frombuffer(stream, "<u2" if width == 2 else "<u4", count + 1, HEADER_BYTES)
    start = HEADER_BYTES + width * (count + 1)
    start += -(-channels // 8) if stream[3] & LIVE_MAP else 0
    lengths = shared or {}
    if codec == HUFFMAN:
        lengths = table_lengths(stream[start:start + ALPHABET // 2])
        start += ALPHABET // 2
    out = bytearray()
    for b in range(count):
        data = stream[start + int(ends[b]):start + int(ends[b + 1])]
        size = (min(channels, (b + 1) * group) - b * group) * row
        out += (zrle_decode(data, size, zero) if codec == ZRLE
                else huffman_decode(data, size, zero, lengths))
    return np.frombuffer(bytes(out), np.int8).reshape(channels, row)


# ---- the model -----------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A filter that may be compressed: its operator, tensor (global index) and rows."""
    opcode: str
    tensor_index: int  # global over all subgraphs, as the runtime numbers tensors
    tensor: ir.Tensor
    rows: np.ndarray
    zero: int
    source_dtype: str = "int8"  # the op's input type
    pixels: int = 0  # output pixels of a 1x1 stride-1 int8 CONV_2D (SPARSE_CONV), else 0
    multiplier: int = 1  # DEPTHWISE_CONV_2D: output channels per input channel

    @property
    def group(self) -> int:
        """Channels per block: CONV_2D at least CONV_BLOCK_CHANNELS, since its cmsis kernel
        reads every input patch once per block; DEPTHWISE_CONV_2D all of them, since its
        kernels transpose the decoded rows into a whole taps-major filter anyway, and one
        block lets them run pixels outer like the uncoded kernel (its cmsis channel loops
        are fastest over every channel, and the planner's overlaps hold)."""
        channels, row = self.rows.shape
        if self.opcode == "DEPTHWISE_CONV_2D" or (self.opcode == "CONV_2D"
                                                  and self.rows.size <= CONV_WHOLE_BYTES):
            return channels
        minimum = CONV_BLOCK_CHANNELS if self.opcode == "CONV_2D" else 1
        return channels_per_block(channels, row, minimum)


def _uses(graph: ir.SubGraph) -> dict[int, int]:
    uses: dict[int, int] = {}
    for op in graph.operators:
        for index in op.inputs:
            uses[index] = uses.get(index, 0) + 1
    return uses


def candidates(model: ir.Model) -> list[Candidate]:
    """The int8 filters of int8 / int16 weighted ops whose tensor and buffer nothing else
    uses (a kernel that does not decode must never see a coded stream)."""
    buffer_users: dict[int, int] = {}
    for graph in model.subgraphs:
        for tensor in graph.tensors:
            buffer_users[tensor.buffer] = buffer_users.get(tensor.buffer, 0) + 1
    found, first = [], 0
    for graph in model.subgraphs:
        uses = _uses(graph)
        for op in graph.operators:
            found += _candidate(model, graph, op, uses, buffer_users, first)
        first += len(graph.tensors)
    return found


def _candidate(model: ir.Model, graph: ir.SubGraph, op: ir.Operator, uses: dict[int, int],
               buffer_users: dict[int, int], first: int) -> list[Candidate]:
    if op.opcode not in WEIGHTED_OPS or len(op.inputs) <= FILTER_INPUT:
        return []
    index, source = op.inputs[FILTER_INPUT], op.inputs[0]
    if index < 0 or source < 0 or uses.get(index) != 1:
        return []
    tensor = graph.tensors[index]
    if (tensor.dtype != "int8" or graph.tensors[source].dtype not in ("int8", "int16")
            or not ir.is_constant(model, tensor) or buffer_users.get(tensor.buffer) != 1
            or len(model.buffers[tensor.buffer].data) != ir.tensor_bytes(tensor)
            or len(tensor.shape) != (2 if op.opcode == "FULLY_CONNECTED" else 4)):
        return []
    weights = ir.tensor_data(model, tensor).astype(np.int8)
    q = tensor.quantization
    zero = int(q.zero_point[0]) if q is not None and len(q.zero_point) else 0
    if q is not None and len({int(z) for z in q.zero_point}) > 1:
        return []
    return [Candidate(op.opcode, first + index, tensor, channel_rows(op.opcode, weights),
                      zero, graph.tensors[source].dtype, _pointwise_pixels(graph, op, zero),
                      max(1, tensor.shape[-1] // max(1, graph.tensors[source].shape[-1])))]


def _pointwise_pixels(graph: ir.SubGraph, op: ir.Operator, zero: int) -> int:
    """Output pixels of an int8 1x1 stride-1 CONV_2D with symmetric weights, else 0."""
    shape = graph.tensors[op.inputs[FILTER_INPUT]].shape
    options = op.builtin_options
    if (op.opcode != "CONV_2D" or zero or graph.tensors[op.inputs[0]].dtype != "int8"
            or list(shape[1:3]) != [1, 1] or options.get("stride_h", 1) != 1
            or options.get("stride_w", 1) != 1 or graph.tensors[op.inputs[0]].shape[-1] !=
            shape[3]):
        return 0
    return int(np.prod(graph.tensors[op.outputs[0]].shape[:3]))


@dataclass(frozen=True)
class TensorReport:
    """One filter's figures for `inspect` and the table."""
    name: str
    opcode: str
    bytes: int
    sparsity: float  # share of elements equal to the zero point
    distinct: int
    sizes: dict  # codec name -> coded bytes
    chosen: str  # codec name, or "none"
    coded_bytes: int  # what the buffer holds once compressed


def model_table(found: list[Candidate]) -> dict[int, int] | None:
    """The model-wide Huffman code lengths, from every candidate's symbols (None: none)."""
    counts: dict[int, int] = {}
    for candidate in found:
        for symbol, count in symbol_counts(candidate.rows, candidate.zero,
                                           candidate.group).items():
            counts[symbol] = counts.get(symbol, 0) + count
    return shared_lengths(counts) if counts else None


def tensor_report(candidate: Candidate, shared: dict[int, int] | None = None,
                  coded: Coded | None | bool = False) -> TensorReport:
    """`coded`: the tensor's coding among the model's (`choices`), by default `choose`'s."""
    rows = candidate.rows
    codecs = (HUFFMAN, ZRLE, HUFFMAN_SHARED) if shared else (HUFFMAN, ZRLE)
    sizes = {CODEC_NAMES[c]: len(encode(rows, candidate.zero, c, shared, candidate.group))
             for c in codecs}
    if candidate.opcode == "FULLY_CONNECTED":
        sizes[CODEC_NAMES[SPARSE_GROUPS]] = len(compress_rows.encode_groups(rows) or b"")
        sizes[CODEC_NAMES[SPARSE_NARROW]] = len(compress_rows.encode_narrow(rows) or b"")
    if candidate.pixels:
        sizes[CODEC_NAMES[SPARSE_CONV]] = len(compress_sparse_conv.encode(rows) or b"")
    coded = choose(candidate, shared) if coded is False else coded
    return TensorReport(candidate.tensor.name, candidate.opcode, int(rows.size),
                        float(np.mean(rows == candidate.zero)), len(np.unique(rows)), sizes,
                        CODEC_NAMES[coded.codec] if coded else "none",
                        len(coded.stream) if coded else int(rows.size))


def codings(model: ir.Model) -> dict[int, tuple[str, int]]:
    """id(tensor) -> (coding, coded bytes) of every filter `--compress` may code ("none"
    and its plain bytes when coding would not save enough)."""
    found = candidates(model)
    shared = model_table(found)
    chosen = choices(found, shared)
    return {id(c.tensor): (r.chosen, r.coded_bytes)
            for c, r in ((c, tensor_report(c, shared, chosen[c.tensor_index])) for c in found)}


def compress_model(model: ir.Model, goal: str = BALANCED) -> ir.Model:
    """A copy whose compressible filters hold coded streams (as `goal` chooses), listed in
    the metadata with the model-wide Huffman table when a stream uses it."""
    result = model.with_metadata_words(METADATA_NAME, None)
    found = candidates(result)
    shared = model_table(found)
    chosen = choices(found, shared, goal)
    for candidate in found:
        coded = chosen[candidate.tensor_index]
        if coded is not None:
            result.buffers[candidate.tensor.buffer] = ir.Buffer(coded.stream)
    words = metadata_words(found, chosen, shared)
    return result.with_metadata_words(METADATA_NAME, words) if words else result


def metadata_words(found: list[Candidate], chosen: dict[int, Coded | None],
                   shared: dict[int, int] | None) -> list[int]:
    """The metadata listing the coded tensors, with the model-wide Huffman table when a
    stream uses it ([] when none is coded)."""
    compressed = sorted(c.tensor_index for c in found if chosen[c.tensor_index] is not None)
    if not compressed:
        return []
    uses_shared = any(c is not None and c.codec == HUFFMAN_SHARED for c in chosen.values())
    table = huffman_table(shared) if uses_shared else b""
    if uses_shared and len(lookup_tables(shared)) <= LOOKUP_MAX_SHARE * sum(
            c.rows.size for c in found):
        table += lookup_tables(shared)
    table_words = np.frombuffer(table + bytes(-len(table) % 4), "<i4").tolist()
    return [1, len(compressed), *compressed, len(table), *table_words]


def decoded_filter(model: ir.Model, graph: ir.SubGraph, op: ir.Operator) -> np.ndarray | None:
    """The dense filter (shaped as declared) of an op whose filter `compress_model` coded
    into blocks the kernel decodes, None when it is not coded so (the layout's records for
    coded filters hold only the per-channel constants, computed from it)."""
    position = next(i for i, g in enumerate(model.subgraphs) if g is graph)
    base = sum(len(g.tensors) for g in model.subgraphs[:position])
    if len(op.inputs) <= FILTER_INPUT or op.inputs[FILTER_INPUT] < 0 or \
            base + op.inputs[FILTER_INPUT] not in ir.compressed_tensors(model):
        return None
    tensor = graph.tensors[op.inputs[FILTER_INPUT]]
    stream = model.buffers[tensor.buffer].data
    if compress_rows.is_sparse_rows(stream) or compress_sparse_conv.is_sparse_conv(stream):
        return None
    rows = decode(stream, model_shared_lengths(model))
    return dense_filter(op.opcode, rows, list(tensor.shape))


def model_shared_lengths(model: ir.Model) -> dict[int, int] | None:
    """The shared table a compressed model's metadata holds, None when it has none."""
    for name, index in model.metadata:
        if name == METADATA_NAME:
            words = np.frombuffer(model.buffers[index].data, "<i4")
            end = 2 + int(words[1])
            if len(words) > end and words[end] > 0:
                return table_lengths(words[end + 1:].tobytes())
    return None
