"""`tflm-gen ops`: every builtin with our dtypes beside TFLM's list, and the cached TFLM
list kept equal to what the installed tflite-micro wheel registers."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tflm_gen.cli import main
from tflm_gen.kernels import kernel_catalogue
from tflm_gen.ops_table import builtin_operators, scan_tflm_library, tflm_library, tflm_ops


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
    assert rows["SVDF"] == {"code": 27, "op": "SVDF", "tflm": True, "dtypes": ["float32", "int8"]}
    for op, spec in kernel_catalogue().items():
        if op in rows:
            assert rows[op]["dtypes"] == sorted(spec.dtypes)
    assert report["summary"]["tflm"] == len(tflm_ops())


def test_ops_text_has_header_rows_and_summary() -> None:
    result = CliRunner().invoke(main, ["ops", "--tflm-only"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].split()[:3] == ["code", "op", "tflm"]
    assert len(lines) == len(tflm_ops()) + 2
    assert any(line.split()[1:4] == ["UNIDIRECTIONAL_SEQUENCE_LSTM", "yes", "float32,int8"]
               for line in lines[1:-1])  # fmt: skip
    summary = f"{len(builtin_operators())} builtins; TFLM registers {len(tflm_ops())}; tflm-gen runs"
    assert lines[-1].startswith(summary)
