"""`tflm-gen ops`: every builtin with our dtypes beside TFLM's list, and the cached TFLM
list kept equal to what the installed tflite-micro wheel registers."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tflm_gen.cli import main
from tflm_gen.kernels import kernel_catalogue, supported_ops
from tflm_gen.op_dtypes import STATUSES, differences, read_pairs, tflm_pairs, undocumented
from tflm_gen.ops_table import builtin_operators, scan_tflm_library, tflm_library, tflm_ops
from tflm_gen.support import DATA_INPUT


def test_cached_tflm_list_matches_installed_wheel() -> None:
    assert sorted(tflm_ops()) == scan_tflm_library(tflm_library()), (
        "run python -m tflm_gen.ops_table"
    )


def test_tflm_list_is_plausible() -> None:
    ops = tflm_ops()
    assert 80 <= len(ops) <= 150
    assert {"CONV_2D", "SVDF", "UNIDIRECTIONAL_SEQUENCE_LSTM", "SOFTMAX"} <= ops
    assert "LSH_PROJECTION" not in ops  # a TFLite op that TFLM never had


def test_ops_json_lists_every_builtin() -> None:
    result = CliRunner().invoke(main, ["ops", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert [(row["code"], row["op"]) for row in report["ops"]] == builtin_operators()
    rows = {row["op"]: row for row in report["ops"]}
    assert rows["SVDF"] == {"code": 27, "op": "SVDF", "tflm": True, "dtypes": ["float32", "int8"],
                            "tflm_dtypes": ["float32", "int8"]}  # fmt: skip
    for op, spec in kernel_catalogue().items():
        if op in rows:
            assert rows[op]["dtypes"] == sorted(spec.dtypes)
    assert report["summary"]["tflm"] == len(tflm_ops())


def test_ops_text_has_header_rows_and_summary() -> None:
    result = CliRunner().invoke(main, ["ops", "--tflm-only"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].split()[:3] == ["code", "op", "tflm"]
    assert set(lines[1]) == {"-", " "}  # the rule under the header
    assert len(lines) == len(tflm_ops()) + 4
    assert any(line.split()[1:5] == ["UNIDIRECTIONAL_SEQUENCE_LSTM", "yes", "float32,int16,int8", "same"]
               for line in lines[1:-1])  # fmt: skip
    summary = f"{len(builtin_operators())} builtins; TFLM registers {len(tflm_ops())}; tflm-gen runs"
    assert lines[-2].startswith(summary)
    assert lines[-1].startswith("(op, dtype) pairs: TFLM runs ")
    assert lines[-1].endswith("tflm-gen only: none")


def test_matrix_lists_every_tflm_op_once_per_dtype() -> None:
    pairs = [(pair.op, pair.dtype) for pair in tflm_pairs()]
    assert len(pairs) == len(set(pairs))
    assert {op for op, _ in pairs} == set(tflm_ops())
    assert {pair.tflm_gen for pair in tflm_pairs()} <= set(STATUSES)


def test_matrix_file_rejects_a_bad_row(tmp_path) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text("op\tdtype\ttflm_kernel\ttflm_gen\tnotes\nADD\tint8\tadd.cc\tmaybe\t\n")
    try:
        read_pairs(bad)
    except ValueError as error:
        assert "bad row" in str(error)
    else:
        raise AssertionError("a row with an unknown status was accepted")


def test_our_dtype_matrix_equals_tflms() -> None:
    """Every pair TFLM runs we run, and no other; the exceptions are the table's documented
    "refuse" rows and the "pending" multi-subgraph ops while no kernel declares them (once
    one does, its rows count)."""
    assert undocumented(supported_ops(), tflm_ops()) == []
    assert differences(supported_ops(), tflm_ops())["tflm_gen_only"] == []


def test_equality_check_can_fail() -> None:
    ours = {op: set(dtypes) for op, dtypes in supported_ops().items()}
    ours["SELECT_V2"].add("bool")
    ours["PACK"].discard("int32")
    ours["IF"] = {"bool", "int8"}  # a pending op gains a kernel: its rows now count
    problems = undocumented(ours, tflm_ops())
    assert "SELECT_V2 bool: tflm-gen runs it, the table does not say so" in problems
    assert "PACK int32: TFLM runs it, tflm-gen does not" in problems
    assert "IF int8: tflm-gen runs it, the table does not say so" in problems
    assert "GREATER int16: TFLM runs it, tflm-gen does not" not in problems  # documented
    differ = differences(ours, tflm_ops())
    assert differ["tflm_gen_only"] == ["IF int8", "SELECT_V2 bool"]
    assert "PACK int32" in differ["tflm_only"]
    assert any(entry.startswith("LOGICAL_AND float32,int16,") for entry in differ["tflm_only"])


def test_data_input_ops_exist() -> None:
    names = {name for _, name in builtin_operators()}
    assert set(DATA_INPUT) <= names
