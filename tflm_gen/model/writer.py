"""Write the IR back to a .tflite flatbuffer ("TFL3"), constant data aligned for in-place use."""

from __future__ import annotations

import flatbuffers
import tflite

from tflm_gen.model import ir
from tflm_gen.model.flatbuf import aligned_bytes, offset_vector, write_table

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
    subgraphs = [_subgraph(builder, graph, code_index) for graph in model.subgraphs]
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


def _subgraph(builder: flatbuffers.Builder, graph: ir.SubGraph, code_index: dict) -> int:
    operators = [_operator(builder, op, code_index) for op in graph.operators]
    values = {
        "tensors": [_tensor(tensor) for tensor in graph.tensors],
        "inputs": graph.inputs,
        "outputs": graph.outputs,
        "name": graph.name or None,
    }
    prebuilt = {"operators": offset_vector(builder, operators)}
    return write_table(builder, tflite.SubGraph, values, prebuilt)


def _tensor(tensor: ir.Tensor) -> dict:
    quant = tensor.quantization
    return {
        "shape": tensor.shape,
        "type": tensor.type_code,
        "buffer": tensor.buffer,
        "name": tensor.name,
        "quantization": None if quant is None else vars(quant),
        "is_variable": tensor.is_variable,
        "shape_signature": tensor.shape_signature,
        "has_rank": tensor.has_rank,
    }


def _options(builder: flatbuffers.Builder, type_name: str, options: dict) -> dict:
    if type_name == "NONE":
        return {}
    return {"offset": write_table(builder, getattr(tflite, type_name), options)}


def _operator(builder: flatbuffers.Builder, op: ir.Operator, code_index: dict) -> int:
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
    return write_table(builder, tflite.Operator, values, prebuilt)
