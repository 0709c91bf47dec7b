"""`--weights separate` (issue #15): a device model (tflm_gen.optimize.device_model) split
into a mini flatbuffer, the model's structure, and one weight blob holding the bytes of
every constant tensor buffer, so that the structure can sit in fast internal memory and the
weights in external flash.

Format.  The mini flatbuffer is a standard .tflite whose moved buffers have no `data` but
the schema's `offset` and `size` fields (the layout TFLite uses for models over 2 GB).
Offsets count from the start of the mini flatbuffer as if the blob followed it at the next
16-byte boundary, `weights_start(len(mini))`: so `joined()` (mini, zero padding, blob) is
an ordinary large-model .tflite, and the runtime, given the blob apart, reads byte
`offset - weights_start` of it (runtime_c/tflm_model.c, `tflm_model_at`).  Every buffer
starts 16-byte aligned in the blob (the cmsis MVE kernels' loads).

The blob also holds the generator's requantisation and (cmsis tag) weight-layout metadata,
as large as the weights they derive from; the runtime reads metadata words through
`tflm_model_at` wherever they lie.  The mini flatbuffer keeps the operators, tensors
(shapes, types, scales and zero points), the offline memory plan (TFLM reads it only as
inline data) and any other metadata (e.g. a compression record); it drops what no runtime
reads: tensor and subgraph names, quantisation min/max, the description, signatures and the
converter's metadata notes.  Buffer bytes are moved as they are, never interpreted, so a compressed
buffer (a coded stream) moves like any other: compress first, then separate.

LiteRT runs `joined()` bit-exact with the device model; the installed tflite-micro
ignores the offset/size fields, so the oracle of a separate project is, as for a whole
one, TFLM on the user's model.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from tflm_gen.assemble import banner, c_bytes, render
from tflm_gen.compress import codings
from tflm_gen.errors import InputError
from tflm_gen.layout import METADATA_NAME as LAYOUT_METADATA
from tflm_gen.licensing import MODEL_OWNER
from tflm_gen.model import ir
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.requant import METADATA_NAME as REQUANT_METADATA

ALIGNMENT = 16  # of the blob's start and of every buffer in it (MVE loads; TFLM's buffers)
MODES = ("whole", "separate")
# Metadata as large as the weights they derive from, read only by this runtime (through
# tflm_model_at, so from the blob too); the offline plan stays inline, where TFLM reads it.
MOVED_METADATA = (REQUANT_METADATA, LAYOUT_METADATA)
# The converter's notes in metadata: neither TFLM nor this runtime reads them.
CONVERTER_METADATA = ("min_runtime_version", "CONVERSION_METADATA")
_PLACEHOLDER = 1 << 30  # an offset of the final width, for sizing the mini flatbuffer


def weights_start(mini_bytes: int) -> int:
    """Offset the blob's first byte has in the mini flatbuffer's offset fields."""
    return -(-mini_bytes // ALIGNMENT) * ALIGNMENT


@dataclass(frozen=True)
class WeightBuffer:
    """One buffer moved to the blob."""

    index: int   # buffer index in the model
    offset: int  # of its first byte in the blob
    size: int    # bytes


@dataclass(frozen=True)
class SeparateModel:
    mini: bytes     # the flatbuffer without constant data
    weights: bytes  # the blob
    buffers: tuple[WeightBuffer, ...]

    def joined(self) -> bytes:
        return joined(self.mini, self.weights)


def joined(mini: bytes, weights: bytes) -> bytes:
    """Mini flatbuffer, zero padding to the blob's start, blob: one valid .tflite."""
    return mini.ljust(weights_start(len(mini)), b"\0") + weights


def moved_buffers(model: ir.Model) -> list[int]:
    """Indices of the buffers whose bytes go to the blob: every tensor's constant data and
    the generator's per-channel metadata (MOVED_METADATA); other metadata stays."""
    metadata = {index for _, index in model.metadata} | set(model.metadata_buffer)
    used = {tensor.buffer for graph in model.subgraphs for tensor in graph.tensors
            if ir.is_constant(model, tensor)}
    moved = {index for name, index in model.metadata if name in MOVED_METADATA}
    return sorted((used - metadata) | moved)


def _blob(model: ir.Model, indices: list[int]) -> tuple[bytes, tuple[WeightBuffer, ...]]:
    blob, placed = bytearray(), []
    for index in indices:
        blob += b"\0" * (-len(blob) % ALIGNMENT)
        data = model.buffers[index].data
        placed.append(WeightBuffer(index, len(blob), len(data)))
        blob += data
    return bytes(blob), tuple(placed)


def _structure(model: ir.Model) -> ir.Model:
    """A copy without what no runtime reads: tensor and subgraph names, quantisation min/max (the
    converter's calibration ranges), the description, signatures and the converter's
    metadata notes.  The typed API, `run`'s output names and `verify --per-op` take names
    and signatures from the device model, never from the mini one."""
    mini = copy.deepcopy(model)
    mini.description, mini.signature_defs = "", []
    used = {tensor.buffer for graph in mini.subgraphs for tensor in graph.tensors}
    for name, index in mini.metadata:
        if name in CONVERTER_METADATA and index not in used:
            mini.buffers[index] = ir.Buffer()
    mini.metadata = [(name, index) for name, index in mini.metadata
                     if name not in CONVERTER_METADATA]
    for graph in mini.subgraphs:
        graph.name = ""
        for tensor in graph.tensors:
            tensor.name = ""
            if tensor.quantization is not None:
                tensor.quantization.min, tensor.quantization.max = [], []
    return mini


def _located(model: ir.Model, placed: tuple[WeightBuffer, ...], start: int) -> bytes:
    """The mini flatbuffer with the moved buffers located at `start` + their blob offset."""
    mini = copy.copy(model)
    mini.buffers = list(model.buffers)
    for each in placed:
        mini.buffers[each.index] = ir.Buffer(b"", start + each.offset, each.size)
    return write_model(mini)


def separate(device: bytes) -> SeparateModel:
    """The device model split into mini flatbuffer and blob.  The flatbuffer's size does not
    depend on the offsets' values (fixed-width fields), so it is written once to learn the
    blob's start, then again with the real offsets."""
    model = _structure(read_model(device))
    blob, placed = _blob(model, moved_buffers(model))
    sized = _located(model, placed, _PLACEHOLDER)
    mini = _located(model, placed, weights_start(len(sized)))
    if len(mini) != len(sized):  # the writer's layout changed: offsets would be wrong
        raise AssertionError("mini flatbuffer size depends on its offsets")
    if weights_start(len(mini)) + len(blob) >= 1 << 31:  # the runtime's positions: 31 bits
        raise InputError(f"weights of {len(blob)} bytes are too large to separate")
    return SeparateModel(mini, blob, placed)


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise InputError(f"--weights {mode!r}: choose one of {', '.join(MODES)}")
    return mode


def weights_files(split: SeparateModel, device: bytes, name: str) -> dict[str, bytes]:
    """<name>_weights.c/.h (the blob as a const array and its size) and
    <name>_weights_section.h (TFLM_WEIGHTS_SECTION, where the user places the array)."""
    data = split.weights or b"\0"  # C has no empty arrays; the size macro stays 0
    values = {"name": name, "NAME": name.upper(), "weights_size": len(split.weights),
              "array_size": len(data), "weight_bytes": c_bytes(data)}
    return {
        f"{name}_weights.c": render("common/weights.c.j2", **values,
                                    banner=banner(device, license_id=MODEL_OWNER)),
        f"{name}_weights.h": render("common/weights.h.j2", **values, banner=banner(device)),
        f"{name}_weights_section.h": render(
            "common/weights_section.h.j2", **values,
            banner=banner(device).replace("; do not edit.", "; edit TFLM_WEIGHTS_SECTION below.")),
    }


def _values(model: ir.Model, tensor: ir.Tensor) -> np.ndarray:
    """The tensor's elements, or its buffer's raw bytes when they are not the dense array
    (a compressed buffer's coded stream, a dtype numpy cannot hold)."""
    data = model.buffers[tensor.buffer].data
    try:
        if len(data) == ir.tensor_bytes(tensor):
            return ir.tensor_data(model, tensor).reshape(-1)
    except ValueError:
        pass
    return np.frombuffer(data, np.uint8)


def compression_of(choices: dict[int, tuple[str, int]],
                   tensor: ir.Tensor) -> tuple[str | None, int | None]:
    """The coding `--compress` chooses for the tensor and its compressed bytes
    (`choices`: tflm_gen.compress.codings of the model), (None, None) for a tensor it never
    codes."""
    return choices.get(id(tensor), (None, None))


def weight_rows(model: ir.Model) -> list[dict]:
    """Per constant tensor of every subgraph: its buffer, bytes, sparsity (share of zero
    elements), distinct values and, once compression exists, coding and compressed bytes."""
    rows, choices = [], codings(model)
    for graph_index, graph in enumerate(model.subgraphs):
        for index, tensor in enumerate(graph.tensors):
            if not ir.is_constant(model, tensor):
                continue
            values = _values(model, tensor)
            coding, compressed = compression_of(choices, tensor)
            rows.append({"subgraph": graph_index, "tensor": index, "name": tensor.name,
                         "dtype": tensor.dtype, "shape": list(tensor.shape),
                         "buffer": tensor.buffer, "bytes": len(model.buffers[tensor.buffer].data),
                         "sparsity": float(np.mean(values == 0)) if values.size else 0.0,
                         "distinct": int(np.unique(values).size),
                         "coding": coding, "compressed_bytes": compressed})
    return rows


def separate_summary(device: bytes) -> dict:
    """Sizes of `--weights separate` for a device model: whole, mini flatbuffer, blob."""
    split = separate(device)
    return {"whole_bytes": len(device), "mini_bytes": len(split.mini),
            "weights_bytes": len(split.weights),
            "saving": round(1 - len(split.mini) / len(device), 4)}
