"""The operating-system side of tflm_gen.output: an exchange rename, a lock between
concurrent runs, and the names of staging folders (so the next run can find them)."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; concurrent runs are not serialised
    fcntl = None

STAGING_PREFIX = ".tflm-gen-"
RENAME_EXCHANGE = 2  # linux/fs.h: atomically exchange two existing paths
AT_FDCWD = -100


def stage_name(out_name: str, kind: str) -> str:
    """`.tflm-gen-<out name>.<kind>.<random>`; kind is `new` (a tree being built, or after
    an exchange the previous one) or `old` (a previous tree put aside by two renames)."""
    return f"{STAGING_PREFIX}{out_name}.{kind}.{secrets.token_hex(4)}"


def staging_leftovers(root: Path) -> list[tuple[str, Path]]:
    """(kind, path) of the staging folders of `root` that a killed run left, `old` first."""
    found = []
    prefix = f"{STAGING_PREFIX}{root.name}."
    if not root.parent.is_dir():
        return found
    for path in sorted(root.parent.iterdir()):
        rest = path.name[len(prefix):].split(".")
        if (path.name.startswith(prefix) and len(rest) == 2 and rest[0] in ("new", "old")
                and path.is_dir() and not path.is_symlink()):
            found.append((rest[0], path))
    return sorted(found, key=lambda item: item[0] != "old")


def _renameat2():
    """libc's renameat2, or None (not Linux, or a C library older than glibc 2.28)."""
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError, TypeError):  # TypeError: Windows has no CDLL(None)
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                         ctypes.c_uint]
    return function


def exchange(staging: Path, root: Path) -> None:
    """Puts the tree at `staging` at `root` and the tree that was at root at `staging`,
    in one step where the OS can; else in two renames whose middle state the next run
    repairs (see tflm_gen.output._recover)."""
    function = _renameat2()
    if function is not None:
        result = function(AT_FDCWD, os.fsencode(staging), AT_FDCWD, os.fsencode(root),
                          RENAME_EXCHANGE)
        if result == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise OSError(code, os.strerror(code), str(root))
    _exchange_by_two_renames(staging, root)


def _exchange_by_two_renames(staging: Path, root: Path) -> None:
    retired = root.parent / stage_name(root.name, "old")
    os.rename(root, retired)  # a kill here leaves root missing: the next run renames it back
    os.rename(staging, root)
    os.rename(retired, staging)


@contextlib.contextmanager
def folder_lock(folder: Path):
    """Serialises tflm-gen runs writing into the same parent folder (a flock on the
    folder itself, so no lock file is ever left behind)."""
    descriptor = None
    if fcntl is not None and folder.is_dir():
        with contextlib.suppress(OSError):
            descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            fcntl.flock(descriptor, fcntl.LOCK_EX)
    try:
        yield
    finally:
        if descriptor is not None:
            os.close(descriptor)
