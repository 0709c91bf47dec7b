"""Writing a generated tree to disk without ever losing anything of the user's.

- Only entries tflm-gen wrote are ever replaced or removed: the regular files listed in
  the folder's manifest (`.tflm-gen-files`) and the folders holding them.  Anything else,
  of any kind (a file, an empty folder, a symlink, a fifo, `build/`), stays where it is.
- A folder holding such entries (other than `build/`, which the generated build scripts
  make) is refused unless `force`; with `force` they are kept beside the new files.  An
  entry of the user's at a path we would write is always refused.  `/`, the home folder
  and the folders above the current one are refused before anything is read.
- An `-o` that is a symlink is written through, at its target.
- A new folder appears whole: it is filled beside the destination, then renamed.  A
  folder holding only a previous tree of ours is swapped with the new one in one exchange
  rename (Linux renameat2) or, where the OS has none, two renames; a staging folder a
  crash leaves behind is recovered or removed on the next run.  Any other existing folder
  (one with `build/` or the user's entries, the current folder, a mount point) is updated
  in place, file by file, each file replaced by a rename; the manifest, written first and
  last, always lists every file of ours present, so a crash leaves nothing unaccounted.
- Files and folders get the usual permissions (the umask decides), never 0700.
"""

from __future__ import annotations

import io
import os
import secrets
import shutil
from pathlib import Path, PurePosixPath

import numpy as np

from tflm_gen.errors import OutputDirError
from tflm_gen.output_swap import exchange, folder_lock, stage_name, staging_leftovers

MANIFEST = ".tflm-gen-files"
BUILD_DIR = "build"  # where generated build scripts put their products; kept across writes
TEMPORARY_PREFIX = ".tflm-gen-tmp-"  # a file being written; a crash may leave one behind
FORBIDDEN_CHARACTERS = ("\\", ":", "\0")  # separators or drive letters elsewhere


def check_relative_path(path: str) -> None:
    """Raises OutputDirError unless `path` stays inside the output folder: relative, no
    `..` or `.`, no empty part, no name tflm-gen reserves for itself."""
    parts = PurePosixPath(path).parts
    bad = (not parts or path.startswith("/") or any(char in path for char in FORBIDDEN_CHARACTERS)
           or any(part in ("", ".", "..") for part in path.split("/"))
           or parts[0] == MANIFEST or any(part.startswith(".tflm-gen-") for part in parts))
    if bad:
        raise OutputDirError(f"refusing to write {path!r}: generated paths must be relative "
                             "and stay inside the output folder")


def write_tree(files: dict[str, bytes], out_dir: str | Path, force: bool = False) -> Path:
    """Writes `files` as tflm-gen's content of out_dir (see the module's rules); returns
    out_dir.  `force` lets a folder holding the user's entries receive the files (those
    entries are kept)."""
    for path in files:
        check_relative_path(path)
    out_dir = Path(out_dir)
    root = _destination(out_dir)
    try:
        with folder_lock(root.parent):
            _write_locked(files, root, force)
    except OSError as error:
        raise OutputDirError(f"cannot write {out_dir}: "
                             f"{error.strerror or error}{_filename(error)}") from None
    return out_dir


def _filename(error: OSError) -> str:
    return f" ({error.filename})" if error.filename else ""


def _destination(out_dir: Path) -> Path:
    """The real folder to write (a symlink's target), refusing the dangerous ones."""
    if out_dir.is_symlink() and not out_dir.exists():
        raise OutputDirError(f"{out_dir} is a symlink to a missing folder")
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputDirError(f"{out_dir} exists and is not a directory")
    root = Path(os.path.realpath(out_dir))
    cwd, home = Path.cwd().resolve(), Path.home().resolve()
    if root == Path(root.anchor) or root == home or root in cwd.parents or root in home.parents:
        raise OutputDirError(f"refusing to write a project into {root}: choose a new folder")
    return root


def _write_locked(files: dict[str, bytes], root: Path, force: bool) -> None:
    _recover(root)
    if not root.exists():
        _create(files, root)
        return
    survey = _survey(root)
    _check_foreign(root, survey, files, force)
    if survey.previous is not None and not survey.foreign and _may_swap(root):
        _swap(files, root)
    else:
        _update_in_place(files, root, survey)


class _Survey:
    """What an existing output folder holds: our files, the user's entries."""

    def __init__(self, previous: set[str] | None):
        self.previous = previous  # the manifest's names, None without a manifest
        self.ours: set[str] = set()  # regular files listed in the manifest, present
        self.foreign: list[str] = []  # topmost entries that are not ours (build/ included)
        self.temporary: list[str] = []  # files a crashed write left behind


def _read_manifest(root: Path) -> set[str] | None:
    manifest = root / MANIFEST
    if manifest.is_symlink() or not manifest.is_file():
        return None
    names = set()
    for line in manifest.read_text(errors="replace").split("\n"):
        try:
            check_relative_path(line)
            names.add(line)
        except OutputDirError:  # a blank line, or a line we never write: not ours
            continue
    return names


def _survey(root: Path) -> _Survey:
    survey = _Survey(_read_manifest(root))
    listed = survey.previous or set()
    folders = {str(parent) for name in listed for parent in PurePosixPath(name).parents}
    _survey_folder(root, "", listed, folders, survey)
    return survey


def _survey_folder(root: Path, prefix: str, listed: set, folders: set, survey: _Survey):
    with os.scandir(root / prefix if prefix else root) as entries:
        for entry in sorted(entries, key=lambda item: item.name):
            relative = prefix + entry.name
            if entry.is_dir(follow_symlinks=False) and relative in folders:
                _survey_folder(root, relative + "/", listed, folders, survey)
            elif not entry.is_file(follow_symlinks=False):
                survey.foreign.append(relative)  # a symlink, fifo, socket or the user's folder
            elif relative in listed:
                survey.ours.add(relative)
            elif entry.name.startswith(TEMPORARY_PREFIX):
                survey.temporary.append(relative)
            elif relative != MANIFEST:
                survey.foreign.append(relative)


def _check_foreign(root: Path, survey: _Survey, files: dict, force: bool) -> None:
    blocked = sorted(_collisions(survey.foreign, files))
    if blocked:
        raise OutputDirError(f"{root} holds entries tflm-gen did not write where it would "
                             f"write ({_shown(blocked)}); move them away or choose another "
                             "folder")
    others = [name for name in survey.foreign if name != BUILD_DIR]
    if others and (not force or root == Path.cwd().resolve()):
        hint = "" if force else "; --force writes beside them (they are kept)"
        raise OutputDirError(f"{root} holds entries tflm-gen did not write ({_shown(others)});"
                             f" choose an empty or new folder{hint}")


def _shown(names: list[str]) -> str:
    shown = ", ".join(repr(name)[1:-1] for name in names[:5])
    return shown + (" ..." if len(names) > 5 else "")


def _collisions(foreign: list[str], files: dict):
    """Foreign entries at, above or below a path we would write."""
    taken = set(files) | {str(p) for name in files for p in PurePosixPath(name).parents}
    taken.add(MANIFEST)  # a user's entry under our manifest's name is never replaced
    for name in foreign:
        if name in taken or any(path.startswith(name + "/") for path in files):
            yield name


def _may_swap(root: Path) -> bool:
    """A whole-folder swap replaces root's inode: not for the current folder (a shell in
    it would be left in a deleted folder), a mount point (it cannot move), nor a folder
    whose parent we may not write (no room for the staging folder)."""
    return (root != Path.cwd().resolve() and not os.path.ismount(root)
            and os.access(root.parent, os.W_OK))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_file_atomically(path: Path, data: bytes) -> None:
    """The file replaced by one rename, so a reader sees the old or the new bytes."""
    temporary = path.parent / f"{TEMPORARY_PREFIX}{secrets.token_hex(6)}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(temporary, flags, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _write_manifest(folder: Path, names) -> None:
    _write_file_atomically(folder / MANIFEST, ("\n".join(sorted(names)) + "\n").encode())


def _fill(folder: Path, files: dict[str, bytes]) -> None:
    """Writes the files into `folder` (ours: every parent folder is real or new)."""
    for relative, data in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_file_atomically(path, data)


def _new_staging(root: Path, files: dict[str, bytes]) -> Path:
    """A filled staging folder beside root; its manifest comes first, so a crash leaves a
    folder whose every file is listed (the next run removes it)."""
    staging = root.parent / stage_name(root.name, "new")
    staging.mkdir()
    try:
        staging.chmod(0o777 & ~_umask())
        _write_manifest(staging, files)
        _fill(staging, files)
    except Exception:  # a full disk, say: nothing but our new files is in there
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return staging


def _create(files: dict[str, bytes], root: Path) -> None:
    root.parent.mkdir(parents=True, exist_ok=True)
    staging = _new_staging(root, files)
    try:
        os.rename(staging, root)
    except OSError:
        _remove_ours(staging)
        raise


def _swap(files: dict[str, bytes], root: Path) -> None:
    staging = _new_staging(root, files)
    exchange(staging, root)  # staging now holds the previous tree
    _remove_ours(staging)


def _update_in_place(files: dict[str, bytes], root: Path, survey: _Survey) -> None:
    for name in survey.temporary:
        (root / name).unlink(missing_ok=True)
    _write_manifest(root, survey.ours | set(files))  # covers every file of ours until the end
    _fill(root, files)
    for name in sorted(survey.ours - set(files)):
        (root / name).unlink(missing_ok=True)
        _remove_empty_parents(root, PurePosixPath(name).parent)
    _write_manifest(root, files)


def _remove_empty_parents(root: Path, folder: PurePosixPath) -> None:
    """Our folders left empty by a removed file go too; a folder the user put something
    in is not empty and stays."""
    while str(folder) != ".":
        try:
            (root / folder).rmdir()
        except OSError:
            return
        folder = folder.parent


def _remove_ours(folder: Path) -> bool:
    """Removes a staging folder if it holds only our files; True when it is gone.  The
    manifest goes last: a kill midway leaves files it still lists, so still ours."""
    survey = _survey(folder)
    if survey.foreign:
        return False
    for entry in sorted(folder.iterdir()):
        if entry.name == MANIFEST:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    (folder / MANIFEST).unlink(missing_ok=True)
    folder.rmdir()
    return True


def _recover(root: Path) -> None:
    """Finishes what a killed run left: a previous tree put aside by the two-rename swap
    goes back when root is missing; staging folders holding only our files go."""
    leftovers = staging_leftovers(root)
    if not root.exists():
        retired = [path for kind, path in leftovers if kind == "old"]
        if retired:
            os.rename(retired[0], root)
    for _, path in leftovers:
        if path.exists():
            _remove_ours(path)


def write_file(path: str | Path, data: bytes) -> None:
    """One output file (`run -o`, `plan -o`, `--json`, `--svg`); an OSError becomes one
    OutputDirError line."""
    try:
        Path(path).write_bytes(data)
    except OSError as error:
        raise OutputDirError(f"cannot write {path}: {error.strerror or error}") from None


def output_keys(names: list[str]) -> list[list[str]]:
    """The .npz keys of each output: its tensor name, then `output_<i>` (the old key, kept
    as an alias); a name that is empty or already taken by an earlier key is left out."""
    taken: set[str] = set()
    keys = []
    for index, name in enumerate(names):
        own = [key for key in (name, f"output_{index}") if key and key not in taken]
        taken.update(own)
        keys.append(own)
    return keys


def save_outputs(path: str, outputs: list[np.ndarray], names: list[str] | None = None) -> None:
    """The outputs as an .npz keyed by tensor name and by `output_<i>`; `.npz` is added
    when missing, as numpy does."""
    buffer = io.BytesIO()
    keys = output_keys(names or [""] * len(outputs))
    np.savez(buffer, **{key: array for array, own in zip(outputs, keys) for key in own})
    write_file(path if path.endswith(".npz") else path + ".npz", buffer.getvalue())
