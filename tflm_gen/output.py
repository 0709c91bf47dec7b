"""Writing a generated tree to disk: file by file through a temporary name, with a
manifest of what we wrote so that we never overwrite or delete a user's files."""

from __future__ import annotations

import os
from pathlib import Path

from tflm_gen.errors import OutputDirError

MANIFEST = ".tflm-gen-files"
BUILD_DIR = "build"  # where generated build scripts put their products; left alone


def _previous_files(out_dir: Path) -> set[str]:
    manifest = out_dir / MANIFEST
    return set(manifest.read_text().split("\n")) - {""} if manifest.is_file() else set()


def _foreign_files(out_dir: Path, ours: set[str]) -> list[str]:
    found = []
    for path in sorted(out_dir.rglob("*")):
        relative = path.relative_to(out_dir).as_posix()
        if relative.split("/")[0] == BUILD_DIR:
            continue
        if path.is_file() and relative != MANIFEST and relative not in ours:
            found.append(relative)
    return found


def write_tree(files: dict[str, bytes], out_dir: str | Path) -> Path:
    """Writes `files` under out_dir; refuses a directory holding files we did not write.

    Build products belong under build/, which is left alone, so a project can be
    regenerated over a built one.
    """
    out_dir = Path(out_dir)
    previous = _previous_files(out_dir) if out_dir.is_dir() else set()
    if out_dir.is_dir():
        foreign = _foreign_files(out_dir, previous)
        if foreign:
            shown = ", ".join(foreign[:5]) + (" ..." if len(foreign) > 5 else "")
            raise OutputDirError(
                f"{out_dir} holds files tflm-gen did not write ({shown}); "
                "choose an empty or new directory"
            )
    for relative, data in files.items():
        path = out_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp-tflm-gen")
        temporary.write_bytes(data)
        os.replace(temporary, path)
    for stale in sorted(previous - set(files)):
        (out_dir / stale).unlink(missing_ok=True)
    (out_dir / MANIFEST).write_text("\n".join(sorted(files)) + "\n")
    return out_dir
