"""Targets: one small declarative JSON file each in targets/ (templates, implied tags, and
where the files go).  Optional keys default to the plain layout of the make target."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tflm_gen.errors import InputError
from tflm_gen.resources import resource_dir
from tflm_gen.target_schema import load_target_file


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    tags: tuple[str, ...]  # tags the target implies, before the user's
    templates: dict  # output path -> template path under templates/
    library_dir: str = "tflm"  # folder of the runtime, kernels and model files
    test_data: str = "test/test_data.h"  # output path of the embedded test input and output
    self_test_hint: str = "`make test`"  # how a user builds and runs the self-test
    values: dict = field(default_factory=dict)  # extra template values (names, CPU flags)
    tag_notes: dict = field(default_factory=dict)  # tag -> what the user should know
    boards: dict = field(default_factory=dict)  # --board name -> its memory and build facts
    board_templates: dict = field(default_factory=dict)  # added with --board (startup, linker)

    def notes(self, tags: tuple[str, ...]) -> list[str]:
        """Notes for the tags the user chose (e.g. which boards a kernel tag speeds up)."""
        return [self.tag_notes[tag] for tag in tags if tag in self.tag_notes]


def list_targets() -> list[str]:
    return sorted(path.stem for path in resource_dir("targets").glob("*.json"))


def load_target(name: str) -> Target:
    if name not in list_targets():  # a name, never a path: `../x` must not reach the disk
        raise InputError(f"unknown target {name!r}; known targets: {', '.join(list_targets())}")
    path = resource_dir("targets") / f"{name}.json"
    data = load_target_file(path)  # a misspelt key is refused, never ignored
    keys = ("library_dir", "test_data", "self_test_hint", "values", "tag_notes", "boards",
            "board_templates")
    optional = {key: data[key] for key in keys if key in data}
    return Target(name, data["description"], tuple(data.get("tags", [])), data["templates"],
                  **optional)


def with_board(target: Target, board: str) -> Target:
    """`target` built for `board`, one of its own boards (its `boards` table, as Arduino's),
    which becomes `values["board"]` (what the templates and the fit check read); refused in
    one line when the target has no such board."""
    if board not in target.boards:
        known = ", ".join(sorted(target.boards)) or "none"
        raise InputError(f"unknown board {board!r} for target {target.name}; its boards: {known}")
    values = {**target.values, "board": {**target.boards[board], "name": board}}
    return replace(target, values=values)


def board_summary(board: dict) -> str:
    """One line of `tflm-gen targets`: the board, its chip, memory and FQBN."""
    memory = board["memory"]
    return (f"{board['title']}, {board['mcu']}: {memory['code']['length'] // 1024} KiB "
            f"{memory['code']['name']}, {memory['data']['length'] // 1024} KiB "
            f"{memory['data']['name']} (FQBN {board['fqbn']})")


# The Library Manager keeps library names starting with "Arduino" for Arduino's own.
RESERVED_LIBRARY_PREFIX = "arduino"


def camel_name(name: str) -> str:
    """`name` (a lowercase C identifier) in CamelCase, the form of Arduino library names:
    kws_ref_model -> KwsRefModel; one the Library Manager would refuse gets `Model` first."""
    camel = "".join(part[:1].upper() + part[1:] for part in name.split("_"))
    return "Model" + camel if camel.lower().startswith(RESERVED_LIBRARY_PREFIX) else camel


def project_name(target: Target, name: str) -> str:
    """The name of the project's folder for `--name name`: the Arduino library's name, else
    the name itself."""
    return target.values.get("library_name", name)
