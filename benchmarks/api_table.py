"""Prints, for every shared model and the sine examples, the typed API tflm-gen generates
(input and output identifiers with their C types) and whether the make project's app
(main.c against <name>.h) builds with -Werror and runs on the host:
model | inputs | outputs | app + API build (gcc -Werror) | app runs.

    python3 benchmarks/api_table.py
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tflm_gen.errors import TflmGenError
from tflm_gen.model_api import default_name
from tflm_gen.output import write_tree
from tflm_gen.project import GenerateOptions, generate

CORPUS = Path(os.environ.get("TFLM_GEN_CORPUS") or REPO.parent / "shared" / "models")
STRICT = "CFLAGS=-std=c99 -O1 -Wall -Wextra -Werror -pedantic"


def _accessors(header: str, name: str, kind: str) -> str:
    found = re.findall(rf"^(\S+) \*{name}_{kind}_(\w+)\(void\);", header, re.MULTILINE)
    return ", ".join(f"{identifier} {ctype}" for ctype, identifier in found)


def row(model: Path, scratch: Path) -> str:
    name = default_name(model.stem)
    try:
        files = generate(model.read_bytes(), GenerateOptions("make", name=name))
    except TflmGenError as error:
        return f"| {model.name} | not generated: {str(error)[:60]} | | | |"
    folder = write_tree(files, scratch / name)
    header = files[f"tflm/{name}.h"].decode()
    built = subprocess.run(["make", "-s", STRICT], cwd=folder, capture_output=True, text=True,
                           check=False)
    ran = built.returncode == 0 and subprocess.run(
        ["./build/app"], cwd=folder, capture_output=True, timeout=600, check=False).returncode == 0
    return (f"| {model.name} | {_accessors(header, name, 'input')} | "
            f"{_accessors(header, name, 'output')} | {'ok' if built.returncode == 0 else 'FAIL'} "
            f"| {'ok' if ran else 'FAIL'} |")


def main() -> None:
    models = sorted([*CORPUS.glob("*.tflite"), *CORPUS.glob("seanet/*.tflite")])
    models += sorted((REPO / "examples" / "sine").glob("*.tflite"))
    print("| model | inputs (id type) | outputs (id type) | app + API gcc -Werror | app runs |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        for model in models:
            print(row(model, Path(scratch)), flush=True)


if __name__ == "__main__":
    main()
