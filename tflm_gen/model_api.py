"""The typed model API of a project, `<name>.h` / `<name>.c`: one accessor, element count,
shape and (for quantised tensors) quantise / dequantise helper per input and output, named
after the model's signature or tensor names.  Those names are untrusted text: they become
identifiers through `c_identifier`, and reach comments only through `printable`."""

from __future__ import annotations

import re

import numpy as np

from tflm_gen.assemble import banner, render
from tflm_gen.errors import InputError
from tflm_gen.model import ir
from tflm_gen.resources import resource_dir
from tflm_gen.text import c_identifier, printable

# C element types of the tensor dtypes an input or output can have; others are bytes.
_C_TYPES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t",
            "int32": "int32_t", "uint32": "uint32_t", "int64": "int64_t", "uint64": "uint64_t",
            "float32": "float", "float64": "double", "float16": "uint16_t", "bool": "uint8_t"}
_QUANTISED = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}
_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
_RESERVED_PREFIX = "tflm"  # the runtime's namespace


def check_name(name: str) -> str:
    """`name` when it can prefix the project's files and C symbols; else an InputError."""
    if not _NAME.fullmatch(name) or name.startswith(_RESERVED_PREFIX):
        raise InputError(f"--name {printable(name)!r} is not a project name: use a lowercase "
                         "C identifier of at most 40 characters ([a-z][a-z0-9_]*), not "
                         "starting with 'tflm' (the runtime's prefix)")
    if name in _library_stems():
        raise InputError(f"--name {name!r} is the name of a runtime or kernel file "
                         f"(tflm/{name}.c or .h); choose another")
    return name


def _library_stems() -> set[str]:
    """Stems of every runtime and kernel file a project may hold: `<name>.c/.h` must not
    replace one, in this project or in another whose folder is merged with it."""
    folders = (resource_dir("runtime_c"), resource_dir("kernels_c"))
    return {path.stem for folder in folders for path in folder.rglob("*.[ch]*")}


def default_name(stem: str) -> str:
    """The project name for a model file's stem: the stem made a C identifier."""
    name = c_identifier(stem, "model")
    if name.startswith(_RESERVED_PREFIX) or name in _library_stems():
        name = "m_" + name
    return name[:40].rstrip("_")


def _signature_names(model: ir.Model) -> tuple[dict[int, str], dict[int, str]]:
    """Tensor index -> signature name of the first subgraph's inputs and outputs."""
    for signature in model.signature_defs:
        if signature.subgraph_index == 0:
            inputs = {tensor: name for name, tensor in signature.inputs}
            return inputs, {tensor: name for name, tensor in signature.outputs}
    return {}, {}


MAX_TENSOR_ID = 32  # characters; past it, a name's last path segment is used


def _tensor_identifier(text: str) -> str:
    """A tensor's name as a readable identifier: whole when short; else the last '/'
    segment of its first ';'-joined name (converters join fused ops' names with ';'),
    e.g. "model/conv/BiasAdd;model/conv/Conv2D" -> "biasadd"."""
    identifier = c_identifier(text, "")
    if len(identifier) <= MAX_TENSOR_ID:
        return identifier
    segment = c_identifier(text.split(";")[0].rsplit("/", 1)[-1], "")
    return segment[:MAX_TENSOR_ID].rstrip("_")


def _identifiers(texts: list[str], kind: str) -> list[str]:
    """One identifier per tensor (`_tensor_identifier`), `<kind><i>` when that is empty
    or already taken (by an earlier tensor or by another kind's fallback)."""
    taken: set[str] = set()
    result = []
    for index, text in enumerate(texts):
        identifier = _tensor_identifier(text)
        if not identifier or identifier in taken or re.fullmatch(r"(input|output)\d+", identifier):
            identifier = f"{kind}{index}"
        taken.add(identifier)
        result.append(identifier)
    return result


def _tensor_entry(tensor: ir.Tensor, identifier: str, index: int, source: str) -> dict:
    quantization = tensor.quantization
    scale = quantization.scale if quantization else []
    quantised = tensor.dtype in _QUANTISED and len(scale) == 1
    count = 1
    for dim in tensor.shape:
        count *= dim
    entry = {"id": identifier, "ID": identifier.upper(), "index": index,
             "ctype": _C_TYPES.get(tensor.dtype, "uint8_t"), "dtype": tensor.dtype,
             "shape": list(tensor.shape), "count": count, "quantised": quantised,
             "source": printable(source)[:80].replace("*/", "* /")}
    if quantised:
        entry.update(scale=str(np.float32(scale[0])), zero_point=int(quantization.zero_point[0]),
                     low=_QUANTISED[tensor.dtype][0], high=_QUANTISED[tensor.dtype][1])
    return entry


def _tensors(model: ir.Model, indices: list[int], names: dict[int, str], kind: str) -> list:
    graph = model.subgraphs[0]
    texts = [names.get(t) or graph.tensors[t].name for t in indices]
    identifiers = _identifiers(texts, kind)
    return [_tensor_entry(graph.tensors[t], identifiers[k], k, texts[k])
            for k, t in enumerate(indices)]


def api_values(model: ir.Model, name: str) -> dict:
    """Template values of the typed API for the model's first subgraph."""
    input_names, output_names = _signature_names(model)
    graph = model.subgraphs[0]
    return {"name": name, "NAME": name.upper(),
            "api_inputs": _tensors(model, graph.inputs, input_names, "input"),
            "api_outputs": _tensors(model, graph.outputs, output_names, "output")}


def model_api_files(model: ir.Model, device: bytes, name: str,
                    separate: bool = False) -> dict[str, bytes]:
    """<name>.h / <name>.c: the typed API of the (first) model, by library file name;
    `separate`: init passes the weights array too (`--weights separate`)."""
    values = {"banner": banner(device), **api_values(model, name), "separate": separate}
    return {f"{name}.h": render("common/model_api.h.j2", **values),
            f"{name}.c": render("common/model_api.c.j2", **values)}
