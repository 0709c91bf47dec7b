"""Builds fuzz/replay.c with the runtime and every kernel under AddressSanitizer and
UndefinedBehaviorSanitizer (signed overflow included, every report fatal): the tool the
regression tests run saved fuzz cases through.

    python -m fuzz.replay_build OUT_DIR [TAG ...]     (prints the executable's path)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fuzz.sources import write_sources

HERE = Path(__file__).resolve().parent
FLAGS = ["-std=c99", "-g", "-O1", "-fsanitize=address,undefined,float-cast-overflow",
         "-fno-sanitize-recover=all",
         "-fno-omit-frame-pointer"]


def build_replay(out: Path, tags: tuple[str, ...] = (), compiler: str = "gcc") -> Path:
    """Compiles the replay tool into `out` (one object per source, so the error names the
    file); returns the executable."""
    sources = write_sources(out, tags)
    for name in ("harness.c", "harness.h", "replay.c"):
        (out / name).write_bytes((HERE / name).read_bytes())
    sources = sorted(set(sources) | {"harness.c", "replay.c"})
    command = [compiler, *FLAGS, *sources, "-o", "replay", "-lm"]
    result = subprocess.run(command, cwd=out, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"replay build failed:\n{result.stderr[-4000:]}")
    return out / "replay"


def run_replay(replay: Path, cases: list[Path]) -> dict[str, tuple[str, str]]:
    """{case path: (init status name, invoke status name)}; raises on a sanitizer report."""
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0"}
    result = subprocess.run([str(replay), *map(str, cases)], capture_output=True, text=True,
                            env=env, check=False, timeout=600)
    if result.returncode != 0:
        raise AssertionError(f"replay failed ({result.returncode}):\n{result.stderr[-4000:]}")
    statuses = {}
    for line in result.stdout.splitlines():
        path, init_status, invoke_status = line.rsplit(" ", 2)
        statuses[path] = (init_status, invoke_status)
    return statuses


if __name__ == "__main__":
    print(build_replay(Path(sys.argv[1]), tuple(sys.argv[2:])))
