"""Sparse coding of 1x1 CONV_2D filters with few output pixels (`--compress`, issue 15),
computed by the kernel without decoding the filter into scratch (kernels_c/conv_sparse.c).

A pruned 1x1 convolution on a 3x3 or 6x6 map (person_detect's last layers: up to 256
channels, 9 or 36 pixels) uses each weight for only 9-36 pixels, so decoding a block of
channels (tflm_decode.c) costs as much as the multiply-accumulates it feeds.  Here the kernel
holds the pixels' inputs widened and transposed ([Cin][P] int16, the input offset added),
reads one output channel's non-zero weights into a short list (row offset, weight) and walks
that list once per group of pixels (cmsis DSP: 8, then 4, then 1; portable: 4, then 1): a
weight w at input channel i adds w * x[p][i] to each pixel's sum (20% non-zeros times P
pixels, one load per 4 pixels and a multiply-accumulate per pixel).

Stream (little-endian), the 16-byte header of compress.py's streams:

    byte 0  SPARSE_CONV
    byte 1  0 (the zero byte: symmetric int8 weights only)
    byte 2  W, the bits of a token (TOKEN_BITS)
    byte 3  t, the least magnitude of a non-zero weight (1 .. 127)
    u32     channels C, u32 row length R (Cin), u32 payload bytes (even)
    payload  W-bit tokens, least significant bit first, over the rows one after another
             (C * R positions), zero bits up to a whole number of 16-bit units

The V = 257 - 2t values a weight may take (t .. 127, -128 .. -t: index i is the weight
t + i wrapped to int8) and G = (2^W - 1) // V gaps make the tokens: a code below G * V
is gap g = code // V zeros, then the weight of index code % V; a code k above that skips
(k - G * V + 1) * G zeros.  The last token skips to or past the end (C * R), which tells the
kernel to stop.  The generator picks W for the fewest bytes: 11 bits for person_detect pruned
to 0.8 (values 56 .. 127 in magnitude: 145 values, 14 gaps) against about 13.5 for Huffman
with its tables; the runtime checks the whole stream when it prepares.
"""

from __future__ import annotations

import numpy as np

SPARSE_CONV = 18  # the codec byte (kernels_c/conv_sparse.h TFLM_CONV_SPARSE)
HEADER_BYTES = 16
TOKEN_BITS = range(9, 15)
MAX_OFFSET = 65535  # 2 (R + 1) even(P) bytes: the kernel's list holds 16-bit byte offsets
# Estimated Cortex-M4 (cmsis, -O2) instructions, fitted on person_detect and kws_ref_model
# pruned to 0.8 (bench ops[], --memory fast; within 1.5% on their coded 1x1 layers of 9 to 144
# pixels).  This kernel: reading a token into its channel's list 21 (cmsis_sparse_list),
# then per non-zero weight 12.75 per pass of 8 pixels, 8 per quad left and 5 per pixel left
# (kernels_c/cmsis/cmsis_conv_sparse.h), 21 per output value, 141 per output channel, 5.3 per
# input value (widening) and 3,800 per call.  Plain kernels by class, since each gets faster
# on its own (kernels_c/cmsis/conv.c): NARROW_LAYERS run conv_narrow.h, the others
# cmsis_dot_pairs_requant3; per MAC, per output value and per call.  The block codecs:
# decoding and laying out a weight, and per call, then the plain kernel.
PER_TOKEN = 21
PER_WEIGHT_OCTET, PER_WEIGHT_QUAD, PER_WEIGHT_PIXEL = 12.75, 8, 5
PER_OUTPUT, PER_CHANNEL, PER_INPUT, PER_CALL = 21, 141, 5.3, 3800
NARROW_LAYERS = ((8, 16), (16, 32), (32, 32))  # (Cin, Cout)
PLAIN = {"narrow": (0.78, 7.2, 1800), "pairs": (0.78, 7.5, 1800)}
DECODE_PER_WEIGHT, DECODE_PER_CALL = 11.4, 4400

def _floor(rows: np.ndarray) -> int:
    """The least magnitude of a non-zero weight (1 when there is none)."""
    nonzero = np.abs(rows[rows != 0].astype(np.int32))
    return int(nonzero.min()) if nonzero.size else 1


def _codes(rows: np.ndarray, bits: int, floor: int) -> list[int]:
    values = 257 - 2 * floor
    gaps = ((1 << bits) - 1) // values
    skips = (1 << bits) - gaps * values
    flat = rows.astype(np.int32).ravel()
    total, position, codes = flat.size, 0, []

    def skip(zeros: int) -> None:
        nonlocal position
        count = max(1, min(skips, -(-zeros // gaps)))
        codes.append(gaps * values + count - 1)
        position += count * gaps

    for at in np.flatnonzero(flat).tolist():
        while at - position >= gaps:
            skip((at - position) // gaps * gaps)
        value = int(flat[at])
        index = (value - floor) % 256
        codes.append((at - position) * values + index)
        position = at + 1
    skip(total - position)
    while position < total:
        skip(total - position)
    return codes


def _pack(codes: list[int], bits: int) -> bytes:
    """The codes, `bits` each, least significant bit first, padded to whole 16-bit units."""
    values = np.asarray(codes, np.uint32)
    stream = ((values[:, None] >> np.arange(bits, dtype=np.uint32)) & 1).astype(np.uint8).ravel()
    stream = np.concatenate([stream, np.zeros(-len(stream) % 16, np.uint8)])
    return np.packbits(stream, bitorder="little").tobytes()


def encode(rows: np.ndarray) -> bytes | None:
    """The smallest stream of int8 rows [C, R] over the token widths."""
    floor = _floor(rows)
    best = None
    for bits in TOKEN_BITS:
        if (1 << bits) - 1 < 257 - 2 * floor:
            continue
        payload = _pack(_codes(rows, bits, floor), bits)
        if best is None or len(payload) < len(best[1]):
            best = (bits, payload)
    if best is None:
        return None
    bits, payload = best
    header = bytes((SPARSE_CONV, 0, bits, floor)) + np.asarray(
        [rows.shape[0], rows.shape[1], len(payload)], "<u4").tobytes()
    return header + payload


def is_sparse_conv(stream: bytes) -> bool:
    return len(stream) >= HEADER_BYTES and stream[0] == SPARSE_CONV


def tokens(stream: bytes) -> list[tuple[int, int]]:
    """(position, weight) of every token, a skip's weight 0 (position: where it ends)."""
    bits, floor = stream[2], stream[3]
    channels, row, length = np.frombuffer(stream[4:HEADER_BYTES], "<u4").tolist()
    values = 257 - 2 * floor
    gaps = ((1 << bits) - 1) // values
    payload = np.frombuffer(stream, np.uint8, length, HEADER_BYTES)
    stream_bits = np.unpackbits(payload, bitorder="little")
    count = len(stream_bits) // bits
    codes = stream_bits[:count * bits].reshape(count, bits).astype(np.int64) @ (
        np.int64(1) << np.arange(bits, dtype=np.int64))
    skip = codes >= gaps * values
    ends = np.cumsum(np.where(skip, (codes - gaps * values + 1) * gaps, codes // values + 1))
    at = np.where(skip, ends, ends - 1)
    last = int(np.argmax(at >= channels * row))  # the final skip (padding codes follow)
    weights = np.where(skip, 0, (codes % values + floor + 128) % 256 - 128)
    return list(zip(at[:last + 1].tolist(), weights[:last + 1].tolist()))


def decode(stream: bytes) -> np.ndarray:
    """The int8 rows [C, R] of a stream (the round trip of the tests; C computes on device)."""
    channels, row, _ = np.frombuffer(stream[4:HEADER_BYTES], "<u4").tolist()
    flat = np.zeros(channels * row, np.int8)
    for position, weight in tokens(stream):
        if weight:
            flat[position] = weight
    return flat.reshape(channels, row)


def instructions(stream: bytes, pixels: int) -> float:
    """Estimated instructions of the kernel on `pixels` output pixels."""
    channels, row, _ = np.frombuffer(stream[4:HEADER_BYTES], "<u4").tolist()
    found = tokens(stream)
    weights = sum(1 for _, weight in found if weight)
    per_weight = (PER_WEIGHT_OCTET * (pixels // 8) + PER_WEIGHT_QUAD * (pixels % 8 // 4)
                  + PER_WEIGHT_PIXEL * (pixels % 4))
    return (len(found) * PER_TOKEN + weights * per_weight + PER_CALL + PER_CHANNEL * channels
            + (PER_OUTPUT * channels + PER_INPUT * row) * pixels)


def plain_class(channels: int, row: int) -> str:
    """The plain kernel of a 1x1 layer of `row` inputs and `channels` outputs."""
    return "narrow" if (row, channels) in NARROW_LAYERS else "pairs"


def plain_instructions(channels: int, row: int, pixels: int) -> float:
    """Estimated instructions of the plain kernel (its class's constants)."""
    per_mac, per_output, per_call = PLAIN[plain_class(channels, row)]
    return per_mac * channels * row * pixels + per_output * channels * pixels + per_call


def block_instructions(channels: int, row: int, pixels: int) -> float:
    """Estimated instructions of the block codecs' path (decode, then the plain loops)."""
    return (DECODE_PER_WEIGHT * channels * row + DECODE_PER_CALL
            + plain_instructions(channels, row, pixels))


def widened_bytes(row: int, pixels: int) -> int:
    """The kernel's widened inputs: [R + 1][P rounded up to even] int16."""
    return 2 * (row + 1) * (pixels + pixels % 2)


def scratch_bytes(row: int, pixels: int) -> int:
    """The scratch the kernel requests (kernels_c/conv_sparse.c
    tflm_conv_sparse_scratch_bytes): the widened inputs, one channel's list (R words) and
    its sums (P words)."""
    return widened_bytes(row, pixels) + 4 * (row + pixels)


def fits(row: int, pixels: int) -> bool:
    """Whether the kernel's int16 offsets reach every input row."""
    return widened_bytes(row, pixels) <= MAX_OFFSET
