"""`tflm-gen ops`: every TFLite builtin operator, the activation dtypes tflm-gen's kernels
support, and whether TFLM has it.  Dtypes that TFLM cannot run (GELU, RELU_0_TO_1, hybrid
weights) are checked against LiteRT's reference kernels instead and marked "(LiteRT)".

TFLM's list is a fact about the tflite-micro wheel, cached in tflm_builtin_ops.txt beside
this module so the command needs no oracle: the wheel's Python interpreter resolves ops
with a resolver that adds every kernel the library carries, and each kernel is a
`tflite::Register_<OP>()` function exported by `tflite_micro/python/tflite_micro/_runtime*.so`.
`python -m tflm_gen.ops_table` scans that library's symbol names again (in Python, no `nm`
needed) and rewrites the file; tests/test_ops_table.py checks the file against the
installed wheel.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from pathlib import Path

import tflite

from tflm_gen.kernels import kernel_catalogue, supported_ops
from tflm_gen.op_dtypes import differences, tflm_dtypes

TFLM_OPS_FILE = Path(__file__).with_name("tflm_builtin_ops.txt")
# Mangled `tflite::Register_X()` and `tflite::micro::Register_X()` (not the signal
# library's custom ops in tflite::micro::tflm_signal).
_REGISTER = re.compile(rb"_ZN6tflite(?:5micro)?\d+Register_([A-Z0-9_]+)Ev")


def builtin_operators() -> list[tuple[int, str]]:
    """(code, name) of every BuiltinOperator of the installed schema, by code."""
    members = {
        name: value for name, value in vars(tflite.BuiltinOperator).items()
        if not name.startswith("_") and isinstance(value, int)
    }  # fmt: skip
    return sorted((code, name) for name, code in members.items())


def tflm_library() -> Path:
    """The installed tflite-micro runtime library."""
    spec = importlib.util.find_spec("tflite_micro")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("tflite-micro is not installed (pip install tflite-micro)")
    folder = Path(next(iter(spec.submodule_search_locations))) / "python" / "tflite_micro"
    libraries = sorted(folder.glob("_runtime*.so"))
    if not libraries:
        raise FileNotFoundError(f"no _runtime*.so in {folder}")
    return libraries[0]


def scan_tflm_library(library: Path) -> list[str]:
    """Builtin operator names whose Register_<OP> the library exports, sorted."""
    builtins = {name for _, name in builtin_operators()}
    found = {match.decode() for match in _REGISTER.findall(library.read_bytes())}
    return sorted(found & builtins)


def tflm_ops(path: Path = TFLM_OPS_FILE) -> frozenset[str]:
    """The cached TFLM builtin list (comment lines start with #)."""
    lines = path.read_text().splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def render_tflm_ops_file(ops: list[str], version: str) -> str:
    header = [
        "# TFLite builtin operators that TFLM (the tflite-micro Python wheel) registers.",
        f"# Made by `python -m tflm_gen.ops_table` from tflite-micro {version}: the builtin",
        "# names X whose tflite::Register_X() the wheel's _runtime*.so exports (its Python",
        "# interpreter's resolver adds every kernel the library carries).  Do not edit.",
    ]
    return "\n".join(header + ops) + "\n"


def ops_rows() -> list[dict]:
    """One row per builtin: code, name, our dtypes (empty when we have no kernel), whether
    TFLM registers it and the input dtypes TFLM's kernel accepts (tflm_op_dtypes.tsv); and,
    only where there are some, `litert`: our dtypes (or "hybrid") whose oracle is LiteRT."""
    catalogue, tflm, theirs = kernel_catalogue(), tflm_ops(), tflm_dtypes()
    rows = []
    for code, name in builtin_operators():
        spec = catalogue.get(name)
        row = {"code": code, "op": name, "tflm": name in tflm,
               "dtypes": sorted(spec.dtypes) if spec else [],
               "tflm_dtypes": theirs.get(name, [])}  # fmt: skip
        if spec and spec.litert:
            row["litert"] = sorted(spec.litert)
        rows.append(row)
    return rows


def summary(rows: list[dict]) -> dict:
    ours = {row["op"] for row in rows if row["dtypes"]}
    tflm = {row["op"] for row in rows if row["tflm"]}
    pairs = differences(supported_ops(), frozenset(tflm))
    tflm_pairs = {(row["op"], dtype) for row in rows for dtype in row["tflm_dtypes"]}
    ours_pairs = {(row["op"], dtype) for row in rows for dtype in row["dtypes"]}
    return {"builtins": len(rows), "tflm": len(tflm), "tflm_gen": len(ours),
            "tflm_gen_of_tflm": len(ours & tflm), "tflm_missing": sorted(tflm - ours),
            "dtype_pairs_tflm": len(tflm_pairs),
            "dtype_pairs_both": len(tflm_pairs & ours_pairs),
            "dtype_pairs_differ": pairs}  # fmt: skip


def main() -> None:
    """Rewrites tflm_builtin_ops.txt from the installed tflite-micro wheel."""
    ops = scan_tflm_library(tflm_library())
    TFLM_OPS_FILE.write_text(render_tflm_ops_file(ops, importlib.metadata.version("tflite-micro")))
    print(f"wrote {len(ops)} ops to {TFLM_OPS_FILE}")


if __name__ == "__main__":
    main()
