"""Shared fixtures: the corpus of real models in ../shared/models and the toolchains."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tflm_gen.toolchains import install_hint

REPO_ROOT = Path(__file__).resolve().parent.parent
# TFLM_GEN_CORPUS points elsewhere, e.g. from a git worktree that is not beside ../shared.
CORPUS_DIR = Path(os.environ.get("TFLM_GEN_CORPUS") or REPO_ROOT.parent / "shared" / "models")


# Every TFLM_GEN_* variable the tool or the tests read: any other is a misspelling (say
# TFLM_GEN_REQUIRE_TOOLCHAIN) that would otherwise let CI skip what it means to require.
ENVIRONMENT_VARIABLES = ("TFLM_GEN_CORPUS", "TFLM_GEN_REQUIRE_CORPUS",
                         "TFLM_GEN_REQUIRE_TOOLCHAINS", "TFLM_GEN_CACHE", "TFLM_GEN_TRACEBACK",
                         "TFLM_GEN_ORACLE_TIMEOUT")


def _required(variable: str) -> bool:
    value = os.environ.get(variable, "")
    if value not in ("", "0", "1"):
        raise pytest.UsageError(f"{variable}={value!r}: give 1 (required) or 0")
    return value == "1"


def check_environment() -> None:
    """Refuses a misspelt TFLM_GEN_* variable or a REQUIRE value other than 0 or 1."""
    unknown = sorted(name for name in os.environ
                     if name.startswith("TFLM_GEN_") and name not in ENVIRONMENT_VARIABLES)
    if unknown:
        raise pytest.UsageError(f"unknown variable {unknown[0]}; tflm-gen reads "
                                f"{', '.join(ENVIRONMENT_VARIABLES)}")
    _required("TFLM_GEN_REQUIRE_CORPUS")
    _required("TFLM_GEN_REQUIRE_TOOLCHAINS")


def pytest_configure(config) -> None:
    check_environment()


def need_corpus() -> Path:
    """The corpus folder; skips when absent, fails in CI (TFLM_GEN_REQUIRE_CORPUS=1)."""
    if (CORPUS_DIR / "MANIFEST.tsv").is_file():
        return CORPUS_DIR
    reason = f"model corpus not found at {CORPUS_DIR}"
    if _required("TFLM_GEN_REQUIRE_CORPUS"):
        pytest.fail(reason + " and TFLM_GEN_REQUIRE_CORPUS=1")
    pytest.skip(reason)


def need_tool(name: str) -> str:
    """Path of an executable; skips when absent, fails when TFLM_GEN_REQUIRE_TOOLCHAINS=1."""
    path = shutil.which(name)
    if path:
        return path
    reason = f"{name} not found on PATH; {install_hint(name)}"
    if _required("TFLM_GEN_REQUIRE_TOOLCHAINS"):
        pytest.fail(reason + " and TFLM_GEN_REQUIRE_TOOLCHAINS=1")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    return need_corpus()


MISSING = "<corpus missing>"


def corpus_models(subdir: str = "", prefixes: tuple[str, ...] = ()) -> list[str]:
    """Model file names in the corpus (or its `subdir`) starting with one of `prefixes`,
    for parametrize.  When there are none, one sentinel name, so that the parameter set
    is never empty: its test skips through need_corpus() when the corpus is absent and
    fails on the missing file (corpus_path) when only the subfolder or models are."""
    folder = CORPUS_DIR / subdir if subdir else CORPUS_DIR
    names = sorted(p.name for p in folder.glob("*.tflite")) if folder.is_dir() else []
    names = [name for name in names if name.startswith(prefixes or ("",))]
    return names or [MISSING]


def corpus_path(name: str) -> Path:
    """The corpus file `name` (relative to the corpus): skips or fails as need_corpus()
    does when the corpus is absent, fails when the corpus lacks this file."""
    path = need_corpus() / name
    assert path.is_file(), f"{path} is missing from the corpus"
    return path


@pytest.fixture
def corpus_model(corpus_dir: Path, request) -> Path:
    """Path of the parametrized model name `model_name` inside the corpus."""
    return corpus_path(request.param)

# The warnings every generated C file must compile without (C99, warnings as errors).
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]


def run_with_library(folder: Path, program_name: str, program: str, **run_options):
    """`program` written as `folder/<program_name>.c`, built strictly with the host gcc and
    every generated `tflm/*.c`, and run in `folder`; both steps must succeed."""
    compiler = need_tool("gcc")
    (folder / f"{program_name}.c").write_text(program)
    sources = [f"{program_name}.c", *sorted(f"tflm/{p.name}" for p in (folder / "tflm").glob("*.c"))]
    built = subprocess.run([compiler, *STRICT, *sources, "-o", program_name, "-lm"], cwd=folder,
                           capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([f"./{program_name}"], cwd=folder, capture_output=True, text=True,
                         check=False, **run_options)
    assert ran.returncode == 0, ran.stdout + ran.stderr[-2000:]
    return ran


def assert_make_test_passes(folder: Path) -> None:
    """`make test` in a generated make project: the self-test builds, runs and passes."""
    need_tool("make")
    result = subprocess.run(["make", "-s", "test"], cwd=folder, capture_output=True,
                            check=False, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "~~~ALL TESTS PASSED~~~" in result.stderr
