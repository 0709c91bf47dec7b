"""The model zoo (tests/zoo/<source>/): models made by the project's own scripts with the
converters users bring models from (Keras through TensorFlow's converter, PyTorch through
litert-torch and onnx2tf). Each one is bit-exact with tflite-micro over three invokes on
the host, and the int8 ones also on an emulated Cortex-M4 with and without `--tags cmsis`,
or it is refused with the reason its manifest row states.

Manifest (`tests/zoo/<source>/MANIFEST.tsv`, tab-separated, one header row):
file, converter, dtype (int8 | int16x8 | float32 | hybrid), ops (comma-separated builtins),
versions (the converter stack that made it), sha256, expect (`ok`; `refused: <text the
one-line error must contain>`, for a model TFLM refuses too; or `defect: <op> <dtype>:
<what differs>`, a known divergence that is a defect report and fails the run as soon as
it is fixed, so the row must then say `ok`). `ok: litert` and `defect: litert: ...` name
LiteRT as the oracle, for models with an op TFLM lacks (GELU) or that TFLM refuses
(hybrid); those run on the host only."""

from __future__ import annotations

import csv
import hashlib
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from op_oracle import per_op_explanation

from tflm_gen import qemu
from tflm_gen.cli import main
from tflm_gen.verify import verify

ZOO = Path(__file__).resolve().parent / "zoo"
COLUMNS = ["file", "converter", "dtype", "ops", "versions", "sha256", "expect"]
MAX_MODEL_BYTES = 1 << 20
MAX_ZOO_BYTES = 25 << 20


def zoo_rows() -> list[dict]:
    rows = []
    for manifest in sorted(ZOO.glob("*/MANIFEST.tsv")):
        with manifest.open(newline="") as handle:
            reader = csv.DictReader(handle, delimiter="\t")
            assert reader.fieldnames == COLUMNS, (manifest, reader.fieldnames)
            for row in reader:
                rows.append(dict(row, path=manifest.parent / row["file"]))
    return rows


# Stands for "no rows" so that no parameter set is empty (pytest then fails at collection).
EMPTY = {"file": "<no zoo rows>", "path": ZOO / "<no zoo rows>"}


def need_rows(row: dict) -> None:
    """Fails on the EMPTY sentinel once tests/zoo/ exists (or when CI requires the corpus);
    before the first models land, the folder is absent and the sentinel skips, saying so."""
    if row is not EMPTY:
        return
    if ZOO.is_dir() or os.environ.get("TFLM_GEN_REQUIRE_CORPUS") == "1":
        pytest.fail(f"no zoo model for this test in {ZOO}")
    pytest.skip(f"{ZOO} does not exist yet")


ROWS = zoo_rows()
INT8_OK = [row for row in ROWS if row["dtype"] == "int8" and row["expect"] == "ok"] or [EMPTY]
ROWS = ROWS or [EMPTY]
IDS = [f"{row['path'].parent.name}/{row['file']}" for row in ROWS]


def oracle_of(row: dict) -> str:
    """LiteRT for `ok: litert` and `defect: litert: ...` rows, else TFLM."""
    parts = row["expect"].split(":")
    return "litert" if len(parts) > 1 and parts[1].strip() == "litert" else "tflm"


def test_zoo_is_complete_and_small():
    """Every manifest row names a committed model with its hash; every model is listed."""
    need_rows(ROWS[0])
    listed = {row["path"] for row in ROWS}
    on_disk = set(ZOO.glob("*/*.tflite"))
    assert listed == on_disk
    total = 0
    for row in ROWS:
        data = row["path"].read_bytes()
        assert hashlib.sha256(data).hexdigest() == row["sha256"], row["file"]
        assert len(data) < MAX_MODEL_BYTES, row["file"]
        total += len(data)
    assert total < MAX_ZOO_BYTES
    # Issue 19: at least 40 models converted from Keras by TensorFlow's converter.
    assert sum(row["path"].parent.name == "keras" for row in ROWS) >= 40


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_zoo_model_is_bit_exact_on_host_or_refused(row, request):
    need_rows(row)
    if row["expect"].startswith("refused:"):
        reason = row["expect"].split(":", 1)[1].strip()
        result = CliRunner().invoke(main, ["verify", str(row["path"])])
        assert result.exit_code == 2, result.output
        assert reason in result.output and "Traceback" not in result.output
        return
    if row["expect"].startswith("defect:"):
        request.applymarker(pytest.mark.xfail(reason=row["expect"], strict=True))
    else:
        assert row["expect"] in ("ok", "ok: litert"), row["expect"]
    data = row["path"].read_bytes()
    assert verify(data, oracle_of(row), runs=3).bit_exact, per_op_explanation(data)


@pytest.mark.parametrize("tags", [(), ("cmsis",)], ids=["reference", "cmsis"])
@pytest.mark.parametrize("row", INT8_OK, ids=[f"{r['path'].parent.name}/{r['file']}"
                                              for r in INT8_OK])
def test_zoo_int8_model_is_bit_exact_on_cortex_m4(row, tags):
    from test_qemu import need_board

    need_rows(row)
    need_board("qemu-cortex-m4")
    _, completed = qemu.run_project(row["path"].read_bytes(), "qemu-cortex-m4", tags)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert qemu.PASSED in completed.stdout
