"""Boards (`--board`): one JSON file each in targets/boards/, the concrete microcontroller
board an IDE target (keil, stm32cube, platformio) is generated for.  A board brings its
memory map (which the linker script, the scatter file and the fit check read), the CPU
flags, the console USART, the runtime tags of its port and the IDE's names for its chip;
the target brings the templates of its startup code and linker files (`board_templates`)."""

from __future__ import annotations

import dataclasses
import posixpath

from tflm_gen.errors import InputError
from tflm_gen.resources import resource_dir
from tflm_gen.target_schema import STM32F4_RCC_REGISTERS, load_board_file
from tflm_gen.targets import Target, list_targets, load_target, with_board

BOARD_HEADER = "tflm_board.h"  # generated into the library folder; the port's DebugLog reads it
RCC_REGISTERS = STM32F4_RCC_REGISTERS  # offsets of the clock-enable registers
GPIO_BASE, GPIO_STRIDE = 0x40020000, 0x400  # STM32F4: GPIOA, then one port per 1 KiB


def list_boards() -> list[str]:
    return sorted(path.stem for path in resource_dir("targets").glob("boards/*.json"))


def board_names() -> list[str]:
    """Every name `--board` takes: the boards of targets/boards/ and those of targets with
    their own table (Arduino's)."""
    own = {board for target in list_targets() for board in load_target(target).boards}
    return sorted(set(list_boards()) | own)


def _number(value) -> int:
    """A board file writes addresses as hex strings ("0x08000000") and counts as numbers."""
    return int(value, 0) if isinstance(value, str) else int(value)


def _console(console: dict) -> dict:
    """The console USART with what its driver needs worked out: RCC offset, GPIO port, and
    the baud-rate divisor (clock / baud, oversampling by 16, rounded)."""
    port_index = ord(console["tx_port"]) - ord("A")
    return {**console, "base": _number(console["base"]),
            "rcc_offset": RCC_REGISTERS[console["rcc_register"]],
            "tx_port_index": port_index, "tx_port_base": GPIO_BASE + GPIO_STRIDE * port_index,
            "brr": (console["clock_hz"] + console["baud"] // 2) // console["baud"]}


def load_board(name: str) -> dict:
    """The board's description with numbers parsed; InputError for an unknown name."""
    if name not in list_boards():  # a name, never a path
        raise InputError(f"unknown board {name!r}; known boards: {', '.join(list_boards())}")
    data = load_board_file(resource_dir("targets") / "boards" / f"{name}.json")
    memory = {kind: {**region, "origin": _number(region["origin"]),
                     "length": _number(region["length"])}
              for kind, region in data["memory"].items()}
    title = data["description"].split(":")[0]
    cpu = next(flag for flag in data["cpu_flags"] if flag.startswith("-mcpu="))[len("-mcpu="):]
    floats = {flag.split("=")[0]: flag.split("=")[1] for flag in data["cpu_flags"]
              if flag.startswith(("-mfpu=", "-mfloat-abi="))}
    return {**data, "name": name, "title": title, "memory": memory, "cpu": cpu,
            "fpu": floats["-mfpu"], "float_abi": floats["-mfloat-abi"],
            "float_flags": [f"{key}={value}" for key, value in floats.items()],
            "console": _console(data["console"])}


def board_target(target: Target, board_name: str | None) -> Target:
    """`target` for `board_name`: its board templates added, the board's tags first, and the
    board in the template values (as `board`, which check_fits_board also reads)."""
    if board_name is None:
        return target
    if target.boards:  # the target's own table (Arduino): sizes and names, no board files
        return with_board(target, board_name)
    if not target.board_templates:
        raise InputError(f"target {target.name} takes no --board; boards work with "
                         "keil, stm32cube, platformio and arduino")
    board = load_board(board_name)
    return dataclasses.replace(
        target, tags=tuple(board["tags"]) + target.tags,
        templates={**target.templates, **target.board_templates},
        values={**target.values, "board": board})


def check_board_tags(tags: tuple[str, ...], board_name: str | None) -> None:
    """A board port's tag (its DebugLog reads tflm_board.h) only makes sense with --board."""
    board_tags = {tag for name in list_boards() for tag in load_board(name)["tags"]
                  if (resource_dir("runtime_c") / tag / "tflm_debug_log.c").is_file()}
    stray = [tag for tag in tags if tag in board_tags and board_name is None]
    if stray:
        raise InputError(f"tag {stray[0]!r} is a board port: give --board instead (known "
                         f"boards: {', '.join(list_boards())})")


def build_configurations(paths: list[str]) -> list[dict]:
    """The build configurations of an IDE project: Debug and Release build the app (the
    project's `main.c`); where the self-test has its own entry (`test/main.c`), a Test
    configuration builds that one instead.  Each names what it leaves out (the test folder,
    or the app's main.c) and the files it keeps."""
    tests = [path for path in paths
             if posixpath.basename(path) == "main.c" and path.split("/")[-2:-1] == ["test"]]
    apps = [path for path in paths if posixpath.basename(path) == "main.c" and path not in tests]
    test_folders = [posixpath.dirname(path) for path in tests]

    def configuration(name: str, excluded: list[str]) -> dict:
        kept = [path for path in paths
                if not any(path == e or path.startswith(e + "/") for e in excluded)]
        return {"name": name, "excluded": excluded, "files": kept}

    configurations = [configuration(name, test_folders) for name in ("Debug", "Release")]
    if tests:
        configurations.append(configuration("Test", apps))
    return configurations
