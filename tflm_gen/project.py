"""`generate`: a whole project for a target as {relative path: bytes}; `write_project` puts
it on disk.  The test input is deterministic and the expected output comes from the
oracle (TFLM) when installed, else from the host run of the same C files."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tflm_gen.assemble import (
    LIBRARY_DIR,
    banner,
    c_bytes,
    library_files,
    model_data_files,
    render,
)
from tflm_gen.host import HostInterpreter
from tflm_gen.inputs import random_inputs
from tflm_gen.model.reader import read_model
from tflm_gen.oracle import Oracle, oracle_available
from tflm_gen.targets import load_target


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


def generate(model_bytes: bytes, options: GenerateOptions = GenerateOptions()) -> dict[str, bytes]:
    """All files of the project, by path relative to the project root."""
    target = load_target(options.target)
    tags = target.tags + tuple(options.tags)
    model = read_model(model_bytes)
    library = library_files(model, model_bytes, tags)
    host = HostInterpreter(model_bytes, tags)
    inputs = random_inputs(model, options.seed)
    outputs, source = expected_outputs(model_bytes, inputs, host)
    library.update(model_data_files(model_bytes, host.arena_used_bytes))
    files = {f"{LIBRARY_DIR}/{name}": data for name, data in library.items()}
    values = {
        "banner": banner(model_bytes), "banner_hash": banner(model_bytes, "#"),
        "lib": LIBRARY_DIR, "expected_source": source,
        "inputs": [_array_entry(a) for a in inputs], "outputs": [_array_entry(a) for a in outputs],
        "sources": sorted(["main.c", *(p for p in files if p.endswith(".c"))]),
    }
    files["test_data.h"] = render("common/test_data.h.j2", **values)
    for path, template in sorted(target.templates.items()):
        files[path] = render(template, **values)
    return dict(sorted(files.items()))
