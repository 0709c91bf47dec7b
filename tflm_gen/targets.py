"""Targets: one small declarative JSON file each in targets/ (templates, implied tags, and
where the files go).  Optional keys default to the plain layout of the make target."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from tflm_gen.errors import InputError
from tflm_gen.resources import resource_dir


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    tags: tuple[str, ...]  # tags the target implies, before the user's
    templates: dict  # output path -> template path under templates/
    library_dir: str = "tflm"  # folder of the runtime, kernels and model files
    test_data: str = "test/test_data.h"  # output path of the embedded test input and output
    self_test_hint: str = "make test"  # how a user builds and runs the self-test
    values: dict = field(default_factory=dict)  # extra template values (names, CPU flags)
    tag_notes: dict = field(default_factory=dict)  # tag -> what the user should know
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
    data = json.loads(path.read_text())
    keys = ("library_dir", "test_data", "self_test_hint", "values", "tag_notes",
            "board_templates")
    optional = {key: data[key] for key in keys if key in data}
    return Target(name, data["description"], tuple(data.get("tags", [])), data["templates"],
                  **optional)
