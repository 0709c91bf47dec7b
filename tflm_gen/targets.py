"""Targets: one small declarative JSON file each in targets/ (templates, implied tags)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from tflm_gen.errors import InputError
from tflm_gen.resources import resource_dir


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    tags: tuple[str, ...]  # tags the target implies, before the user's
    templates: dict  # output path -> template path under templates/


def list_targets() -> list[str]:
    return sorted(path.stem for path in resource_dir("targets").glob("*.json"))


def load_target(name: str) -> Target:
    path = resource_dir("targets") / f"{name}.json"
    if not path.is_file():
        raise InputError(f"unknown target '{name}'; known targets: {', '.join(list_targets())}")
    data = json.loads(path.read_text())
    return Target(name, data["description"], tuple(data.get("tags", [])), data["templates"])
