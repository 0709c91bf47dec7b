"""The arena model (tflm_gen.arena) computes, in Python, exactly the arena the C runtime
measures: for every model of the corpus and of the zoo that tflm-gen generates, the
size and the persistent tail equal the host run's.  That is what lets IDE projects be
generated where no host C compiler exists."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import need_corpus, need_tool
from tflm_gen import arena
from tflm_gen.errors import UnsupportedModelError
from tflm_gen.host import HostInterpreter
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model
from tflm_gen.support import check_supported

ZOO = Path(__file__).resolve().parent / "zoo"
REFUSED_AT_INIT = "refused at init"  # zoo models the runtime's prepare rejects (manifest)


def _zoo_models() -> list[Path]:
    """Zoo models the generator accepts (the manifest's `expect` is not `refused`)."""
    paths = []
    for manifest in sorted(ZOO.glob("*/MANIFEST.tsv")):
        for line in manifest.read_text().splitlines()[1:]:
            name, expect = line.split("\t")[0], line.split("\t")[-1]
            if not expect.startswith("refused") and REFUSED_AT_INIT not in expect:
                paths.append(manifest.parent / name)
    return paths


def _mismatches(paths: list[Path], tags: tuple[str, ...] = ()) -> tuple[list[str], int]:
    """Models whose modelled (used, tail) differs from the host run's with `tags`, and how
    many models were compared."""
    wrong, compared = [], 0
    for path in paths:
        device, _ = device_model(path.read_bytes())
        model = read_model(device)
        try:
            check_supported(model)
        except UnsupportedModelError:
            continue  # generation refuses it: there is no arena to size
        host = HostInterpreter(device, tags)
        measured = (host.arena_used_bytes, host.arena_tail_bytes)
        modelled = arena.arena_sizes(model, tags)
        compared += 1
        if modelled != measured:
            wrong.append(f"{path.name}: modelled {modelled}, host run {measured}")
    return wrong, compared


def test_arena_model_equals_the_host_run_for_every_zoo_model():
    need_tool("cc")
    paths = _zoo_models()
    assert len(paths) > 100
    wrong, compared = _mismatches(paths)
    assert not wrong, "\n".join(wrong)
    assert compared == len(paths)


def test_arena_model_equals_the_host_run_for_every_corpus_model():
    need_tool("cc")
    paths = sorted(need_corpus().rglob("*.tflite"))
    wrong, compared = _mismatches(paths)
    assert not wrong, "\n".join(wrong)
    assert compared == len(paths) > 50  # the corpus holds only models tflm-gen runs


def test_arena_model_equals_the_host_run_with_the_cmsis_kernels():
    """The cmsis tag's kernels (their own blocks, tables and scratch) on the corpus's
    application models and the zoo's hybrid ones (int8, float and hybrid weights)."""
    need_tool("cc")
    paths = [*sorted(need_corpus().glob("*.tflite")), *sorted(ZOO.glob("*/*hybrid*.tflite"))]
    wrong, compared = _mismatches(paths, ("cmsis",))
    assert not wrong, "\n".join(wrong)
    assert compared == len(paths) > 10


def test_tags_that_replace_no_kernel_change_nothing():
    model = read_model(device_model((Path(__file__).resolve().parent.parent / "examples" /
                                     "sine" / "sine_int8.tflite").read_bytes())[0])
    assert arena.arena_sizes(model, ("semihost",)) == arena.arena_sizes(model)


def test_every_kernel_op_has_an_arena_entry():
    from tflm_gen.kernels import kernel_catalogue

    assert set(kernel_catalogue()) <= set(arena.KERNELS), \
        sorted(set(kernel_catalogue()) - set(arena.KERNELS))
