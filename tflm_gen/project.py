"""`generate`: a whole project for a target as {relative path: bytes}; `write_project` puts
it on disk.  The test input is deterministic and the expected output comes from the
oracle (TFLM) when installed, else from the host run of the same C files."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

import numpy as np

from tflm_gen.assemble import (
    banner,
    c_bytes,
    library_files,
    model_data_files,
    render,
)
from tflm_gen.host import HostInterpreter
from tflm_gen.inputs import random_inputs
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model
from tflm_gen.oracle import Oracle, oracle_available
from tflm_gen.resources import resource_dir
from tflm_gen.targets import Target, load_target


@dataclass(frozen=True)
class GenerateOptions:
    """What a project depends on; equal options give byte-identical trees."""

    target: str = "make"
    tags: tuple[str, ...] = ()
    seed: int = 0  # of the embedded test input


def _array_entry(array: np.ndarray) -> dict:
    data = np.ascontiguousarray(array).tobytes()
    return {"dtype": str(array.dtype), "shape": list(array.shape), "size": len(data),
            "bytes": c_bytes(data)}


def expected_outputs(model_bytes: bytes, inputs, host: HostInterpreter) -> tuple[list, str]:
    """The reference outputs for `inputs` and where they came from."""
    if oracle_available("tflm"):
        return Oracle(model_bytes, "tflm").run(inputs), "TFLM reference kernels"
    return host.run(inputs), "tflm-gen host run"


def host_tags(tags: tuple[str, ...]) -> tuple[str, ...]:
    """The tags the host run uses: a tag that only replaces runtime files (a board's
    DebugLog) changes neither arithmetic nor the arena, and need not build on the host."""
    kernels, runtime = resource_dir("kernels_c"), resource_dir("runtime_c")
    return tuple(tag for tag in tags if (kernels / tag).is_dir() or not (runtime / tag).is_dir())


def _relative(path: str, start_file: str) -> str:
    """`path` (from the project root) as seen from the folder of `start_file`."""
    return posixpath.relpath(path, posixpath.dirname(start_file) or ".")


def _template_values(target: Target, files: dict, values: dict) -> dict:
    """The values every target template sees; paths are relative to the project root."""
    outputs = [*files, target.test_data, *target.templates]
    return {
        **values, **target.values, "target": target.name, "lib_root": target.library_dir,
        "sources": sorted(p for p in outputs if p.endswith((".c", ".cpp"))),
        "headers": sorted(p for p in outputs if p.endswith(".h")),
        "library_sources": sorted(p for p in files if p.endswith((".c", ".cpp"))),
    }


def generate(model_bytes: bytes, options: GenerateOptions = GenerateOptions()) -> dict[str, bytes]:
    """All files of the project, by path relative to the project root."""
    target = load_target(options.target)
    tags = target.tags + tuple(options.tags)
    original = model_bytes
    model_bytes, _ = device_model(model_bytes)
    model = read_model(model_bytes)
    library = library_files(model, model_bytes, tags)
    host = HostInterpreter(model_bytes, host_tags(tags))
    inputs = random_inputs(model, options.seed)
    outputs, source = expected_outputs(original, inputs, host)
    library.update(model_data_files(model_bytes, host.arena_used_bytes))
    files = {f"{target.library_dir}/{name}": data for name, data in library.items()}
    values = _template_values(target, files, {
        "banner": banner(model_bytes), "banner_hash": banner(model_bytes, "#"),
        "expected_source": source, "arena_bytes": host.arena_used_bytes,
        "inputs": [_array_entry(a) for a in inputs], "outputs": [_array_entry(a) for a in outputs],
    })
    files[target.test_data] = render("common/test_data.h.j2", **values)
    for path, template in sorted(target.templates.items()):
        files[path] = render(template, **values, lib=_relative(target.library_dir, path))
    return dict(sorted(files.items()))
