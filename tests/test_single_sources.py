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
    """(file, builtin code as written) of every kernel registration in kernels_c/: the
    initializers typed out, and those the registration macros define (TFLM_UNARY_OP,
    TFLM_CMP_OP, TFLM_BINARY_OP, TFLM_WEIGHTED_OP, TFLM_POOL_OP,
    TFLM_MAP_OP: symbol or name first, code second)."""
    pattern = re.compile(r"const tflm_registration_t \w+ = \{([^}]*)\}")
    macro_rows = re.compile(r"^TFLM_(?:UNARY|CMP|BINARY|WEIGHTED|POOL|MAP)_OP\(\w+, (\w+)", re.MULTILINE)
    for path in sorted((REPO / "kernels_c").rglob("*.c")):
        text = path.read_text()
        for match in pattern.finditer(text):
            yield path.relative_to(REPO), match.group(1).split(",")[1].strip()
        for code in macro_rows.findall(text):
            yield path.relative_to(REPO), code


def test_registrations_name_their_builtin_code():
    """The second field of every registration is a TFLM_BUILTIN_* name (or the macro's
    `code` argument), never a number typed by hand."""
    registrations = list(_registrations())
    assert len(registrations) > 80
    for path, code in registrations:
        assert code == "code" or code.removeprefix("TFLM_BUILTIN_") in builtin_codes(), (path, code)


def test_kernels_name_the_builtin_codes_they_compare():
    """A kernel serving several ops tells them apart by TFLM_BUILTIN_* names, never by a
    typed number (`builtin == 21`, `case 76:` in a switch on the code)."""
    typed = re.compile(r"\b(?:builtin|code)\w*\s*[!=]=\s*\d"
                       r"|switch \((?:\w+->)?builtin\w*\) \{[^}]*?case \d")
    for path in sorted((REPO / "kernels_c").rglob("*.c")):
        match = typed.search(path.read_text())
        assert match is None, (path.relative_to(REPO), match and match.group(0))


def test_no_builtin_code_typed_in_runtime_headers():
    for path in (REPO / "runtime_c").rglob("*.h"):
        if path != HEADER_PATH:
            assert not re.search(r"#define TFLM_BUILTIN_\w+ \d", path.read_text()), path


def test_arena_alignment_is_the_c_header_value():
    from tflm_gen import arena, plan
    from tflm_gen.c_headers import header_define

    assert plan.ALIGN == arena.ALIGN == header_define("tflm_arena.h", "TFLM_ARENA_ALIGN")
    for path in (REPO / "tflm_gen").rglob("*.py"):
        assert not re.search(r"^ALIGN = \d", path.read_text(), re.MULTILINE), path


def test_abi_version_is_the_c_header_value():
    from tflm_gen.assemble import resolver_files
    from tflm_gen.c_headers import header_define

    version = header_define("tflm_interpreter.h", "TFLM_RUNTIME_ABI_VERSION")
    header = resolver_files(["ADD"], b"model")["model_model_ops.h"].decode()
    assert f"#if TFLM_RUNTIME_ABI_VERSION != {version}\n" in header
    for path in (REPO / "templates").rglob("*.j2"):
        assert not re.search(r"ABI_VERSION != \d", path.read_text()), path


def test_cffi_structs_are_the_c_headers():
    """host.py declares no struct itself; the ones it passes are read from runtime_c/."""
    from tflm_gen import host

    assert "typedef struct" not in host._CDEF
    assert host._ffi.sizeof("tflm_tensor_t") > 0 and host._ffi.sizeof("tflm_memory_stats_t") > 0


def _c_size_switch(path: Path, function: str) -> dict[str, int]:
    """TFLM_TYPE_X -> bytes from the `switch (type)` of a C function returning sizes."""
    text = path.read_text()
    body = text[text.index(function):]
    body = body[:body.index("default:")]
    sizes, pending = {}, []
    for token in re.findall(r"case (TFLM_TYPE_\w+):|return (\d+);", body):
        if token[0]:
            pending.append(token[0])
        else:
            sizes.update({name: int(token[1]) for name in pending})
            pending = []
    return sizes


def _c_size_functions():
    """(file, function) of every C function mapping a TFLM_TYPE_* to its element size."""
    pattern = re.compile(r"^\w[\w ]* (\w*(?:type_size|element_bytes|element_size|alignment)\w*)"
                         r"\(int32_t type\) \{", re.MULTILINE)
    for path in sorted([*(REPO / "runtime_c").rglob("*.[ch]"), *(REPO / "kernels_c").rglob("*.[ch]")]):
        for function in pattern.findall(path.read_text()):
            yield path, function


def test_c_element_sizes_agree_with_the_dtype_table():
    """C has one element-size switch (tflm_type_size: the model's tensor sizes, constant
    alignment and every kernel read it), and it gives every size as the bits of
    tflm_gen.model.ir.DTYPES."""
    from tflm_gen.model import ir

    functions = list(_c_size_functions())
    assert [(path.name, function) for path, function in functions] == [
        ("tflm_kernel_api.c", "tflm_type_size")]
    for path, function in functions:
        sizes = _c_size_switch(path, function)
        assert len(sizes) >= 8, (path, sizes)
        for name, size in sizes.items():
            dtype = ir.dtype_info(name.removeprefix("TFLM_TYPE_").lower())
            expected = 4 if dtype.name == "resource" else dtype.bits // 8  # a resource id
            assert size == expected, (path.name, name, size)


def test_dtype_codes_are_the_schema_values():
    import tflite

    from tflm_gen.model import ir

    schema = (REPO / "runtime_c/tflm_schema.h").read_text()
    for dtype in ir.DTYPES:
        assert dtype.code == getattr(tflite.TensorType, dtype.name.upper())
        assert f"#define TFLM_TYPE_{dtype.name.upper()} {dtype.code}\n" in schema


# The schema table each prefix of tflm_model.h's slot enum reads, and the fields whose C
# name is shorter than the schema's.
SLOT_TABLES = {"MODEL": "Model", "METADATA": "Metadata", "SUBGRAPH": "SubGraph",
               "TENSOR": "Tensor", "QUANT": "QuantizationParameters", "OPERATOR": "Operator",
               "OPCODE": "OperatorCode", "BUFFER": "Buffer"}
SLOT_FIELDS = {"QUANT_DIMENSION": "QUANTIZED_DIMENSION",
               "OPCODE_DEPRECATED_BUILTIN": "DEPRECATED_BUILTIN_CODE",
               "OPCODE_BUILTIN": "BUILTIN_CODE"}


def test_schema_slots_of_the_runtime_are_the_schema_values():
    """tflm_model.h's field slots equal the vtable slots of the `tflite` package's readers."""
    import tflite

    from tflm_gen.schema_header import _option_slots

    text = (REPO / "runtime_c/tflm_model.h").read_text()
    enum = text[text.index("enum {"):text.index("};", text.index("enum {"))]
    slots = re.findall(r"\b([A-Z_]+) = (\d+)", enum)
    assert len(slots) >= 25
    for name, value in slots:
        prefix = next(p for p in SLOT_TABLES if name.startswith(p + "_"))
        field = SLOT_FIELDS.get(name, name.removeprefix(prefix + "_"))
        schema = dict(_option_slots(getattr(tflite, SLOT_TABLES[prefix])))
        assert schema[field] & 0xFF == int(value), (name, value)
