"""A bounds-checked flatbuffer reader and a generic writer driven by the `tflite` schema classes.

The `tflite` package's generated readers trust every offset. We learn each table's fields
(vtable slot, kind, element type, default) once by calling its generated accessors on a probe
object that records what they touch, then read the real bytes through `Reader`, which checks
every offset, vector length and string against the buffer before using it. Writing uses the
generated `Start` / `Add<Field>` / `End` functions of the same modules.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import struct
from dataclasses import dataclass

import flatbuffers
import numpy as np
from flatbuffers import number_types

# Flatbuffer scalar flags -> numpy dtype name.
_FLAG_DTYPES = {
    number_types.BoolFlags: "bool",
    number_types.Uint8Flags: "uint8",
    number_types.Uint16Flags: "uint16",
    number_types.Uint32Flags: "uint32",
    number_types.Uint64Flags: "uint64",
    number_types.Int8Flags: "int8",
    number_types.Int16Flags: "int16",
    number_types.Int32Flags: "int32",
    number_types.Int64Flags: "int64",
    number_types.Float32Flags: "float32",
    number_types.Float64Flags: "float64",
}

# Accessor names the generator adds beside the field accessors.
_HELPER_SUFFIXES = ("AsNumpy", "Length", "IsNone", "BufferHasIdentifier")
_HELPER_NAMES = {"Init", "GetRootAs"}


class FormatError(Exception):
    """The bytes break the flatbuffer format; the message says where."""


@dataclass(frozen=True)
class Field:
    """One field of a schema table, learned from the generated accessor."""

    name: str  # snake_case, e.g. "fused_activation_function"
    accessor: str  # CamelCase name of the generated accessor, e.g. "FusedActivationFunction"
    vtable_offset: int  # byte offset of the field's entry in the vtable (4 + 2 * slot)
    kind: str  # scalar | vector | string | string_vector | table | table_vector | union
    dtype: str = ""  # numpy dtype name of a scalar or vector element
    default: object = None  # value of an absent scalar
    table: type | None = None  # generated class of a (vector of) table(s)


def snake_case(name: str) -> str:
    """CamelCase accessor name -> snake_case field name (DilationWFactor -> dilation_w_factor)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


class _Probe:
    """Stands in for a flatbuffers Table and records which reads an accessor makes."""

    def __init__(self, present: bool):
        self.present = present
        self.calls: list[tuple] = []
        self.Bytes = bytearray(16)
        self.Pos = 0

    def Offset(self, vtable_offset):
        self.calls.append(("offset", vtable_offset))
        return 4 if self.present else 0

    def Get(self, flags, offset):
        self.calls.append(("get", flags))
        return 0

    def Vector(self, offset):
        self.calls.append(("vector",))
        return 0

    def VectorLen(self, offset):
        return 0

    def String(self, offset):
        self.calls.append(("string",))
        return b""

    def Indirect(self, offset):
        self.calls.append(("indirect",))
        return 0

    def Union(self, table, offset):
        self.calls.append(("union",))


def _call_probe(cls: type, accessor: str, present: bool):
    instance = cls.__new__(cls)
    probe = _Probe(present)
    instance._tab = probe
    method = getattr(instance, accessor)
    takes_index = len(inspect.signature(method).parameters) == 1
    result = method(0) if takes_index else method()
    return probe.calls, result, takes_index


def _probe_field(cls: type, accessor: str) -> Field:
    calls, result, takes_index = _call_probe(cls, accessor, present=True)
    kinds = [call[0] for call in calls[1:]]
    flags = next((call[1] for call in calls if call[0] == "get"), None)
    dtype = _FLAG_DTYPES.get(flags, "")
    table = type(result) if "indirect" in kinds else None
    if "union" in kinds:
        kind = "union"
    elif takes_index:
        kind = {"string": "string_vector", "indirect": "table_vector"}.get(kinds[-1], "vector")
    elif kinds == ["string"]:
        kind = "string"
    elif kinds == ["indirect"]:
        kind = "table"
    else:
        kind = "scalar"
    default = _call_probe(cls, accessor, present=False)[1] if kind == "scalar" else None
    name = snake_case(accessor)
    return Field(name, accessor, calls[0][1], kind, dtype, default, table)


def _is_accessor(name: str, value) -> bool:
    if name.startswith("_") or not inspect.isfunction(value) or name in _HELPER_NAMES:
        return False
    return not name.startswith("GetRootAs") and not name.endswith(_HELPER_SUFFIXES)


@functools.cache
def fields_of(cls: type) -> tuple[Field, ...]:
    """The fields of a generated table class, in vtable order."""
    accessors = [name for name, value in vars(cls).items() if _is_accessor(name, value)]
    fields = [_probe_field(cls, name) for name in accessors]
    return tuple(sorted(fields, key=lambda field: field.vtable_offset))


class Reader:
    """Reads tables from a flatbuffer, checking every position against the buffer's end."""

    def __init__(self, data: bytes):
        self.data = data
        self.size = len(data)
        # Tables and vectors may be shared by offsets; these budgets stop a small file from
        # expanding into an enormous tree. A real writer gives every table at least 4 bytes.
        self.tables_left = self.size // 4 + 64
        self.bytes_left = 8 * self.size + (1 << 20)

    def _need(self, position: int, length: int, what: str) -> None:
        if position < 0 or length < 0 or position + length > self.size:
            raise FormatError(
                f"{what} at offset {position} ({length} bytes) extends past end of file "
                f"({self.size} bytes)"
            )

    def scalar(self, position: int, dtype: str, what: str = "value"):
        fmt = np.dtype(dtype)
        self._need(position, fmt.itemsize, what)
        return np.frombuffer(self.data, fmt, 1, position)[0].item()

    def uoffset(self, position: int, what: str) -> int:
        return position + struct.unpack_from("<I", self.data, self._checked(position, 4, what))[0]

    def _checked(self, position: int, length: int, what: str) -> int:
        self._need(position, length, what)
        return position

    def root(self) -> int:
        """Position of the root table; checks the "TFL3" identifier."""
        self._need(0, 8, "file header")
        if self.data[4:8] != b"TFL3":
            found = bytes(self.data[4:8])
            raise FormatError(f'file identifier is {found!r}, not "TFL3" (not a TFLite model)')
        return self.uoffset(0, "root table offset")

    def vtable(self, table: int) -> tuple[int, int, int]:
        """(vtable position, vtable size, table size) of the table at `table`."""
        soffset = struct.unpack_from("<i", self.data, self._checked(table, 4, "table"))[0]
        vtable = table - soffset
        self._need(vtable, 4, "vtable")
        vtable_size, table_size = struct.unpack_from("<HH", self.data, vtable)
        if vtable_size < 4 or vtable_size % 2:
            raise FormatError(f"vtable at offset {vtable} has invalid size {vtable_size}")
        self._need(vtable, vtable_size, "vtable")
        self._need(table, max(table_size, 4), "table")
        return vtable, vtable_size, table_size

    def charge(self, tables: int, length: int) -> None:
        self.tables_left -= tables
        self.bytes_left -= length
        if self.tables_left < 0 or self.bytes_left < 0:
            raise FormatError("offsets point to shared data so often that decoding would explode")

    def field_position(self, table: int, layout: tuple, field: Field) -> int | None:
        """Absolute position of a field's value, or None when the field is absent."""
        vtable, vtable_size, table_size = layout
        if field.vtable_offset + 2 > vtable_size:
            return None
        offset = struct.unpack_from("<H", self.data, vtable + field.vtable_offset)[0]
        if offset == 0:
            return None
        width = np.dtype(field.dtype).itemsize if field.kind == "scalar" else 4
        if offset + width > table_size:
            raise FormatError(f"field {field.name} of table at offset {table} lies outside it")
        return table + offset

    def vector(self, position: int, element_size: int, what: str) -> tuple[int, int]:
        """(start of elements, element count) of the vector referenced at `position`."""
        start = self.uoffset(position, what)
        count = struct.unpack_from("<I", self.data, self._checked(start, 4, what))[0]
        self._need(start + 4, count * element_size, what)
        self.charge(0, count * element_size)
        return start + 4, count

    def numbers(self, position: int, dtype: str, what: str) -> np.ndarray:
        fmt = np.dtype(dtype).newbyteorder("<")
        start, count = self.vector(position, fmt.itemsize, what)
        return np.frombuffer(self.data, fmt, count, start)

    def raw_bytes(self, position: int, what: str) -> bytes:
        start, count = self.vector(position, 1, what)
        return bytes(self.data[start : start + count])

    def string(self, position: int, what: str) -> str:
        return self.raw_bytes(position, what).decode("utf-8", errors="replace")

    def table(self, position: int, what: str) -> int:
        table = self.uoffset(position, what)
        self.vtable(table)
        return table

    def table_vector(self, position: int, what: str) -> list[int]:
        start, count = self.vector(position, 4, what)
        return [self.table(start + 4 * index, what) for index in range(count)]


def read_table(reader: Reader, table: int, cls: type) -> dict:
    """Every field of the table at `table` as a dict; absent fields read as defaults.

    Vectors of uint8 become bytes, other vectors of numbers lists, nested tables dicts (None when absent); a union field
    gives the position of its table (None when absent) for the caller to decode.
    """
    reader.charge(1, 0)
    layout = reader.vtable(table)
    values = {}
    for field in fields_of(cls):
        position = reader.field_position(table, layout, field)
        values[field.name] = _read_field(reader, position, field, f"{cls.__name__}.{field.name}")
    return values


def _read_field(reader: Reader, position: int | None, field: Field, what: str):
    if position is None:
        return field.default if field.kind == "scalar" else None
    if field.kind == "scalar":
        return reader.scalar(position, field.dtype, what)
    if field.kind == "vector" and field.dtype == "uint8":
        return reader.raw_bytes(position, what)
    if field.kind == "vector":
        return reader.numbers(position, field.dtype, what).tolist()
    if field.kind == "string":
        return reader.string(position, what)
    if field.kind == "string_vector":
        start, count = reader.vector(position, 4, what)
        return [reader.string(start + 4 * index, what) for index in range(count)]
    if field.kind == "table":
        return read_table(reader, reader.table(position, what), field.table)
    if field.kind == "table_vector":
        tables = reader.table_vector(position, what)
        return [read_table(reader, table, field.table) for table in tables]
    return reader.table(position, what)  # union


def _module(cls: type):
    return importlib.import_module(cls.__module__)


def write_table(builder: flatbuffers.Builder, cls: type, values: dict, prebuilt=None) -> int:
    """Writes a table of generated class `cls` from a dict of snake_case field values.

    Fields that are missing or None are left absent; `prebuilt` maps field names to offsets
    of objects the caller already wrote (unions, specially aligned vectors).
    """
    module = _module(cls)
    offsets = dict(prebuilt or {})
    fields = fields_of(cls)
    for field in fields:
        value = values.get(field.name)
        if field.kind != "scalar" and field.name not in offsets and value is not None:
            offsets[field.name] = _write_child(builder, field, value)
    module.Start(builder)
    for field in fields:
        add = getattr(module, "Add" + field.accessor)
        if field.name in offsets:
            add(builder, offsets[field.name])
        elif field.kind == "scalar" and values.get(field.name) is not None:
            add(builder, _scalar(values[field.name], field.dtype))
    return module.End(builder)


def _scalar(value, dtype: str):
    if dtype == "bool":
        return bool(value)
    if dtype.startswith("float"):
        return float(value)
    return int(value)


def _write_child(builder: flatbuffers.Builder, field: Field, value) -> int:
    if field.kind == "vector":
        if isinstance(value, (bytes, bytearray)):
            value = np.frombuffer(value, np.uint8)
        return builder.CreateNumpyVector(np.asarray(value, dtype=field.dtype).reshape(-1))
    if field.kind == "string":
        return builder.CreateString(value)
    if field.kind == "table":
        return write_table(builder, field.table, value)
    if field.kind == "string_vector":
        children = [builder.CreateString(item) for item in value]
    elif field.kind == "table_vector":
        children = [write_table(builder, field.table, item) for item in value]
    else:
        raise TypeError(f"field {field.name}: write unions through `prebuilt`")
    return offset_vector(builder, children)


def offset_vector(builder: flatbuffers.Builder, offsets: list[int]) -> int:
    """A vector of offsets to objects already written."""
    builder.StartVector(4, len(offsets), 4)
    for offset in reversed(offsets):
        builder.PrependUOffsetTRelative(offset)
    return builder.EndVector()


def aligned_bytes(builder: flatbuffers.Builder, data: bytes, alignment: int) -> int:
    """A [ubyte] vector whose first element is aligned to `alignment` in the final buffer."""
    builder.StartVector(1, len(data), alignment)
    builder.head -= len(data)
    builder.Bytes[builder.head : builder.head + len(data)] = data
    return builder.EndVector()
