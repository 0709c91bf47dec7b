"""Shared fixtures: the corpus of real models in ../shared/models and the toolchains."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
# TFLM_GEN_CORPUS points elsewhere, e.g. from a git worktree that is not beside ../shared.
CORPUS_DIR = Path(os.environ.get("TFLM_GEN_CORPUS") or REPO_ROOT.parent / "shared" / "models")


def _required(variable: str) -> bool:
    return os.environ.get(variable, "") == "1"


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
    reason = f"{name} not found on PATH"
    if _required("TFLM_GEN_REQUIRE_TOOLCHAINS"):
        pytest.fail(reason + " and TFLM_GEN_REQUIRE_TOOLCHAINS=1")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    return need_corpus()


def corpus_models(subdir: str = "") -> list[str]:
    """Model file names in the corpus (for parametrize; empty when absent)."""
    folder = CORPUS_DIR / subdir if subdir else CORPUS_DIR
    if not folder.is_dir():
        return ["<corpus missing>"]
    return sorted(p.name for p in folder.glob("*.tflite"))


@pytest.fixture
def corpus_model(corpus_dir: Path, request) -> Path:
    """Path of the parametrized model name `model_name` inside the corpus."""
    path = corpus_dir / request.param
    assert path.is_file(), path
    return path
