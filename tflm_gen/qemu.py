"""Cross builds and runs under QEMU: the generated project of a qemu-* target compiled with
its own Makefile (cached by the hash of its files), run with semihosting, and the
`tflm-gen run --target` path (inputs embedded, outputs read back as hex)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tflm_gen.assemble import DEFAULT_NAME, c_bytes, render
from tflm_gen.errors import InputError, ToolchainError, UnsupportedModelError
from tflm_gen.host import HostInterpreter, cache_dir
from tflm_gen.kernels import host_tags
from tflm_gen.layout_cores import core_of_target
from tflm_gen.model import ir
from tflm_gen.optimize import supported_device_model
from tflm_gen.output import write_tree
from tflm_gen.patches import DEFAULT_MEMORY
from tflm_gen.progress import activity
from tflm_gen.project import GenerateOptions, generate
from tflm_gen.targets import list_targets, load_target
from tflm_gen.toolchains import install_hint

DEFAULT_OPT = "-O2"  # the whole project; the Makefile's OPT
RUN_TIMEOUT = 600  # seconds; vww under the counting plugin takes a few
PASSED = "~~~ALL TESTS PASSED~~~"
SELF_TEST_MAIN = "test/main.c"  # the entry of build/model.elf, the program run here
_OVERFLOW = re.compile(r"region `(\w+)' overflowed by (\d+) bytes")
_OUTPUT_LINE = re.compile(r"^tflm-output (\d+): ([0-9a-f]*)$", re.MULTILINE)
_ARENA_LINE = re.compile(r"^arena used: (\d+) of", re.MULTILINE)


@dataclass(frozen=True)
class Build:
    """A linked program in the cache: build/model.elf and build/model.map under `folder`."""

    folder: Path
    target: str
    board: dict

    @property
    def elf(self) -> Path:
        return self.folder / "build" / "model.elf"

    @property
    def map_file(self) -> Path:
        return self.folder / "build" / "model.map"

    def tool(self, name: str) -> str:
        return self.board["toolchain"] + name


def qemu_targets() -> list[str]:
    """Targets that cross-compile and run under QEMU."""
    return [name for name in list_targets() if "board" in load_target(name).values]


def board_of(target: str) -> dict:
    """The board description (toolchain, CPU flags, QEMU machine, memory) of a qemu target."""
    board = load_target(target).values.get("board")
    if board is None:
        raise InputError(f"target '{target}' does not run under QEMU; "
                         f"QEMU targets: {', '.join(qemu_targets())}")
    return board


def need_tools(board: dict) -> None:
    for tool in (board["toolchain"] + "gcc", board["qemu"], "make"):
        if shutil.which(tool) is None:
            raise ToolchainError(f"'{tool}' not found; the {board['machine']} target needs it; "
                                 f"{install_hint(tool)}")


def _files_hash(files: dict[str, bytes], opt: str) -> str:
    digest = hashlib.sha256(f"qemu-build-1 {opt}".encode())
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name] + b"\0")
    return digest.hexdigest()[:24]


def _fit_error(stderr: str, target: str, board: dict, files: dict[str, bytes]) -> str | None:
    """A sentence with the sizes when the link failed because the program is too big."""
    overflows = {name: int(amount) for name, amount in _OVERFLOW.findall(stderr)}
    if not overflows:
        return None
    header = b"".join(data for path, data in files.items() if path.endswith("_model_data.h"))
    model = re.search(rb"_MODEL_SIZE (\d+)u", header)
    arena = re.search(rb"_ARENA_BYTES (\d+)u", header)
    parts = []
    for region, amount in sorted(overflows.items()):
        memory = board["memory"][region.lower()]
        parts.append(f"{region.lower()} needs {memory['length'] + amount} bytes of the "
                     f"{memory['length']} in {memory['name']}")
    sizes = (f"model {int(model.group(1))} bytes (code memory), arena "
             f"{int(arena.group(1))} bytes (data memory)") if model and arena else ""
    return f"the program does not fit {target} ({board['machine']}): {'; '.join(parts)}; {sizes}"


def build(files: dict[str, bytes], target: str, opt: str = DEFAULT_OPT) -> Build:
    """Cross-compiles a generated project with its Makefile; cached by the files' hash."""
    board = board_of(target)
    need_tools(board)
    folder = cache_dir() / "qemu" / _files_hash(files, opt)
    result = Build(folder, target, board)
    if result.elf.is_file():
        return result
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as scratch:
        write_tree(files, scratch)
        command = ["make", "-s", "-j2", f"OPT={opt}", "build/model.elf"]
        with activity(f"cross-compiling for {target} ({opt})"):
            made = subprocess.run(command, cwd=scratch, capture_output=True, text=True,
                                  check=False)
        if made.returncode != 0:
            too_big = _fit_error(made.stderr, target, board, files)
            if too_big:
                raise UnsupportedModelError(too_big)
            raise ToolchainError(f"cross build for {target} failed:\n{made.stderr.strip()}")
        try:
            os.replace(scratch, folder)
        except OSError:  # another process finished first; its build is identical
            pass
    return result


def run(program: Build, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Runs the program under QEMU; returncode is the program's exit code."""
    board = program.board
    command = [board["qemu"], "-M", board["machine"], *board["qemu_flags"], *extra,
               "-kernel", str(program.elf)]
    try:
        with activity(f"running on {board['machine']} under {board['qemu']}"):
            return subprocess.run(command, capture_output=True, text=True, check=False,
                                  timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"{board['qemu']} did not finish in {RUN_TIMEOUT} s") from None


def project_files(model_bytes: bytes, target: str, tags: tuple[str, ...] = (),
                  weights: str = "whole", memory: str = DEFAULT_MEMORY,
                  compress: bool = False) -> dict:
    """The generated project (embedded test input, expected output from the oracle)."""
    board_of(target)
    return generate(model_bytes, GenerateOptions(target, tuple(tags), weights=weights,
                                                 memory=memory, compress=compress))


def run_project(model_bytes: bytes, target: str, tags=(), opt: str = DEFAULT_OPT,
                weights: str = "whole", memory: str = DEFAULT_MEMORY, compress: bool = False):
    """Builds and runs the generated project; returns (build, completed process)."""
    program = build(project_files(model_bytes, target, tags, weights, memory, compress),
                    target, opt)
    return program, run(program)


def _entry(array: np.ndarray) -> dict:
    data = np.ascontiguousarray(array).tobytes()
    return {"dtype": str(array.dtype), "shape": list(array.shape), "size": len(data),
            "bytes": c_bytes(data)}


def _run_files(model_bytes: bytes, target: str, tags, inputs, expected, weights: str,
               memory: str = DEFAULT_MEMORY, compress: bool = False) -> dict:
    """The project with the user's inputs embedded and a main that prints every output."""
    files = project_files(model_bytes, target, tags, weights, memory, compress)
    banner = "".join(files[SELF_TEST_MAIN].decode().splitlines(keepends=True)[:2])
    values = {"banner": banner, "expected_source": "tflm-gen host run", "lib": "../tflm",
              "inputs": [_entry(a) for a in inputs], "outputs": [_entry(a) for a in expected],
              "board": board_of(target), "dump_outputs": True, "name": DEFAULT_NAME,
              "NAME": DEFAULT_NAME.upper(), "separate": weights == "separate"}
    files[load_target(target).test_data] = render("common/test_data.h.j2", **values)
    files[SELF_TEST_MAIN] = render("qemu/self_test_main.c.j2", **values)
    return files


def _outputs_from(stdout: str, model: ir.Model) -> list[np.ndarray]:
    found = {int(index): bytes.fromhex(text) for index, text in _OUTPUT_LINE.findall(stdout)}
    arrays = []
    for position, tensor_index in enumerate(model.subgraph.outputs):
        tensor = model.subgraph.tensors[tensor_index]
        if position not in found:
            raise ToolchainError(f"the program printed no output {position}:\n{stdout}")
        dtype = np.dtype(ir.dtype_info(tensor.dtype).numpy)
        arrays.append(np.frombuffer(found[position], dtype=dtype).reshape(tensor.shape).copy())
    return arrays


@dataclass(frozen=True)
class TargetRun:
    outputs: list
    arena_bytes: int
    matches_host: bool  # the target's outputs equal the host run's, byte for byte
    stdout: str


def run_on_target(model_bytes: bytes, target: str, inputs, tags=(),
                  weights: str = "whole", memory: str = DEFAULT_MEMORY,
                  compress: bool = False) -> TargetRun:
    """One invoke of the model on `target` under QEMU with `inputs` (checked like the host
    run's, whole); the outputs come back over semihosting."""
    board_of(target)
    tags = tuple(tags)
    run_tags = host_tags(load_target(target).tags + tags)
    # The host runs the device model the target's project embeds (its core's layouts).
    device = supported_device_model(model_bytes, run_tags, memory, compress,
                                    core=core_of_target(load_target(target)))[0]
    host = HostInterpreter(device, run_tags)
    expected = host.run(inputs)  # also validates shapes and dtypes
    program = build(_run_files(model_bytes, target, tags, inputs, expected, weights, memory,
                               compress),
                    target)
    completed = run(program)
    if PASSED not in completed.stdout and "differ" not in completed.stdout:
        raise ToolchainError(f"the program failed on {target} (exit {completed.returncode}):\n"
                             f"{completed.stdout}{completed.stderr}")
    arena = _ARENA_LINE.search(completed.stdout)
    return TargetRun(_outputs_from(completed.stdout, host.model), int(arena.group(1)),
                     PASSED in completed.stdout, completed.stdout)
