"""The C loader refuses invalid graphs with one status code per rule and says why in the
log (runtime_c/tflm_graph_check.c, tflm_model.c).  The crafted models go straight to
tflm_interpreter_init in a host-built library: no Python check runs in front of it."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from conftest import need_tool

from tflm_gen import host
from tflm_gen.assemble import resolver_files
from tflm_gen.kernels import kernel_files, runtime_files
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.status import status_code, status_name, status_text

OPS = ["ADD", "FILL", "FULLY_CONNECTED"]
ARENA_BYTES = 1 << 16


@pytest.fixture(scope="module")
def library():
    need_tool("gcc")
    sources = {**runtime_files(()), **kernel_files(OPS, ())}
    files = {name: path.read_bytes() for name, path in sorted(sources.items())}
    files.update(resolver_files(OPS, b""))
    return host._load(str(host.build_library(files)))


def init_status(library, model: bytes, misalign: int = 0) -> str:
    """Status name of tflm_interpreter_init on the bytes, placed `misalign` bytes past an
    8-byte boundary."""
    ffi = host._ffi
    buffer = ffi.new("uint8_t[]", len(model) + 16)
    start = ffi.cast("uint8_t *", buffer) + (-int(ffi.cast("uintptr_t", buffer)) % 8) + misalign
    ffi.memmove(start, model, len(model))
    state = ffi.new("uint64_t[]", (library.tflm_host_interpreter_bytes() + 7) // 8)
    arena = ffi.new("uint64_t[]", ARENA_BYTES // 8)
    status = library.tflm_interpreter_init(state, start, len(model),
                                           library.tflm_host_resolver(), arena, ARENA_BYTES)
    return status_name(status)


@dataclass
class FloatAdd:
    """y = x + c, float32 [1, 4]: the valid base the cases break (tensor indices)."""

    b: ModelBuilder
    x: int
    c: int
    y: int


def float_add() -> FloatAdd:
    b = ModelBuilder()
    x = b.input("x", [1, 4], "float32")
    c = b.constant("c", np.arange(4, dtype=np.float32).reshape(1, 4))
    y = b.add_op("ADD", [x, c], [1, 4], "float32")
    b.output(y)
    return FloatAdd(b, x, c, y)


def int8_add(scale: float) -> bytes:
    b = ModelBuilder()
    x = b.input("x", [1, 4], "int8", scale=0.5, zero_point=0)
    c = b.constant("c", np.ones([1, 4], np.int8), quantization=ir.Quantization([0.5], [0]))
    b.output(b.add_op("ADD", [x, c], [1, 4], "int8", scale=scale, zero_point=0))
    return b.build()


def test_valid_graph_is_accepted(library):
    assert init_status(library, float_add().b.build()) == "TFLM_OK"


def test_variable_and_absent_optional_inputs_count_as_written(library):
    b = ModelBuilder()
    x = b.input("x", [1, 4], "float32")
    w = b.constant("w", np.ones([3, 4], np.float32))
    y = b.add_op("FULLY_CONNECTED", [x, w, -1], [1, 3], "float32")
    state = b.tensor("state", [1, 3], "float32")
    b.graph.tensors[state].is_variable = True
    b.output(b.add_op("ADD", [y, state], [1, 3], "float32"))
    assert init_status(library, b.build()) == "TFLM_OK"


def _unwritten_input():
    g = float_add()
    g.b.graph.operators[0].inputs = [g.x, g.b.tensor("never_written", [1, 4], "float32")]
    return g.b


def _self_loop():
    g = float_add()
    g.b.graph.operators[0].inputs = [g.x, g.y]
    return g.b


def _wrong_order():
    g = float_add()
    g.b.output(g.b.add_op("ADD", [g.y, g.c], [1, 4], "float32"))
    g.b.graph.operators.reverse()
    return g.b


def _bias_without_data():
    b = ModelBuilder()
    x = b.input("x", [1, 4], "float32")
    w = b.constant("w", np.ones([3, 4], np.float32))
    bias = b.tensor("bias", [3], "float32")  # buffer 0: the empty sentinel
    b.output(b.add_op("FULLY_CONNECTED", [x, w, bias], [1, 3], "float32"))
    return b


def _output_never_written():
    g = float_add()
    g.b.output(g.b.tensor("dangling", [1, 4], "float32"))
    return g.b


def _two_writers():
    g = float_add()
    g.b.add_op("ADD", [g.x, g.x], [1, 4], "float32")
    g.b.graph.operators[-1].outputs = [g.y]
    return g.b


def _writes_graph_input():
    g = float_add()
    g.b.graph.operators[0].outputs = [g.x]
    return g.b


def _writes_constant():
    g = float_add()
    g.b.graph.operators[0].outputs = [g.c]
    return g.b


def _no_outputs():
    g = float_add()
    g.b.add_op("ADD", [g.x, g.c], [1, 4], "float32")
    g.b.graph.operators[-1].outputs = []
    return g.b


def _too_many_elements():
    g = float_add()
    g.b.tensor("huge", [1 << 16, 1 << 15], "int8")  # 2^31 elements
    return g.b


def _too_many_bytes():
    g = float_add()
    g.b.tensor("huge", [1 << 29], "float32")  # 2^29 elements, 2^31 bytes
    return g.b


def _short_constant():
    g = float_add()
    g.b.model.buffers[g.b.graph.tensors[g.c].buffer].data = bytes(12)  # 3 floats for 4
    return g.b


@pytest.mark.parametrize("make,status", [
    (_unwritten_input, "TFLM_ERR_MODEL_UNWRITTEN_INPUT"),
    (_self_loop, "TFLM_ERR_MODEL_UNWRITTEN_INPUT"),
    (_wrong_order, "TFLM_ERR_MODEL_UNWRITTEN_INPUT"),
    (_bias_without_data, "TFLM_ERR_MODEL_UNWRITTEN_INPUT"),
    (_output_never_written, "TFLM_ERR_MODEL_UNWRITTEN_INPUT"),
    (_two_writers, "TFLM_ERR_MODEL_TWO_PRODUCERS"),
    (_writes_graph_input, "TFLM_ERR_MODEL_TWO_PRODUCERS"),
    (_writes_constant, "TFLM_ERR_MODEL_TWO_PRODUCERS"),
    (_no_outputs, "TFLM_ERR_MODEL_NO_OUTPUTS"),
    (_too_many_elements, "TFLM_ERR_MODEL_TOO_LARGE"),
    (_too_many_bytes, "TFLM_ERR_MODEL_TOO_LARGE"),
    (_short_constant, "TFLM_ERR_MODEL_CONSTANT_SIZE"),
])
def test_invalid_graph_refused_with_its_own_status(library, make, status):
    library.tflm_host_log_take()
    assert init_status(library, make().build()) == status
    log = host._ffi.string(library.tflm_host_log_take()).decode()
    text = status_text(status_code(status))
    assert f"tflm: model: {text}" in log, log


@pytest.mark.parametrize("scale", [math.nan, math.inf, -math.inf, 0.0, -0.5])
def test_bad_scale_refused(library, scale):
    assert init_status(library, int8_add(scale)) == "TFLM_ERR_MODEL_SCALE"


def int8_add_constant(scale: float, value: int, fill: bool = False) -> bytes:
    """x + c where c (scale `scale`) holds `value` everywhere: a constant, or with `fill`
    the output of FILL(dims, constant value) that carries the scale."""
    b = ModelBuilder()
    x = b.input("x", [1, 4], "int8", scale=0.5, zero_point=0)
    if fill:
        dims = b.constant("dims", np.array([1, 4], np.int32))
        v = b.constant("v", np.array(value, np.int8), quantization=ir.Quantization([scale], [0]))
        c = b.add_op("FILL", [dims, v], [1, 4], "int8", scale=scale, zero_point=0)
    else:
        c = b.constant("c", np.full([1, 4], value, np.int8),
                       quantization=ir.Quantization([scale], [0]))
    b.output(b.add_op("ADD", [x, c], [1, 4], "int8", scale=0.5, zero_point=0))
    return b.build()


@pytest.mark.parametrize("fill", [False, True])
@pytest.mark.parametrize("scale", [math.nan, math.inf, 0.0, -0.0])
def test_degenerate_scale_allowed_on_zeros(library, scale, fill):
    """As in tflm_gen/model/graph_check.py: converters give all-zero constants and FILLs
    of them NaN, infinite or zero scales (Keras int16x8 GRUs), and TFLM runs them."""
    assert init_status(library, int8_add_constant(scale, 0, fill)) != "TFLM_ERR_MODEL_SCALE"


@pytest.mark.parametrize("fill", [False, True])
@pytest.mark.parametrize("scale,value", [(math.nan, 1), (0.0, 1), (-0.5, 0), (-math.inf, 0)])
def test_degenerate_scale_refused_elsewhere(library, scale, value, fill):
    """A tensor that may hold a non-zero value, or a negative scale anywhere."""
    assert init_status(library, int8_add_constant(scale, value, fill)) == "TFLM_ERR_MODEL_SCALE"


@pytest.mark.parametrize("scale", [1e-30, 1e30])
def test_extreme_finite_scales_pass_the_loader(library, scale):
    """Valid as far as the loader goes; the kernel decides whether it can requantise."""
    assert init_status(library, int8_add(scale)) in ("TFLM_OK", "TFLM_ERR_BAD_PARAMS")


def test_misaligned_constant_refused(library):
    """Constants are read in place: float data at an address that is not a multiple of 4."""
    model = float_add().b.build()
    assert init_status(library, model, misalign=4) == "TFLM_OK"
    assert init_status(library, model, misalign=2) == "TFLM_ERR_MODEL_ALIGNMENT"
