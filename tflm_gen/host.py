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
from tflm_gen.c_headers import header_struct
from tflm_gen.errors import ArenaError, InputError, ModelError, ToolchainError
from tflm_gen.model import ir
from tflm_gen.model.reader import read_model
from tflm_gen.progress import activity
from tflm_gen.status import status_name, status_text
from tflm_gen.text import one_line
from tflm_gen.toolchains import install_hint
from tflm_gen.weights import joined, separate

CFLAGS = ["-std=c99", "-O2", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror", "-pedantic"]

_CDEF = """
uint32_t tflm_host_interpreter_bytes(void);
const void *tflm_host_resolver(void);
int tflm_interpreter_init(void *it, const void *model, uint32_t model_size,
                          const void *resolver, void *arena, uint32_t arena_size);
int tflm_interpreter_init_separate(void *it, const void *model, uint32_t model_size,
                                   const void *weights, uint32_t weights_size,
                                   const void *resolver, void *arena, uint32_t arena_size,
                                   const void *profiler);
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
void tflm_interpreter_memory(void *it, tflm_memory_stats_t *stats);
const char *tflm_host_log_take(void);
const void *tflm_host_audit_resolver(void);
uint32_t tflm_host_scratch_count(void *it);
void tflm_host_scratch(void *it, uint32_t index, uint32_t *bytes, uint32_t *node,
                       uint32_t *offset);
"""

_SHIM = b"""/* Host-only accessors for cffi (not part of generated projects); library_files names
 * the resolver after the default project name, "model". */
#include <string.h>

#include "model_model_ops.h"
uint32_t tflm_host_interpreter_bytes(void);
const void *tflm_host_resolver(void);
uint32_t tflm_host_interpreter_bytes(void) { return (uint32_t)sizeof(tflm_interpreter_t); }
const void *tflm_host_resolver(void) { return &model_resolver; }

/* The audit resolver: the same kernels, but each prepare is followed by a copy of the
 * scratch requests (bytes, node), which the runtime drops once it has planned them. */
#define TFLM_HOST_MAX_OPS 256
#define TFLM_HOST_MAX_SCRATCH 4096
static tflm_registration_t tflm_host_copies[TFLM_HOST_MAX_OPS];
static const tflm_registration_t *tflm_host_copy_list[TFLM_HOST_MAX_OPS];
static tflm_resolver_t tflm_host_audit;
static uint32_t tflm_host_requests[2 * TFLM_HOST_MAX_SCRATCH];

static tflm_status_t tflm_host_audit_prepare(tflm_context_t *ctx, tflm_node_t *node) {
  uint16_t registration = ctx->nodes[ctx->current_node].registration;
  tflm_status_t status = model_resolver.ops[registration]->prepare(ctx, node);
  uint32_t count = ctx->scratch_count < TFLM_HOST_MAX_SCRATCH ? ctx->scratch_count
                                                              : TFLM_HOST_MAX_SCRATCH;
  if (ctx->scratch_request != NULL) {
    memcpy(tflm_host_requests, ctx->scratch_request, 2 * sizeof(uint32_t) * count);
  }
  return status;
}

const void *tflm_host_audit_resolver(void);
const void *tflm_host_audit_resolver(void) {
  int32_t i, count = model_resolver.count;
  if (count > TFLM_HOST_MAX_OPS) return NULL;
  for (i = 0; i < count; ++i) {
    tflm_host_copies[i] = *model_resolver.ops[i];
    if (tflm_host_copies[i].prepare != NULL) tflm_host_copies[i].prepare = tflm_host_audit_prepare;
    tflm_host_copy_list[i] = &tflm_host_copies[i];
  }
  tflm_host_audit.ops = tflm_host_copy_list;
  tflm_host_audit.count = count;
  return &tflm_host_audit;
}

uint32_t tflm_host_scratch_count(tflm_interpreter_t *it);
uint32_t tflm_host_scratch_count(tflm_interpreter_t *it) {
  return it->scratch_count < TFLM_HOST_MAX_SCRATCH ? it->scratch_count : TFLM_HOST_MAX_SCRATCH;
}

/* Scratch buffer `index` of an interpreter initialised with the audit resolver. */
void tflm_host_scratch(tflm_interpreter_t *it, uint32_t index, uint32_t *bytes, uint32_t *node,
                       uint32_t *offset);
void tflm_host_scratch(tflm_interpreter_t *it, uint32_t index, uint32_t *bytes, uint32_t *node,
                       uint32_t *offset) {
  *bytes = tflm_host_requests[2 * index];
  *node = tflm_host_requests[2 * index + 1];
  *offset = it->scratch_location[index];
}
"""

# The host library's DebugLog: it keeps the runtime's log lines for Python, which folds
# them into its one-line error, instead of letting them reach stderr as extra lines.
_LOG_SHIM = b"""/* Host-only DebugLog for cffi (not part of generated projects). */
#include <string.h>

#include "tflm_debug_log.h"

#define TFLM_HOST_LOG_BYTES 2048
static char tflm_host_log[TFLM_HOST_LOG_BYTES];
static size_t tflm_host_log_used;
static char tflm_host_log_copy[TFLM_HOST_LOG_BYTES];

const char *tflm_host_log_take(void);

void tflm_debug_log(const char *text) {
  size_t room = TFLM_HOST_LOG_BYTES - 1 - tflm_host_log_used;
  size_t length = strlen(text);
  if (length > room) length = room; /* the first lines say why; later ones are dropped */
  memcpy(tflm_host_log + tflm_host_log_used, text, length);
  tflm_host_log_used += length;
  tflm_host_log[tflm_host_log_used] = 0;
}

/* The log so far (valid until the next call), and a fresh start. */
const char *tflm_host_log_take(void) {
  memcpy(tflm_host_log_copy, tflm_host_log, tflm_host_log_used + 1);
  tflm_host_log_used = 0;
  tflm_host_log[0] = 0;
  return tflm_host_log_copy;
}
"""

# The structs come from the runtime headers, so cffi and C cannot disagree on a layout.
_ffi = cffi.FFI()
_ffi.cdef(header_struct("tflm_kernel.h", "tflm_tensor_t")
          + header_struct("tflm_interpreter.h", "tflm_memory_stats_t") + _CDEF)

# Room for any model the corpus holds when no arena size is given.
DEFAULT_ARENA_BYTES = 64 * 1024 * 1024
MAX_ARENA_BYTES = (1 << 32) - 1  # tflm_interpreter_init takes a uint32_t size


def cache_dir() -> Path:
    base = os.environ.get("TFLM_GEN_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tflm-gen"
    )
    return Path(base)


def compiler() -> str:
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        raise ToolchainError(f"no C compiler found: '{cc}' is not on PATH; set CC, or "
                             f"{install_hint('cc')}")
    return cc


def _without_banner(data: bytes) -> bytes:
    """The file minus its generated banner (an SPDX line and a comment naming the model's
    hash), so that models with the same op set share one cached library."""
    head = data.split(b"\n", 2)
    if len(head) == 3 and head[1].startswith(b"/* Generated by tflm-gen"):
        return head[2]
    return data


def _source_hash(files: dict[str, bytes], flags: list[str]) -> str:
    digest = hashlib.sha256(" ".join(flags).encode())
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + _without_banner(files[name]) + b"\0")
    return digest.hexdigest()[:24]


def build_library(files: dict[str, bytes]) -> Path:
    """Compiles the files into a shared library in the cache; returns its path."""
    ports = ("tflm_debug_log.c", "tflm_debug_log.cpp")  # the log goes to Python instead
    files = {name: data for name, data in files.items() if name not in ports}
    files.update({"tflm_debug_log.c": _LOG_SHIM, "tflm_host_shim.c": _SHIM})
    folder = cache_dir() / "host" / _source_hash(files, CFLAGS)
    library = folder / "libtflm_model.so"
    if library.is_file():
        return library
    try:
        _compile_into(files, folder)
    except OSError as error:
        raise ToolchainError(f"cannot write the build cache {folder.parent}: "
                             f"{error.strerror or error}; set TFLM_GEN_CACHE to a writable "
                             "folder") from None
    return library


def _compile_into(files: dict[str, bytes], folder: Path) -> None:
    """Compiles in a scratch folder beside `folder`, then renames it into place."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as scratch:
        for name, data in files.items():
            Path(scratch, name).write_bytes(data)
        sources = sorted(name for name in files if name.endswith(".c"))
        command = [compiler(), *CFLAGS, *sources, "-o", "libtflm_model.so", "-lm"]
        with activity(f"compiling {len(sources)} C files for the host"):
            result = subprocess.run(command, cwd=scratch, capture_output=True, text=True,
                                    check=False)
        if result.returncode != 0:
            raise ToolchainError(f"host build failed:\n{result.stderr.strip()}")
        try:
            os.replace(scratch, folder)
        except OSError:  # another process finished first; its library is identical
            if not (folder / "libtflm_model.so").is_file():
                raise


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

    def __init__(self, model_bytes: bytes, tags: tuple[str, ...] = (), arena_bytes=None,
                 audit_scratch: bool = False, weights: bytes | None = None):
        """audit_scratch: record the kernels' scratch requests for `scratch_buffers`;
        weights: `model_bytes` is a mini flatbuffer whose constants lie in these bytes
        (tflm_gen.weights, `--weights separate`)."""
        self.model = read_model(model_bytes if weights is None else joined(model_bytes, weights))
        self._model_bytes, self._tags, self._weights = model_bytes, tuple(tags), weights
        self._audited = audit_scratch
        self._lib = _load(str(build_library(library_files(self.model, model_bytes, tuple(tags)))))
        self._model_buffer = _aligned_copy(model_bytes)
        self._state = _ffi.new("uint64_t[]", (self._lib.tflm_host_interpreter_bytes() + 7) // 8)
        size = DEFAULT_ARENA_BYTES if arena_bytes is None else int(arena_bytes)
        if not 0 <= size <= MAX_ARENA_BYTES:
            raise ArenaError(f"arena of {size} bytes: the size must be 0 to {MAX_ARENA_BYTES}")
        try:
            self._arena = _ffi.new("uint64_t[]", max(1, (size + 7) // 8))
        except MemoryError:
            raise ArenaError(f"cannot allocate an arena of {size} bytes on this host") from None
        self._lib.tflm_host_log_take()  # a fresh log for this init
        status = self._init(self._resolver(audit_scratch), size)
        self._raise_for_init(status, size)

    def _init(self, resolver, size: int) -> int:
        if self._weights is None:
            return self._lib.tflm_interpreter_init(
                self._state, self._model_buffer, len(self._model_bytes), resolver, self._arena,
                size)
        self._weights_buffer = _aligned_copy(self._weights)
        return self._lib.tflm_interpreter_init_separate(
            self._state, self._model_buffer, len(self._model_bytes), self._weights_buffer,
            len(self._weights), resolver, self._arena, size, _ffi.NULL)

    def _resolver(self, audit_scratch: bool):
        if not audit_scratch:
            return self._lib.tflm_host_resolver()
        resolver = self._lib.tflm_host_audit_resolver()
        if resolver == _ffi.NULL:
            raise ModelError("too many distinct operators for the scratch audit")
        return resolver

    def scratch_buffers(self) -> list[tuple[int, int, int]]:
        """(bytes, node, arena offset) of every scratch buffer; needs audit_scratch=True
        (and is read before another audited init of the same op set overwrites the record)."""
        if not self._audited:
            raise ValueError("scratch_buffers needs HostInterpreter(..., audit_scratch=True)")
        found = []
        for index in range(self._lib.tflm_host_scratch_count(self._state)):
            fields = [_ffi.new("uint32_t *") for _ in range(3)]
            self._lib.tflm_host_scratch(self._state, index, *fields)
            found.append(tuple(int(field[0]) for field in fields))
        return found

    def _runtime_log(self) -> str:
        """What the runtime logged since the last call, as `; runtime log: ...` (one line)."""
        text = _ffi.string(self._lib.tflm_host_log_take()).decode("utf-8", "replace")
        return f"; runtime log: {one_line(text)}" if text.strip() else ""

    def _raise_for_init(self, status: int, size: int) -> None:
        log = self._runtime_log()
        if status == 0:
            return
        name = status_name(status)
        if name == "TFLM_ERR_ARENA_TOO_SMALL":
            whole = self._model_bytes if self._weights is None else joined(self._model_bytes,
                                                                          self._weights)
            needed = measure_arena(whole, self._tags)
            raise ArenaError(f"arena of {size} bytes is too small: this model needs {needed}")
        if name in ("TFLM_ERR_MODEL", "TFLM_ERR_MODEL_VERSION"):
            raise ModelError(f"the runtime rejected the model: {status_text(status)}{log}")
        raise ModelError(f"runtime init failed: {name} ({status_text(status)}){log}")

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
        log = self._runtime_log()
        if status != 0:
            raise ModelError(f"invoke failed: {status_name(status)} ({status_text(status)}){log}")

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

    def memory_stats(self) -> dict[str, int]:
        """The runtime's allocation audit (tflm_memory_stats_t) as a dict."""
        stats = _ffi.new("tflm_memory_stats_t *")
        self._lib.tflm_interpreter_memory(self._state, stats)
        names = ("arena_bytes", "head_bytes", "tail_bytes", "runtime_bytes", "kernel_bytes",
                 "variable_bytes", "scratch_count", "scratch_bytes")
        return {name: int(getattr(stats, name)) for name in names}

    @property
    def arena_tail_bytes(self) -> int:
        return self._lib.tflm_interpreter_arena_tail_bytes(self._state)


def device_interpreter(device: bytes, tags: tuple[str, ...] = (), arena_bytes=None,
                       weights: str = "whole") -> HostInterpreter:
    """The device model initialised whole, or split as `--weights separate` splits it."""
    if weights == "whole":
        return HostInterpreter(device, tags, arena_bytes)
    split = separate(device)
    return HostInterpreter(split.mini, tags, arena_bytes, weights=split.weights)


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
