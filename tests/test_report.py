"""`tflm-gen report`: one self-contained, deterministic HTML page, checked in a real browser
(headless Chromium) from the pixels of its screenshot."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import need_corpus, need_tool
from PIL import Image

from tflm_gen.charts import BUFFER_COLOURS, SCRATCH_COLOUR, SERIES_COLOURS
from tflm_gen.cli import main
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.oracle import tflm_allocations
from tflm_gen.report import build_report, profile_chart, render_html

MODEL = "kws_ref_model"
WINDOW = (1100, 3600)


def cli(*args) -> object:
    return CliRunner().invoke(main, [str(arg) for arg in args])


@pytest.fixture(scope="session")
def profiled_report(tmp_path_factory) -> Path:
    """The report of a corpus model with the Cortex-M4 profile (built once per session)."""
    need_tool("arm-none-eabi-gcc")
    need_tool("qemu-system-arm")
    model = need_corpus() / f"{MODEL}.tflite"
    page = tmp_path_factory.mktemp("report") / "report.html"
    result = cli("report", model, "--target", "qemu-cortex-m4", "--tags", "cmsis", "-o", page)
    assert result.exit_code == 0, result.output
    assert result.stderr == f"wrote {page}\n"
    return page


def screenshot(page: Path, folder: Path) -> Image.Image:
    """The page as headless Chromium draws it, in a fresh profile."""
    chromium = need_tool("chromium")
    picture = folder / "shot.png"
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               f"--user-data-dir={folder / 'profile'}", f"--screenshot={picture}",
               f"--window-size={WINDOW[0]},{WINDOW[1]}", page.as_uri()]
    subprocess.run(command, capture_output=True, timeout=120, check=True)
    return Image.open(picture).convert("RGB")


def colour_pixels(image: Image.Image) -> dict[tuple[int, int, int], int]:
    return {colour: count for count, colour in image.getcolors(maxcolors=1 << 20)}


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def bars(image: Image.Image, colour: tuple[int, int, int]) -> int:
    """How many separate horizontal bars of `colour` start in the column where most do."""
    width, height = image.size
    pixels = image.load()
    columns = [x for x in range(width) if any(pixels[x, y] == colour for y in range(0, height, 4))]
    if not columns:
        return 0
    column, runs, inside = columns[0] + 1, 0, False
    for y in range(height):
        hit = pixels[column, y] == colour
        runs += hit and not inside
        inside = hit
    return runs


def test_browser_draws_every_chart(profiled_report, tmp_path):
    image = screenshot(profiled_report, tmp_path)
    counts = colour_pixels(image)
    # The memory plan: 13 head buffers of kws_ref_model, each its own colour; the two
    # 16-byte ones are thinner than a pixel, the others are filled areas.
    drawn = [colour for colour in BUFFER_COLOURS if counts.get(rgb(colour), 0) >= 100]
    assert len(drawn) >= 10, drawn
    assert counts.get(rgb(SCRATCH_COLOUR), 0) >= 100  # the CMSIS convolutions' scratch
    # Bar charts: ours (first series) in the arena, versus, profile and code charts; TFLM's
    # (second series) beside ours.
    assert counts.get(rgb(SERIES_COLOURS[0]), 0) >= 20_000
    assert counts.get(rgb(SERIES_COLOURS[1]), 0) >= 2_000
    # Separate bars: the profile's 9 convolutions at least, and the code chart's 3 parts.
    assert bars(image, rgb(SERIES_COLOURS[0])) >= 9 + 3


def test_page_is_self_contained_and_holds_the_oracle_figures(profiled_report):
    text = profiled_report.read_text()
    assert "<script" not in text and "<link" not in text and "<img" not in text
    assert not re.search(r"""(?:href|src)=["'](?!#)""", text)  # only in-page references
    assert not re.search(r"url\((?!#)", text)
    assert text.count("<svg") == 5  # memory, arena, versus, profile, code
    tflm = tflm_allocations((need_corpus() / f"{MODEL}.tflite").read_bytes())
    assert f"<td class=\"n\">{tflm['total']:,}</td>" in text
    assert "outputs bit-exact with the reference on qemu-cortex-m4" in text


def test_report_is_deterministic_and_works_without_a_board(tmp_path):
    model = need_corpus() / "hello_world_int8.tflite"
    pages = [tmp_path / "a.html", tmp_path / "b.html"]
    for page in pages:
        assert cli("report", model, "-o", page).exit_code == 0
    assert pages[0].read_bytes() == pages[1].read_bytes()
    text = pages[0].read_text()
    assert "No profile: give <code>--target</code> a QEMU board" in text
    assert "From the host objects (cc -Os" in text


@pytest.mark.parametrize("args, message", [
    (["missing.tflite", "-o", "r.html"], "cannot read model missing.tflite"),
    (["MODEL", "--target", "nowhere", "-o", "r.html"], "'nowhere' is not one of"),
    (["MODEL", "--tags", "nope", "-o", "r.html"], "unknown tag 'nope'"),
    (["MODEL", "-o", "no_such_folder/r.html"], "cannot write no_such_folder/r.html"),
    (["MODEL", "-o", "."], "is a directory"),
    (["MODEL"], "Missing option '-o'"),
])
def test_bad_options_are_one_line(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    model = str(need_corpus() / "hello_world_int8.tflite")
    result = cli("report", *(model if arg == "MODEL" else arg for arg in args))
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tflm-gen: error: "), result.stderr
    assert message in lines[0], lines[0]
    assert sorted(path.name for path in tmp_path.iterdir()) == []


def test_estimated_cycles_are_shown_when_bench_has_them():
    """bench may add per-operator estimated cycles: the chart gains a series and the table
    a column (the figures here are placeholders: only the drawing is under test)."""
    data = build_report(need_corpus() / "hello_world_int8.tflite", None, ())
    ops = [{"index": row["index"], "op": row["op"], "instructions": 5_000 + row["index"]}
           for row in data["summary"]["operators"]]
    data["profile"] = {"target": "qemu-cortex-m4", "machine": "mps2-an386", "opt": "-O2",
                       "ops": ops, "instructions_per_invoke": 15_003, "init_instructions": 1,
                       "interpreter_overhead_pct": 0.0, "bit_exact": True}
    assert ">estimated cycles<" not in profile_chart(data["profile"])
    for op in ops:
        op["estimated_cycles"] = 6_100 + op["index"]
    page = render_html(data)
    for text in (">instructions<", ">estimated cycles<", ">6,100<", ">5,000<",
                 '<th class="n">estimated cycles</th>', '<td class="n">6,102</td>'):
        assert text in page


def test_hostile_names_stay_text(tmp_path):
    """Tensor names come from the model: markup, mathtext and control characters in them
    must reach the page as plain text (and the SVG must stay well-formed XML)."""
    name = "<b>evil</b>$x^{2}$\x1b[2J"
    builder = ModelBuilder()
    x = builder.input(name, [1, 2], "float32")
    weights = builder.constant("w", np.ones((3, 2), np.float32))
    builder.output(builder.add_op("FULLY_CONNECTED", [x, weights, -1], [1, 3], "float32"))
    model, page = tmp_path / "m.tflite", tmp_path / "r.html"
    model.write_bytes(builder.build())
    result = cli("report", model, "-o", page)
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert "<b>evil" not in text and "\x1b" not in text
    assert "&lt;b&gt;evil&lt;/b&gt;$x^{2}$\\x1b[2J" in text
    for svg in re.findall(r"<svg.*?</svg>", text, flags=re.DOTALL):
        ElementTree.fromstring(svg)


def test_report_takes_the_generation_options_of_project(tmp_path):
    """--compress reports the coded model: its arena holds the decode scratch and its
    flatbuffer is smaller (kws pruned to 0.8, host objects)."""
    from tflm_gen.prune import prune_weights

    path = tmp_path / "kws_pruned.tflite"
    path.write_bytes(prune_weights((need_corpus() / "kws_ref_model.tflite").read_bytes(),
                                   0.8).model)
    plain = build_report(path, None, (), memory="fast")
    coded = build_report(path, None, (), "separate", "fast", compress=True)
    assert coded["code"]["model_bytes"] < plain["code"]["model_bytes"] - 10_000
    assert coded["memory"]["arena_bytes"] != plain["memory"]["arena_bytes"]
