"""The Arduino library as a user gets it: `--zip` (the archive "Add .ZIP Library" imports,
deterministic, built with arduino-builder for the Mega 2560 and run under simavr once
unzipped), `library.properties` valid for the Library Manager, and `--board`, which
refuses at generation, with the sizes, a model or arena the board cannot hold."""

from __future__ import annotations

import io
import re
import subprocess
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import corpus_path, need_tool
from test_targets import arduino_build, model_path, simavr_lines

from tflm_gen.archive import zip_tree
from tflm_gen.cli import main
from tflm_gen.errors import InputError, UnsupportedModelError
from tflm_gen.project import (
    GenerateOptions,
    _ram_parts,
    check_fits_board,
    generate,
    named_target,
)
from tflm_gen.targets import camel_name, load_target, project_name, with_board

SINE = "sine_int8.tflite"
# The Library Manager's rules for library.properties (Arduino library specification,
# 1.5 format rev. 2.2, as arduino-lint checks it).
REQUIRED_FIELDS = ("name", "version", "author", "maintainer", "sentence", "paragraph",
                   "category", "url", "architectures")
CATEGORIES = ("Display", "Communication", "Signal Input/Output", "Sensors", "Device Control",
              "Timing", "Data Storage", "Data Processing", "Other")
NAME_PATTERN = r"(([a-zA-Z][a-zA-Z0-9 _.\-]*)|([0-9][a-zA-Z0-9 _.\-]*[a-zA-Z][a-zA-Z0-9 _.\-]*))"
NAME_MAX = 63
SEMVER = r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?"
MEGA = "mega"


def _zip_project(model: str, tmp: Path, *extra: str) -> Path:
    result = CliRunner().invoke(main, ["project", "--model", str(model_path(model)), "--target",
                                       "arduino", "--zip", *extra, "-o", str(tmp)])
    assert result.exit_code == 0, result.output
    archives = list(tmp.glob("*.zip"))
    assert len(archives) == 1 and result.output.count(str(archives[0])) == 1, result.output
    return archives[0]


@pytest.fixture(scope="session")
def sine_zip(tmp_path_factory) -> Path:
    return _zip_project(SINE, tmp_path_factory.mktemp("arduino_zip"), "--board", MEGA)


def declared_sizes(header: str) -> tuple[int, int]:
    """The arena and model bytes a generated `<name>_model_data.h` declares."""
    arena = re.search(r"_ARENA_BYTES (\d+)u", header)
    model = re.search(r"_MODEL_SIZE (\d+)u", header)
    return int(arena.group(1)), int(model.group(1))


def _properties(text: str) -> dict:
    pairs = (line.split("=", 1) for line in text.splitlines() if line and line[0] != "#")
    return {key.strip(): value.strip() for key, value in pairs}


# ---------------------------------------------------------------------------- the zip


def test_zip_holds_the_project_under_one_folder_named_after_the_library(sine_zip):
    files = generate(model_path(SINE).read_bytes(), GenerateOptions("arduino", board=MEGA,
                                                                    name="sine_int8"))
    top = project_name(named_target(load_target("arduino"), "sine_int8"), "sine_int8")
    assert top == "SineInt8"  # the CLI's default name: the model file's stem
    archive = zipfile.ZipFile(sine_zip)
    assert sine_zip.name == f"{top}.zip"
    entries = {info.filename: info for info in archive.infolist()}
    contents = {name[len(top) + 1:]: archive.read(name) for name in entries
                if not name.endswith("/")}
    # the README's regenerate line is the command line that made it, here the CLI's
    assert contents.pop("README.md").startswith(files.pop("README.md").split(b"tflm-gen project")[0])
    assert contents == files
    assert all(name.startswith(f"{top}/") for name in entries)
    for name, info in entries.items():  # fixed times and modes: nothing of this machine's
        assert info.date_time == (1980, 1, 1, 0, 0, 0)
        assert info.external_attr >> 16 == (0o040755 if name.endswith("/") else 0o100644)
    for path in files:  # every folder has its entry, so any unzip tool recreates it
        assert f"{top}/{path.rsplit('/', 1)[0]}/" in entries or "/" not in path


def test_zip_bytes_depend_only_on_the_files(sine_zip, tmp_path):
    first = sine_zip.read_bytes()  # the same command again (its README names the folder)
    again = _zip_project(SINE, sine_zip.parent, "--board", MEGA)
    assert again.read_bytes() == first
    files = {"b/x.c": b"1", "a.h": b"2"}
    assert zip_tree(files, "L") == zip_tree(dict(reversed(files.items())), "L")
    assert zip_tree(files, "L") != zip_tree({**files, "a.h": b"3"}, "L")


def test_unzipped_library_builds_for_the_mega_and_passes_under_simavr(sine_zip, tmp_path):
    """What the IDE does after "Add .ZIP Library": unpack into the libraries folder, then
    build the self-test example: it passes under simavr, and the RAM the fit check counts
    is a lower bound of what the linked program really takes."""
    need_tool("arduino-builder")
    libraries = tmp_path / "libraries"
    zipfile.ZipFile(sine_zip).extractall(libraries)
    library = libraries / sine_zip.stem
    sketch = next((library / "examples").glob("*SelfTest/*.ino"))
    log = arduino_build(library, sketch, tmp_path / "build")
    assert not [line for line in log.splitlines() if str(library) in line and "warning" in line]
    elf = tmp_path / "build" / f"{sketch.name}.elf"
    lines = simavr_lines(elf)
    assert "~~~ALL TESTS PASSED~~~" in lines, lines[-5:]
    sizes = subprocess.run([need_tool("avr-size"), str(elf)], capture_output=True, text=True,
                           check=True).stdout.splitlines()[1].split()
    board = with_board(load_target("arduino"), MEGA).values["board"]
    arena, model = declared_sizes(next(library.glob("src/tflm/*_model_data.h")).read_text())
    counted = sum(size for _, size in _ram_parts(board, model, arena))
    assert counted <= int(sizes[1]) + int(sizes[2]) <= board["memory"]["data"]["length"]


# ---------------------------------------------------------------------------- library.properties


def test_library_properties_are_valid_for_the_library_manager(sine_zip):
    archive = zipfile.ZipFile(sine_zip)
    top = sine_zip.stem
    fields = _properties(archive.read(f"{top}/library.properties").decode())
    assert all(fields.get(key) for key in REQUIRED_FIELDS), fields
    name = fields["name"]
    assert re.fullmatch(NAME_PATTERN, name) and len(name) <= NAME_MAX
    assert not name.lower().startswith("arduino")  # reserved for Arduino's own libraries
    assert name == top  # the folder the IDE unpacks is the library's name
    assert re.fullmatch(SEMVER, fields["version"])
    assert fields["category"] in CATEGORIES
    assert re.fullmatch(r"https?://\S+", fields["url"])
    assert fields["architectures"] == "*" or all(
        re.fullmatch(r"[a-z0-9_]+", arch.strip()) for arch in fields["architectures"].split(","))
    for header in fields["includes"].split(","):
        assert f"{top}/src/{header.strip()}" in archive.namelist()
    assert fields["sentence"].endswith(".") and fields["paragraph"].endswith(".")


def test_the_library_is_named_after_the_project_name(tmp_path):
    """--name kws_ref: the archive, its folder, library.properties, the header sketches
    include and both examples carry `KwsRef`; the header guard carries the name, so two
    models' headers can be included side by side."""
    archive = zipfile.ZipFile(_zip_project(SINE, tmp_path, "--name", "kws_ref"))
    names = set(archive.namelist())
    assert archive.filename.endswith("/KwsRef.zip")
    for path in ("src/KwsRef.h", "examples/KwsRef/KwsRef.ino",
                 "examples/KwsRefSelfTest/KwsRefSelfTest.ino", "src/tflm/kws_ref.h"):
        assert f"KwsRef/{path}" in names, sorted(names)
    fields = _properties(archive.read("KwsRef/library.properties").decode())
    assert fields["name"] == "KwsRef" and fields["includes"] == "KwsRef.h"
    for sketch in ("KwsRef/KwsRef.ino", "KwsRefSelfTest/KwsRefSelfTest.ino"):
        assert "#include <KwsRef.h>" in archive.read(f"KwsRef/examples/{sketch}").decode()
    header = archive.read("KwsRef/src/KwsRef.h").decode()
    assert "#ifndef KWS_REF_ARDUINO_LIBRARY_H" in header
    other = generate(model_path(SINE).read_bytes(), GenerateOptions("arduino", name="sine"))
    assert "#ifndef SINE_ARDUINO_LIBRARY_H" in other["src/Sine.h"].decode()


@pytest.mark.parametrize("name, library", [("kws_ref_model", "KwsRefModel"), ("m_1x", "M1x"),
                                           ("a__b", "AB"), ("arduino_kws", "ModelArduinoKws")])
def test_library_names_follow_the_library_manager_rules(name, library):
    assert camel_name(name) == library
    assert re.fullmatch(NAME_PATTERN, library) and len(library) <= NAME_MAX
    assert not library.lower().startswith("arduino")


# ---------------------------------------------------------------------------- --board


def test_micro_speech_is_refused_for_the_mega_with_the_sizes(tmp_path):
    model = corpus_path("micro_speech_quantized.tflite")
    with pytest.raises(UnsupportedModelError) as refused:
        generate(model.read_bytes(), GenerateOptions("arduino", board=MEGA))
    message = str(refused.value)
    found = re.fullmatch(r"the arena \((\d+) bytes\), model \((\d+) bytes\) and reserve for "
                         r"the core and stack \((\d+) bytes\) do not fit arduino --board mega: "
                         r"SRAM holds 8192 bytes, (\d+) needed", message)
    assert found, message
    arena, model_bytes, reserve, total = map(int, found.groups())
    assert arena + model_bytes + reserve == total > 8192
    assert model_bytes >= model.stat().st_size  # the device model carries its plan too
    result = CliRunner().invoke(main, ["project", "--model", str(model), "--target", "arduino",
                                       "--board", MEGA, "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert result.output.startswith("tflm-gen: error: the arena (")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("model", ["kws_ref_model.tflite", "micro_speech_quantized.tflite"])
def test_corpus_models_generate_for_a_board_they_fit(model, tmp_path):
    """The sizes the refusal names are the project's own: generated for the Nano 33 BLE,
    the arena and model the header declares fit its SRAM and flash."""
    files = generate(corpus_path(model).read_bytes(), GenerateOptions("arduino",
                                                                      board="nano33ble"))
    arena, size = declared_sizes(files["src/tflm/model_model_data.h"].decode())
    memory = with_board(load_target("arduino"), "nano33ble").values["board"]["memory"]
    assert arena <= memory["data"]["length"] and size <= memory["code"]["length"]
    with pytest.raises(UnsupportedModelError,
                       match=f"arena \\({arena} bytes\\), model \\({size} bytes\\) and "):
        generate(corpus_path(model).read_bytes(), GenerateOptions("arduino", board=MEGA))


def test_a_model_larger_than_the_flash_is_refused():
    """On an ARM board the model stays in flash: it is checked against the flash alone."""
    board = with_board(load_target("arduino"), "nano33ble").values["board"]
    assert "constants_in_data" not in board
    assert _ram_parts(board, 10**6, 100) == [("arena", 100)]
    uno = with_board(load_target("arduino"), "uno")
    with pytest.raises(UnsupportedModelError, match=r"model \(40000 bytes\) does not fit "
                                                    r"arduino --board uno: flash holds 32256 "
                                                    r"bytes"):
        check_fits_board(uno, 40000, 0)


def test_unknown_boards_are_refused_in_one_line(tmp_path):
    with pytest.raises(InputError, match="unknown board 'due' for target arduino; its boards: "
                                         "mega, nano, nano33ble"):
        with_board(load_target("arduino"), "due")
    with pytest.raises(InputError, match="unknown board 'netduinoplus2' for target arduino"):
        generate(model_path(SINE).read_bytes(), GenerateOptions("arduino",
                                                                board="netduinoplus2"))
    result = CliRunner().invoke(main, ["project", "--model", str(model_path(SINE)), "--target",
                                       "make", "--board", MEGA, "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.startswith("tflm-gen: error: target make takes no --board; boards "
                                    "work with keil, stm32cube, platformio and arduino")
    assert result.output.count("\n") == 1


def test_targets_command_lists_the_boards_with_their_fqbn():
    output = CliRunner().invoke(main, ["targets"]).output
    for board, facts in load_target("arduino").boards.items():
        line = next(line for line in output.splitlines() if line.startswith(f"{board} "))
        assert facts["fqbn"] in line and facts["title"] in line


def test_zip_is_written_inside_the_output_folder_and_replaced_on_regeneration(tmp_path):
    first = _zip_project(SINE, tmp_path / "out")
    assert first.parent == tmp_path / "out"
    assert sorted(p.name for p in first.parent.iterdir()) == [".tflm-gen-files", first.name]
    second = _zip_project(SINE, tmp_path / "out")
    assert second == first and zipfile.ZipFile(io.BytesIO(second.read_bytes())).testzip() is None


def test_zip_of_another_target_is_named_after_the_project(tmp_path):
    """--zip is not Arduino's alone: a make project zips under its name and, unzipped,
    `make test` passes."""
    need_tool("make")
    need_tool("gcc")
    result = CliRunner().invoke(main, ["project", "--model", str(model_path(SINE)), "--zip",
                                       "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    archive = tmp_path / "out" / "sine_int8.zip"
    zipfile.ZipFile(archive).extractall(tmp_path / "unzipped")
    built = subprocess.run(["make", "-C", str(tmp_path / "unzipped" / "sine_int8"), "test"],
                           capture_output=True, text=True, timeout=300, check=False)
    assert built.returncode == 0 and "~~~ALL TESTS PASSED~~~" in built.stdout + built.stderr, \
        built.stdout + built.stderr
