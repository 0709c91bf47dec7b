"""`tflm-gen report`: one self-contained HTML page about a model (inline SVG and CSS,
nothing fetched): its summary, the memory plan, the arena by section and category beside
TFLM's, the per-operator profile on a QEMU board and the code size split."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import jinja2

from tflm_gen import __version__
from tflm_gen.assemble import library_files
from tflm_gen.bench import bench
from tflm_gen.charts import bar_chart_svg, memory_plan_svg
from tflm_gen.errors import OutputDirError, ToolchainError
from tflm_gen.host import compiler
from tflm_gen.inspect import inspect_model, read_model_bytes
from tflm_gen.kernels import runtime_files
from tflm_gen.memory import memory_report
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import device_model
from tflm_gen.patches import DEFAULT_MEMORY
from tflm_gen.qemu import board_of, qemu_targets
from tflm_gen.resources import resource_dir
from tflm_gen.targets import load_target
from tflm_gen.text import printable

CODE_PARTS = (("text_runtime", "runtime"), ("text_kernels", "kernels"), ("model_bytes", "model"),
              ("text_other", "startup and C library"))


def build_report(model_path: Path, target: str | None, tags: tuple[str, ...],
                 weights: str = "whole", memory: str = DEFAULT_MEMORY,
                 compress: bool = False) -> dict:
    """Everything the page shows, as plain data (the JSON-ready core of the report), for
    the project `project` would generate with the same `weights`, `memory` and
    `compress` (the weights' placement changes the profile only: the arena is the same)."""
    model_bytes = read_model_bytes(model_path)
    all_tags = (load_target(target).tags if target else ()) + tuple(tags)
    data = {"model": model_path.name, "sha256": hashlib.sha256(model_bytes).hexdigest(),
            "target": target or "host", "tags": list(all_tags), "version": __version__,
            "summary": inspect_model(model_path),
            "memory": memory_report(model_bytes, all_tags, memory=memory, compress=compress),
            "tflm": tflm_arena(model_bytes), "profile": None}
    if target in qemu_targets():
        data["profile"] = bench(model_bytes, target, tuple(tags), weights=weights,
                                memory=memory, compress=compress)
        compiler_name = board_of(target)["toolchain"] + "gcc"
        data["code"] = {"source": f"linked program for {target} ({compiler_name} "
                                  f"{data['profile']['opt']})",
                        **{key: data["profile"][key] for key, _ in CODE_PARTS}}
    else:
        data["code"] = host_code_size(model_bytes, all_tags, memory, compress)
    return data


def tflm_arena(model_bytes: bytes) -> dict | None:
    """TFLM's arena (head, tail, total) from its recording allocator, as
    benchmarks/memory_table.py measures it; None when tflite-micro is not installed."""
    from tflm_gen.oracle import tflm_allocations

    if importlib.util.find_spec("tflite_micro") is None:
        return None
    try:
        return tflm_allocations(model_bytes)
    except ToolchainError as error:  # TFLM refuses the model: say so on the page
        return {"error": str(error)}


def host_code_size(model_bytes: bytes, tags: tuple[str, ...], memory: str = DEFAULT_MEMORY,
                   compress: bool = False) -> dict:
    """Code size from host objects (cc -Os), split as `bench` splits a linked program; the
    model is the flatbuffer a project embeds.  A board's port files (a Zephyr DebugLog)
    do not build on the host: they are left out and named."""
    planned = device_model(model_bytes, tags, memory, compress)[0]
    files = library_files(read_model(planned), planned, tags)
    runtime = {name for name in runtime_files(tags) if name.endswith(".c")}
    sizes = {"text_runtime": 0, "text_kernels": 0, "model_bytes": len(planned), "text_other": 0}
    built = _object_text_sizes(files)
    for name, text in built.items():
        sizes["text_runtime" if name in runtime else "text_kernels"] += text
    left_out = sorted(name for name in files if name.endswith((".c", ".cpp")) and name not in built)
    note = f"; left out, as they build only for the board: {', '.join(left_out)}" if left_out else ""
    return {"source": f"host objects (cc -Os; text and read-only data){note}", **sizes}


def _object_text_sizes(files: dict[str, bytes]) -> dict[str, int]:
    """text (code and constants) of every `.c` file that compiles on the host, by name."""
    if shutil.which("size") is None:
        raise ToolchainError("binutils' `size` not found (install binutils)")
    sources = sorted(name for name in files if name.endswith(".c"))
    with tempfile.TemporaryDirectory() as scratch:
        for name, data in files.items():
            Path(scratch, name).write_bytes(data)
        # One compiler run; a file that fails leaves no object and the others still build.
        subprocess.run([compiler(), "-std=c99", "-Os", "-c", *sources], cwd=scratch,
                       capture_output=True, check=False)
        objects = [name[:-2] + ".o" for name in sources if Path(scratch, name[:-2] + ".o").is_file()]
        listed = subprocess.run(["size", *objects], cwd=scratch, capture_output=True, text=True,
                                check=True).stdout if objects else ""
    rows = [line.split() for line in listed.splitlines()[1:]]
    return {row[-1][:-2] + ".c": int(row[0]) for row in rows if row}


def charts(data: dict) -> dict[str, str]:
    """The page's SVG charts by name."""
    memory = data["memory"]
    drawn = {"memory": memory_plan_svg(memory), "arena": _arena_chart(memory),
             "code": bar_chart_svg("code size by part (bytes)",
                                   [label for _, label in CODE_PARTS],
                                   {"bytes": [data["code"][key] for key, _ in CODE_PARTS]},
                                   "bytes", "code")}
    tflm = data["tflm"]
    if tflm and "error" not in tflm:
        ours = [memory["head_bytes"], memory["tail_bytes"], memory["arena_bytes"]]
        drawn["versus"] = bar_chart_svg("arena: tflm-gen beside TFLM (bytes)",
                                        ["head", "tail", "total"],
                                        {"tflm-gen": ours, "TFLM": [tflm["head"], tflm["tail"],
                                                                    tflm["total"]]},
                                        "bytes", "versus")
    if data["profile"]:
        drawn["profile"] = profile_chart(data["profile"])
    return drawn


def arena_parts(memory: dict) -> list[tuple[str, int]]:
    """The arena by section and category; they add up to the arena."""
    above_head = memory["arena_bytes"] - memory["tail_bytes"] - memory["head_bytes"]
    return [("head: activations", memory["head_bytes"] - memory["scratch_bytes"]),
            ("head: kernel scratch", memory["scratch_bytes"]),
            ("init temporaries above the head", max(above_head, 0)),
            ("tail: runtime state", memory["runtime_bytes"]),
            ("tail: kernel data", memory["kernel_bytes"]),
            ("tail: variable tensors", memory["variable_bytes"])]


def _arena_chart(memory: dict) -> str:
    parts = arena_parts(memory)
    return bar_chart_svg(f"arena by section and category ({memory['arena_bytes']:,} bytes)",
                         [label for label, _ in parts], {"bytes": [size for _, size in parts]},
                         "bytes", "arena")


def cycle_key(profile: dict) -> str | None:
    """The per-operator estimated-cycle field of a bench result, when it has one."""
    keys = {key for op in profile["ops"] for key in op if "cycles" in key}
    return min(keys) if keys else None


def profile_chart(profile: dict) -> str:
    labels = [f"#{op['index']} {op['op']}" for op in profile["ops"]]
    series = {"instructions": [op["instructions"] for op in profile["ops"]]}
    key = cycle_key(profile)
    if key:
        series["estimated cycles"] = [op.get(key, 0) for op in profile["ops"]]
    return bar_chart_svg(f"per operator on {profile['target']} ({profile['machine']})",
                         labels, series, "count per invoke", "profile")


def render_html(data: dict) -> str:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resource_dir("templates") / "report")),
        undefined=jinja2.StrictUndefined, autoescape=True, trim_blocks=True,
        lstrip_blocks=True, keep_trailing_newline=True)
    environment.filters["printable"] = printable  # names come from the model: untrusted
    template = environment.get_template("report.html.j2")
    svgs = {name: jinja2.utils.markupsafe.Markup(svg) for name, svg in charts(data).items()}
    cycles = cycle_key(data["profile"]) if data["profile"] else None
    return template.render(data=data, charts=svgs, op_counts=op_counts, cycle_key=cycles)


def op_counts(summary: dict) -> list[tuple[str, int]]:
    """(op, how many) in the order the ops first appear."""
    counts: dict[str, int] = {}
    for row in summary["operators"]:
        counts[row["op"]] = counts.get(row["op"], 0) + 1
    return list(counts.items())


def check_writable(path: Path) -> None:
    """Fails before the long work when the report could not be written."""
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise OutputDirError(f"cannot write {path}: Is a directory")
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise OutputDirError(f"cannot write {path}: no writable folder {folder}")
