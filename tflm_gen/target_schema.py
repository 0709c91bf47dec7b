"""The schema of the target files (targets/*.json) and board files (targets/boards/*.json),
checked whenever one is loaded: a misspelt key, a wrong type, an unknown tag or a missing
template is refused with the file and the key named, never ignored (a misspelt optional
key would otherwise silently fall back to its default).

A schema is written with four shapes: `Fields` (a JSON object with fixed keys, some
required), `MapOf` (an object whose keys are free names, e.g. output paths), `ListOf`, and
the leaf rules (`str`, `int`, `bool`, `HEX_OR_INT`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tflm_gen.errors import TargetFileError
from tflm_gen.kernels import known_tags
from tflm_gen.resources import resource_dir


@dataclass(frozen=True)
class Fields:
    """An object with these keys (`required` must be present; any other key is refused)."""

    keys: dict
    required: frozenset = frozenset()


@dataclass(frozen=True)
class MapOf:
    """An object whose keys are names chosen by the file (paths, board names), each value
    following `value`; `key_rule` (if any) returns why a key is wrong, or None."""

    value: object
    key_rule: Callable[[str], str | None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ListOf:
    item: object


@dataclass(frozen=True)
class Leaf:
    """A scalar checked by `rule` (returns None when the value is right); `what` names it."""

    what: str
    rule: Callable[[object], bool]


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # JSON true is no count


def _is_hex_or_int(value) -> bool:
    return _is_int(value) or (isinstance(value, str) and re.fullmatch(r"0x[0-9a-fA-F]+", value)
                              is not None)


LEAVES = {str: Leaf("a string", lambda v: isinstance(v, str)),
          int: Leaf("an integer", _is_int), bool: Leaf("true or false",
                                                       lambda v: isinstance(v, bool))}
HEX_OR_INT = Leaf('an integer or a hex string ("0x...")', _is_hex_or_int)
TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", int: "a number",
              float: "a number", bool: "true or false", type(None): "null"}


def _type_name(value) -> str:
    return TYPE_NAMES.get(type(value), type(value).__name__)


def check(value, schema, file: str, where: str = "") -> None:
    """Raises TargetFileError naming `file` and the key path `where` at the first value that
    breaks `schema`."""
    if isinstance(schema, type):  # str, int, bool written plainly in a schema
        schema = LEAVES[schema]
    place = f"{file}: {where}" if where else file
    if isinstance(schema, Leaf):
        if not schema.rule(value):
            shown = repr(value) if isinstance(value, str) else _type_name(value)
            raise TargetFileError(f"{place} must be {schema.what}, not {shown}")
        return
    expected = list if isinstance(schema, ListOf) else dict
    if not isinstance(value, expected):
        raise TargetFileError(f"{place} must be {TYPE_NAMES[expected]}, not {_type_name(value)}")
    if isinstance(schema, ListOf):
        for index, item in enumerate(value):
            check(item, schema.item, file, f"{where}[{index}]")
    elif isinstance(schema, MapOf):
        for key, item in value.items():
            problem = schema.key_rule(key) if schema.key_rule else None
            if problem:
                raise TargetFileError(f"{file}: {_join(where, key)}: {problem}")
            check(item, schema.value, file, _join(where, key))
    else:
        _check_fields(value, schema, file, where)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _check_fields(value: dict, schema: Fields, file: str, where: str) -> None:
    unknown = [key for key in value if key not in schema.keys]
    if unknown:
        raise TargetFileError(f"{file}: unknown key {_join(where, unknown[0])!r} (known keys"
                              f"{' of ' + where if where else ''}: {', '.join(schema.keys)})")
    missing = [key for key in schema.required if key not in value]
    if missing:
        raise TargetFileError(f"{file}: missing key {_join(where, min(missing))!r}")
    for key, item in value.items():
        check(item, schema.keys[key], file, _join(where, key))


def read_json(path: Path, file: str) -> dict:
    """The JSON object in `path`; TargetFileError (naming `file`) when it is not one."""
    try:
        data = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TargetFileError(f"{file}: not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise TargetFileError(f"{file} must hold a JSON object, not {_type_name(data)}")
    return data


def _is_template(value) -> bool:
    """A file under templates/ (a relative path that stays inside it)."""
    if not isinstance(value, str) or value.startswith("/") or ".." in value.split("/"):
        return False
    return (resource_dir("templates") / value).is_file()


def _tag_problem(name: str) -> str | None:
    return None if name in known_tags() else (f"unknown tag {name!r}; known tags: "
                                              f"{', '.join(known_tags())}")


def _has_float_flags(flags) -> bool:
    """The flags a board's startup and IDE files are derived from (tflm_gen/boards.py)."""
    return (isinstance(flags, list) and all(isinstance(flag, str) for flag in flags)
            and all(any(flag.startswith(prefix) for flag in flags)
                    for prefix in ("-mcpu=", "-mfpu=", "-mfloat-abi=")))


TAG = Leaf("a known tag (`tflm-gen tags`)", lambda v: isinstance(v, str) and v in known_tags())
TEMPLATE = Leaf("a file under templates/", _is_template)
STRINGS = ListOf(str)


def _all(keys: dict) -> Fields:
    return Fields(keys, frozenset(keys))


def _region(number) -> Fields:
    return _all({"name": str, "origin": number, "length": number})


# values.board of a qemu-* target: the toolchain, CPU flags, QEMU machine and memory map.
QEMU_BOARD = Fields(
    {"arch": str, "toolchain": str, "cpu_flags": STRINGS, "fpu": bool, "link_flags": STRINGS,
     "machine": str, "qemu": str, "qemu_flags": STRINGS, "stack_bytes": int,
     "memory": Fields({"code": _region(int), "data": _region(int), "constants": _region(int)},
                      frozenset({"code", "data"}))},
    frozenset({"arch", "toolchain", "cpu_flags", "link_flags", "machine", "qemu", "qemu_flags",
               "stack_bytes", "memory"}))
# One board of a target's own table (Arduino's `boards`): sizes for the fit check, FQBN.
TABLE_BOARD = Fields(
    {"title": str, "mcu": str, "core": str, "fqbn": str, "stack_bytes": int, "stack_name": str,
     "constants_in_data": bool,
     "memory": _all({"code": _all({"name": str, "length": int}),
                     "data": _all({"name": str, "length": int})})},
    frozenset({"title", "mcu", "core", "fqbn", "memory"}))
# Extra template values; every key one of the targets' templates reads.
TARGET_VALUES = Fields({"board": QEMU_BOARD, "arm_cpu_flags": str, "cpu": str, "device": str,
                        "pack": str, "mcu": str, "library_name": str, "version": str,
                        "end_of_life": str, "build_commands": STRINGS})
TARGET_FILE = Fields(
    {"description": str, "tags": ListOf(TAG), "templates": MapOf(TEMPLATE),
     "library_dir": str, "test_data": str, "self_test_hint": str, "values": TARGET_VALUES,
     "tag_notes": MapOf(str, _tag_problem), "boards": MapOf(TABLE_BOARD),
     "board_templates": MapOf(TEMPLATE)},
    frozenset({"description", "templates"}))

STM32F4_RCC_REGISTERS = {"AHB1ENR": 0x30, "APB1ENR": 0x40, "APB2ENR": 0x44}  # RCC offsets
CONSOLE = _all({
    "usart": str, "base": HEX_OR_INT, "rcc_bit": int, "tx_pin": int,
    "rcc_register": Leaf(f"one of {', '.join(STM32F4_RCC_REGISTERS)}",
                         lambda v: v in STM32F4_RCC_REGISTERS),
    "tx_port": Leaf("a GPIO port letter A-K", lambda v: isinstance(v, str)
                    and re.fullmatch("[A-K]", v) is not None),
    "alternate_function": int, "clock_hz": int, "baud": Leaf("a positive integer",
                                                             lambda v: _is_int(v) and v > 0)})
BOARD_FILE = Fields(
    {"description": str, "tags": ListOf(TAG), "stack_bytes": int, "qemu_machine": str,
     "cpu_flags": Leaf("a list of strings with -mcpu=, -mfpu= and -mfloat-abi=",
                       _has_float_flags),
     "memory": _all({"code": _region(HEX_OR_INT), "data": _region(HEX_OR_INT)}),
     "console": CONSOLE, "stm32cube": _all({"mcu": str}),
     "keil": _all({"device": str, "vendor": str, "pack": str, "clock_hz": int}),
     "platformio": _all({"platform": str, "board": str})},
    frozenset({"description", "tags", "stack_bytes", "cpu_flags", "memory", "console",
               "stm32cube", "keil", "platformio"}))


def load_target_file(path: Path) -> dict:
    """targets/<name>.json, checked against TARGET_FILE."""
    return _load(path, f"targets/{path.name}", TARGET_FILE)


def load_board_file(path: Path) -> dict:
    """targets/boards/<name>.json, checked against BOARD_FILE."""
    return _load(path, f"targets/boards/{path.name}", BOARD_FILE)


def _load(path: Path, file: str, schema: Fields) -> dict:
    data = read_json(path, file)
    check(data, schema, file)
    return data
