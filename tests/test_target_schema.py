"""Target files (targets/*.json) and board files (targets/boards/*.json) are checked against
tflm_gen/target_schema.py when loaded: each rule refuses a broken copy of a shipped file in
one line naming the file and the key.  Also: nothing else silently takes a misspelt tag,
target or board (extra arguments of `tags` / `targets`, the tests' environment)."""

from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner
from conftest import REPO_ROOT, check_environment

import tflm_gen.targets
from tflm_gen.boards import list_boards, load_board
from tflm_gen.cli import main
from tflm_gen.errors import TargetFileError
from tflm_gen.kernels import TAG_DESCRIPTIONS, known_tags
from tflm_gen.target_schema import load_board_file, load_target_file
from tflm_gen.targets import list_targets, load_target

TARGETS = REPO_ROOT / "targets"


def _shipped(relative: str) -> dict:
    return json.loads((TARGETS / relative).read_text())


def _refused(tmp_path, data, name: str, loader) -> str:
    """The message of loading `data` written as `name`."""
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(TargetFileError) as error:
        loader(path)
    return str(error.value)


def _target(tmp_path, change, name: str = "qemu-cortex-m4.json") -> str:
    data = copy.deepcopy(_shipped(name))
    change(data)
    return _refused(tmp_path, data, name, load_target_file)


def _board(tmp_path, change, name: str = "netduinoplus2.json") -> str:
    data = copy.deepcopy(_shipped(f"boards/{name}"))
    change(data)
    return _refused(tmp_path, data, name, load_board_file)


def test_every_shipped_target_and_board_file_follows_the_schema():
    assert len(list_targets()) >= 15 and len(list_boards()) >= 3
    for name in list_targets():
        load_target(name)
    for name in list_boards():
        load_board(name)


def test_unknown_target_key_is_named_with_its_file(tmp_path):
    message = _target(tmp_path, lambda data: data.update(self_test_hnt="make test"))
    assert message.startswith("targets/qemu-cortex-m4.json: unknown key 'self_test_hnt'")
    assert "self_test_hint" in message  # the known keys are listed


def test_unknown_nested_key_is_named_by_its_path(tmp_path):
    message = _target(tmp_path, lambda data: data["values"]["board"].update(machin="x"))
    assert "targets/qemu-cortex-m4.json: unknown key 'values.board.machin'" in message


def test_wrong_type_is_refused(tmp_path):
    message = _target(tmp_path, lambda data: data.update(tags="cmsis"))
    assert message == "targets/qemu-cortex-m4.json: tags must be a list, not a string"
    message = _target(tmp_path, lambda data: data["values"]["board"].update(stack_bytes="8192"))
    assert "values.board.stack_bytes must be an integer, not '8192'" in message


def test_true_is_not_a_count(tmp_path):
    message = _target(tmp_path, lambda data: data["values"]["board"].update(stack_bytes=True))
    assert "values.board.stack_bytes must be an integer, not true or false" in message


def test_missing_required_key_is_named(tmp_path):
    message = _target(tmp_path, lambda data: data.pop("templates"))
    assert message == "targets/qemu-cortex-m4.json: missing key 'templates'"


def test_unknown_tag_in_a_target_is_refused(tmp_path):
    message = _target(tmp_path, lambda data: data.update(tags=["semihost", "cmsiss"]))
    assert "tags[1] must be a known tag (`tflm-gen tags`), not 'cmsiss'" in message


def test_tag_note_for_an_unknown_tag_is_refused(tmp_path):
    message = _target(tmp_path, lambda data: data["tag_notes"].update(cmssi="fast"), "arduino.json")
    assert message.startswith("targets/arduino.json: tag_notes.cmssi: unknown tag 'cmssi'")


def test_template_must_exist_under_templates(tmp_path):
    message = _target(tmp_path, lambda data: data["templates"].update({"x.c": "qemu/nope.j2"}))
    assert "templates.x.c must be a file under templates/, not 'qemu/nope.j2'" in message
    message = _target(tmp_path, lambda data: data["templates"].update(
        {"x.c": "../templates/qemu/Makefile.j2"}))
    assert "must be a file under templates/" in message


def test_own_board_table_is_checked(tmp_path):
    message = _target(tmp_path, lambda data: data["boards"]["uno"]["memory"]["code"].update(
        length="32K"), "arduino.json")
    assert "boards.uno.memory.code.length must be an integer, not '32K'" in message


def test_invalid_json_is_one_line_naming_the_file(tmp_path):
    message = _refused(tmp_path, '{"description": ', "make.json", load_target_file)
    assert message.startswith("targets/make.json: not valid JSON:")
    message = _refused(tmp_path, "[]", "make.json", load_target_file)
    assert message == "targets/make.json must hold a JSON object, not a list"


def test_unknown_board_key_is_refused(tmp_path):
    message = _board(tmp_path, lambda data: data.update(stack_byte=4096))
    assert message.startswith("targets/boards/netduinoplus2.json: unknown key 'stack_byte'")


def test_board_missing_section_is_refused(tmp_path):
    message = _board(tmp_path, lambda data: data.pop("console"))
    assert message == "targets/boards/netduinoplus2.json: missing key 'console'"


def test_board_memory_takes_hex_strings_or_numbers(tmp_path):
    message = _board(tmp_path, lambda data: data["memory"]["code"].update(origin="08000000"))
    assert 'memory.code.origin must be an integer or a hex string ("0x...")' in message


def test_board_cpu_flags_name_the_float_unit(tmp_path):
    message = _board(tmp_path, lambda data: data.update(cpu_flags=["-mcpu=cortex-m4",
                                                                   "-mthumb"]))
    assert "cpu_flags must be a list of strings with -mcpu=, -mfpu= and -mfloat-abi=" in message


def test_board_console_register_and_port_are_checked(tmp_path):
    message = _board(tmp_path, lambda data: data["console"].update(rcc_register="APB3ENR"))
    assert "console.rcc_register must be one of AHB1ENR, APB1ENR, APB2ENR" in message
    message = _board(tmp_path, lambda data: data["console"].update(tx_port="PA"))
    assert "console.tx_port must be a GPIO port letter A-K, not 'PA'" in message


def test_board_unknown_tag_is_refused(tmp_path):
    message = _board(tmp_path, lambda data: data.update(tags=["stm32f5"]))
    assert "tags[0] must be a known tag" in message


def test_cli_refuses_a_broken_target_file_in_one_line(tmp_path, monkeypatch):
    folder = tmp_path / "targets"
    folder.mkdir()
    data = _shipped("make.json")
    data["templtes"] = data.pop("templates")
    (folder / "make.json").write_text(json.dumps(data))
    real = tflm_gen.targets.resource_dir
    monkeypatch.setattr(tflm_gen.targets, "resource_dir",
                        lambda name: folder if name == "targets" else real(name))
    result = CliRunner().invoke(main, ["targets"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert result.output.startswith("tflm-gen: error: targets/make.json: unknown key 'templtes'")


@pytest.mark.parametrize("command", [["tags", "cmsis"], ["targets", "qemu-cortex-m4"],
                                     ["doctor", "cc"], ["ops", "CONV_2D"]])
def test_listing_commands_refuse_a_name_they_would_ignore(command):
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2
    assert "unexpected extra argument" in result.output
    assert result.output.count("\n") == 1


@pytest.mark.parametrize(("variable", "value", "said"), [
    ("TFLM_GEN_REQUIRE_TOOLCHAIN", "1", "unknown variable TFLM_GEN_REQUIRE_TOOLCHAIN"),
    ("TFLM_GEN_REQUIRE_CORPUS", "yes", "TFLM_GEN_REQUIRE_CORPUS='yes': give 1"),
])
def test_misspelt_test_environment_is_refused(monkeypatch, variable, value, said):
    monkeypatch.setenv(variable, value)
    with pytest.raises(pytest.UsageError, match=said):
        check_environment()


def test_every_tag_has_a_description_and_every_description_a_tag():
    """`tflm-gen tags` would print "(no description)" for a new tag, and a description
    under a misspelt name would never be shown."""
    assert set(TAG_DESCRIPTIONS) == set(known_tags())
