"""Host execution: the generated C files compiled into a shared library and called through
cffi.  Libraries are cached by the hash of their sources, so one op set compiles once."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

import cffi
import numpy as np

from tflm_gen.assemble import library_files
from tflm_gen.errors import ArenaError, InputError, ModelError, ToolchainError
from tflm_gen.model import ir
from tflm_gen.model.reader import read_model
from tflm_gen.status import status_name, status_text

CFLAGS = ["-std=c99", "-O2", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror", "-pedantic"]

_CDEF = """
typedef struct {
  void *data; int32_t dims[6]; int32_t ndims; int32_t type; int32_t bytes; float scale;
  int32_t zero_point; int32_t nscales; int32_t quantized_dimension;
  const uint8_t *scales_le; const uint8_t *zero_points_le;
  uint8_t is_constant; uint8_t is_variable;
} tflm_tensor_t;
uint32_t tflm_host_interpreter_bytes(void);
const void *tflm_host_resolver(void);
int tflm_interpreter_init(void *it, const void *model, uint32_t model_size,
                          const void *resolver, void *arena, uint32_t arena_size);
int tflm_interpreter_invoke(void *it);
int tflm_interpreter_reset(void *it);
int32_t tflm_interpreter_inputs_count(void *it);
int32_t tflm_interpreter_outputs_count(void *it);
int tflm_interpreter_input(void *it, int32_t i, tflm_tensor_t *view);
int tflm_interpreter_output(void *it, int32_t i, tflm_tensor_t *view);
uint32_t tflm_interpreter_arena_used_bytes(void *it);
uint32_t tflm_interpreter_arena_head_bytes(void *it);
uint32_t tflm_interpreter_arena_tail_bytes(void *it);
uint32_t tflm_interpreter_arena_shortfall(void *it);
"""

_SHIM = b"""/* Host-only accessors for cffi (not part of generated projects). */
#include "model_ops.h"
uint32_t tflm_host_interpreter_bytes(void);
const void *tflm_host_resolver(void);
uint32_t tflm_host_interpreter_bytes(void) { return (uint32_t)sizeof(tflm_interpreter_t); }
const void *tflm_host_resolver(void) { return &tflm_model_resolver; }
"""

_ffi = cffi.FFI()
_ffi.cdef(_CDEF)

# Room for any model the corpus holds when no arena size is given.
DEFAULT_ARENA_BYTES = 64 * 1024 * 1024


def cache_dir() -> Path:
    base = os.environ.get("TFLM_GEN_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tflm-gen"
    )
    return Path(base)


def compiler() -> str:
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        raise ToolchainError(f"no C compiler found ('{cc}'); install gcc or set CC")
    return cc


def _source_hash(files: dict[str, bytes], flags: list[str]) -> str:
    digest = hashlib.sha256(" ".join(flags).encode())
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name] + b"\0")
    return digest.hexdigest()[:24]


def build_library(files: dict[str, bytes]) -> Path:
    """Compiles the files into a shared library in the cache; returns its path."""
    files = {**files, "tflm_host_shim.c": _SHIM}
    folder = cache_dir() / "host" / _source_hash(files, CFLAGS)
    library = folder / "libtflm_model.so"
    if library.is_file():
        return library
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as scratch:
        for name, data in files.items():
            Path(scratch, name).write_bytes(data)
        sources = sorted(name for name in files if name.endswith(".c"))
        command = [compiler(), *CFLAGS, *sources, "-o", "libtflm_model.so", "-lm"]
        result = subprocess.run(command, cwd=scratch, capture_output=True, text=True)
        if result.returncode != 0:
            raise ToolchainError(f"host build failed:\n{result.stderr.strip()}")
        try:
            os.replace(scratch, folder)
        except OSError:  # another process finished first; its library is identical
            pass
    return library


@lru_cache(maxsize=64)
def _load(library: str):
    return _ffi.dlopen(library)


def _aligned_copy(data: bytes):
    """The bytes in a fresh 8-byte aligned C buffer (kernels read weights in place)."""
    buffer = _ffi.new("uint64_t[]", max(1, (len(data) + 7) // 8))
    _ffi.memmove(buffer, data, len(data))
    return buffer


class HostInterpreter:
    """One model initialised in a host-compiled runtime.

    arena_bytes=None gives a large arena; an exact number runs with exactly that many bytes
    and raises ArenaError when it is too small.
    """

    def __init__(self, model_bytes: bytes, tags: tuple[str, ...] = (), arena_bytes=None):
        self.model = read_model(model_bytes)
        self._model_bytes, self._tags = model_bytes, tuple(tags)
        self._lib = _load(str(build_library(library_files(self.model, model_bytes, tuple(tags)))))
        self._model_buffer = _aligned_copy(model_bytes)
        self._state = _ffi.new("uint64_t[]", (self._lib.tflm_host_interpreter_bytes() + 7) // 8)
        size = DEFAULT_ARENA_BYTES if arena_bytes is None else int(arena_bytes)
        self._arena = _ffi.new("uint64_t[]", max(1, (size + 7) // 8))
        status = self._lib.tflm_interpreter_init(
            self._state, self._model_buffer, len(model_bytes), self._lib.tflm_host_resolver(),
            self._arena, size,
        )
        self._raise_for_init(status, size)

    def _raise_for_init(self, status: int, size: int) -> None:
        if status == 0:
            return
        name = status_name(status)
        if name == "TFLM_ERR_ARENA_TOO_SMALL":
            needed = measure_arena(self._model_bytes, self._tags)
            raise ArenaError(f"arena of {size} bytes is too small: this model needs {needed}")
        if name in ("TFLM_ERR_MODEL", "TFLM_ERR_MODEL_VERSION"):
            raise ModelError(f"the runtime rejected the model: {status_text(status)}")
        raise ModelError(f"runtime init failed: {name} ({status_text(status)})")

    def _view(self, is_input: bool, index: int):
        view = _ffi.new("tflm_tensor_t *")
        getter = self._lib.tflm_interpreter_input if is_input else self._lib.tflm_interpreter_output
        if getter(self._state, index, view) != 0:
            raise InputError(f"no {'input' if is_input else 'output'} {index}")
        return view

    def input_details(self) -> list[tuple[tuple[int, ...], np.dtype]]:
        count = self._lib.tflm_interpreter_inputs_count(self._state)
        return [_shape_dtype(self._view(True, i)) for i in range(count)]

    def set_inputs(self, inputs: list[np.ndarray]) -> None:
        details = self.input_details()
        if len(inputs) != len(details):
            raise InputError(f"model has {len(details)} inputs, {len(inputs)} given")
        for index, (array, (shape, dtype)) in enumerate(zip(inputs, details)):
            array = np.asarray(array)
            if array.dtype != dtype or tuple(array.shape) != shape:
                raise InputError(
                    f"input {index}: expected {dtype} {list(shape)}, got {array.dtype} "
                    f"{list(array.shape)}"
                )
            view = self._view(True, index)
            _ffi.memmove(view.data, np.ascontiguousarray(array).tobytes(), view.bytes)

    def invoke(self) -> None:
        status = self._lib.tflm_interpreter_invoke(self._state)
        if status != 0:
            raise ModelError(f"invoke failed: {status_name(status)} ({status_text(status)})")

    def outputs(self) -> list[np.ndarray]:
        count = self._lib.tflm_interpreter_outputs_count(self._state)
        results = []
        for index in range(count):
            view = self._view(False, index)
            shape, dtype = _shape_dtype(view)
            raw = bytes(_ffi.buffer(view.data, view.bytes))
            results.append(np.frombuffer(raw, dtype=dtype).reshape(shape).copy())
        return results

    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        self.set_inputs(inputs)
        self.invoke()
        return self.outputs()

    def reset(self) -> None:
        self._lib.tflm_interpreter_reset(self._state)

    @property
    def arena_used_bytes(self) -> int:
        return self._lib.tflm_interpreter_arena_used_bytes(self._state)

    @property
    def arena_head_bytes(self) -> int:
        return self._lib.tflm_interpreter_arena_head_bytes(self._state)

    @property
    def arena_tail_bytes(self) -> int:
        return self._lib.tflm_interpreter_arena_tail_bytes(self._state)


def _shape_dtype(view) -> tuple[tuple[int, ...], np.dtype]:
    info = ir.dtype_info(int(view.type))
    if info.numpy is None:
        raise InputError(f"tensor type {info.name} cannot be passed from Python")
    return tuple(view.dims[i] for i in range(view.ndims)), np.dtype(info.numpy)


def measure_arena(model_bytes: bytes, tags: tuple[str, ...] = ()) -> int:
    """The exact arena bytes the runtime needs for the model (same on every target)."""
    return HostInterpreter(model_bytes, tags).arena_used_bytes


def run_model(model_bytes: bytes, inputs: list[np.ndarray], tags=()) -> list[np.ndarray]:
    """Runs one invoke of the model on the host runtime and returns its outputs."""
    return HostInterpreter(model_bytes, tuple(tags)).run(inputs)
