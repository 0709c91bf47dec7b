"""Regression: kernels forced `always_inline` through function pointers compiled at -O2 but
failed at -O1 and -Og ("inlining failed ... indirect function call"), the levels IDE debug
configurations use.  Every runtime and kernel file (reference and cmsis) must compile at
every level a project file may select, with the host gcc and arm-none-eabi-gcc."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import need_tool

from tflm_gen.kernels import kernel_catalogue, kernel_files, runtime_files

LEVELS = ["-O0", "-O1", "-Og", "-Os", "-O3"]  # -O2: every other build
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c"]
CORTEX_M4 = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]


def _flat_tree(tmp_path, tags: tuple[str, ...]):
    tree = tmp_path / "tflm"
    tree.mkdir()
    files = {**runtime_files(tags), **kernel_files(sorted(kernel_catalogue()), tags)}
    for name, path in files.items():
        shutil.copyfile(path, tree / name)
    return tree, sorted(name for name in files if name.endswith(".c"))


@pytest.mark.parametrize("tags", [(), ("cmsis",)], ids=["reference", "cmsis"])
@pytest.mark.parametrize("compiler,flags", [("gcc", []), ("arm-none-eabi-gcc", CORTEX_M4)],
                         ids=["gcc", "arm"])
def test_every_file_compiles_at_every_level(tmp_path, compiler, flags, tags):
    path = need_tool(compiler)
    tree, sources = _flat_tree(tmp_path, tags)
    for level in LEVELS:
        build = subprocess.run([path, level, *flags, *STRICT, *sources], cwd=tree,
                               capture_output=True, text=True, check=False)
        assert build.returncode == 0, f"{compiler} {level}:\n{build.stderr[-3000:]}"
