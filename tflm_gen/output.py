"""Writing a generated tree to disk, all at once: the files go into a temporary folder
beside the destination, which is then renamed into place, so a reader never sees half a
project.  A manifest (the marker that tflm-gen made the folder) lists what we wrote; a
folder holding anything else is refused unless the user forces it."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from tflm_gen.errors import OutputDirError

MANIFEST = ".tflm-gen-files"
BUILD_DIR = "build"  # where generated build scripts put their products; kept across writes


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


def _check_destination(out_dir: Path, force: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputDirError(f"{out_dir} exists and is not a directory")
    if force or not out_dir.is_dir():
        return
    foreign = _foreign_files(out_dir, _previous_files(out_dir))
    if foreign:
        shown = ", ".join(foreign[:5]) + (" ..." if len(foreign) > 5 else "")
        raise OutputDirError(
            f"{out_dir} holds files tflm-gen did not write ({shown}); choose an empty or new "
            "directory, or pass --force to replace it"
        )


def _fill(folder: Path, files: dict[str, bytes]) -> None:
    for relative, data in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (folder / MANIFEST).write_text("\n".join(sorted(files)) + "\n")


def write_tree(files: dict[str, bytes], out_dir: str | Path, force: bool = False) -> Path:
    """Writes `files` as the whole content of out_dir (its build/ folder is kept).

    Refuses a directory holding files tflm-gen did not write, unless `force`.
    """
    out_dir = Path(out_dir)
    _check_destination(out_dir, force)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tflm-gen-", dir=out_dir.parent))
    try:
        _fill(staging, files)
        if out_dir.is_dir():
            if (out_dir / BUILD_DIR).is_dir():
                os.replace(out_dir / BUILD_DIR, staging / BUILD_DIR)
            retired = Path(tempfile.mkdtemp(prefix=".tflm-gen-old-", dir=out_dir.parent))
            os.replace(out_dir, retired / "tree")
            os.replace(staging, out_dir)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            os.replace(staging, out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out_dir
