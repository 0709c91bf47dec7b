"""`generate`: a whole project for a target as {relative path: bytes}; `write_project` puts
it on disk.  The test input is deterministic and the expected output comes from the
oracle (TFLM, or LiteRT for a model only LiteRT runs) when installed, else from the host
run of the same C files."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

import numpy as np

from tflm_gen.assemble import (
    banner,
    c_bytes,
    library_files,
    model_data_files,
    model_hash,
    render,
    xml_banner,
)
from tflm_gen.errors import InputError, UnsupportedModelError
from tflm_gen.host import HostInterpreter
from tflm_gen.inputs import random_inputs
from tflm_gen.licensing import license_files
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model
from tflm_gen.oracle import ORACLE_NAMES, Oracle, choose_oracle, oracle_available
from tflm_gen.resources import resource_dir
from tflm_gen.targets import Target, load_target


@dataclass(frozen=True)
class GenerateOptions:
    """What a project depends on; equal options give byte-identical trees."""

    target: str = "make"
    tags: tuple[str, ...] = ()
    seed: int = 0  # of the embedded test input
    extra_models: tuple[bytes, ...] = ()  # further models sharing the arena (multitenancy)


MULTI_MAIN = "common/main_multi.c.j2"  # replaces common/main.c.j2 for several models
ROUNDS = 2  # invokes per model in a multitenant test, alternating between models


def _array_entry(array: np.ndarray) -> dict:
    data = np.ascontiguousarray(array).tobytes()
    return {"dtype": str(array.dtype), "shape": list(array.shape), "size": len(data),
            "bytes": c_bytes(data)}


def reference_runtime(model_bytes: bytes, host: HostInterpreter):
    """The runtime whose outputs a project embeds, and its name: the model's oracle when
    installed, else the host run of the same C files."""
    against, _ = choose_oracle(model_bytes)
    if oracle_available(against):
        return Oracle(model_bytes, against), ORACLE_NAMES[against]
    return host, "tflm-gen host run"


def expected_outputs(model_bytes: bytes, inputs, host: HostInterpreter) -> tuple[list, str]:
    """The reference outputs for `inputs` and where they came from."""
    reference, source = reference_runtime(model_bytes, host)
    return reference.run(inputs), source


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


def shared_arena_bytes(hosts: list[HostInterpreter]) -> int:
    """The arena several interpreters need when each gets the space below the tails of the
    ones before it (tflm_interpreter_arena_shared_size): the largest, over the models, of
    the tails stacked above it plus its own peak."""
    tails = [host.arena_tail_bytes for host in hosts]
    return max(sum(tails[:k]) + host.arena_used_bytes for k, host in enumerate(hosts))


def _model_entry(index: int, device: bytes, original: bytes, host: HostInterpreter,
                 seed: int) -> dict:
    """Template data of one model of a multitenant project: inputs and, per invoke, the
    reference outputs (state carries across invokes, as on the device)."""
    inputs = random_inputs(host.model, seed)
    rounds = []
    reference, _ = reference_runtime(original, host)
    for _ in range(ROUNDS):
        rounds.append([_array_entry(a) for a in reference.run(inputs)])
    stem = "model_data" if index == 0 else f"model_data_{index}"
    return {"index": index, "header": f"{stem}.h", "inputs": [_array_entry(a) for a in inputs],
            "rounds": rounds, "symbol": "tflm_model_data" if index == 0
            else f"tflm_model_{index}_data",
            "size_macro": "TFLM_MODEL_SIZE" if index == 0 else f"TFLM_MODEL_{index}_SIZE"}


def check_fits_board(target: Target, model_bytes: int, arena_bytes: int) -> None:
    """For a target with a board memory map: refuse, with the sizes, a model or arena that
    cannot fit, before any build would end in a linker error."""
    board = target.values.get("board") if isinstance(target.values, dict) else None
    memory = board.get("memory", {}) if isinstance(board, dict) else {}
    if not memory:
        return
    data = memory["data"]
    ram = arena_bytes + int(board.get("stack_bytes", 0))
    if "constants" in memory:  # the model has a region of its own (link.ld: .rodata)
        constants, shared = memory["constants"], "constants"
    else:
        constants, shared = memory["code"], "code and model together"
    if model_bytes > constants["length"]:
        raise UnsupportedModelError(
            f"the model ({model_bytes} bytes) does not fit {target.name}: {constants['name']} "
            f"holds {constants['length']} bytes for {shared}")
    if ram > data["length"]:
        raise UnsupportedModelError(
            f"the arena ({arena_bytes} bytes) and stack ({board.get('stack_bytes', 0)} bytes) "
            f"do not fit {target.name}: {data['name']} holds {data['length']} bytes")


def _check_multitenant(target: Target, count: int) -> None:
    if count > 1 and "common/main.c.j2" not in target.templates.values():
        raise InputError(f"target {target.name} takes one model; several models sharing an "
                         "arena work with the make, cmake and IDE targets")


def generate(model_bytes: bytes, options: GenerateOptions = GenerateOptions()) -> dict[str, bytes]:
    """All files of the project, by path relative to the project root."""
    target = load_target(options.target)
    tags = target.tags + tuple(options.tags)
    originals = [model_bytes, *options.extra_models]
    _check_multitenant(target, len(originals))
    devices = [device_model(each)[0] for each in originals]
    models = [read_model(each) for each in devices]
    library = library_files(models, devices[0], tags)
    hosts = [HostInterpreter(each, host_tags(tags)) for each in devices]
    arena = shared_arena_bytes(hosts)
    check_fits_board(target, sum(len(each) for each in devices), arena)
    inputs = random_inputs(models[0], options.seed)
    outputs, source = expected_outputs(originals[0], inputs, hosts[0])
    for index, device in enumerate(devices):
        library.update(model_data_files(device, arena, index, len(devices)))
    files = {f"{target.library_dir}/{name}": data for name, data in library.items()}
    values = _template_values(target, files, {
        "banner": banner(devices[0]), "banner_hash": banner(devices[0], "#"),
        "banner_xml": xml_banner(devices[0]),
        "expected_source": source, "arena_bytes": arena,
        "inputs": [_array_entry(a) for a in inputs], "outputs": [_array_entry(a) for a in outputs],
        "models": [] if len(devices) == 1 else [
            _model_entry(k, devices[k], originals[k], hosts[k], options.seed)
            for k in range(len(devices))],
    })
    files[target.test_data] = render("common/test_data.h.j2", **values)
    for path, template in sorted(target.templates.items()):
        if len(devices) > 1 and template == "common/main.c.j2":
            template = MULTI_MAIN
        files[path] = render(template, **values, lib=_relative(target.library_dir, path))
    files.update(license_files([f"the model of sha256 {model_hash(each)[:16]}"
                                for each in originals]))
    return dict(sorted(files.items()))
