"""The arena model (tflm_gen.arena) computes, in Python, exactly the arena the C runtime
measures: for every model of the corpus and of the zoo that tflm-gen generates, the
size and the persistent tail equal the host run's.  That is what lets IDE projects be
generated where no host C compiler exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import need_corpus, need_tool
from tests.test_conformance_mutants import MALFORMED
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


# arena.PARAMS_BYTES as released before the shared binary and reduction helpers (4afe82d);
# the host-run tests above hold the C structs to PARAMS_BYTES.  Users sized their arenas
# with these: a record may shrink, never grow past them.
RELEASED_RECORD_BYTES = {
    "act": 44, "add": 140, "add_n": 32, "arg": 24, "batch_matmul": 96, "cast": 12,
    "cmp": 136, "control": 8, "conv": 108, "cumsum": 48, "dequantize": 16, "div": 148,
    "elu": 264, "embedding_lookup": 24, "fill": 8, "fc": 56, "gather": 24, "gather_nd": 60,
    "gelu": 1296, "hard_swish": 32, "l2_pool": 56, "l2norm": 16, "log_softmax": 32,
    "logical": 108, "sigmoid": 24, "lstm": 232, "minmax": 132, "mirror_pad": 108,
    "mul": 148, "pad": 100, "pool": 68, "prelu": 156, "quantize": 40, "reduce": 96,
    "reduce_all": 56, "reduce_min": 60, "reshape": 4, "resize": 52, "var_handle": 4,
    "floor": 112, "select": 108, "shape": 36, "softmax": 32, "softmax_int16": 2084,
    "space_batch": 68, "sqdiff": 168, "sub": 168, "svdf": 72, "transpose_conv": 92,
    "unary": 44, "layout_view": 84, "layout_pieces": 20, "hybrid": 32,
}


def test_no_record_grows_past_its_released_size():
    grown = {name: (RELEASED_RECORD_BYTES[name], size)
             for name, size in arena.PARAMS_BYTES.items()
             if size > RELEASED_RECORD_BYTES.get(name, size)}
    assert not grown, f"record: (released, now) bytes {grown}"


def _nodes(data: bytes) -> list[arena.NodeView]:
    return arena._global_nodes(read_model(data))


@pytest.mark.parametrize("tags", [(), ("cmsis",)], ids=["reference", "cmsis"])
@pytest.mark.parametrize("case, reason", [
    ("flat_filter", "CONV_2D with input 1 of rank 1 \\(its kernel takes rank 4\\)"),
    ("omitted_input", "FULLY_CONNECTED with input 0 omitted")])
def test_nodes_the_kernels_refuse_are_not_modelled_with_the_reason(case, reason, tags):
    """The node the kernel's prepare refuses is named with what it lacks (the runtime then
    refuses it in one line: tests/test_conformance_mutants.py)."""
    node = _nodes(MALFORMED[case]())[-1]
    with pytest.raises(arena.NotModelled, match=f"^{reason}$"):
        arena.kernel_allocations(node, tags)


def test_a_bug_of_an_allocation_model_is_not_hidden(monkeypatch):
    """An error inside an allocation model is its bug, not a shape it does not model."""
    node = _nodes(MALFORMED["omitted_input"]())[0]  # a well-formed FULLY_CONNECTED

    def broken(view):
        return view.input(5).shape  # no input 5: AttributeError on None

    monkeypatch.setitem(arena.KERNELS, "FULLY_CONNECTED", broken)
    with pytest.raises(AttributeError):
        arena.kernel_allocations(node)
