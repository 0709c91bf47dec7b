"""Patch-based execution (tflm_gen.patches, docs/patch_execution.md): the row arithmetic of
bands checked against brute force; stages run by the runtime bit-exact with TFLM in the
arena tflm_gen.arena predicts, on a built chain and on the corpus CNNs."""

from __future__ import annotations

import dataclasses
import itertools
import re

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import corpus_path, need_tool
from op_oracle import (
    accumulator_rms,
    assert_bit_exact,
    assert_informative,
    output_quantization,
    run_tflm,
)

from tflm_gen import patches
from tflm_gen.arena import arena_bytes
from tflm_gen.cli import main
from tflm_gen.errors import ArenaError, InputError, ModelError
from tflm_gen.host import HostInterpreter
from tflm_gen.instructions import model_instructions
from tflm_gen.model import ir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.reader import read_model
from tflm_gen.model.writer import write_model
from tflm_gen.optimize import device_model
from tflm_gen.output import write_tree
from tflm_gen.patches import (
    STAGE_METADATA,
    STEP_WORDS,
    Rows,
    Stage,
    band_steps,
    embed_stage,
    extra_instructions,
    make_stage,
    read_stage,
)
from tflm_gen.plan import embed_plan, make_plan
from tflm_gen.project import generate
from tflm_gen.requant import embed_requant

# (stride, filter, dilation, input height, SAME padding?)
ROW_CASES = [(s, k, d, h, same) for s, k, d, h, same in itertools.product(
    (1, 2, 3), (1, 2, 3, 5), (1, 2), (5, 12, 17), (True, False)) if (k - 1) * d + 1 <= h]


def rows_of(stride: int, filter_size: int, dilation: int, height: int, same: bool) -> Rows:
    """TFLM's output height and leading padding (tflite/kernels/padding.h)."""
    extent = (filter_size - 1) * dilation + 1
    out = (height + stride - 1) // stride if same else (height - extent + stride) // stride
    pad = max(0, ((out - 1) * stride + extent - height) // 2) if same else 0
    return Rows(stride, extent, pad, height, out)


def read_rows(rows: Rows, dilation: int, outputs: range) -> set[int]:
    """Brute force: every input row some tap of these output rows reads."""
    taps = range(0, rows.extent, dilation)
    return {y * rows.stride - rows.pad + tap for y in outputs for tap in taps
            if 0 <= y * rows.stride - rows.pad + tap < rows.input_height}


@pytest.mark.parametrize("stride,filter_size,dilation,height,same", ROW_CASES)
def test_input_rows_are_the_rows_the_windows_read(stride, filter_size, dilation, height, same):
    rows = rows_of(stride, filter_size, dilation, height, same)
    for start in range(rows.output_height):
        for stop in range(start + 1, rows.output_height + 1):
            read = read_rows(rows, dilation, range(start, stop))
            first, end = rows.input_rows(start, stop)
            # The range holds every row read; with dilation it may also hold a row in the
            # gap between taps at either end, never a row outside the windows' span.
            assert read <= set(range(first, end))
            if dilation == 1:
                assert (first, end) == (min(read), max(read) + 1)
            else:
                assert first >= start * stride - rows.pad and end - 1 <= (
                    stop - 1) * stride - rows.pad + rows.extent - 1


def random_chain(rng: np.random.Generator, length: int) -> tuple[list[Rows], list[int]]:
    height, chain, dilations = int(rng.integers(20, 40)), [], []
    for _ in range(length):
        stride, filter_size = int(rng.integers(1, 3)), int(rng.choice([1, 3, 5]))
        dilation = int(rng.integers(1, 3)) if filter_size > 1 else 1
        same = bool(rng.integers(2)) or (filter_size - 1) * dilation >= height // 2
        chain.append(rows_of(stride, filter_size, dilation, height, same))
        dilations.append(dilation)
        height = chain[-1].output_height
    return chain, dilations


@pytest.mark.parametrize("seed", range(20))
def test_bands_compute_every_output_row_from_the_rows_they_hold(seed):
    """Every band's steps chain (each operator's input rows are the previous one's output
    rows), the bands cover the stage output once, and a kernel that sees only the band's
    input rows with the band's pad_top reads, for each output row, the same input rows as
    on the whole tensor."""
    rng = np.random.default_rng(seed)
    chain, dilations = random_chain(rng, int(rng.integers(2, 5)))
    band_rows = int(rng.integers(1, chain[-1].output_height + 1))
    bands = band_steps(chain, band_rows)
    assert [y for band in bands for y in range(band[-1].out_start, band[-1].out_start +
                                              band[-1].out_rows)] == list(range(chain[-1].output_height))
    for band in bands:
        assert all(a.out_start == b.in_start and a.out_rows == b.in_rows
                   for a, b in itertools.pairwise(band))
        for rows, dilation, step in zip(chain, dilations, band):
            view = Rows(rows.stride, rows.extent, step.pad_top, step.in_rows, step.out_rows)
            for y in range(step.out_rows):
                whole = read_rows(rows, dilation, range(step.out_start + y, step.out_start + y + 1))
                seen = read_rows(view, dilation, range(y, y + 1))
                assert {r + step.in_start for r in seen} == whole


def whole_taps(rows: Rows, dilation: int, y: int) -> set[int]:
    """Input rows (padding included: below 0 or from the height on) output row y reads."""
    return {y * rows.stride - rows.pad + tap for tap in range(0, rows.extent, dilation)}


@pytest.mark.parametrize("seed", range(20))
def test_rolling_bands_keep_rows_and_read_what_the_whole_tensor_reads(seed):
    """Rolling bands (a tile keeping the rows its reader shares with the next band, zero-point
    rows below a convolution's input, the first band the rest): every operator's input rows
    are rows kept from the previous band where its tile is its own, the rows the previous
    operator writes in this band, and zero-point rows where the tensor ends; a kernel on the
    band's view reads what it reads on the whole tensor, a zero-point row where that is
    padding; a kept tile's operator computes only rows no band computed before."""
    rng = np.random.default_rng(seed)
    chain, dilations = random_chain(rng, int(rng.integers(2, 5)))
    chain = [dataclasses.replace(rows, zero_rows=bool(rng.integers(2))) for rows in chain]
    band_rows = int(rng.integers(1, chain[-1].output_height // 2 + 1))
    leading = int(rng.integers(0, band_rows))
    bands = band_steps(chain, band_rows, True, leading)
    assert [y for band in bands for y in range(band[-1].out_start, band[-1].out_start +
                                              band[-1].out_rows)] == list(range(chain[-1].output_height))
    assert bands[0][-1].out_rows == (leading or band_rows)
    for b, band in enumerate(bands):
        for k, (made, read) in enumerate(itertools.pairwise(band)):
            stop, made_stop = read.in_start + read.in_rows, made.out_start + made.out_rows
            assert read.in_start <= made.out_start and made_stop <= stop
            if made.out_start > read.in_start:  # kept: the previous band's last rows
                previous = bands[b - 1]
                assert k in patches.carried_tiles(len(chain)) and b > 0
                assert previous[k].out_start + previous[k].out_rows == made.out_start
                assert previous[k + 1].in_start <= read.in_start
            if made_stop < stop:  # zero-point rows below the tensor
                assert chain[k + 1].zero_rows and made_stop == chain[k].output_height
            assert read.in_rows <= chain[k + 1].input_height
        for rows, dilation, step in zip(chain, dilations, band):
            view = Rows(rows.stride, rows.extent, step.pad_top, step.in_rows, step.out_rows)
            window = range(step.in_start, step.in_start + step.in_rows)
            for y in range(step.out_rows):
                whole = whole_taps(rows, dilation, step.out_start + y)
                seen = {r + step.in_start for r in whole_taps(view, dilation, y)
                        if 0 <= r < step.in_rows}
                assert seen == whole & set(window)
                assert {r for r in whole if 0 <= r < rows.input_height} <= set(window)
    for k, (previous, band) in itertools.product(patches.carried_tiles(len(chain)),
                                                 itertools.pairwise(bands)):
        done = previous[k].out_start + previous[k].out_rows
        needed = min(band[k + 1].in_start + band[k + 1].in_rows, chain[k].output_height)
        if band[k + 1].in_start < done < needed:  # computes only the rows not yet done
            assert band[k].out_start == done


# --- the stage on the device: bit-exact with TFLM, exact arena --------------------------

def _layer(b: ModelBuilder, rng, x: int, x_q: ir.Quantization, opcode: str, kernel: int,
           stride: int, cout: int) -> tuple[int, ir.Quantization]:
    """One int8 layer reading x; scales follow the accumulator's spread so outputs vary."""
    _, h, w, cin = b.graph.tensors[x].shape
    out_h, out_w = -(-h // stride), -(-w // stride)  # SAME
    options = {"padding": 0, "stride_h": stride, "stride_w": stride}
    if opcode == "AVERAGE_POOL_2D":
        options.update(filter_height=kernel, filter_width=kernel)
        return b.add_op(opcode, [x], [1, out_h, out_w, cin], "int8", quantization=x_q,
                        options=options), x_q
    depthwise = opcode == "DEPTHWISE_CONV_2D"
    accumulator = accumulator_rms(kernel * kernel * (1 if depthwise else cin), "int8",
                                  x_q.zero_point[0])
    filter_scales = (1.0 / (x_q.scale[0] * accumulator) * rng.uniform(0.7, 1.3, cout))
    filter_scales = filter_scales.astype(np.float32)
    shape = [1, kernel, kernel, cout] if depthwise else [cout, kernel, kernel, cin]
    weights = rng.integers(-127, 128, size=shape).astype(np.int8)
    filter_q = ir.Quantization(list(filter_scales), [0] * cout, quantized_dimension=3 if depthwise else 0)
    bias = rng.integers(-int(accumulator), int(accumulator) + 1, size=cout).astype(np.int32)
    bias_q = ir.Quantization([float(np.float32(x_q.scale[0]) * s) for s in filter_scales],
                             [0] * cout, quantized_dimension=0)
    scale, zero_point = output_quantization(rng, "int8", np.sqrt(4 / 3))
    out_q = ir.Quantization([scale], [zero_point])
    if depthwise:
        options["depth_multiplier"] = cout // cin
    inputs = [x, b.constant("w", weights, quantization=filter_q),
              b.constant("b", bias, quantization=bias_q)]
    return b.add_op(opcode, inputs, [1, out_h, out_w, cout], "int8", quantization=out_q,
                    options=options), out_q


# A MobileNet-like head: odd height (23) so SAME stride 2 pads one row above the image (the
# first band's padding) and the last band is clipped below.
CHAIN = [("CONV_2D", 3, 2, 8), ("DEPTHWISE_CONV_2D", 3, 1, 8), ("AVERAGE_POOL_2D", 2, 1, 8),
         ("CONV_2D", 1, 1, 12), ("DEPTHWISE_CONV_2D", 3, 2, 12), ("CONV_2D", 1, 1, 6)]


def chain_model() -> tuple[bytes, list[np.ndarray]]:
    rng = np.random.default_rng(1300)
    b = ModelBuilder()
    x_q = ir.Quantization([0.05], [3])
    x = b.input("image", [1, 23, 21, 3], "int8", quantization=x_q)
    data = rng.integers(-128, 128, size=[1, 23, 21, 3]).astype(np.int8)
    for layer in CHAIN:
        x, x_q = _layer(b, rng, x, x_q, *layer)
    b.output(x)
    return b.build(), [data]


def staged(model_bytes: bytes, stage: Stage) -> bytes:
    """The device model running `stage` (what device_model embeds for a chosen one)."""
    model = embed_requant(read_model(model_bytes))
    return write_model(embed_stage(embed_plan(model, make_plan(model, stage=stage)), stage))


@pytest.mark.parametrize("first,last,band_rows", [(0, 2, 1), (0, 2, 5), (0, 4, 2), (0, 5, 1),
                                                  (1, 4, 2), (1, 5, 2)])
def test_built_chain_is_bit_exact_in_bands(first, last, band_rows):
    """First, middle and last bands (top padding, bottom clipping) of a stride-2
    conv / depthwise / pool chain give TFLM's bytes, in the arena Python predicts; also
    for a stage starting after the graph input (its input an earlier operator's output)."""
    model_bytes, inputs = chain_model()
    expected = run_tflm(model_bytes, inputs)
    assert_informative(expected[0])
    stage = make_stage(read_model(model_bytes), last, band_rows, first)
    steps = [step for band in stage.bands for step in band]
    assert any(step.pad_top > 0 for step in steps) and len(stage.bands) > 2
    device = staged(model_bytes, stage)
    predicted = arena_bytes(read_model(device))
    ours = HostInterpreter(device, (), predicted).run(inputs)
    assert_bit_exact(np.asarray(ours[0]), expected[0])


@pytest.mark.parametrize("tags", [(), ("cmsis",)], ids=["reference", "cmsis"])
@pytest.mark.parametrize("first,last,band_rows,leading", [(0, 2, 3, 0), (0, 2, 5, 2),
                                                          (2, 4, 2, 1), (1, 4, 2, 0)])
def test_rolling_chain_is_bit_exact_in_bands(first, last, band_rows, leading, tags):
    """Rolling stages of the built chain (tiles keeping rows for the next band, zero-point
    rows below an int8 convolution's input, the first band the rest) give TFLM's bytes in
    the arena Python predicts, on the reference and cmsis kernels, for fewer MACs."""
    model_bytes, inputs = chain_model()
    expected = run_tflm(model_bytes, inputs)
    stage = make_stage(read_model(model_bytes), last, band_rows, first, True, leading)
    plain = make_stage(read_model(model_bytes), last, band_rows, first, False, leading)
    assert stage.bands != plain.bands and stage.macs <= plain.macs
    device = staged(model_bytes, stage)
    assert read_stage(read_model(device)) == stage
    predicted = arena_bytes(read_model(device), tags)
    ours = HostInterpreter(device, tags, predicted).run(inputs)
    assert_bit_exact(np.asarray(ours[0]), expected[0])


def test_rolling_chain_keeps_and_zero_fills_rows():
    """The cases above between them keep rows in a tile and read zero-point rows."""
    graph = read_model(chain_model()[0])
    steps = [band for first, last, rows, leading in [(0, 2, 3, 0), (2, 4, 2, 1)]
             for band in make_stage(graph, last, rows, first, True, leading).bands]
    pairs = [pair for band in steps for pair in itertools.pairwise(band)]
    assert any(made.out_start > read.in_start for made, read in pairs)
    assert any(made.out_start + made.out_rows < read.in_start + read.in_rows for made, read in pairs)


def test_corrupt_stage_metadata_is_refused():
    model_bytes = chain_model()[0]
    model = read_model(staged(model_bytes, make_stage(read_model(model_bytes), 4, 2)))
    words = make_stage(model, 4, 2).words()
    words[4 + STEP_WORDS * 1 + 1] += 1  # band 0, operator 1: one input row more than op 0 wrote
    with pytest.raises(ModelError, match="stage operator"):
        HostInterpreter(write_model(model.with_metadata_words(STAGE_METADATA, words)))
    # The Python side (arena model, inspect) refuses what does not describe a chain.
    for bad in (words[:-1], [1, len(model.subgraph.operators), 2, 1]):
        with pytest.raises(ModelError, match=STAGE_METADATA):
            read_stage(model.with_metadata_words(STAGE_METADATA, bad))


@pytest.mark.parametrize("tags", [(), ("cmsis",)], ids=["reference", "cmsis"])
@pytest.mark.parametrize("name", ["vww_96_int8", "person_detect", "pretrainedResnet_quant",
                                  "micro_speech_quantized"])
def test_corpus_head_in_bands_is_bit_exact_in_the_exact_arena(name, tags):
    """--memory small on the corpus CNNs: TFLM's bytes, an arena below the one without a
    stage that Python predicts exactly, one byte less refused cleanly; and TFLM also runs
    the device model planned for it (to TFLM the stage is only metadata).  ResNet's stage
    ends in a residual join, micro_speech's in a reduction (its FULLY_CONNECTED)."""
    data = corpus_path(f"{name}.tflite").read_bytes()
    device, _ = device_model(data, tags, "small")
    model = read_model(device)
    endings = {"pretrainedResnet_quant": "residual join", "micro_speech_quantized": "reduction"}
    assert read_stage(model).ending == endings.get(name, "chain")
    predicted = arena_bytes(model, tags)
    assert predicted < arena_bytes(read_model(device_model(data, tags, "fast")[0]), tags)
    rng = np.random.default_rng(7)
    inputs = [rng.integers(-128, 128, size=model.subgraph.tensors[model.subgraph.inputs[0]].shape).astype(np.int8)]
    expected = run_tflm(data, inputs)
    assert_bit_exact(np.asarray(HostInterpreter(device, tags, predicted).run(inputs)[0]), expected[0])
    with pytest.raises(ArenaError):
        HostInterpreter(device, tags, predicted - 1)
    if not tags:  # the plan TFLM's kernels run (`tflm-gen plan`) keeps the stage's tiles online
        for_tflm = device_model(data, tags, "small", for_tflm=True)[0]
        assert read_stage(read_model(for_tflm)) is not None
        assert_bit_exact(np.asarray(run_tflm(for_tflm, inputs)[0]), expected[0])


def test_inspect_memory_lists_the_stages(tmp_path):
    """inspect --memory names the stage each --memory choice runs and the arena the host
    measures with it (person_detect: both choices take the same stage), marks the plan's
    tile buffers, and the SVG draws the stage's steps and tiles."""
    path = corpus_path("person_detect.tflite")
    svg = tmp_path / "plan.svg"
    result = CliRunner().invoke(main, ["inspect", "--memory", str(path), "--svg", str(svg)])
    assert result.exit_code == 0, result.output
    device, _ = device_model(path.read_bytes(), (), "balanced")
    stage = read_stage(read_model(device))
    arena = HostInterpreter(device).arena_used_bytes
    phrase = (rf"operators {stage.first}-{stage.last} as one stage, {len(stage.bands)} bands "
              rf"of {stage.band_rows} output rows")
    assert re.search(rf"project --memory balanced: {phrase}, .* -> {arena:,} bytes",
                     result.output), result.output
    assert re.search(rf"stage in this plan: {phrase}", result.output)
    tile_rows = [line for line in result.output.splitlines() if "stage tile" in line]
    assert len(tile_rows) == len(stage.buffer_bytes())
    picture = svg.read_text()
    assert '<g id="stage">' in picture and f"{len(stage.bands)} bands" in picture


def test_unknown_memory_choice_is_one_clear_error():
    with pytest.raises(InputError, match="--memory must be one of small, balanced, fast"):
        device_model(chain_model()[0], (), "tiny")


def test_project_memory_balanced_declares_the_staged_arena(tmp_path):
    """project --memory balanced writes the device model with the stage and declares the
    arena the Python model predicts for it (person_detect: below the one without)."""
    path = corpus_path("person_detect.tflite")
    result = CliRunner().invoke(main, ["project", "--model", str(path), "--memory", "balanced",
                                       "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    model = read_model(device_model(path.read_bytes(), (), "balanced")[0])
    assert read_stage(model) is not None
    header = (tmp_path / "out/tflm/person_detect_model_data.h").read_text()
    assert f"#define PERSON_DETECT_ARENA_BYTES {arena_bytes(model)}u" in header
    assert arena_bytes(model) < arena_bytes(read_model(device_model(path.read_bytes(), (), "fast")[0]))


STAGE_FUZZ_TRIALS = 300


def stage_mutants(rng: np.random.Generator, model: ir.Model, words: list[int]) -> bytes:
    """Length-prefixed device models whose stage words are seeded mutations of `words`:
    a few words set to small, negative or huge values, or the list cut short."""
    records = bytearray()
    for trial in range(STAGE_FUZZ_TRIALS):
        mutant = list(words)
        if trial % 10 == 0:
            mutant = mutant[: int(rng.integers(0, len(mutant)))]
        for _ in range(int(rng.integers(1, 4)) if trial % 10 else 0):
            value = int(rng.choice([rng.integers(-3, 40), 2**31 - 1, -2**31, 2**30]))
            mutant[int(rng.integers(0, len(mutant)))] = value
        data = write_model(model.with_metadata_words(STAGE_METADATA, mutant))
        records += len(data).to_bytes(4, "little") + data
    return bytes(records)


@pytest.mark.parametrize("rolling", [False, True], ids=["plain", "rolling"])
def test_corrupt_stage_words_never_crash_the_runtime(tmp_path, rolling):
    """Seeded mutations of the stage metadata through the runtime under AddressSanitizer
    and UBSan (test_runtime_c's harness): refused or run, never a bad read or write; also
    of a rolling stage (kept rows, zero-point rows)."""
    from test_runtime_c import run_fuzz_harness

    model_bytes = chain_model()[0]
    write_tree(generate(model_bytes), tmp_path / "p")
    stage = make_stage(read_model(model_bytes), 2, 3, 0, True) if rolling else \
        make_stage(read_model(model_bytes), 4, 2)
    model = read_model(staged(model_bytes, stage))
    mutants = stage_mutants(np.random.default_rng(13), model, read_stage(model).words())
    _, refused = run_fuzz_harness(need_tool("gcc"), tmp_path / "p", mutants, STAGE_FUZZ_TRIALS)
    assert refused > STAGE_FUZZ_TRIALS // 2


@pytest.mark.parametrize("ending", ["residual join", "reduction"])
def test_corrupt_join_and_reduction_words_never_crash_the_runtime(tmp_path, ending):
    """The same for a stage ending in a residual join (skip_model) and in a reduction
    (micro_speech's FULLY_CONNECTED): refused or run, never a bad read or write."""
    from test_runtime_c import run_fuzz_harness

    if ending == "reduction":
        model_bytes = corpus_path("micro_speech_quantized.tflite").read_bytes()
        model = read_model(device_model(model_bytes, (), "small")[0])
    else:
        model_bytes = skip_model()[0]
        model = read_model(staged(model_bytes, make_stage(read_model(model_bytes), 3, 4, 1)))
    assert read_stage(model).ending == ending
    write_tree(generate(model_bytes), tmp_path / "p")
    mutants = stage_mutants(np.random.default_rng(17), model, read_stage(model).words())
    _, refused = run_fuzz_harness(need_tool("gcc"), tmp_path / "p", mutants, STAGE_FUZZ_TRIALS)
    assert refused > STAGE_FUZZ_TRIALS // 2


def test_balanced_leaves_residual_joins_to_the_reference_kernels():
    """ResNet at the default --memory: the reference kernels run its first block as a
    stage ending in a residual join; the cmsis tag (chosen for speed: the join cost it
    +9.9% instructions on the M4) does not, and `small` still does."""
    data = corpus_path("pretrainedResnet_quant.tflite").read_bytes()
    assert read_stage(read_model(device_model(data)[0])).ending == "residual join"
    cmsis = read_stage(read_model(device_model(data, ("cmsis",))[0]))
    assert cmsis is None or cmsis.ending != "residual join"
    small = read_stage(read_model(device_model(data, ("cmsis",), "small")[0]))
    assert small.ending == "residual join"


def test_balanced_keeps_the_instruction_budget_and_small_the_smallest_arena(monkeypatch):
    """vww: small's arena is at most balanced's, both below the one without a stage, and
    balanced's stage adds at most its budget of the model's estimated instructions
    (tflm_gen.instructions), also when the budget is cut below what small's stage adds."""
    data = corpus_path("vww_96_int8.tflite").read_bytes()
    models = {memory: read_model(device_model(data, (), memory)[0])
              for memory in ("fast", "balanced", "small")}
    arenas = {memory: arena_bytes(model) for memory, model in models.items()}
    assert arenas["small"] <= arenas["balanced"] < arenas["fast"]
    total = model_instructions(models["fast"], "reference")
    small = extra_instructions(models["small"], read_stage(models["small"]), "reference")
    for budget in (patches.BALANCED_EXTRA_INSTRUCTIONS, small / total / 2):
        monkeypatch.setattr(patches, "BALANCED_EXTRA_INSTRUCTIONS", budget)
        model = read_model(device_model(data, (), "balanced")[0])
        stage = read_stage(model)
        assert stage is None or extra_instructions(model, stage, "reference") <= budget * total


def test_per_op_runs_the_stage_and_names_its_last_operator(monkeypatch):
    """verify --per-op with a patch stage: the rewrite runs the same stage (its inner
    tensors not exposed), every other tensor matches TFLM; a stage whose first band
    assumes the wrong top padding is caught at the stage's output, its last operator."""

    from tflm_gen import per_op as per_op_module
    from tflm_gen.oracle import Oracle

    model_bytes, inputs = chain_model()
    stage = make_stage(read_model(model_bytes), 4, 2, 1)
    original = [(Oracle(model_bytes).run(inputs), Oracle(model_bytes).run(inputs))]
    report = per_op_module.per_op(model_bytes, [inputs], "tflm", (), original, stage)
    assert report.first is None and not report.notes
    assert report.stage == (1, 4, 3) and report.tensors == len(CHAIN) - 3

    def wrong_padding(model, last, band_rows, first=0, *forms):
        good = make_stage(model, last, band_rows, first, *forms)
        band = list(good.bands[0])
        band[0] = dataclasses.replace(band[0], pad_top=band[0].pad_top - 1)
        return dataclasses.replace(good, bands=(tuple(band), *good.bands[1:]))

    assert stage.bands[0][0].pad_top > 0  # operator 1, SAME 3x3: one row above the image
    monkeypatch.setattr(per_op_module, "make_stage", wrong_padding)
    report = per_op_module.per_op(model_bytes, [inputs], "tflm", (), None, stage)
    assert report.first is not None and report.first.index == stage.last


def skip_model() -> tuple[bytes, list[np.ndarray]]:
    """conv -> [depthwise -> 1x1 conv] -> ADD with the conv's output: the bracketed stage's
    input is read again after it (a residual), so the stage output may not overwrite it."""
    rng = np.random.default_rng(1301)
    b = ModelBuilder()
    x_q = ir.Quantization([0.05], [3])
    x = b.input("image", [1, 17, 13, 3], "int8", quantization=x_q)
    data = rng.integers(-128, 128, size=[1, 17, 13, 3]).astype(np.int8)
    a, a_q = _layer(b, rng, x, x_q, "CONV_2D", 3, 1, 8)
    y, y_q = _layer(b, rng, a, a_q, "DEPTHWISE_CONV_2D", 3, 1, 8)
    y, y_q = _layer(b, rng, y, y_q, "CONV_2D", 1, 1, 8)
    scale, zero_point = output_quantization(rng, "int8", 2.0)
    out = b.add_op("ADD", [y, a], [1, 17, 13, 8], "int8",
                   quantization=ir.Quantization([scale], [zero_point]))
    b.output(out)
    return b.build(), [data]


def test_stage_whose_input_lives_on_keeps_it_whole():
    """A stage from operator 1 whose input the ADD reads afterwards: bit-exact with TFLM in
    the arena Python predicts (its output is not planned over that input), one byte less
    refused."""
    model_bytes, inputs = skip_model()
    expected = run_tflm(model_bytes, inputs)
    assert_informative(expected[0])
    model = read_model(model_bytes)
    stage = make_stage(model, 2, 3, 1)
    assert len(stage.bands) > 2 and stage.tensors[0] == model.subgraph.operators[3].inputs[1]
    device = staged(model_bytes, stage)
    predicted = arena_bytes(read_model(device))
    assert_bit_exact(np.asarray(HostInterpreter(device, (), predicted).run(inputs)[0]), expected[0])
    with pytest.raises(ArenaError):
        HostInterpreter(device, (), predicted - 1)


@pytest.mark.parametrize("tags", [(), ("cmsis",)], ids=["reference", "cmsis"])
@pytest.mark.parametrize("band_rows", [1, 4])
def test_stage_ending_in_a_residual_join_is_bit_exact(tags, band_rows):
    """The same model with the ADD inside the stage (a residual join: S's rows read as a
    view per band, its output E planned over the rows of S no later band reads): TFLM's
    bytes in the arena Python predicts, one byte less refused, and a smaller head than the
    stage that keeps E whole beside S."""
    model_bytes, inputs = skip_model()
    expected = run_tflm(model_bytes, inputs)
    model = read_model(model_bytes)
    stage = make_stage(model, 3, band_rows, 1)
    assert stage.tensors[-1] == model.subgraph.outputs[0] and len(stage.bands) > 2
    assert patches.stage_clearance(model, stage) < ir.tensor_bytes(
        model.subgraph.tensors[stage.tensors[0]])  # E does run over S
    device = read_model(staged(model_bytes, stage))
    assert read_stage(device) == stage
    predicted = arena_bytes(device, tags)
    ours = HostInterpreter(write_model(device), tags, predicted).run(inputs)
    assert_bit_exact(np.asarray(ours[0]), expected[0])
    with pytest.raises(ArenaError):
        HostInterpreter(write_model(device), tags, predicted - 1)
    whole = make_plan(embed_requant(model), stage=make_stage(model, 2, band_rows, 1))
    assert make_plan(embed_requant(model), stage=stage).head_bytes < whole.head_bytes


@pytest.mark.parametrize("name", ["pretrainedResnet_quant", "micro_speech_quantized"])
def test_join_and_reduction_stages_on_cortex_m4(name):
    """--memory small with the cmsis tag on QEMU's Cortex-M4 (the DSP kernels on each
    band, the reduction's plain loop): the host build's bytes and TFLM's."""
    from test_cmsis import need_board

    from tflm_gen import qemu

    need_board("qemu-cortex-m4")
    data = corpus_path(f"{name}.tflite").read_bytes()
    assert read_stage(read_model(device_model(data, ("cmsis",), "small")[0])).ending != "chain"
    shape = read_model(data).subgraph.tensors[read_model(data).subgraph.inputs[0]].shape
    inputs = [np.random.default_rng(11).integers(-128, 128, size=shape).astype(np.int8)]
    result = qemu.run_on_target(data, "qemu-cortex-m4", inputs, ("cmsis",), memory="small")
    assert result.matches_host, result.stdout
    assert_bit_exact(np.asarray(result.outputs[0]), run_tflm(data, inputs)[0])


def test_reduction_over_a_filter_holding_the_int16_stream_is_refused_at_init():
    """patches.reduces never plans a reduction over an FC filter that holds its record's
    int16 stream (the reduction reads int8); a model forcing one (micro_speech's reduction
    stage in its M4 form) is refused by the cmsis FC's prepare, naming the stage's FC,
    before any invoke could misread it."""
    data = corpus_path("micro_speech_quantized.tflite").read_bytes()
    stage = read_stage(read_model(device_model(data, ("cmsis",), "small")[0]))
    assert stage.ending == "reduction"
    forced = device_model(data, ("cmsis",), "small", core="cortex-m4", stage_of=lambda _: stage)[0]
    assert ir.filter_layout_tensors(read_model(forced))  # the FC's filter holds the stream
    with pytest.raises(ModelError, match=r"stage prepare, index 2\)"):
        HostInterpreter(forced, ("cmsis",))
