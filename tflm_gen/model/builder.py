"""Build small models op by op from numpy arrays (tests, examples).

    b = ModelBuilder()
    x = b.input("x", [1, 4], "int8", quantization=Quantization([0.1], [-3]))
    w = b.constant("w", weights_int8, quantization=weight_quant)
    y = b.add_op("FULLY_CONNECTED", [x, w, bias], [1, 8], "int8",
                 quantization=out_quant, options={"fused_activation_function": "RELU"})
    b.output(y)
    tflite_bytes = b.build()

Tensors are named by index (the int each call returns). Options start from the schema
defaults; enum fields accept names ("RELU", "SAME"). Op versions follow TFLite's versioning
for the dtype, which tflite-micro accepts.

Control flow: `body = b.subgraph("body")` adds a subgraph that shares the model's buffers
and returns a builder of its own (`body.index` is what IF, WHILE and CALL_ONCE options
name); `b.operator(...)` appends an op with any number of existing output tensors (WHILE's
several outputs, ASSIGN_VARIABLE's none).
"""

from __future__ import annotations

import numpy as np
import tflite

from tflm_gen.model import ir
from tflm_gen.model.flatbuf import fields_of
from tflm_gen.model.reader import default_options
from tflm_gen.model.writer import write_model
from tflm_gen.op_descriptors import describe

# Enum-valued option fields -> the schema enum whose member names they accept.
OPTION_ENUMS = {
    "fused_activation_function": tflite.ActivationFunctionType,
    "padding": tflite.Padding,
    "weights_format": tflite.FullyConnectedOptionsWeightsFormat,
}
def options_type(opcode: str) -> str:
    """The BuiltinOptions union member an op uses ("NONE" when it takes no options)."""
    return describe(opcode).options_type


def make_options(type_name: str, values: dict) -> dict:
    """Schema defaults updated with `values`; enum names resolved, floats rounded to float32."""
    if type_name == "NONE":
        if values:
            raise ValueError(f"options given to an op without options: {sorted(values)}")
        return {}
    options = default_options(type_name)
    unknown = set(values) - set(options)
    if unknown:
        raise ValueError(f"{type_name} has no fields {sorted(unknown)}; fields: {sorted(options)}")
    kinds = {field.name: field.dtype for field in fields_of(getattr(tflite, type_name))}
    for name, value in values.items():
        if isinstance(value, str) and name in OPTION_ENUMS:
            value = getattr(OPTION_ENUMS[name], value)
        if kinds[name].startswith("float"):
            value = float(np.float32(value))
        options[name] = value
    return options


def _quantization(quantization, scale, zero_point) -> ir.Quantization | None:
    if scale is not None:
        return ir.Quantization([scale], [zero_point or 0])
    return quantization


class ModelBuilder:
    """Collects tensors, buffers and operators of one subgraph; `build()` gives .tflite bytes."""

    def __init__(self, description: str = "tflm-gen ModelBuilder", _model: ir.Model | None = None,
                 _name: str = "main"):
        self.graph = ir.SubGraph(name=_name)
        self.model = _model or ir.Model(description=description, subgraphs=[])
        self.model.subgraphs.append(self.graph)
        self.index = len(self.model.subgraphs) - 1

    def subgraph(self, name: str) -> ModelBuilder:
        """A builder for a new subgraph of the same model (buffers are shared)."""
        return ModelBuilder(_model=self.model, _name=name)

    def tensor(self, name, shape, dtype, quantization=None, scale=None, zero_point=None) -> int:
        """Adds an activation tensor; returns its index."""
        quant = _quantization(quantization, scale, zero_point)
        self.graph.tensors.append(ir.Tensor(name, list(shape), dtype, 0, quant))
        return len(self.graph.tensors) - 1

    def input(self, name, shape, dtype, quantization=None, scale=None, zero_point=None) -> int:
        """Adds a graph input tensor."""
        index = self.tensor(name, shape, dtype, quantization, scale, zero_point)
        self.graph.inputs.append(index)
        return index

    def constant(self, name, array, dtype=None, quantization=None) -> int:
        """Adds a constant tensor holding `array` (dtype: the array's unless given)."""
        array = np.asarray(array, dtype=dtype)
        if array.dtype.name not in ir.DTYPE_BY_NAME:
            raise ValueError(f"constant {name!r}: unsupported dtype {array.dtype.name}")
        data = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
        self.model.buffers.append(ir.Buffer(data))
        buffer = len(self.model.buffers) - 1
        tensor = ir.Tensor(name, list(array.shape), array.dtype.name, buffer, quantization)
        self.graph.tensors.append(tensor)
        return len(self.graph.tensors) - 1

    def add_op(
        self,
        opcode,
        inputs,
        out_shape,
        out_dtype,
        quantization=None,
        scale=None,
        zero_point=None,
        options=None,
        version=None,
        name=None,
    ) -> int:
        """Appends an op writing a new tensor of `out_shape`; returns the output's index."""
        output = self.tensor(
            name or f"{opcode.lower()}_{len(self.graph.operators)}",
            out_shape,
            out_dtype,
            quantization,
            scale,
            zero_point,
        )
        first = next((index for index in inputs if index >= 0), output)
        type_name = options_type(opcode)
        self.graph.operators.append(
            ir.Operator(
                opcode=opcode,
                inputs=list(inputs),
                outputs=[output],
                version=version or describe(opcode).version(self.graph.tensors[first].dtype),
                builtin_options_type=type_name,
                builtin_options=make_options(type_name, options or {}),
            )
        )
        return output

    def operator(self, opcode, inputs, outputs, options=None, version=None) -> None:
        """Appends an op writing existing tensors `outputs` (any number of them)."""
        first = next((index for index in [*inputs, *outputs] if index >= 0), None)
        dtype = self.graph.tensors[first].dtype if first is not None else ""
        type_name = options_type(opcode)
        self.graph.operators.append(ir.Operator(
            opcode=opcode, inputs=list(inputs), outputs=list(outputs),
            version=version or describe(opcode).version(dtype),
            builtin_options_type=type_name,
            builtin_options=make_options(type_name, options or {}),
        ))

    def inputs(self, *indices: int) -> None:
        """Marks existing tensors as inputs of this subgraph."""
        self.graph.inputs.extend(indices)

    def output(self, *indices: int) -> None:
        self.graph.outputs.extend(indices)

    def build(self) -> bytes:
        return write_model(self.model)
