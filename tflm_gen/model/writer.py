"""Write the IR back to a .tflite flatbuffer ("TFL3"), constant data aligned for in-place use.

Numeric vectors of tensors, their quantisation and operators are written once per distinct
content and shared by every table that holds the same values (flatbuffer offsets may point
to one object from many places, as shared strings do): per-channel zero points (int64, all
zero for int8 weights and shared by a filter and its bias) were two thirds of what a model
keeps besides its buffers, and tensor shapes repeat from one op to the next.
"""

from __future__ import annotations

import flatbuffers
import numpy as np
import tflite

from tflm_gen.model import ir
from tflm_gen.model.flatbuf import aligned_bytes, fields_of, offset_vector, write_table

BUFFER_ALIGNMENT = 16  # TFLM reads weights in place; SIMD kernels want 16-byte alignment
OPERATOR_CODES = {
    name: value for name, value in vars(tflite.BuiltinOperator).items() if not name.startswith("_")
}
PLACEHOLDER_FOR_GREATER_OP_CODES = 127  # deprecated_builtin_code is an int8


def write_model(model: ir.Model) -> bytes:
    """The model as .tflite bytes. Deterministic: the same IR always gives the same bytes."""
    builder = flatbuffers.Builder(1024)
    codes = model.operator_codes()
    code_index = {code: index for index, code in enumerate(codes)}
    # Buffers first: written early they sit at the end of the file, after the small tables.
    buffers = [_buffer(builder, buffer) for buffer in model.buffers]
    shared = _SharedVectors(builder)
    subgraphs = [_subgraph(builder, graph, code_index, shared) for graph in model.subgraphs]
    values = {
        "version": model.version,
        "operator_codes": [_operator_code(code) for code in codes],
        "description": model.description or None,
        "metadata_buffer": model.metadata_buffer or None,
        "metadata": [{"name": name, "buffer": index} for name, index in model.metadata] or None,
        "signature_defs": [_signature(item) for item in model.signature_defs] or None,
    }
    prebuilt = {
        "buffers": offset_vector(builder, buffers),
        "subgraphs": offset_vector(builder, subgraphs),
    }
    root = write_table(builder, tflite.Model, values, prebuilt)
    builder.Finish(root, file_identifier=b"TFL3")
    return bytes(builder.Output())


class _SharedVectors:
    """Writes each distinct numeric vector once and hands out its offset again after."""

    def __init__(self, builder: flatbuffers.Builder):
        self.builder = builder
        self.written: dict[tuple[str, bytes], int] = {}

    def vector(self, values, dtype: str) -> int:
        if isinstance(values, (bytes, bytearray)):
            values = np.frombuffer(values, np.uint8)
        array = np.asarray(values, dtype=dtype).reshape(-1)
        key = (dtype, array.tobytes())
        if key not in self.written:
            self.written[key] = self.builder.CreateNumpyVector(array)
        return self.written[key]

    def table(self, cls: type, values: dict, prebuilt: dict | None = None) -> int:
        """write_table with every numeric vector field taken from (or added to) the pool."""
        prebuilt = dict(prebuilt or {})
        for field in fields_of(cls):
            value = values.get(field.name)
            if field.kind == "vector" and field.name not in prebuilt and value is not None:
                prebuilt[field.name] = self.vector(value, field.dtype)
        return write_table(self.builder, cls, values, prebuilt)


def _buffer(builder: flatbuffers.Builder, buffer: ir.Buffer) -> int:
    prebuilt = {}
    if buffer.data:
        prebuilt["data"] = aligned_bytes(builder, buffer.data, BUFFER_ALIGNMENT)
        return write_table(builder, tflite.Buffer, {}, prebuilt)
    # no bytes but a location: the data lies outside the flatbuffer (tflm_gen.weights)
    located = {"offset": buffer.offset, "size": buffer.size} if buffer.size else {}
    return write_table(builder, tflite.Buffer, located, prebuilt)


def _operator_code(code: tuple[str, str | None, int]) -> dict:
    name, custom_code, version = code
    number = OPERATOR_CODES[name]
    return {
        "deprecated_builtin_code": min(number, PLACEHOLDER_FOR_GREATER_OP_CODES),
        "custom_code": custom_code,
        "version": version,
        "builtin_code": number,
    }


def _signature(item: ir.SignatureDef) -> dict:
    def maps(pairs):
        return [{"name": name, "tensor_index": index} for name, index in pairs]

    return {
        "inputs": maps(item.inputs),
        "outputs": maps(item.outputs),
        "signature_key": item.key,
        "subgraph_index": item.subgraph_index,
    }


def _subgraph(builder: flatbuffers.Builder, graph: ir.SubGraph, code_index: dict,
              shared: _SharedVectors) -> int:
    operators = [_operator(builder, op, code_index, shared) for op in graph.operators]
    tensors = [_tensor(tensor, shared) for tensor in graph.tensors]
    values = {"inputs": graph.inputs, "outputs": graph.outputs, "name": graph.name or None}
    prebuilt = {"operators": offset_vector(builder, operators),
                "tensors": offset_vector(builder, tensors)}
    return write_table(builder, tflite.SubGraph, values, prebuilt)


def _tensor(tensor: ir.Tensor, shared: _SharedVectors) -> int:
    quant = tensor.quantization
    prebuilt = {}
    if quant is not None:  # an empty list reads back as an absent vector: leave it out
        fields = {key: value for key, value in vars(quant).items() if value != []}
        prebuilt["quantization"] = shared.table(tflite.QuantizationParameters, fields)
    values = {
        "shape": tensor.shape,
        "type": tensor.type_code,
        "buffer": tensor.buffer,
        "name": tensor.name or None,  # absent reads back as ""
        "is_variable": tensor.is_variable,
        "shape_signature": tensor.shape_signature,
        "has_rank": tensor.has_rank,
    }
    return shared.table(tflite.Tensor, values, prebuilt)


def _options(builder: flatbuffers.Builder, type_name: str, options: dict) -> dict:
    if type_name == "NONE":
        return {}
    return {"offset": write_table(builder, getattr(tflite, type_name), options)}


def _operator(builder: flatbuffers.Builder, op: ir.Operator, code_index: dict,
              shared: _SharedVectors) -> int:
    prebuilt = {}
    options = _options(builder, op.builtin_options_type, op.builtin_options)
    if options:
        prebuilt["builtin_options"] = options["offset"]
    options2 = _options(builder, op.builtin_options2_type, op.builtin_options2)
    if options2:
        prebuilt["builtin_options2"] = options2["offset"]
    values = {
        "opcode_index": code_index[(op.opcode, op.custom_code, op.version)],
        "inputs": op.inputs,
        "outputs": op.outputs,
        "builtin_options_type": getattr(tflite.BuiltinOptions, op.builtin_options_type),
        "builtin_options2_type": getattr(tflite.BuiltinOptions2, op.builtin_options2_type),
        "custom_options": op.custom_options or None,
        "custom_options_format": op.custom_options_format,
        "mutating_variable_inputs": op.mutating_variable_inputs or None,
        "intermediates": op.intermediates or None,
    }
    return shared.table(tflite.Operator, values, prebuilt)
