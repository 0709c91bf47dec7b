"""`generate`: a whole project for a target as {relative path: bytes}; `write_tree` puts it
on disk.  Two stages: `measure` (tflm_gen.measure: the arena size, and the expected outputs
of a deterministic test input from the oracle or the host run) and `assemble`, which runs
nothing and turns the model, the options and those measurements into files."""

from __future__ import annotations

import dataclasses
import posixpath
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from tflm_gen.assemble import (
    DEFAULT_NAME,
    banner,
    c_bytes,
    library_files,
    model_data_files,
    model_data_names,
    model_hash,
    ops_used,
    render,
    xml_banner,
)
from tflm_gen.boards import BOARD_HEADER, board_target, build_configurations, check_board_tags
from tflm_gen.errors import InputError, UnsupportedModelError
from tflm_gen.kernels import check_tags
from tflm_gen.layout_cores import core_of_target
from tflm_gen.licensing import license_files
from tflm_gen.measure import Measured
from tflm_gen.model.reader import read_model
from tflm_gen.model_api import api_values, check_name, model_api_files
from tflm_gen.optimize import supported_device_model
from tflm_gen.patches import DEFAULT_MEMORY
from tflm_gen.readme import README, readme_file, tensor_entries
from tflm_gen.targets import Target, camel_name, load_target
from tflm_gen.weights import SeparateModel, check_mode, weights_files
from tflm_gen.weights import separate as separate_weights


@dataclass(frozen=True)
class GenerateOptions:
    """What a project depends on; equal options give byte-identical trees."""

    target: str = "make"
    tags: tuple[str, ...] = ()
    seed: int = 0  # of the embedded test input
    extra_models: tuple[bytes, ...] = ()  # further models sharing the arena (multitenancy)
    name: str = DEFAULT_NAME  # prefix of the model's files and C symbols (`check_name`)
    command: str = ""  # the command line that asked for the project (README: regenerate)
    board: str | None = None  # targets/boards/ (keil, stm32cube, platformio) or the target's own
    weights: str = "whole"  # "separate": a mini flatbuffer and a weight array (tflm_gen.weights)
    memory: str = DEFAULT_MEMORY  # small, balanced or fast: may add a patch stage (tflm_gen.patches)
    compress: bool | str = False  # code the filters losslessly (compress.py; or a goal's name)


SELF_TEST = "common/self_test_main.c.j2"
MULTI_SELF_TEST = "common/self_test_multi.c.j2"  # replaces SELF_TEST for several models
# templates of a program's main file: each program is the shared files plus its entry
ENTRY_TEMPLATES = ("common/app_main.c.j2", SELF_TEST, "qemu/self_test_main.c.j2")


def _array_entry(array: np.ndarray) -> dict:
    data = np.ascontiguousarray(array).tobytes()
    return {"dtype": str(array.dtype), "shape": list(array.shape), "size": len(data),
            "bytes": c_bytes(data)}


def _relative(path: str, start_file: str) -> str:
    """`path` (from the project root) as seen from the folder of `start_file`."""
    return posixpath.relpath(path, posixpath.dirname(start_file) or ".")


def _program_sources(target: Target, sources: list[str]) -> dict[str, list[str]]:
    """The sources every program of the project links, then each program's entry: the
    app's, and the self-test's (those in the folder of the test data)."""
    test_dir = posixpath.dirname(target.test_data) + "/"
    entries = {p for p, template in target.templates.items() if template in ENTRY_TEMPLATES}
    return {"common_sources": [p for p in sources if p not in entries],
            "app_sources": [p for p in sources if p in entries and not p.startswith(test_dir)],
            "test_sources": [p for p in sources if p in entries and p.startswith(test_dir)]}


def _template_values(target: Target, files: dict, values: dict) -> dict:
    """The values every target template sees; paths are relative to the project root."""
    outputs = [*files, target.test_data, *target.templates]
    sources = sorted(p for p in outputs if p.endswith((".c", ".cpp")))
    return {
        **target.values, **values, "target": target.name, "lib_root": target.library_dir,
        "sources": sources, **_program_sources(target, sources),
        "headers": sorted(p for p in outputs if p.endswith(".h")),
        "library_sources": sorted(p for p in files if p.endswith((".c", ".cpp"))),
        "configurations": build_configurations(sorted(outputs)),
    }


def _ram_parts(board: dict, model_bytes: int, arena_bytes: int) -> list[tuple[str, int]]:
    """What the board's data memory must hold.  On a board whose constants live in RAM
    (AVR: `const` data is copied from flash to SRAM at start, and the runtime reads the
    model in place through ordinary pointers) the model counts too."""
    parts = [("arena", arena_bytes)]
    if board.get("constants_in_data"):
        parts.append(("model", model_bytes))
    if "stack_bytes" in board:
        parts.append((board.get("stack_name", "stack"), int(board["stack_bytes"])))
    return parts


def _listed(parts: list[tuple[str, int]]) -> str:
    """`the arena (N bytes), model (M bytes) and stack (S bytes)`."""
    shown = [f"{name} ({size} bytes)" for name, size in parts]
    return "the " + (", ".join(shown[:-1]) + " and " if len(shown) > 1 else "") + shown[-1]


def check_fits_board(target: Target, model_bytes: int, arena_bytes: int) -> None:
    """For a target with a board memory map: refuse, with the sizes, a model or arena that
    cannot fit, before any build would end in a linker error."""
    board = target.values.get("board") if isinstance(target.values, dict) else None
    memory = board.get("memory", {}) if isinstance(board, dict) else {}
    if not memory:
        return
    where = f"{target.name} --board {board['name']}" if "name" in board else target.name
    data = memory["data"]
    if "constants" in memory:  # the model has a region of its own (link.ld: .rodata)
        constants, shared = memory["constants"], "constants"
    else:
        constants, shared = memory["code"], "code and model together"
    if model_bytes > constants["length"]:
        raise UnsupportedModelError(
            f"the model ({model_bytes} bytes) does not fit {where}: {constants['name']} "
            f"holds {constants['length']} bytes for {shared}")
    parts = _ram_parts(board, model_bytes, arena_bytes)
    needed = sum(size for _, size in parts)
    if needed > data["length"]:
        verb = "do not" if len(parts) > 1 else "does not"
        raise UnsupportedModelError(
            f"{_listed(parts)} {verb} fit {where}: {data['name']} holds {data['length']} "
            f"bytes, {needed} needed")


def _check_weights(mode: str, count: int) -> None:
    if check_mode(mode) == "separate" and count > 1:
        raise InputError("--weights separate takes one model; several models sharing an "
                         "arena keep their weights in their flatbuffers")


def _check_multitenant(target: Target, count: int) -> None:
    if count > 1 and SELF_TEST not in target.templates.values():
        raise InputError(f"target {target.name} takes one model; several models sharing an "
                         "arena work with the make, cmake and IDE targets")


def named_target(target: Target, name: str) -> Target:
    """`target` with `{name}` in its output paths and text values replaced by the project
    name, and `{Name}` by its CamelCase form (`camel_name`: kws_ref -> KwsRef, the Arduino
    library convention)."""
    camel = camel_name(name)

    def named(text: str) -> str:
        return text.replace("{name}", name).replace("{Name}", camel)

    values = {key: named(value) if isinstance(value, str) else value
              for key, value in target.values.items()}
    return dataclasses.replace(
        target, library_dir=named(target.library_dir), test_data=named(target.test_data),
        self_test_hint=named(target.self_test_hint), values=values,
        templates={named(path): template for path, template in target.templates.items()})


@lru_cache(maxsize=4)
def _device_models(originals: tuple[bytes, ...], tags: tuple[str, ...],
                   memory: str = DEFAULT_MEMORY, compress: bool = False,
                   core: str | None = None) -> tuple[list[bytes], list]:
    """The device models (plan, requantisation, the tags' layouts for `core` and a patch
    stage embedded) and their IR; cached because planning is the slow part and measure
    and assemble both need them."""
    devices = [supported_device_model(each, tags, memory, compress, core=core)[0]
               for each in originals]
    return devices, [read_model(each) for each in devices]


def _model_entries(measured: Measured, name: str) -> list[dict]:
    """Template data of each model of a multitenant project: inputs and, per invoke, the
    reference outputs (state carries across invokes, as on the device)."""
    entries = []
    for index, (inputs, rounds) in enumerate(zip(measured.model_inputs, measured.rounds)):
        names = model_data_names(name, index)
        entries.append({
            "index": index, "header": f"{names['stem']}.h",
            "inputs": [_array_entry(a) for a in inputs],
            "rounds": [[_array_entry(a) for a in outputs] for outputs in rounds],
            "symbol": names["symbol"], "size_macro": names["size_macro"]})
    return entries


def _target_files(target: Target, values: dict) -> dict[str, bytes]:
    """The target's own files and the self-test's data, rendered with `values`."""
    files = {target.test_data: render("common/test_data.h.j2", **values)}
    for path, template in sorted(target.templates.items()):
        if values["models"] and template == SELF_TEST:
            template = MULTI_SELF_TEST
        files[path] = render(template, **values, lib=_relative(target.library_dir, path))
    return files


def project_core(options: GenerateOptions) -> str | None:
    """The core the project builds for (its board's -mcpu), None for a generic target."""
    return core_of_target(board_target(load_target(options.target), options.board))


def generate(model_bytes: bytes, options: GenerateOptions = GenerateOptions()) -> dict[str, bytes]:
    """All files of the project, by path relative to the project root: measure (which runs
    the host build and the oracle where they exist), then assemble (which runs nothing)."""
    from tflm_gen.measure import measure

    check_name(options.name)
    target = load_target(options.target)
    originals = [model_bytes, *options.extra_models]
    _check_multitenant(target, len(originals))
    _check_weights(options.weights, len(originals))
    tags = target.tags + tuple(options.tags)
    check_tags(tags)
    devices, models = _device_models(tuple(originals), tags, options.memory,
                                     options.compress, project_core(options))
    return assemble(model_bytes, options, measure(originals, devices, models, tags, options.seed))


def assemble(model_bytes: bytes, options: GenerateOptions, measured: Measured) -> dict[str, bytes]:
    """The project's files from the model, the options and the measurements; pure (no
    compiler, no oracle: every number it needs is in `measured`)."""
    name = check_name(options.name)
    target = board_target(named_target(load_target(options.target), name), options.board)
    tags = target.tags + tuple(options.tags)
    check_board_tags(tags, options.board)
    originals = [model_bytes, *options.extra_models]
    _check_multitenant(target, len(originals))
    _check_weights(options.weights, len(originals))
    devices, models = _device_models(tuple(originals), tags, options.memory,
                                     options.compress, core_of_target(target))
    split = separate_weights(devices[0]) if options.weights == "separate" else None
    library = library_files(models, devices[0], tags, name)
    arena = measured.arena_bytes
    check_fits_board(target, sum(len(each) for each in devices), arena)
    library.update(_model_files(devices, arena, name, split))
    library.update(model_api_files(models[0], devices[0], name, split is not None))
    if "console" in target.values.get("board", {}):  # a board of targets/boards/ (a port)
        library[BOARD_HEADER] = render("boards/tflm_board.h.j2", banner=banner(devices[0]),
                                       board=target.values["board"])
    files = {f"{target.library_dir}/{path}": data for path, data in library.items()}
    values = _template_values(target, files, {
        **api_values(models[0], name), "self_test_hint": target.self_test_hint,
        "banner": banner(devices[0]), "banner_hash": banner(devices[0], "#"),
        "banner_xml": xml_banner(devices[0]),
        "expected_source": measured.expected_source, "arena_bytes": arena,
        "inputs": [_array_entry(a) for a in measured.inputs],
        "outputs": [_array_entry(a) for a in measured.outputs],
        "models": [] if len(devices) == 1 else _model_entries(measured, name),
        "separate": split is not None,
    })
    files.update(_target_files(target, values))
    files.update(license_files([f"the model of sha256 {model_hash(each)[:16]}"
                                for each in originals]))
    files[README] = readme_file(
        files, _readme_values(target, values, models, originals, devices, split),
        options.command, tags)
    return dict(sorted(files.items()))


def _model_files(devices: list[bytes], arena: int, name: str,
                 split: SeparateModel | None) -> dict[str, bytes]:
    """Each model as C data: the flatbuffer, or (`split`, one model) the mini flatbuffer
    and the weight array."""
    if split is not None:
        return {**model_data_files(split.mini, arena, 0, 1, name, separate=True),
                **weights_files(split, devices[0], name)}
    files = {}
    for index, device in enumerate(devices):
        files.update(model_data_files(device, arena, index, len(devices), name))
    return files


def _readme_values(target: Target, values: dict, models: list, originals: list[bytes],
                   devices: list[bytes], split: SeparateModel | None) -> dict:
    """What the README says beyond the templates' values: names, sizes, operators."""
    label = ", ".join(f"model sha256 {model_hash(each)[:16]}" for each in originals)
    graph = models[0].subgraphs[0]
    return {**values, "model_label": label, "target_description": target.description,
            "model_inputs": tensor_entries(models[0], graph.inputs),
            "model_outputs": tensor_entries(models[0], graph.outputs),
            "banner_text": values["banner"].splitlines()[1][3:].split("; do not")[0],
            "model_bytes": len(split.mini) if split else sum(len(each) for each in devices),
            "weights_bytes": len(split.weights) if split else None,
            "test_data": target.test_data,
            "operators": list(dict.fromkeys(op for model in models for op in ops_used(model))),
            "tags": target.tags}
