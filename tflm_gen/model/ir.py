"""The project's own small IR of a TFLite model: plain dataclasses with meaningful equality.

Floats that the file stores as float32 (quantization scales, min/max) are kept as Python
floats rounded to float32, so a model read from a file equals the model that was written.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np
import tflite


@dataclass(frozen=True)
class DType:
    """One TFLite TensorType: its schema code, our name and its storage."""

    code: int  # TensorType value in the schema
    name: str  # lower-case name; equals the numpy dtype name where numpy has one
    bits: int  # bits per element; 0 when the size is not fixed (string, resource, variant)
    numpy: str | None  # numpy dtype name, None when numpy has no such type


def _dtype(name: str, bits: int, numpy: str | None) -> DType:
    """A DType whose code is the schema's TensorType value (never typed here)."""
    return DType(getattr(tflite.TensorType, name.upper()), name, bits, numpy)


# The one table of tensor types; everything else looks types up here.
DTYPES = (
    _dtype("float32", 32, "float32"),
    _dtype("float16", 16, "float16"),
    _dtype("int32", 32, "int32"),
    _dtype("uint8", 8, "uint8"),
    _dtype("int64", 64, "int64"),
    _dtype("string", 0, None),
    _dtype("bool", 8, "bool"),
    _dtype("int16", 16, "int16"),
    _dtype("complex64", 64, "complex64"),
    _dtype("int8", 8, "int8"),
    _dtype("float64", 64, "float64"),
    _dtype("complex128", 128, "complex128"),
    _dtype("uint64", 64, "uint64"),
    _dtype("resource", 0, None),
    _dtype("variant", 0, None),
    _dtype("uint32", 32, "uint32"),
    _dtype("uint16", 16, "uint16"),
    _dtype("int4", 4, None),
    _dtype("bfloat16", 16, None),
)
DTYPE_BY_CODE = {dtype.code: dtype for dtype in DTYPES}
DTYPE_BY_NAME = {dtype.name: dtype for dtype in DTYPES}


def dtype_info(name_or_code: str | int) -> DType:
    """The DType for a name ("int8") or a TensorType code (9); KeyError when unknown."""
    table = DTYPE_BY_CODE if isinstance(name_or_code, int) else DTYPE_BY_NAME
    return table[name_or_code]


def float32_list(values) -> list[float]:
    """Values rounded to float32, as Python floats (how the file stores them)."""
    return [float(value) for value in np.asarray(values, dtype=np.float32).reshape(-1)]


@dataclass
class Quantization:
    """Affine quantization: real = scale * (q - zero_point), per tensor or per channel."""

    scale: list[float] = field(default_factory=list)
    zero_point: list[int] = field(default_factory=list)
    quantized_dimension: int = 0
    min: list[float] = field(default_factory=list)
    max: list[float] = field(default_factory=list)

    def __post_init__(self):
        self.scale = float32_list(self.scale)
        self.min = float32_list(self.min)
        self.max = float32_list(self.max)
        self.zero_point = [int(value) for value in self.zero_point]

    def is_empty(self) -> bool:
        return not (self.scale or self.zero_point or self.min or self.max)


@dataclass
class Tensor:
    name: str
    shape: list[int]
    dtype: str  # a name from DTYPES, e.g. "int8"
    buffer: int = 0  # index into Model.buffers; buffer 0 is the empty sentinel
    quantization: Quantization | None = None
    is_variable: bool = False
    shape_signature: list[int] | None = None  # -1 marks a dynamic dimension
    has_rank: bool = False

    def __post_init__(self):
        self.shape = [int(dim) for dim in self.shape]
        if self.quantization is not None and self.quantization.is_empty():
            self.quantization = None

    @property
    def type_code(self) -> int:
        """The TFLite TensorType value of `dtype`."""
        return dtype_info(self.dtype).code


@dataclass
class Buffer:
    """Raw bytes of a constant; empty for buffers of activations.

    `offset` and `size` say where the data lay outside the flatbuffer in the source file
    (models over 2 GB); `data` always holds the bytes, and equality ignores the location.
    """

    data: bytes = b""
    offset: int = field(default=0, compare=False)
    size: int = field(default=0, compare=False)


@dataclass
class Operator:
    opcode: str  # builtin op name ("CONV_2D"), or "CUSTOM" with custom_code set
    inputs: list[int]  # tensor indices; -1 marks an omitted optional input
    outputs: list[int]
    version: int = 1
    custom_code: str | None = None
    builtin_options_type: str = "NONE"  # BuiltinOptions union member, e.g. "Conv2DOptions"
    builtin_options: dict = field(default_factory=dict)  # snake_case field -> value
    builtin_options2_type: str = "NONE"  # BuiltinOptions2 union member (StableHLO ops)
    builtin_options2: dict = field(default_factory=dict)
    custom_options: bytes = b""
    custom_options_format: int = 0
    intermediates: list[int] = field(default_factory=list)
    mutating_variable_inputs: list[bool] = field(default_factory=list)


@dataclass
class SubGraph:
    name: str = ""
    tensors: list[Tensor] = field(default_factory=list)
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    operators: list[Operator] = field(default_factory=list)


@dataclass
class SignatureDef:
    key: str
    subgraph_index: int = 0
    inputs: list[tuple[str, int]] = field(default_factory=list)  # (name, tensor index)
    outputs: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class Model:
    """A whole model. Operator codes are not stored: each Operator names its op."""

    version: int = 3
    description: str = ""
    subgraphs: list[SubGraph] = field(default_factory=list)
    buffers: list[Buffer] = field(default_factory=lambda: [Buffer()])
    metadata: list[tuple[str, int]] = field(default_factory=list)  # (name, buffer index)
    signature_defs: list[SignatureDef] = field(default_factory=list)
    metadata_buffer: list[int] = field(default_factory=list)  # deprecated, kept for round trip

    @property
    def subgraph(self) -> SubGraph:
        """The main subgraph (index 0), the one an interpreter runs."""
        return self.subgraphs[0]

    def with_metadata_words(self, name: str, words: list[int] | None) -> Model:
        """A copy whose metadata `name` holds `words` (little-endian int32), replacing an
        older entry of that name; without it when `words` is None."""
        result = copy.deepcopy(self)
        result.metadata = [m for m in result.metadata if m[0] != name]
        if words is not None:
            result.buffers.append(Buffer(np.asarray(words, dtype="<i4").tobytes()))
            result.metadata.append((name, len(result.buffers) - 1))
        return result

    def operator_codes(self) -> list[tuple[str, str | None, int]]:
        """Distinct (op name, custom code, version) in order of first use, as written."""
        codes: dict[tuple, None] = {}
        for subgraph in self.subgraphs:
            for op in subgraph.operators:
                codes.setdefault((op.opcode, op.custom_code, op.version))
        return list(codes)


def element_count(tensor: Tensor) -> int:
    return math.prod(tensor.shape)


def tensor_bytes(tensor: Tensor) -> int:
    """Bytes the tensor's data takes (int4 packs two per byte); 0 for variable-size types."""
    bits = dtype_info(tensor.dtype).bits
    return (element_count(tensor) * bits + 7) // 8


def is_constant(model: Model, tensor: Tensor) -> bool:
    """True when the tensor's buffer holds data (weights, biases, shapes)."""
    return 0 < tensor.buffer < len(model.buffers) and len(model.buffers[tensor.buffer].data) > 0


def tensor_data(model: Model, tensor: Tensor) -> np.ndarray:
    """A constant tensor's data as a numpy array of its shape (int4 unpacked to int8)."""
    data = model.buffers[tensor.buffer].data
    info = dtype_info(tensor.dtype)
    if info.name == "int4":
        packed = np.frombuffer(data, np.uint8)
        low, high = (packed & 0x0F).astype(np.int8), (packed >> 4).astype(np.int8)
        values = np.stack([low, high], axis=-1).reshape(-1)[: element_count(tensor)]
        return np.where(values > 7, values - 16, values).astype(np.int8).reshape(tensor.shape)
    if info.numpy is None:
        raise ValueError(f"tensor {tensor.name!r}: numpy cannot hold dtype {info.name}")
    array = np.frombuffer(data, np.dtype(info.numpy).newbyteorder("<"), element_count(tensor))
    return array.reshape(tensor.shape)


COMPRESS_METADATA = "tflm_gen.compress"  # tflm_gen/compress.py


LAYOUT_METADATA = "tflm_gen.layout"  # tflm_gen/layout.py
# Layout record kinds whose stream the node's filter (input 1) holds instead of its bytes.
FILTER_LAYOUT_KINDS = (40, 41, 42, 71, 81)  # layout.IN_FILTER's kinds


def metadata_words(model: Model, name: str) -> np.ndarray | None:
    """The little-endian int32 words of metadata `name` (a trailing partial word dropped),
    None when the model has none or it names no buffer."""
    for entry, index in model.metadata:
        if entry == name and 0 <= index < len(model.buffers):
            data = model.buffers[index].data
            return np.frombuffer(data[: len(data) // 4 * 4], "<i4")
    return None


def layout_records(model: Model) -> list[list[int] | None]:
    """Each operator's layout record (kind first), over all subgraphs in order, None where
    it has none; all None without the metadata or when its header does not fit the model.
    The words (tflm_gen/layout.py): version 1, operator count, per operator the word
    holding its record's length (0: none), then each record: length, kind, fields."""
    count = sum(len(graph.operators) for graph in model.subgraphs)
    words = metadata_words(model, LAYOUT_METADATA)
    if words is None or len(words) < 2 + count or words[0] != 1 or words[1] != count:
        return [None] * count
    records: list[list[int] | None] = []
    for at in words[2 : 2 + count].tolist():
        length = int(words[at]) if 0 < at < len(words) else 0
        fits = 0 < length <= len(words) - at - 1
        records.append(words[at + 1 : at + 1 + length].tolist() if fits else None)
    return records


def filter_layout_tensors(model: Model) -> set[int]:
    """Global indices of the filters whose buffer holds their node's layout stream (a
    record of FILTER_LAYOUT_KINDS) rather than the tensor."""
    ops = [(first, op) for first, graph in zip(
        np.cumsum([0] + [len(g.tensors) for g in model.subgraphs]).tolist(), model.subgraphs)
        for op in graph.operators]
    return {first + op.inputs[1] for (first, op), record in zip(ops, layout_records(model))
            if record and record[0] in FILTER_LAYOUT_KINDS and len(op.inputs) > 1
            and op.inputs[1] >= 0}


def compressed_tensors(model: Model) -> set[int]:
    """Global indices (over all subgraphs in order) of the tensors whose buffer holds a
    coded stream rather than the tensor (metadata words: version 1, count, indices)."""
    words = metadata_words(model, COMPRESS_METADATA)
    if words is None or len(words) < 2 or words[0] != 1:
        return set()
    return set(words[2 : 2 + max(0, int(words[1]))].tolist())
