"""Facts both languages need come from one place: generated headers are current, and
nothing in C or Python types a copy that could drift."""

from __future__ import annotations

import re
from pathlib import Path

from tflm_gen.builtin_header import HEADER_PATH, builtin_codes, render_builtin_header

REPO = Path(__file__).resolve().parent.parent


def test_builtin_header_is_current():
    assert HEADER_PATH.read_bytes() == render_builtin_header().encode(), (
        "run python -m tflm_gen.builtin_header"
    )


def _registrations():
    """(file, text of the initializer) of every kernel registration in kernels_c/."""
    pattern = re.compile(r"const tflm_registration_t \w+ = \{([^}]*)\}")
    for path in sorted((REPO / "kernels_c").rglob("*.c")):
        for match in pattern.finditer(path.read_text()):
            yield path.relative_to(REPO), match.group(1)


def test_registrations_name_their_builtin_code():
    """The second field of every registration is a TFLM_BUILTIN_* name (or the macro's
    `code` argument), never a number typed by hand."""
    registrations = list(_registrations())
    assert len(registrations) > 80
    for path, body in registrations:
        code = body.split(",")[1].strip()
        assert code == "code" or code.removeprefix("TFLM_BUILTIN_") in builtin_codes(), (path, code)
    macro_rows = re.compile(r"^TFLM_(?:UNARY|CMP)_OP\(\w+, (\w+)", re.M)
    for path in (REPO / "kernels_c").glob("*.c"):
        for code in macro_rows.findall(path.read_text()):
            assert code.removeprefix("TFLM_BUILTIN_") in builtin_codes(), (path, code)


def test_no_builtin_code_typed_in_runtime_headers():
    for path in (REPO / "runtime_c").rglob("*.h"):
        if path != HEADER_PATH:
            assert not re.search(r"#define TFLM_BUILTIN_\w+ \d", path.read_text()), path
