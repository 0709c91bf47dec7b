"""`--zip`: a generated tree as one `.zip` whose top folder is the library or project name,
the form the Arduino IDE's "Add .ZIP Library" imports.  The bytes depend only on the
files: entries sorted, folders listed before their files, one fixed timestamp and fixed
permissions, so the same project always gives the same archive."""

from __future__ import annotations

import io
import zipfile
from pathlib import PurePosixPath

# The earliest time a zip entry can carry; any fixed value would do, this one says "none".
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o100644  # regular file, rw-r--r--
FOLDER_MODE = 0o040755  # directory, rwxr-xr-x
COMPRESSION_LEVEL = 9


def _entry(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, FIXED_TIME)
    info.external_attr = mode << 16
    info.create_system = 3  # Unix, so the mode bits above are read back
    info.compress_type = zipfile.ZIP_STORED if name.endswith("/") else zipfile.ZIP_DEFLATED
    return info


def _folders(top: str, paths) -> list[str]:
    """Every folder of the archive, parents first, each once."""
    folders = {top}
    for path in paths:
        for parent in PurePosixPath(top, path).parents:
            if str(parent) != ".":
                folders.add(str(parent))
    return sorted(folders)


def zip_tree(files: dict[str, bytes], top: str) -> bytes:
    """`files` (relative path -> bytes) under the folder `top`, as zip bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compresslevel=COMPRESSION_LEVEL) as archive:
        for folder in _folders(top, files):
            archive.writestr(_entry(f"{folder}/", FOLDER_MODE), b"")
        for path in sorted(files):
            archive.writestr(_entry(f"{top}/{path}", FILE_MODE), files[path])
    return buffer.getvalue()
