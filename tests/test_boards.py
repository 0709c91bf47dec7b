"""IDE projects for a concrete board (`--board`) build and boot as they are: each project is
built with exactly the flags its own project file sets (read from the .cproject, the
platformio.ini or the .uvprojx, never written here), using arm-none-eabi-gcc, and the ELF
runs on QEMU's netduinoplus2 (the Netduino Plus 2's STM32F405, USART1 on -serial stdio)
until the self-test prints its verdict; the expected output it compares with comes from
TFLM (the oracle) at generation time.

What an IDE adds on its own (the flags it always passes, its MCU database) is spelt out in
the tables below, each with the IDE it stands for; Keil's Arm Compiler 6 is stood in for by
arm-none-eabi-gcc, its options mapped to gcc's in KEIL_* (the scatter file is stood in for
by the project's GNU linker script, after checking that both give the same regions)."""

from __future__ import annotations

import ast
import configparser
import hashlib
import os
import re
import select
import shlex
import subprocess
import time
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import corpus_path, need_tool

from tflm_gen.cli import main as main_cli
from tflm_gen.errors import InputError, UnsupportedModelError
from tflm_gen.host import cache_dir
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.model.reader import read_model
from tflm_gen.oracle import Oracle
from tflm_gen.output import write_tree
from tflm_gen.project import GenerateOptions, generate

BOARD = "netduinoplus2"
MACHINE = "netduinoplus2"
MODELS = ["kws_ref_model.tflite", "micro_speech_quantized.tflite"]
IDES = ["stm32cube", "platformio", "keil"]
PASSED, FAILED = "~~~ALL TESTS PASSED~~~", "~~~SOME TESTS FAILED~~~"
RUN_SECONDS = 120  # QEMU never ends on its own (the board sleeps after main): killed after

CC = "arm-none-eabi-gcc"
QEMU = "qemu-system-arm"

# STM32CubeIDE: its MCU database, by the target_mcu prefix, and the flags its managed build
# passes whatever the options (compiler: -Wall and one section per function and object;
# linker: the newlib stubs, section garbage collection, a static link).
CUBE_MCU_CORES = {"STM32F4": ["-mcpu=cortex-m4", "-mthumb"]}
CUBE_FIXED_COMPILE = ["-ffunction-sections", "-fdata-sections", "-Wall"]
CUBE_FIXED_LINK = ["--specs=nosys.specs", "-Wl,--gc-sections", "-static"]
CUBE = "com.st.stm32cube.ide.mcu.gnu.managedbuild"

# PlatformIO's ststm32 platform without a framework (builder/frameworks/_bare.py): the
# machine flags from the board's build.cpu, then its fixed compile and link flags.
PIO_FIXED_COMPILE = ["-Os", "-ffunction-sections", "-fdata-sections", "-Wall"]
PIO_FIXED_LINK = ["-Os", "-Wl,--gc-sections,--relax", "--specs=nano.specs",
                  "--specs=nosys.specs"]
PIO_LIBS = ["-lc", "-lgcc", "-lm", "-lnosys"]

# Keil uVision (Arm Compiler 6) options mapped to gcc's.
KEIL_OPTIMISATION = {"1": "-O0", "2": "-O1", "3": "-O2", "4": "-O3", "6": "-Os", "7": "-Oz"}
KEIL_LANGUAGE = {"1": "-std=c90", "2": "-std=gnu90", "3": "-std=c99", "4": "-std=gnu99",
                 "5": "-std=c11", "6": "-std=gnu11"}
KEIL_WARNINGS = {"0": [], "1": ["-w"], "2": ["-Wall"], "3": ["-Wall", "-Wextra"]}
KEIL_FPU = {"FPU2": ["-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"]}
# armlink options with a GNU counterpart; --datacompressor=off has none (ld never compresses).
KEIL_LINKER = {"--datacompressor=off": [], "--entry": lambda value: [f"-Wl,--entry={value}"]}


def _value_suffix(option: ElementTree.Element) -> str:
    return option.get("value", "").rsplit(".value.", 1)[-1]


def _list_values(option: ElementTree.Element) -> list[str]:
    return [item.get("value") for item in option.iter("listOptionValue")]


def _cube_option_flags(option: ElementTree.Element, project: Path) -> tuple[list, list]:
    """(compile flags, link flags) of one .cproject option; an option this table does not
    know fails the test, so no flag the project sets is ever dropped."""
    kind = option.get("superClass")[len(CUBE) + 1:]
    value = option.get("value", "")
    if kind == "option.target_mcu":
        cpu = next(flags for prefix, flags in CUBE_MCU_CORES.items() if value.startswith(prefix))
        return cpu, cpu
    both = {"option.fpu": [f"-mfpu={_value_suffix(option)}"],
            "option.floatabi": [f"-mfloat-abi={_value_suffix(option)}"],
            "option.runtimelibrary.c": [f"--specs={_value_suffix(option)}.specs"]}
    if kind in both:
        return both[kind], both[kind]
    compile_only = {
        "tool.c.compiler.option.debuglevel": [f"-{_value_suffix(option)}"],
        "tool.c.compiler.option.optimization.level": [f"-{_value_suffix(option).upper()}"],
        "tool.c.compiler.option.languagestandard":
            [f"-std={_value_suffix(option).replace('iso', '')}"],
        "tool.c.compiler.option.otherflags": _list_values(option),
        "tool.c.compiler.option.definedsymbols": [f"-D{v}" for v in _list_values(option)],
        "tool.c.compiler.option.includepaths": [f"-I{v}" for v in _list_values(option)],
    }
    if kind in compile_only:
        return compile_only[kind], []
    script = re.sub(r"\$\{workspace_loc:/\$\{ProjName\}/(.*)\}", r"\1", value)
    link_only = {"tool.c.linker.option.script": ["-T", str(project / script)],
                 "tool.c.linker.option.otherflags": _list_values(option),
                 "tool.c.linker.option.libraries": [f"-l{v}" for v in _list_values(option)]}
    assert kind in link_only, f"the .cproject sets {kind}, which this test does not map"
    return [], link_only[kind]


def _configuration(root: ElementTree.Element, names: tuple[str, ...]) -> ElementTree.Element:
    configurations = {c.get("name"): c for c in root.iter("configuration")}
    return configurations[next(name for name in names if name in configurations)]


def _cdt_sources(project: Path, configuration: ElementTree.Element) -> list[Path]:
    """The .c files of the configuration's source entries, minus their exclusions."""
    sources = set()
    for entry in configuration.iter("entry"):
        if entry.get("kind") != "sourcePath":
            continue
        base = project / entry.get("name", "")
        excluded = [base / pattern for pattern in entry.get("excluding", "").split("|") if pattern]
        sources |= {path for path in base.rglob("*.c")
                    if not any(path == e or e in path.parents for e in excluded)}
    return sorted(sources)


def stm32cube_build(project: Path, program: str) -> tuple[list, list, list]:
    """(sources, compile flags, link flags) of the .cproject's configuration for `program`:
    Test (the self-test) or Debug (the app)."""
    configuration = _configuration(ElementTree.parse(project / ".cproject").getroot(),
                                   ("Test",) if program == "test" else ("Debug",))
    compile_flags, link_flags = list(CUBE_FIXED_COMPILE), list(CUBE_FIXED_LINK)
    for option in configuration.iter("option"):
        more_compile, more_link = _cube_option_flags(option, project)
        compile_flags += more_compile
        link_flags += more_link
    return _cdt_sources(project, configuration), compile_flags, link_flags


def platformio_source_filter(source_dir: Path, filter_text: str) -> list[Path]:
    """PlatformIO's build_src_filter: `+<glob>` adds, `-<glob>` removes, in order."""
    chosen: set[Path] = set()
    for sign, pattern in re.findall(r"([+-])<([^>]*)>", filter_text):
        target = (source_dir / pattern).resolve()
        matched = ({p.resolve() for p in source_dir.rglob("*.c")} if pattern == "*" else
                   {p.resolve() for p in target.rglob("*.c")} if target.is_dir() else {target})
        chosen = chosen | matched if sign == "+" else chosen - matched
    return sorted(chosen)


def _pio_extra_link_flags(project: Path, env: configparser.SectionProxy) -> list[str]:
    """LINKFLAGS the environment's extra scripts append (env.Append(LINKFLAGS=[...]))."""
    flags = []
    for script in env.get("extra_scripts", "").split():
        text = (project / script.split(":", 1)[-1]).read_text()
        for found in re.findall(r"env\.Append\(LINKFLAGS=(\[[^\]]*\])\)", text):
            flags += ast.literal_eval(found)
    return flags


def platformio_build(project: Path, program: str) -> tuple[list, list, list]:
    """(sources, compile flags, link flags) of the board's environment for `program`: the
    default one (the app) or its `_test` twin (the self-test)."""
    ini = configparser.ConfigParser(inline_comment_prefixes=(";",))
    ini.read(project / "platformio.ini")
    default = ini["platformio"]["default_envs"]
    env = ini[f"env:{default}_test" if program == "test" else f"env:{default}"]
    machine = [f"-mcpu={env['board_build.cpu']}", "-mthumb"]
    build_flags = shlex.split(env.get("build_flags", ""))
    compile_flags = machine + PIO_FIXED_COMPILE + [f for f in build_flags
                                                   if not f.startswith(("-Wl,", "-l"))]
    link_flags = (machine + PIO_FIXED_LINK + _pio_extra_link_flags(project, env)
                  + [f for f in build_flags if f.startswith(("-Wl,", "-l"))]
                  + ["-T", str(project / env["board_build.ldscript"])] + PIO_LIBS)
    sources = platformio_source_filter(project / "src", env.get("build_src_filter", "+<*>"))
    for library in env.get("lib_deps", "").split():
        folder = next(p.parent for p in (project / "lib").glob("*/library.json")
                      if f'"name": "{library}"' in p.read_text())
        sources += sorted(folder.rglob("*.c"))
    return sources, compile_flags, link_flags


def _memory_regions(script: str) -> list[tuple[int, int]]:
    """(origin, length) of each MEMORY line of a GNU ld script."""
    return [(int(o, 0), int(n, 0)) for o, n in
            re.findall(r"ORIGIN = (0x[0-9A-Fa-f]+), LENGTH = (0x[0-9A-Fa-f]+)", script)]


def _scatter_regions(scatter: str) -> list[tuple[int, int]]:
    """(origin, length) of the load region and the RAM it spans (RW data plus stack)."""
    load = re.search(r"LR_IROM1 (0x\w+) (0x\w+)", scatter).groups()
    ram = re.search(r"RW_IRAM1 (0x\w+) (0x\w+)", scatter).groups()
    stack = re.search(r"ARM_LIB_STACK (0x\w+) EMPTY -(0x\w+)", scatter).groups()
    ram_start = int(ram[0], 0)
    return [(int(load[0], 0), int(load[1], 0)), (ram_start, int(stack[0], 0) - ram_start)]


def keil_build(project: Path, program: str) -> tuple[list, list, list]:
    """(sources, compile flags, link flags) of the uVision target for `program` ("<name>
    Test" for the self-test, "<name>" for the app), Arm Compiler 6 options mapped to
    arm-none-eabi-gcc's."""
    root = ElementTree.parse(next(project.glob("*.uvprojx"))).getroot()
    targets = root.findall("./Targets/Target")
    target = next(t for t in targets
                  if t.findtext("TargetName").endswith(" Test") == (program == "test"))
    cpu = target.findtext(".//TargetCommonOption/Cpu")
    core = re.search(r'CPUTYPE\("Cortex-(M\d+)"\)', cpu).group(1).lower()
    machine = [f"-mcpu=cortex-{core}", "-mthumb"] + [
        flag for word in cpu.split() for flag in KEIL_FPU.get(word, [])]
    cads = target.find(".//Cads")
    defines = re.split(r"[,\s]+", cads.findtext("VariousControls/Define") or "")
    compile_flags = (machine + [KEIL_OPTIMISATION[cads.findtext("Optim")],
                                KEIL_LANGUAGE[cads.findtext("v6Lang")]]
                     + KEIL_WARNINGS[cads.findtext("wLevel")]
                     + [f"-D{d}" for d in defines if d]
                     + shlex.split(cads.findtext("VariousControls/MiscControls") or ""))
    link_flags = machine + _keil_link_flags(project, target)
    files = [project / f.findtext("FilePath").replace("\\", "/") for f in target.iter("File")
             if f.findtext("FileType") == "1"]
    return files, compile_flags, link_flags


def _keil_link_flags(project: Path, target: ElementTree.Element) -> list[str]:
    """The scatter file stood in for by link.ld (same regions), armlink options mapped;
    microlib stood in for by newlib-nano, and no start files (the project's reset is the
    entry, as armlink links no start-up code of its own without __main)."""
    ldads = target.find(".//LDads")
    scatter = project / ldads.findtext("ScatterFile").replace("\\", "/")
    script = project / "link.ld"
    assert _scatter_regions(scatter.read_text()) == _memory_regions(script.read_text())
    flags = ["-T", str(script), "-nostartfiles", "-Wl,--gc-sections"]
    if target.findtext(".//ArmAdsMisc/useUlib") == "1":
        flags.append("--specs=nano.specs")
    for option in shlex.split(ldads.findtext("Misc") or ""):
        name, _, value = option.partition("=")
        mapped = KEIL_LINKER.get(option, KEIL_LINKER.get(name))
        assert mapped is not None, f"the .uvprojx sets {option}, which this test does not map"
        flags += mapped(value) if callable(mapped) else mapped
    return flags + ["-lm"]


BUILDERS = {"stm32cube": stm32cube_build, "platformio": platformio_build, "keil": keil_build}


def build_elf(project: Path, sources: list[Path], compile_flags: list, link_flags: list) -> Path:
    """Compiles each source with the compile flags only, links with the link flags only;
    the ELF is cached by the hash of the sources and flags."""
    digest = hashlib.sha256(repr((compile_flags, link_flags)).encode())
    for source in sources:
        digest.update(str(source.relative_to(project)).encode() + source.read_bytes())
    for extra in ("link.ld", "test_data.h", "src/test_data.h"):
        if (project / extra).is_file():
            digest.update((project / extra).read_bytes())
    folder = cache_dir() / "boards" / digest.hexdigest()[:24]
    elf = folder / "program.elf"
    if elf.is_file():
        return elf
    folder.mkdir(parents=True, exist_ok=True)
    objects = []
    for index, source in enumerate(sources):
        objects.append(folder / f"{index}_{source.stem}.o")
        subprocess.run([CC, *compile_flags, "-Werror", "-c", str(source), "-o",
                        str(objects[-1])], check=True, capture_output=True, text=True)
    partial = folder / "program.elf.partial"
    subprocess.run([CC, *map(str, objects), *link_flags, "-o", str(partial)], check=True,
                   capture_output=True, text=True)
    partial.replace(elf)
    return elf


VERDICT = rb"~~~\w+ TESTS \w+~~~"


# The STM32F405's USARTs in the order QEMU's netduinoplus2 wires them to -serial options.
QEMU_SERIAL_ORDER = ["USART1", "USART2", "USART3", "UART4", "UART5", "USART6"]


def run_on_qemu(elf: Path, until: bytes = VERDICT, console: str = "USART1") -> str:
    """Console output of the ELF on netduinoplus2 (read from the `console` USART) until
    `until` (the self-test's verdict), a fault, or RUN_SECONDS; QEMU is then killed and
    reaped."""
    serials = ["-serial", "null"] * QEMU_SERIAL_ORDER.index(console) + ["-serial", "stdio"]
    process = subprocess.Popen(
        [QEMU, "-M", MACHINE, "-display", "none", "-monitor", "none", *serials,
         "-kernel", str(elf)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT)
    output, deadline = b"", time.monotonic() + RUN_SECONDS
    try:
        while time.monotonic() < deadline and not re.search(until + rb"|fault:", output):
            ready, _, _ = select.select([process.stdout], [], [], 1.0)
            if ready:
                chunk = os.read(process.stdout.fileno(), 4096)
                if not chunk:
                    break
                output += chunk
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
    return output.decode(errors="replace").replace("\r\n", "\n")


@pytest.fixture(scope="session")
def board_projects(tmp_path_factory):
    """Generates each (IDE, model) project once per session, on first use."""
    projects: dict[tuple[str, str, str], Path] = {}

    def project(ide: str, model: str, board: str = BOARD) -> Path:
        if (ide, model, board) not in projects:
            folder = tmp_path_factory.mktemp(f"{ide}-{board}-{Path(model).stem}")
            files = generate(corpus_path(model).read_bytes(), GenerateOptions(ide, board=board))
            write_tree(files, folder / "project")
            projects[ide, model, board] = folder / "project"
        return projects[ide, model, board]

    return project


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("ide", IDES)
def test_board_project_builds_with_its_own_flags_and_passes_on_qemu(board_projects, ide, model):
    need_tool(CC)
    need_tool(QEMU)
    project = board_projects(ide, model)
    sources, compile_flags, link_flags = BUILDERS[ide](project, "test")
    assert any(path.name == "startup.c" for path in sources)
    output = run_on_qemu(build_elf(project, sources, compile_flags, link_flags))
    assert PASSED in output and FAILED not in output, output
    used, declared = re.search(r"arena used: (\d+) of (\d+)", output).groups()
    assert used == declared


APP_MODEL = "kws_ref_model.tflite"  # 12 classes


def _oracle_top_class_of_zero_input(model: bytes) -> int:
    """What the app template computes: every input element the quantised 0.0 (the zero
    point), one invoke in TFLM, the index of the largest output."""
    graph = read_model(model).subgraph
    tensor = graph.tensors[graph.inputs[0]]
    zero = np.full(tensor.shape, tensor.quantization.zero_point[0], dtype=tensor.dtype)
    return int(np.argmax(Oracle(model, "tflm").run([zero])[0]))


@pytest.mark.parametrize("ide", IDES)
def test_board_app_builds_with_its_own_flags_and_runs_on_qemu(board_projects, ide):
    """The app configuration boots too: three invokes, and the top class TFLM gives."""
    need_tool(CC)
    need_tool(QEMU)
    project = board_projects(ide, APP_MODEL)
    sources, compile_flags, link_flags = BUILDERS[ide](project, "app")
    assert not any(path.parent.name == "test" for path in sources)
    output = run_on_qemu(build_elf(project, sources, compile_flags, link_flags),
                         until=rb"invoke 2: \d+ ticks\r?\n[^\n]*\n")
    tops = re.findall(r"\w+: top (\d+), score -?\d+\.\d+\n", output)
    expected = _oracle_top_class_of_zero_input(corpus_path(APP_MODEL).read_bytes())
    assert tops == [str(expected)] * 3, output


@pytest.mark.parametrize("ide,board", [("stm32cube", "disco_f407vg"),
                                       ("platformio", "nucleo_f411re")])
def test_usart2_boards_pass_on_the_f405(board_projects, ide, board):
    """The Discovery's and the Nucleo's STM32F407/F411 share the F405's peripherals and fit
    its memory map, so their projects run on netduinoplus2 too, their console read from
    USART2 (QEMU's second -serial)."""
    need_tool(CC)
    need_tool(QEMU)
    project = board_projects(ide, "micro_speech_quantized.tflite", board)
    sources, compile_flags, link_flags = BUILDERS[ide](project, "test")
    output = run_on_qemu(build_elf(project, sources, compile_flags, link_flags),
                         console="USART2")
    assert PASSED in output and FAILED not in output, output


def test_board_memory_map_reaches_linker_files(tmp_path):
    """The linker script and the scatter file carry the board file's flash and RAM."""
    result = CliRunner().invoke(main_cli, [
        "project", "--model", str(corpus_path("micro_speech_quantized.tflite")),
        "--target", "keil", "--board", "nucleo_f411re", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    script = (tmp_path / "out" / "link.ld").read_text()
    assert _memory_regions(script) == [(0x08000000, 0x80000), (0x20000000, 0x20000)]
    assert _scatter_regions((tmp_path / "out" / "link.sct").read_text()) == _memory_regions(script)
    board_header = (tmp_path / "out" / "tflm" / "tflm_board.h").read_text()
    assert "USART2" in board_header  # the Nucleo's ST-LINK port


def _big_activations_model() -> bytes:
    """Two 64 KiB float tensors live at once: more than the board's 128 KiB of SRAM leaves
    once its stack is reserved."""
    builder = ModelBuilder()
    x = builder.input("x", [1, 16384], "float32")
    builder.output(builder.add_op("ADD", [x, x], [1, 16384], "float32"))
    return builder.build()


def _big_weights_model() -> bytes:
    """640 KiB of float weights: more than the Nucleo-F411RE's 512 KiB of flash."""
    builder = ModelBuilder()
    x = builder.input("x", [1, 256], "float32")
    weights = np.random.default_rng(0).uniform(-1, 1, size=(640, 256)).astype(np.float32)
    w = builder.constant("w", weights)
    builder.output(builder.add_op("FULLY_CONNECTED", [x, w], [1, 640], "float32"))
    return builder.build()


def test_model_or_arena_too_big_for_board_is_refused_with_sizes(tmp_path):
    with pytest.raises(UnsupportedModelError, match=r"model \(\d+ bytes\) does not fit "
                                                    r"stm32cube --board nucleo_f411re: flash "
                                                    r"holds 524288 bytes"):
        generate(_big_weights_model(), GenerateOptions("stm32cube", board="nucleo_f411re"))
    (tmp_path / "big.tflite").write_bytes(_big_activations_model())
    result = CliRunner().invoke(main_cli, [
        "project", "--model", str(tmp_path / "big.tflite"), "--target", "platformio",
        "--board", BOARD, "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert re.search(r"the arena \(\d+ bytes\) and stack \(8192 bytes\) do not fit platformio "
                     r"--board netduinoplus2: SRAM1\+SRAM2 holds 131072 bytes", result.output)
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_board_refused_where_it_means_nothing():
    model = corpus_path("micro_speech_quantized.tflite").read_bytes()
    with pytest.raises(InputError, match="target make takes no --board"):
        generate(model, GenerateOptions("make", board=BOARD))
    with pytest.raises(InputError, match="unknown board 'nope'"):
        generate(model, GenerateOptions("keil", board="nope"))
    with pytest.raises(InputError, match="tag 'stm32f4' is a board port"):
        generate(model, GenerateOptions("make", tags=("stm32f4",)))
