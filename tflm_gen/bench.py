"""`tflm-gen bench`: exact instruction counts of a generated project on a QEMU board, and
an estimate of its cycles.

Our own TCG plugin (tflm_gen/qemu_plugin/tflm_count.c, compiled at first use with the host
compiler) counts every executed instruction, and its cycles from the core's table
(tflm_gen/cycles.py, docs/cycles.md), and records both counts at each entry to the
marker functions of the qemu main (templates/qemu/self_test_main.c.j2):

    mark 0, mark 1            back to back: the cost of a mark, subtracted below
    mark 2 .. init .. mark 3  init instructions
    mark 4 .. invoke .. mark 5   instructions per invoke (no profiler set)
    begin/end per operator    a second, profiled invoke

An operator's instructions are those between the entries to its begin and end hooks minus
the ones executed in the interpreter's invoke loop and the hooks themselves (the plugin's
"frame" ranges): the kernel's eval and everything it calls.  Interpreter overhead is the
unprofiled invoke minus the sum over operators, as in Table 2 of the TFLM paper.  Cycles are
split the same way.  The main also reports the stack's high-water mark of init and invoke.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import tempfile
from pathlib import Path

from tflm_gen import qemu
from tflm_gen.cycles import core_of, cycle_table, write_cycle_table
from tflm_gen.errors import ModelError, ToolchainError
from tflm_gen.host import cache_dir, compiler
from tflm_gen.kernels import runtime_files
from tflm_gen.model.partition_op import partition_subgraph
from tflm_gen.model.reader import read_model
from tflm_gen.patches import DEFAULT_MEMORY
from tflm_gen.progress import activity
from tflm_gen.targets import load_target
from tflm_gen.text import printable

PLUGIN_SOURCE = Path(__file__).resolve().parent / "qemu_plugin" / "tflm_count.c"
PLUGIN_API_VERSION = 1  # QEMU 7.2's QEMU_PLUGIN_VERSION
MARKERS = ("tflm_bench_mark", "tflm_bench_op_begin", "tflm_bench_op_end")
FRAME_FUNCTIONS = ("tflm_interpreter_invoke", "tflm_bench_op_begin", "tflm_bench_op_end")
OPT_FLAGS = ["-O0", "-O1", "-O2", "-O3", "-Os", "-Og"]  # a choice: it reaches the compiler
JSON_KEYS = ("instructions_per_invoke", "init_instructions", "interpreter_overhead_pct", "ops",
             "arena_bytes", "text", "data", "bss", "text_runtime", "text_kernels", "model_bytes",
             "cycles_per_invoke", "core", "stack_bytes")


def plugin_library() -> Path:
    """The counting plugin, built once per source version into the cache."""
    source = PLUGIN_SOURCE.read_bytes()
    flags = ["-shared", "-fPIC", "-O2", "-fvisibility=hidden",
             f"-DTFLM_PLUGIN_API_VERSION={PLUGIN_API_VERSION}"]
    digest = hashlib.sha256(source + " ".join(flags).encode()).hexdigest()[:16]
    library = cache_dir() / "qemu-plugin" / digest / "libtflm_count.so"
    if library.is_file():
        return library
    library.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=library.parent, suffix=".so", delete=False) as scratch:
        command = [compiler(), *flags, str(PLUGIN_SOURCE), "-o", scratch.name]
        with activity("building the QEMU counting plugin"):
            made = subprocess.run(command, capture_output=True, text=True, check=False)
        if made.returncode != 0:
            raise ToolchainError(f"building the QEMU plugin failed:\n{made.stderr.strip()}")
        Path(scratch.name).replace(library)
    return library


def symbols(program: qemu.Build) -> dict[str, tuple[int, int]]:
    """Function name -> (address, size) of the linked program (Thumb bit cleared)."""
    listed = subprocess.run([program.tool("nm"), "-S", "--defined-only", str(program.elf)],
                            capture_output=True, text=True, check=True).stdout
    found = {}
    for line in listed.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            found[parts[3]] = (int(parts[0], 16) & ~1, int(parts[1], 16))
    return found


def plugin_arguments(program: qemu.Build, records: Path) -> str:
    table = symbols(program)
    missing = [name for name in (*MARKERS, *FRAME_FUNCTIONS) if name not in table]
    if missing:
        raise ToolchainError(f"{program.elf} lacks the bench functions {missing}")
    arguments = [str(plugin_library()), f"out={records}"]
    core = core_of(program.board["cpu_flags"])
    if core is not None:
        cycles = records.with_name("cycles.txt")
        write_cycle_table(cycle_table(program.elf, program.tool("objdump"), table, core), cycles)
        arguments.append(f"cycles={cycles}")
    arguments += [f"mark{i}={table[name][0]:x}" for i, name in enumerate(MARKERS)]
    for i, name in enumerate(FRAME_FUNCTIONS):
        start, size = table[name]
        arguments.append(f"frame{i}={start:x}-{start + size:x}")
    return ",".join(arguments)


def _records(path: Path) -> list[tuple[int, ...]]:
    """(marker, instructions, frame instructions, cycles, frame cycles) per marker entry."""
    rows = []
    for line in path.read_text().splitlines():
        fields = line.split()
        if fields[0] != "end":
            rows.append(tuple(int(field) for field in fields))
    return rows


def operator_label(model, op) -> tuple[str, str]:
    """The op's name and where it runs: an accelerator op (a partitioned model's custom op)
    is the accelerator's row, named with the count of ops its subgraph holds."""
    called = partition_subgraph(op)
    if called is None:
        return op.opcode, "cpu"
    count = len(model.subgraphs[called].operators)
    return f"{printable(op.custom_code or '')} ({count} ops)", "accelerator"


def _kernel(begin: tuple[int, ...], end: tuple[int, ...], column: int) -> int:
    """Count of `column` (1: instructions, 3: cycles) between two hooks, frames excluded."""
    return (end[column] - begin[column]) - (end[column + 1] - begin[column + 1])


def count_instructions(rows: list[tuple[int, ...]], ops: list[tuple[str, str]]) -> dict:
    """The bench figures from the plugin's records (see the module comment)."""
    marks = [row for row in rows if row[0] == 0]
    if len(marks) != 7:
        raise ToolchainError(f"expected 7 marks from the program, got {len(marks)}")
    hooks = [row for row in rows if row[0] in (1, 2)]
    if len(hooks) != 2 * len(ops):
        raise ToolchainError(f"expected {len(ops)} profiled operators, got {len(hooks) // 2}")
    per_op = [{"index": index, "op": ops[index][0], "runs_on": ops[index][1],
               "instructions": _kernel(begin, end, 1), "cycles": _kernel(begin, end, 3)}
              for index, (begin, end) in enumerate(zip(hooks[0::2], hooks[1::2]))]

    def between(first: int, last: int, column: int) -> int:  # minus the cost of one mark
        mark_cost = marks[1][column] - marks[0][column]
        return marks[last][column] - marks[first][column] - mark_cost

    invoke, cycles = between(4, 5, 1), between(4, 5, 3)
    overhead = invoke - sum(op["instructions"] for op in per_op)
    return {"instructions_per_invoke": invoke, "init_instructions": between(2, 3, 1),
            "interpreter_overhead_pct": round(100.0 * overhead / invoke, 4) if invoke else 0.0,
            "interpreter_overhead_instructions": overhead, "ops": per_op,
            "cycles_per_invoke": cycles, "init_cycles": between(2, 3, 3),
            "interpreter_overhead_cycles": cycles - sum(op["cycles"] for op in per_op)}


_OUTPUT_SECTION = re.compile(r"^(\.[\w.]+)")
_INPUT = re.compile(r"^ (\.[\w.$]+|COMMON)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*))?$")
_CONTINUED = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
# .rodata is an output section of its own where a board keeps constants (the model) in
# another memory than code (the Cortex-M55's AN547): flash all the same.
_KIND = {".text": "text", ".rodata": "text", ".ARM.exidx": "text", ".ARM.extab": "text",
         ".data": "data", ".bss": "bss", ".stack": "stack"}


def map_contributions(map_text: str) -> list[tuple[str, str, int]]:
    """(kind, object file, bytes) of every input section the linker kept."""
    body = map_text.split("Linker script and memory map", 1)[-1]
    kind, pending, found = None, None, []
    for line in body.splitlines():
        if _OUTPUT_SECTION.match(line):
            kind = _KIND.get(_OUTPUT_SECTION.match(line).group(1))
            continue
        row = _INPUT.match(line)
        if row and row.group(2) is None:
            pending = row.group(1)
            continue
        if row:
            size, source = int(row.group(3), 16), row.group(4)
        elif pending and _CONTINUED.match(line):
            size, source = int(_CONTINUED.match(line).group(2), 16), _CONTINUED.match(line).group(3)
        else:
            pending = None
            continue
        pending = None
        if kind and size:
            found.append((kind, source.strip(), size))
    return found


def _part(source: str, runtime: set[str]) -> str:
    name = source.rsplit("/", 1)[-1]
    if not source.startswith("build/tflm/"):
        return "other"  # main, startup, libc, libm, libgcc
    if name.endswith(("_model_data.o", "_weights.o")):  # the weight array (--weights separate)
        return "model"
    return "runtime" if name[:-2] + ".c" in runtime else "kernels"


def sizes(program: qemu.Build, tags: tuple[str, ...]) -> dict:
    """text / data / bss of the linked program, text split into runtime, kernels, model."""
    runtime = {name for name in runtime_files(tags) if name.endswith(".c")}
    totals = {"text": 0, "data": 0, "bss": 0, "stack": 0, "text_runtime": 0, "text_kernels": 0,
              "text_other": 0, "model_bytes": 0}
    per_file: dict[str, int] = {}
    for kind, source, size in map_contributions(program.map_file.read_text()):
        totals[kind] += size
        part = _part(source, runtime)
        if kind == "text":
            totals["model_bytes" if part == "model" else f"text_{part}"] += size
            if part in ("runtime", "kernels"):
                name = source.rsplit("/", 1)[-1][:-2] + ".c"
                per_file[name] = per_file.get(name, 0) + size
    return {**totals, "text_by_file": dict(sorted(per_file.items()))}


def bench(model_bytes: bytes, target: str, tags=(), opt: str = qemu.DEFAULT_OPT,
          weights: str = "whole", memory: str = DEFAULT_MEMORY, compress: bool = False) -> dict:
    """Builds the project of `target`, runs it under the counting plugin, returns figures.
    With a patch stage (`memory`), its first operator's row counts the whole stage."""
    tags = tuple(tags)
    program = qemu.build(qemu.project_files(model_bytes, target, tags, weights, memory,
                                            compress), target,
                         opt)
    with tempfile.TemporaryDirectory() as scratch:
        records = Path(scratch) / "records.txt"
        completed = qemu.run(program, ("-plugin", plugin_arguments(program, records)))
        if completed.returncode not in (0, 1) or not records.is_file():
            raise ToolchainError(f"the program failed on {target} (exit {completed.returncode})"
                                 f":\n{completed.stdout}{completed.stderr}")
        rows = _records(records)
    model = read_model(model_bytes)
    ops = [operator_label(model, op) for op in model.subgraph.operators]
    arena = re.search(r"^arena used: (\d+) of", completed.stdout, re.MULTILINE)
    stack = re.search(r"^stack used: (\d+) of", completed.stdout, re.MULTILINE)
    if arena is None or stack is None:
        raise ModelError(f"the program did not initialise on {target}:\n{completed.stdout}")
    all_tags = load_target(target).tags + tags
    figures = count_instructions(rows, ops)
    core = core_of(program.board["cpu_flags"])
    if core is None:  # no cycle table (RISC-V): no estimate rather than one cycle each
        figures = _without_cycles(figures)
    return {"target": target, "machine": program.board["machine"], "core": core,
            "tags": list(all_tags), "opt": opt, "weights": weights, "memory": memory, **figures, "arena_bytes": int(arena.group(1)),
            "stack_bytes": int(stack.group(1)), "compress": compress,
            **sizes(program, all_tags), "bit_exact": qemu.PASSED in completed.stdout}


def _without_cycles(figures: dict) -> dict:
    ops = [{key: value for key, value in op.items() if key != "cycles"} for op in figures["ops"]]
    return {**figures, "ops": ops, "cycles_per_invoke": None, "init_cycles": None,
            "interpreter_overhead_cycles": None}


def compare_with_reference(model: bytes, target: str, opt: str, tagged: dict) -> dict:
    """The reference kernels' figures beside a tagged run (same board and options), with
    the instruction ratio (the tagged run's `ops` hold the per-op counts to set beside)."""
    reference = bench(model, target, (), opt, tagged.get("weights", "whole"),
                      tagged.get("memory", DEFAULT_MEMORY), tagged.get("compress", False))
    ratio = reference["instructions_per_invoke"] / max(tagged["instructions_per_invoke"], 1)
    return {"instructions_per_invoke": reference["instructions_per_invoke"],
            "text_kernels": reference["text_kernels"], "arena_bytes": reference["arena_bytes"],
            "ops": reference["ops"], "bit_exact": reference["bit_exact"],
            "ratio": round(ratio, 4)}
