"""read -> write -> read gives an equal IR for every corpus model, and the same TFLM outputs."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import corpus_models

from tflm_gen.model import ir
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import BUFFER_ALIGNMENT, write_model

CORPUS = corpus_models() + [f"seanet/{name}" for name in corpus_models("seanet")]
ARENA_BYTES = 4 << 20  # the runtime's default guess (10x the file) is too small for some


def random_inputs(model: ir.Model, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for index in model.subgraph.inputs:
        tensor = model.subgraph.tensors[index]
        if tensor.dtype.startswith("float"):
            arrays.append(rng.normal(size=tensor.shape).astype(tensor.dtype))
        else:
            info = np.iinfo(tensor.dtype)
            values = rng.integers(info.min, info.max, tensor.shape, endpoint=True)
            arrays.append(values.astype(tensor.dtype))
    return arrays


def run_tflm(runtime, data: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    interpreter = runtime.Interpreter.from_bytes(data, arena_size=ARENA_BYTES)
    for index, value in enumerate(inputs):
        interpreter.set_input(value, index)
    interpreter.invoke()
    count = len(read_model(data).subgraph.outputs)
    return [interpreter.get_output(index) for index in range(count)]


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS)
def test_roundtrip_ir_equal(corpus_dir, name):
    model = read_model(corpus_dir / name)
    rewritten = write_model(model)
    assert read_model(rewritten) == model
    assert write_model(read_model(rewritten)) == rewritten  # deterministic


# Models TFLM refuses, with the reason it prints; the rewritten file must be refused alike.
TFLM_REFUSES = {"kws_ref_model_float32.tflite": "Hybrid models are not supported"}


@pytest.mark.corpus
@pytest.mark.parametrize("name", CORPUS)
def test_roundtrip_same_tflm_outputs(corpus_dir, name, capfd):
    from tflite_micro.python.tflite_micro import runtime
    original = (corpus_dir / name).read_bytes()
    model = read_model(original)
    inputs = random_inputs(model)
    if name in TFLM_REFUSES:
        for data in (original, write_model(model)):
            with pytest.raises(RuntimeError, match="failed to allocate tensors"):
                run_tflm(runtime, data, inputs)
            assert TFLM_REFUSES[name] in capfd.readouterr().err
        return
    expected = run_tflm(runtime, original, inputs)
    actual = run_tflm(runtime, write_model(model), inputs)
    assert len(expected) == len(actual) == len(model.subgraph.outputs) > 0
    for want, got in zip(expected, actual, strict=True):
        assert want.dtype == got.dtype
        np.testing.assert_array_equal(got, want, strict=True)


def test_constant_buffers_are_aligned():
    model = ir.Model(subgraphs=[ir.SubGraph()], buffers=[ir.Buffer(), ir.Buffer(b"\x01" * 3)])
    model.buffers.append(ir.Buffer(bytes(range(7))))
    data = write_model(model)
    for buffer in model.buffers[1:]:
        position = data.find(buffer.data)
        assert position % BUFFER_ALIGNMENT == 0
        assert int.from_bytes(data[position - 4 : position], "little") == len(buffer.data)


def test_options_of_every_type_roundtrip():
    """Every BuiltinOptions table survives write + read with non-default values."""
    import tflite

    from tflm_gen.model.flatbuf import fields_of
    from tflm_gen.model.reader import OPTION_NAMES

    graph = ir.SubGraph(tensors=[ir.Tensor("t0", [1], "float32")], inputs=[0])
    for name in sorted(set(OPTION_NAMES.values()) - {"NONE"}):
        options = {field.name: _sample(field) for field in fields_of(getattr(tflite, name))}
        count = len(graph.tensors)  # a chain: each op reads the previous op's output
        graph.tensors.append(ir.Tensor(f"t{count}", [1], "float32"))
        graph.operators.append(ir.Operator("CUSTOM", [count - 1], [count], 1, "x", name, options))
    graph.outputs = [len(graph.tensors) - 1]
    model = ir.Model(subgraphs=[graph])
    assert read_model(write_model(model)) == model


def _sample(field):
    if field.kind == "scalar":
        return {"bool": True, "float32": 0.5, "float64": 0.25}.get(field.dtype, 1)
    if field.kind == "vector":
        return b"\x01\x02" if field.dtype == "uint8" else [1, 2]
    if field.kind == "string":
        return "name"
    return [] if field.kind.endswith("vector") else None
