"""The output folder: only what tflm-gen wrote is ever replaced or removed, a symlinked
-o is written through, swaps survive a kill, nothing lands outside the folder, and
permissions follow the umask (tflm_gen.output)."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import stat
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tflm_gen import output, output_swap
from tflm_gen.errors import OutputDirError
from tflm_gen.output import MANIFEST, check_relative_path, write_tree

OLD = {"a.c": b"old a", "tflm/b.c": b"old b", "tflm/deep/c.h": b"old c"}
NEW = {"a.c": b"new a", "tflm/b.c": b"new b", "d.c": b"new d"}


def tree(folder: Path) -> dict[str, str]:
    """Every entry below folder (not following symlinks): path -> kind or file content."""
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            found[relative] = "link -> " + os.readlink(path)
        elif stat.S_ISDIR(mode):
            found[relative] = "dir"
        elif stat.S_ISFIFO(mode):
            found[relative] = "fifo"
        else:
            found[relative] = path.read_bytes().decode()
    return found


def ours(files: dict[str, bytes]) -> dict[str, str]:
    """What tree() shows for a folder holding exactly `files` and the manifest."""
    shown = {name: data.decode() for name, data in files.items()}
    for name in files:
        for parent in Path(name).parents:
            if str(parent) != ".":
                shown[parent.as_posix()] = "dir"
    shown[MANIFEST] = "".join(f"{name}\n" for name in sorted(files))
    return dict(sorted(shown.items()))


def no_leftovers(parent: Path) -> None:
    assert [name for name in os.listdir(parent) if name.startswith(".tflm-gen")] == []


def test_new_folder_holds_exactly_the_files(tmp_path):
    write_tree(OLD, tmp_path / "out")
    assert tree(tmp_path / "out") == ours(OLD)
    no_leftovers(tmp_path)


def test_regeneration_replaces_and_removes_only_our_files(tmp_path):
    out = tmp_path / "out"
    write_tree(OLD, out)
    write_tree(NEW, out)
    assert tree(out) == ours(NEW)
    no_leftovers(tmp_path)


def test_previous_tree_is_swapped_by_an_exchange_rename(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_tree(OLD, out)
    calls = []
    real = output_swap._exchange_by_two_renames
    monkeypatch.setattr(output_swap, "_exchange_by_two_renames",
                        lambda *args: calls.append(args) or real(*args))
    inode = out.stat().st_ino
    write_tree(NEW, out)
    assert out.stat().st_ino != inode and tree(out) == ours(NEW)
    assert calls == [] or output_swap._renameat2() is None  # the fallback only without it


def test_swap_without_renameat2_uses_two_renames(tmp_path, monkeypatch):
    monkeypatch.setattr(output_swap, "_renameat2", lambda: None)
    out = tmp_path / "out"
    write_tree(OLD, out)
    write_tree(NEW, out)
    assert tree(out) == ours(NEW)
    no_leftovers(tmp_path)


@pytest.mark.parametrize("make", ["empty dir", "symlink to dir", "fifo", "file", "dangling"])
def test_foreign_entries_of_any_kind_are_refused_then_kept_with_force(tmp_path, make):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious").write_text("keep me")
    write_tree(OLD, out)
    entry = out / "tflm" / "mine"
    {"empty dir": lambda: entry.mkdir(), "symlink to dir": lambda: entry.symlink_to(elsewhere),
     "fifo": lambda: os.mkfifo(entry), "file": lambda: entry.write_text("mine"),
     "dangling": lambda: entry.symlink_to(tmp_path / "nothing")}[make]()
    before = tree(out)["tflm/mine"]
    with pytest.raises(OutputDirError, match="tflm/mine"):
        write_tree(NEW, out)
    assert tree(out) == {**ours(OLD), "tflm/mine": before}
    write_tree(NEW, out, force=True)
    assert tree(out) == {**ours(NEW), "tflm/mine": before}
    assert tree(elsewhere) == {"precious": "keep me"}
    no_leftovers(tmp_path)


def test_build_folder_is_kept_in_place(tmp_path):
    out = tmp_path / "out"
    write_tree(OLD, out)
    (out / "build").mkdir()
    (out / "build" / "app.o").write_text("object")
    inode = (out / "build").stat().st_ino
    write_tree(NEW, out)
    assert tree(out) == {**ours(NEW), "build": "dir", "build/app.o": "object"}
    assert (out / "build").stat().st_ino == inode  # never moved


def test_user_entry_at_a_generated_path_is_refused_even_with_force(tmp_path):
    out = tmp_path / "out"
    write_tree(OLD, out)
    (out / "d.c").write_text("the user's d.c")
    for force in (False, True):
        with pytest.raises(OutputDirError, match=r"where it would write \(d.c\)"):
            write_tree(NEW, out, force)
    assert (out / "d.c").read_text() == "the user's d.c"


def test_user_folder_on_a_generated_folder_path_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "tflm").symlink_to(tmp_path)  # writing tflm/b.c would land in tmp_path
    with pytest.raises(OutputDirError, match=r"where it would write \(tflm\)"):
        write_tree(NEW, out, force=True)
    assert not (tmp_path / "b.c").exists()


def test_a_users_empty_folder_is_filled_in_place(tmp_path):
    out = tmp_path / "out"
    out.mkdir(mode=0o751)
    out.chmod(0o751)
    inode = out.stat().st_ino
    write_tree(NEW, out)
    assert out.stat().st_ino == inode and stat.S_IMODE(out.stat().st_mode) == 0o751
    assert tree(out) == ours(NEW)


def test_symlinked_output_is_written_through_at_its_target(tmp_path):
    target, link = tmp_path / "real", tmp_path / "link"
    target.mkdir()
    link.symlink_to(target)
    write_tree(OLD, link)
    (target / "build").mkdir()
    write_tree(NEW, link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert tree(target) == {**ours(NEW), "build": "dir"}
    no_leftovers(tmp_path)


def test_symlink_to_nothing_is_refused(tmp_path):
    (tmp_path / "link").symlink_to(tmp_path / "missing")
    with pytest.raises(OutputDirError, match="symlink to a missing folder"):
        write_tree(NEW, tmp_path / "link")
    assert not (tmp_path / "missing").exists()


def test_non_directory_output_is_refused(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "file").write_text("x")
    for name in ("fifo", "file"):
        with pytest.raises(OutputDirError, match="not a directory"):
            write_tree(NEW, tmp_path / name)
    assert (tmp_path / "file").read_text() == "x"


@pytest.mark.parametrize("where", ["root", "home", "cwd parent", "home parent"])
def test_dangerous_folders_are_refused_before_anything_is_read(tmp_path, monkeypatch, where):
    home, work = tmp_path / "home" / "me", tmp_path / "home" / "me" / "src" / "work"
    work.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    monkeypatch.setattr(output, "_survey", lambda *_: pytest.fail("read the folder"))
    folder = {"root": Path("/"), "home": home, "cwd parent": work.parent,
              "home parent": tmp_path / "home"}[where]
    with pytest.raises(OutputDirError, match="refusing to write a project into"):
        write_tree(NEW, folder)


@pytest.mark.parametrize("path", ["../../x.c", "/etc/x.c", "a/../../x.c", "a//b.c", "./a.c",
                                  "", "a\\..\\x.c", "C:x.c", ".tflm-gen-files", "a/.tflm-gen-x"])
def test_generated_paths_must_stay_inside(tmp_path, path):
    with pytest.raises(OutputDirError, match="must be relative"):
        check_relative_path(path)
    with pytest.raises(OutputDirError):
        write_tree({path: b"x", "ok.c": b""}, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path.parent / "x.c").exists()


def test_crafted_target_mapping_outside_is_refused(tmp_path, monkeypatch):
    """A target file whose template output is `../../x.c` (the CLI through a crafted
    targets folder): refused, nothing written."""
    from tflm_gen import resources, targets
    from tflm_gen.cli import main

    real = resources.resource_dir
    crafted = tmp_path / "targets"
    crafted.mkdir()
    spec = json.loads((real("targets") / "make.json").read_text())
    spec["templates"]["../../x.c"] = spec["templates"]["Makefile"]
    (crafted / "make.json").write_text(json.dumps(spec))
    monkeypatch.setattr(targets, "resource_dir",
                        lambda name: crafted if name == "targets" else real(name))
    sine = Path(__file__).resolve().parent.parent / "examples" / "sine" / "sine_int8.tflite"
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    result = CliRunner().invoke(main, ["project", "--model", str(sine), "-o", "p"])
    assert result.exit_code == 2 and "'../../x.c'" in result.stderr, result.output
    assert sorted(os.listdir(work)) == [] and not (tmp_path / "x.c").exists()


def test_crafted_manifest_never_removes_outside_or_through_symlinks(tmp_path):
    out, outside = tmp_path / "out", tmp_path / "outside"
    outside.mkdir()
    (outside / "b.c").write_text("precious")
    (tmp_path / "x.c").write_text("precious too")
    write_tree({"a.c": b"1"}, out)
    (out / "tflm").symlink_to(outside)
    (out / MANIFEST).write_text("a.c\n../x.c\n/etc/hostname\ntflm/b.c\n")
    write_tree({"a.c": b"2"}, out, force=True)
    assert (outside / "b.c").read_text() == "precious"
    assert (tmp_path / "x.c").read_text() == "precious too"
    assert tree(out) == {**ours({"a.c": b"2"}), "tflm": f"link -> {outside}"}


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o002])
def test_permissions_follow_the_umask(tmp_path, mask):
    old = os.umask(mask)
    try:
        write_tree(NEW, tmp_path / "out")
        write_tree(OLD, tmp_path / "out")
    finally:
        os.umask(old)
    out = tmp_path / "out"
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~mask
    assert stat.S_IMODE((out / "tflm" / "deep").stat().st_mode) == 0o777 & ~mask
    assert stat.S_IMODE((out / "a.c").stat().st_mode) == 0o666 & ~mask


def test_kill_between_the_two_renames_is_repaired_by_the_next_run(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_tree(OLD, out)
    (out / "build").mkdir()  # forces the in-place path: take it away for the swap
    (out / "build").rmdir()
    monkeypatch.setattr(output_swap, "_renameat2", lambda: None)
    real_rename, calls = os.rename, []

    def killed_after_first(source, destination):
        calls.append(source)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the process dies here
        real_rename(source, destination)

    monkeypatch.setattr(output_swap.os, "rename", killed_after_first)
    with pytest.raises(KeyboardInterrupt):
        write_tree(NEW, out)
    monkeypatch.setattr(output_swap.os, "rename", real_rename)
    assert not out.exists()  # the middle state: previous tree aside, new one staged
    write_tree(NEW, out)
    assert tree(out) == ours(NEW)
    no_leftovers(tmp_path)


def test_staging_folder_left_by_a_kill_is_removed(tmp_path):
    out = tmp_path / "out"
    write_tree(OLD, out)
    staging = tmp_path / ".tflm-gen-out.new.0badc0de"
    staging.mkdir()
    (staging / MANIFEST).write_text("a.c\ntflm/b.c\n")
    (staging / "a.c").write_text("half")
    (staging / "tflm").mkdir()
    (staging / "tflm" / ".tflm-gen-tmp-123456").write_text("partial")
    write_tree(NEW, out)
    no_leftovers(tmp_path)
    assert tree(out) == ours(NEW)


def test_staging_folder_holding_a_users_file_is_kept(tmp_path):
    staging = tmp_path / ".tflm-gen-out.new.0badc0de"
    staging.mkdir()
    (staging / "notes.txt").write_text("mine")
    write_tree(NEW, tmp_path / "out")
    assert (staging / "notes.txt").read_text() == "mine"


def test_temporary_file_left_in_the_tree_is_removed(tmp_path):
    out = tmp_path / "out"
    write_tree(OLD, out)
    (out / "build").mkdir()  # in place
    (out / "tflm" / ".tflm-gen-tmp-abcdef").write_text("partial")
    write_tree(NEW, out)
    assert tree(out) == {**ours(NEW), "build": "dir"}


def test_kill_during_an_in_place_update_leaves_nothing_unaccounted(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_tree(OLD, out)
    (out / "build").mkdir()
    real_fill = output._fill

    def killed(folder, files):
        real_fill(folder, dict(list(files.items())[:1]))
        raise KeyboardInterrupt

    monkeypatch.setattr(output, "_fill", killed)
    with pytest.raises(KeyboardInterrupt):
        write_tree(NEW, out)
    monkeypatch.setattr(output, "_fill", real_fill)
    write_tree(NEW, out)  # no file is foreign: the manifest listed old and new
    assert tree(out) == {**ours(NEW), "build": "dir"}


def _writer(arguments) -> str:
    folder, seed = arguments
    files = {f"f{seed % 3}.c": str(seed).encode(), "common.h": b"same"}
    try:
        write_tree(files, folder)
        return "ok"
    except OutputDirError as error:
        return f"refused: {error}"


def test_concurrent_writers_leave_one_whole_tree(tmp_path):
    out = tmp_path / "out"
    with multiprocessing.get_context("fork").Pool(4) as pool:
        results = pool.map(_writer, [(out, seed) for seed in range(24)])
    assert results == ["ok"] * 24
    contents = tree(out)
    generated = [name for name in contents if name.startswith("f")]
    assert len(generated) == 1 and contents["common.h"] == "same"
    assert contents[MANIFEST] == "".join(f"{n}\n" for n in sorted([*generated, "common.h"]))
    no_leftovers(tmp_path)


def _write_forever(out: Path, force: bool) -> None:
    trees = [{f"tflm/f{i}.c": bytes(2000) for i in range(60)}, NEW]
    for turn in range(10_000):
        write_tree(trees[turn % 2], out, force)


def _kill_a_writer(out: Path, force: bool, rng: random.Random) -> None:
    """Starts a process writing trees over and over and SIGKILLs it after a while."""
    child = multiprocessing.get_context("fork").Process(target=_write_forever, args=(out, force))
    child.start()
    time.sleep(rng.uniform(0.005, 0.15))
    os.kill(child.pid, signal.SIGKILL)
    child.join()


@pytest.mark.parametrize("force", [False, True])
def test_random_kills_never_lose_a_users_entry(tmp_path, force):
    """SIGKILL at random moments of repeated writes (fixed seed); after each, the next
    run gives the exact tree, the user's entries intact, no staging folder left."""
    rng = random.Random(17)
    out = tmp_path / "out"
    write_tree(OLD, out)
    (out / "build").mkdir()
    (out / "build" / "app.o").write_text("object")
    if force:
        (out / "notes.txt").write_text("mine")
    for _ in range(12):
        _kill_a_writer(out, force, rng)
        write_tree(OLD, out, force)
        expected = {**ours(OLD), "build": "dir", "build/app.o": "object"}
        assert tree(out) == ({**expected, "notes.txt": "mine"} if force else expected)
        no_leftovers(tmp_path)


def test_random_kills_of_swaps_leave_a_whole_tree(tmp_path):
    """Without build/ every write is a swap: kills land before, inside or after it."""
    rng = random.Random(23)
    out = tmp_path / "out"
    for _ in range(12):
        _kill_a_writer(out, False, rng)
        write_tree(NEW, out)
        assert tree(out) == ours(NEW)
        no_leftovers(tmp_path)


def test_a_users_symlink_under_the_manifest_name_is_never_replaced(tmp_path):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere.txt"
    out.mkdir()
    elsewhere.write_text("precious")
    (out / MANIFEST).symlink_to(elsewhere)
    for force in (False, True):
        with pytest.raises(OutputDirError, match=r"where it would write \(.tflm-gen-files\)"):
            write_tree(NEW, out, force)
    assert (out / MANIFEST).is_symlink() and elsewhere.read_text() == "precious"


@pytest.mark.parametrize("previous", [None, OLD])
def test_a_failed_write_leaves_the_previous_state_and_no_staging(tmp_path, monkeypatch,
                                                                   previous):
    out = tmp_path / "out"
    if previous:
        write_tree(previous, out)
    real_write = output._write_file_atomically

    def disk_full(path, data):
        if path.name == "b.c":
            raise OSError(28, "No space left on device", str(path))
        real_write(path, data)

    monkeypatch.setattr(output, "_write_file_atomically", disk_full)
    with pytest.raises(OutputDirError, match="No space left on device"):
        write_tree(NEW, out)
    assert (tree(out) == ours(previous)) if previous else not out.exists()
    no_leftovers(tmp_path)


def test_kill_while_removing_a_staging_folder_is_finished_next_run(tmp_path, monkeypatch):
    """The manifest is removed last, so a half-removed staging folder is still ours."""
    out = tmp_path / "out"
    write_tree(OLD, out)
    real_rmtree = output.shutil.rmtree

    def killed(path, *args, **kwargs):
        raise KeyboardInterrupt  # dies before the first folder of the old tree is gone

    monkeypatch.setattr(output.shutil, "rmtree", killed)
    with pytest.raises(KeyboardInterrupt):
        write_tree(NEW, out)
    monkeypatch.setattr(output.shutil, "rmtree", real_rmtree)
    leftover = [name for name in os.listdir(tmp_path) if name.startswith(".tflm-gen")]
    assert len(leftover) == 1 and not (tmp_path / leftover[0] / "a.c").exists()
    write_tree(NEW, out)
    assert tree(out) == ours(NEW)
    no_leftovers(tmp_path)
