"""Prints the operator coverage table: op | float32 | int8 | int16 | other dtypes | the
test files that compare it bit for bit with tflite-micro.

    python3 benchmarks/coverage_table.py

Dtypes come from the kernels' own markers (tflm_gen.kernels), test files from a search for
the op's name in tests/test_ops_*.py and tests/test_cmsis.py.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tflm_gen.kernels import kernel_catalogue

MAIN_TYPES = ("float32", "int8", "int16")


def main() -> None:
    tests = {p.name: p.read_text() for p in sorted((REPO / "tests").glob("test_ops_*.py"))}
    tests["test_cmsis.py"] = (REPO / "tests" / "test_cmsis.py").read_text()
    print("| op | float32 | int8 | int16 | other | tested against TFLM in |")
    print("|---|---|---|---|---|---|")
    for op, spec in sorted(kernel_catalogue().items()):
        cells = ["yes" if dtype in spec.dtypes else "-" for dtype in MAIN_TYPES]
        other = ",".join(sorted(spec.dtypes - set(MAIN_TYPES))) or "-"
        files = [name for name, text in tests.items() if re.search(rf"[\"']{op}[\"']", text)]
        print(f"| {op} | {' | '.join(cells)} | {other} | {', '.join(files) or 'none'} |")


if __name__ == "__main__":
    main()
