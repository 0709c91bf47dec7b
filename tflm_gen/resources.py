"""Where the C sources, templates and target files live: inside the installed package
(`tflm_gen/_data/`, put there by the wheel build) or at the repository root."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DATA = Path(__file__).resolve().parent / "_data"
_REPO_ROOT = Path(__file__).resolve().parent.parent


def resource_dir(name: str) -> Path:
    """Folder `name` (runtime_c, kernels_c, templates, targets)."""
    for base in (_PACKAGE_DATA, _REPO_ROOT):
        if (base / name).is_dir():
            return base / name
    raise FileNotFoundError(f"tflm-gen installation is missing its '{name}' folder")


def resource_file(name: str) -> Path:
    """A file shipped beside those folders (LICENSE)."""
    for base in (_PACKAGE_DATA, _REPO_ROOT):
        if (base / name).is_file():
            return base / name
    raise FileNotFoundError(f"tflm-gen installation is missing its '{name}' file")
