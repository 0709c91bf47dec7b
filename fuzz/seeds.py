"""Writes the fuzzer's seed models into a folder: the shared corpus, the zoo, the examples,
the crashes already fixed (tests/regression), and one model per op test (captured with
fuzz/capture_plugin.py, cached beside the folder).  Each model also goes in as the device
model a generated project embeds (requantisation table and offline plan).

    python -m fuzz.seeds OUT_DIR
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The shared corpus: $TFLM_GEN_CORPUS (as the tests take it), else beside the checkout, or
# beside the folder of worktrees.
SHARED_MODELS = [Path(os.environ.get("TFLM_GEN_CORPUS") or REPO.parent / "shared" / "models"),
                 REPO.parent.parent / "shared" / "models"]


def _op_test_models(cache: Path) -> list[Path]:
    """One small model per op test case, captured once and kept in `cache`."""
    if not (cache / "done").is_file():
        tests = sorted(str(p) for p in (REPO / "tests").glob("test_ops_*.py"))
        env = {**os.environ, "FUZZ_CAPTURE_DIR": str(cache), "PYTHONPATH": str(REPO)}
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "fuzz.capture_plugin",
                        "-p", "no:cacheprovider", *tests], cwd=REPO, env=env,
                       capture_output=True, check=False)
        (cache / "done").write_text("")
    return sorted(cache.glob("*.tflite"))


def _found_models() -> list[Path]:
    shared = next((folder for folder in SHARED_MODELS if folder.is_dir()), None)
    paths = sorted(shared.glob("**/*.tflite")) if shared is not None else []
    paths += sorted((REPO / "tests" / "zoo").glob("*/*.tflite"))
    paths += sorted((REPO / "examples").glob("*/*.tflite"))
    return paths


def _variants(model: bytes) -> list[bytes]:
    from tflm_gen.errors import TflmGenError
    from tflm_gen.optimize import device_model

    try:
        return [model, device_model(model)[0]]
    except (TflmGenError, ValueError, IndexError, KeyError):
        return [model]


def write_seeds(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    models = _found_models() + _op_test_models(out.parent / "op-seeds")
    count = 0
    for path in models:
        for data in _variants(path.read_bytes()):
            (out / hashlib.sha256(data).hexdigest()[:16]).write_bytes(data)
            count += 1
    for path in sorted((REPO / "tests" / "regression").glob("*.bin")):
        (out / path.name).write_bytes(path.read_bytes())
        count += 1
    return count


if __name__ == "__main__":
    print(f"{write_seeds(Path(sys.argv[1]))} seeds")
