"""The C sources themselves: strict compilation, generated tables kept current."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import need_tool

from tflm_gen.schema_header import HEADER_PATH, render_schema_header
from tflm_gen.status import status_code, status_table

REPO = Path(__file__).resolve().parent.parent
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]


def test_schema_header_is_current():
    assert HEADER_PATH.read_text() == render_schema_header(), (
        "run python -m tflm_gen.schema_header"
    )


def test_status_table_read_from_header():
    names = [name for name, _ in status_table()]
    assert names[0] == "TFLM_OK" and "TFLM_ERR_ARENA_TOO_SMALL" in names
    assert status_code("TFLM_OK") == 0


@pytest.mark.parametrize("compiler,cpu", [
    ("gcc", []),
    ("arm-none-eabi-gcc", ["-mcpu=cortex-m4", "-mthumb"]),
    ("arm-none-eabi-gcc", ["-mcpu=cortex-m0", "-mthumb"]),
])
def test_runtime_and_kernels_compile_strict(compiler, cpu, tmp_path):
    """Every runtime and reference kernel file, flat in one folder, as a project has them."""
    need_tool(compiler)
    for folder in ("runtime_c", "kernels_c"):
        for path in (REPO / folder).glob("*.[ch]"):
            (tmp_path / path.name).write_bytes(path.read_bytes())
    for source in sorted(tmp_path.glob("*.c")):
        if source.name == "tflm_debug_log.c" and compiler.startswith("arm"):
            continue  # the hosted DebugLog uses stdio; ports replace it
        command = [compiler, *STRICT, *cpu, "-c", str(source), "-o", str(tmp_path / "x.o")]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        assert result.returncode == 0, f"{source.name}: {result.stderr}"


def test_headers_compile_as_cpp_with_c_linkage(tmp_path):
    """Arduino and Mbed compile C++: every header must be usable there, with C linkage."""
    compiler = need_tool("g++")
    for folder in ("runtime_c", "kernels_c"):
        for path in (REPO / folder).glob("*.[ch]"):
            (tmp_path / path.name).write_bytes(path.read_bytes())
    headers = sorted(p.name for p in tmp_path.glob("*.h"))
    (tmp_path / "all.cpp").write_text("".join(f'#include "{h}"\n' for h in headers))
    command = [compiler, "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c",
               str(tmp_path / "all.cpp"), "-o", str(tmp_path / "all.o")]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    for header in headers:
        text = (tmp_path / header).read_text()
        if "(" in text.split("#define", 1)[0] or ");" in text:
            assert 'extern "C"' in text, f"{header} declares functions without C linkage"
