"""Read a .tflite flatbuffer into the IR, checking every offset and index on the way.

Anything that is not a valid TFLite model raises ModelError with the file name and the
reason; nothing else escapes, whatever the bytes.
"""

from __future__ import annotations

from pathlib import Path

import tflite
from tflite.utils import BUILTIN_OPCODE2NAME

from tflm_gen.errors import ModelError, UnsupportedModelError
from tflm_gen.model import ir
from tflm_gen.model.flatbuf import FormatError, Reader, fields_of, read_table
from tflm_gen.model.graph_check import graph_problems

OPTION_NAMES = {
    value: name for name, value in vars(tflite.BuiltinOptions).items() if not name.startswith("_")
}
OPTION2_NAMES = {
    value: name for name, value in vars(tflite.BuiltinOptions2).items() if not name.startswith("_")
}
MAX_FILE_BYTES = 1 << 32  # buffers beyond 2 GB live after the flatbuffer, still below 4 GB


def read_model(source: bytes | bytearray | memoryview | str | Path) -> ir.Model:
    """Reads a model from bytes or a file path; raises ModelError when it is not valid."""
    data, label = _load(source)
    try:
        reader = Reader(data)
        tree = read_table(reader, reader.root(), tflite.Model)
        model = _model(tree, reader)
    except FormatError as error:
        raise ModelError(f"{label}: truncated or corrupt: {error}") from None
    except _Invalid as error:
        raise ModelError(f"{label}: {error}") from None
    except _Unsupported as error:
        raise UnsupportedModelError(f"{label}: {error}") from None
    _validate(model, label)
    return model


class _Invalid(Exception):
    """The flatbuffer is well formed but its content makes no sense."""


class _Unsupported(Exception):
    """A valid model that uses a feature the IR does not represent."""


def _load(source) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), "model"
    path = Path(source)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ModelError(f"{path.name}: file is larger than 4 GB")
        return path.read_bytes(), path.name
    except OSError as error:
        raise ModelError(f"{path}: cannot read: {error.strerror or error}") from None


def _model(tree: dict, reader: Reader) -> ir.Model:
    codes = [_operator_code(code) for code in tree["operator_codes"] or []]
    subgraphs = [_subgraph(graph, codes, reader) for graph in tree["subgraphs"] or []]
    return ir.Model(
        version=tree["version"],
        description=tree["description"] or "",
        subgraphs=subgraphs,
        buffers=[_buffer(buffer, reader) for buffer in tree["buffers"] or []],
        metadata=[(item["name"] or "", item["buffer"]) for item in tree["metadata"] or []],
        signature_defs=[_signature(item) for item in tree["signature_defs"] or []],
        metadata_buffer=tree["metadata_buffer"] or [],
    )


def _operator_code(code: dict) -> tuple[str, str | None, int]:
    # TFLite takes the larger of the two fields: old files only set the deprecated int8 one.
    number = max(code["builtin_code"], code["deprecated_builtin_code"])
    if number not in BUILTIN_OPCODE2NAME:
        raise _Invalid(f"unknown builtin operator code {number}")
    return BUILTIN_OPCODE2NAME[number], code["custom_code"], code["version"]


def _buffer(buffer: dict, reader: Reader) -> ir.Buffer:
    offset, size = buffer["offset"], buffer["size"]
    if offset > 1:  # data stored after the flatbuffer (large models)
        if offset + size > reader.size:
            raise _Invalid(f"buffer data at offset {offset} ({size} bytes) is past end of file")
        return ir.Buffer(bytes(reader.data[offset : offset + size]), offset, size)
    return ir.Buffer(buffer["data"] or b"")


def _signature(item: dict) -> ir.SignatureDef:
    def pairs(maps):
        return [(entry["name"] or "", entry["tensor_index"]) for entry in maps or []]

    return ir.SignatureDef(
        key=item["signature_key"] or "",
        subgraph_index=item["subgraph_index"],
        inputs=pairs(item["inputs"]),
        outputs=pairs(item["outputs"]),
    )


def _subgraph(graph: dict, codes: list, reader: Reader) -> ir.SubGraph:
    return ir.SubGraph(
        name=graph["name"] or "",
        tensors=[_tensor(tensor) for tensor in graph["tensors"] or []],
        inputs=graph["inputs"] or [],
        outputs=graph["outputs"] or [],
        operators=[_operator(op, codes, reader) for op in graph["operators"] or []],
    )


def _tensor(tensor: dict) -> ir.Tensor:
    if tensor["type"] not in ir.DTYPE_BY_CODE:
        raise _Invalid(f"tensor {tensor['name']!r} has unknown type code {tensor['type']}")
    if tensor["sparsity"] is not None:
        raise _Unsupported(f"tensor {tensor['name']!r} is sparse; sparse tensors are unsupported")
    return ir.Tensor(
        name=tensor["name"] or "",
        shape=tensor["shape"] or [],
        dtype=ir.DTYPE_BY_CODE[tensor["type"]].name,
        buffer=tensor["buffer"],
        quantization=_quantization(tensor["quantization"]),
        is_variable=tensor["is_variable"],
        shape_signature=tensor["shape_signature"],
        has_rank=tensor["has_rank"],
    )


def _quantization(quant: dict | None) -> ir.Quantization | None:
    if quant is None:
        return None
    if quant["details_type"] != 0:
        raise _Unsupported("custom quantization details are unsupported")
    return ir.Quantization(
        scale=quant["scale"] or [],
        zero_point=quant["zero_point"] or [],
        quantized_dimension=quant["quantized_dimension"],
        min=quant["min"] or [],
        max=quant["max"] or [],
    )


def _operator(op: dict, codes: list, reader: Reader) -> ir.Operator:
    if op["opcode_index"] >= len(codes):
        raise _Invalid(f"operator uses opcode index {op['opcode_index']} of {len(codes)}")
    name, custom_code, version = codes[op["opcode_index"]]
    options_type, options = _options(op, "builtin_options", OPTION_NAMES, reader)
    options2_type, options2 = _options(op, "builtin_options2", OPTION2_NAMES, reader)
    return ir.Operator(
        opcode=name,
        inputs=op["inputs"] or [],
        outputs=op["outputs"] or [],
        version=version,
        custom_code=custom_code,
        builtin_options_type=options_type,
        builtin_options=options,
        builtin_options2_type=options2_type,
        builtin_options2=options2,
        custom_options=_custom_options(op, reader),
        custom_options_format=op["custom_options_format"],
        intermediates=op["intermediates"] or [],
        mutating_variable_inputs=op["mutating_variable_inputs"] or [],
    )


def _options(op: dict, field: str, names: dict, reader: Reader) -> tuple[str, dict]:
    type_code = op[field + "_type"]
    if type_code not in names:
        raise _Invalid(f"operator has unknown {field} type {type_code}")
    name = names[type_code]
    if name == "NONE":
        return name, {}
    cls = getattr(tflite, name)
    if op[field] is None:  # type given, table absent: TFLite then uses the defaults
        return name, default_options(name)
    return name, read_table(reader, op[field], cls)


def default_options(type_name: str) -> dict:
    """The options dict of a builtin options table with every field at its default."""
    fields = fields_of(getattr(tflite, type_name))
    return {field.name: field.default for field in fields}


def _custom_options(op: dict, reader: Reader) -> bytes:
    offset, size = op["large_custom_options_offset"], op["large_custom_options_size"]
    if offset > 1:
        if offset + size > reader.size:
            raise _Invalid(f"custom options at offset {offset} ({size} bytes) past end of file")
        return bytes(reader.data[offset : offset + size])
    return op["custom_options"] or b""


def _validate(model: ir.Model, label: str) -> None:
    """Cross-checks indices and sizes; raises ModelError naming the first problem."""
    problems = _problems(model)
    first = next(problems, None)
    if first is not None:
        raise ModelError(f"{label}: {first}")


def _problems(model: ir.Model):
    if not model.subgraphs:
        yield "model has no subgraphs"
    for name, index in model.metadata:
        if not 0 <= index < len(model.buffers):
            yield f"metadata {name!r} refers to buffer {index} of {len(model.buffers)}"
    # coded filters, and filters holding their layout stream, differ from their shape's size
    compressed, first = ir.compressed_tensors(model) | ir.filter_layout_tensors(model), 0
    for number, graph in enumerate(model.subgraphs):
        yield from _subgraph_problems(model, graph, f"subgraph {number}", compressed, first)
        first += len(graph.tensors)
    for signature in model.signature_defs:
        if not 0 <= signature.subgraph_index < len(model.subgraphs):
            yield f"signature {signature.key!r} refers to missing subgraph"
    if model.subgraphs:  # every index is in range from here on (else we stopped above)
        yield from graph_problems(model)


def _subgraph_problems(model: ir.Model, graph: ir.SubGraph, where: str, compressed: set[int],
                       first: int):
    """`compressed`: global indices of coded tensors, `first` this subgraph's first one."""
    count = len(graph.tensors)
    for index, tensor in enumerate(graph.tensors):
        yield from _tensor_problems(model, tensor, f"{where} tensor {index} ({tensor.name!r})",
                                    first + index in compressed)
    for kind, indices in (("input", graph.inputs), ("output", graph.outputs)):
        for index in indices:
            if not 0 <= index < count:
                yield f"{where}: graph {kind} refers to tensor {index} of {count}"
    for number, op in enumerate(graph.operators):
        yield from _operator_problems(op, count, f"{where} operator {number} ({op.opcode})")


def _tensor_problems(model: ir.Model, tensor: ir.Tensor, where: str, coded: bool = False):
    if any(dim < 0 for dim in tensor.shape):
        yield f"{where} has a negative dimension in shape {tensor.shape}"
        return
    if not 0 <= tensor.buffer < len(model.buffers):
        yield f"{where} refers to buffer {tensor.buffer} of {len(model.buffers)}"
        return
    have = len(model.buffers[tensor.buffer].data)
    need = ir.tensor_bytes(tensor)
    # Variable-size types (strings) have need 0: their data has its own layout.
    if have and need and have != need and not coded:
        yield f"{where} needs {need} bytes of data but its buffer holds {have}"


def _operator_problems(op: ir.Operator, count: int, where: str):
    for kind, indices, lowest in (
        ("input", op.inputs, -1),
        ("output", op.outputs, 0),
        ("intermediate", op.intermediates, 0),
    ):
        for index in indices:
            if not lowest <= index < count:
                yield f"{where}: {kind} refers to tensor {index} of {count}"
