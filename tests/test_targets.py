"""Project targets: each renders for the bundled sine model and two corpus models, every
C/C++ file compiles alone with strict flags and no -I/-D, each project file parses and
names files that exist, and the real tools that run offline here build and run the
projects: CMake (host and the generated arm-none-eabi toolchain file), arduino-builder for
the Mega 2560 with the result run under simavr, a PlatformIO native-env build."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import need_corpus, need_tool
from test_boards import platformio_source_filter

from tflm_gen.assemble import render
from tflm_gen.boards import list_boards
from tflm_gen.cli import main
from tflm_gen.host import HostInterpreter
from tflm_gen.kernels import host_tags, runtime_files
from tflm_gen.output import write_tree
from tflm_gen.project import GenerateOptions, generate, named_target
from tflm_gen.targets import list_targets, load_target, project_name

REPO = Path(__file__).resolve().parent.parent
SINE = "sine_int8.tflite"
MODELS = [SINE, "hello_world_int8.tflite", "kws_ref_model.tflite"]
TARGETS = ["cmake", "arduino", "mbed", "zephyr", "esp-idf", "platformio", "keil", "stm32cube"]
STRICT_C = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
STRICT_CXX = ["-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic"]
CORTEX_M4F = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
NANO_33_BLE = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=softfp", "-mfpu=fpv4-sp-d16"]
# How each target's files are compiled here: (C compiler, C++ compiler, CPU flags).
COMPILERS = {
    "cmake": ("gcc", "g++", []), "esp-idf": ("gcc", "g++", []), "platformio": ("gcc", "g++", []),
    "mbed": ("arm-none-eabi-gcc", "arm-none-eabi-g++", CORTEX_M4F),
    "zephyr": ("arm-none-eabi-gcc", "arm-none-eabi-g++", CORTEX_M4F),
    "keil": ("arm-none-eabi-gcc", "arm-none-eabi-g++", CORTEX_M4F),
    "stm32cube": ("arm-none-eabi-gcc", "arm-none-eabi-g++", CORTEX_M4F),
    "arduino": ("arm-none-eabi-gcc", "arm-none-eabi-g++", NANO_33_BLE),
}
# Framework headers that exist only inside the framework: files including them compile
# here against these stubs, which declare exactly the API our files use (nothing more).
FRAMEWORK_STUBS = {
    "Arduino.h": """#include <stddef.h>
#include <stdint.h>
#include <string.h>
class TflmSerialStub {
 public:
  void begin(unsigned long baud) { (void)baud; }
  void flush() {}
  size_t print(const char *text) { return strlen(text); }
  operator bool() const { return true; }
};
extern TflmSerialStub Serial;
unsigned long micros(void);
void delay(unsigned long ms);
""",
    "mbed.h": """#include <stddef.h>
typedef int PinName;
#define CONSOLE_TX 0
#define CONSOLE_RX 1
#define MBED_CONF_PLATFORM_STDIO_BAUD_RATE 115200
namespace mbed {
class BufferedSerial {
 public:
  BufferedSerial(PinName tx, PinName rx, int baud) { (void)tx; (void)rx; (void)baud; }
  long write(const void *buffer, size_t size) { (void)buffer; return (long)size; }
};
}  // namespace mbed
""",
    "zephyr/sys/printk.h": "void printk(const char *format, ...);\n",
    "zephyr/sys/reboot.h": "#define SYS_REBOOT_COLD 1\nvoid sys_reboot(int type);\n",
}
AVR_FQBN = "arduino:avr:mega:cpu=atmega2560"

_projects: dict[tuple[str, str], Path] = {}
_compiled: set[tuple] = set()


def model_path(name: str) -> Path:
    return REPO / "examples" / "sine" / name if name.startswith("sine_") else need_corpus() / name


@pytest.fixture(scope="session")
def project(tmp_path_factory):
    """Generates (once per session and worker) a target's project for a model."""

    def build(target: str, model: str = SINE) -> Path:
        if (target, model) not in _projects:
            folder = tmp_path_factory.mktemp(f"{target}_{model.split('.')[0]}")
            options = GenerateOptions(target)  # named `model`: the Arduino library is `Model`
            leaf = project_name(named_target(load_target(target), options.name), options.name)
            files = generate(model_path(model).read_bytes(), options)
            _projects[target, model] = write_tree(files, folder / leaf)
        return _projects[target, model]

    return build


@pytest.fixture(scope="session")
def stubs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("framework_stubs")
    for name, text in FRAMEWORK_STUBS.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def run(command: list, cwd=None, timeout: int = 300) -> subprocess.CompletedProcess:
    result = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True,
                            timeout=timeout, check=False)
    assert result.returncode == 0, f"{' '.join(map(str, command))}\n{result.stdout}{result.stderr}"
    return result


def uses_framework(source: Path) -> bool:
    text = source.read_text()
    return any(f"<{name}>" in text or f'"{name}"' in text for name in FRAMEWORK_STUBS)


def compile_alone(source: Path, compiler: str, flags: list, out: Path, extra=()) -> None:
    """One file, warnings as errors; skipped when the same bytes, beside the same headers,
    were already compiled with the same command in this session (targets share files)."""
    digest = hashlib.sha256(source.read_bytes())
    for header in sorted([*source.parent.glob("*.h"), *source.parent.glob("*/*.h")]):
        digest.update(header.relative_to(source.parent).as_posix().encode() + header.read_bytes())
    key = (compiler, tuple(flags), tuple(map(str, extra)), source.name, digest.hexdigest())
    if key in _compiled:
        return
    run([compiler, *flags, *extra, "-c", source, "-o", out / "x.o"])
    _compiled.add(key)


def sources_of(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in (".c", ".cpp", ".ino"))


# ---------------------------------------------------------------------------- every target


def test_targets_command_lists_every_target():
    output = CliRunner().invoke(main, ["targets"]).output
    targets, boards = output.split("boards (--board", 1)
    boards = boards.split("arduino boards (--board", 1)[0]  # Arduino's: tests/test_arduino.py
    header, rule, *lines = targets.strip().splitlines()
    assert header.split() == ["target", "tags", "description"] and set(rule) == {"-", " "}
    assert len(lines) == len(list_targets())
    listed = {line.split()[0] for line in lines}
    assert re.search(r"^qemu-cortex-m4\s+semihost,cortexm\s", "\n".join(lines), re.MULTILINE)
    assert set(TARGETS) | {"make"} <= listed
    assert {line.split()[0] for line in boards.strip().splitlines()[3:]} == set(list_boards())


def test_a_tag_cpp_file_replaces_the_c_file():
    files = runtime_files(("arduino",))
    assert "tflm_debug_log.cpp" in files and "tflm_debug_log.c" not in files
    assert files["tflm_debug_log.cpp"].parent.name == "arduino"
    assert "tflm_debug_log.c" in runtime_files(("zephyr",))
    assert runtime_files(())["tflm_debug_log.c"].parent.name == "runtime_c"


def test_host_run_ignores_runtime_only_tags():
    assert host_tags(("arduino", "mbed", "zephyr", "no-such-tag")) == ("no-such-tag",)


@pytest.mark.parametrize("target", TARGETS)
def test_generation_is_deterministic(target):
    model = model_path(SINE).read_bytes()
    assert generate(model, GenerateOptions(target)) == generate(model, GenerateOptions(target))


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("target", TARGETS)
def test_every_file_compiles_alone(target, model, project, stubs, tmp_path):
    """Drag and drop: each C file with -std=c99, each C++ file with -std=c++11, strict,
    no -I and no -D; only files that include a framework header see its stub."""
    c_compiler, cxx_compiler, cpu = COMPILERS[target]
    need_tool(c_compiler)
    need_tool(cxx_compiler)
    folder = project(target, model)
    for source in sources_of(folder):
        if source.suffix == ".ino":  # Arduino adds #include <Arduino.h> and src/ itself
            extra = ["-x", "c++", "-include", "Arduino.h", "-I", stubs, "-I", folder / "src"]
            compile_alone(source, cxx_compiler, STRICT_CXX + cpu, tmp_path, extra)
            continue
        extra = ["-I", stubs] if uses_framework(source) else []
        compiler, flags = (cxx_compiler, STRICT_CXX) if source.suffix == ".cpp" else (
            c_compiler, STRICT_C)
        compile_alone(source, compiler, flags + cpu, tmp_path, extra)


# ---------------------------------------------------------------------------- cmake


@pytest.mark.parametrize("model", MODELS)
def test_cmake_host_build_runs(model, project, tmp_path):
    need_tool("cmake")
    folder = project("cmake", model)
    run(["cmake", "-S", folder, "-B", tmp_path / "build"])
    run(["cmake", "--build", tmp_path / "build"])
    result = run([tmp_path / "build" / "model_test"])
    assert "~~~ALL TESTS PASSED~~~" in result.stderr
    assert "score " in run([tmp_path / "build" / "app"]).stderr


def test_cmake_arm_toolchain_file_builds(project, tmp_path):
    need_tool("cmake")
    need_tool("arm-none-eabi-gcc")
    folder = project("cmake")
    run(["cmake", "-S", folder, "-B", tmp_path / "build",
         f"-DCMAKE_TOOLCHAIN_FILE={folder / 'arm-none-eabi.cmake'}"])
    run(["cmake", "--build", tmp_path / "build"])
    elf = tmp_path / "build" / "model_test"
    assert re.search(r"Machine:\s+ARM", run(["arm-none-eabi-readelf", "-h", elf]).stdout)
    assert "VFP registers" in run(["arm-none-eabi-readelf", "-A", elf]).stdout  # hard float


# ---------------------------------------------------------------------------- arduino


def _properties(path: Path) -> dict:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines()
             if line and not line.startswith("#"))
    return {key.strip(): value.strip() for key, value in pairs}


def test_arduino_library_layout(project):
    folder = project("arduino")
    fields = _properties(folder / "library.properties")
    required = ["name", "version", "author", "maintainer", "sentence", "paragraph", "category",
                "url", "architectures"]
    assert all(fields.get(key) for key in required), fields
    assert fields["category"] in ("Display", "Communication", "Signal Input/Output", "Sensors",
                                  "Device Control", "Timing", "Data Storage", "Data Processing",
                                  "Other")
    assert (folder / "src" / fields["includes"]).is_file()
    for sketch in (folder / "examples").iterdir():
        assert (sketch / f"{sketch.name}.ino").is_file()
    assert not [p for p in folder.iterdir() if p.suffix in (".c", ".cpp", ".h")]  # all in src/


def arduino_build(library: Path, sketch: Path, build: Path) -> str:
    """arduino-builder as Debian ships it (the -prefs works around a packaging bug)."""
    need_tool("arduino-builder")
    build.mkdir(parents=True, exist_ok=True)
    result = run(["arduino-builder", "-hardware", "/usr/share/arduino/hardware",
                  "-hardware", "/usr/share/arduino-builder", "-tools", "/usr/share/arduino-builder",
                  "-libraries", library.parent, "-fqbn", AVR_FQBN, "-build-path", build,
                  "-prefs", "compiler.cpp.extra_flags=-DDECIMAL_DIG=__DECIMAL_DIG__",
                  "-warnings", "all", sketch])
    return result.stdout + result.stderr


def simavr_lines(elf: Path) -> list[str]:
    """Serial output of an AVR run (simavr prints it on stderr, coloured, '.' per newline)."""
    need_tool("simavr")
    result = run(["simavr", "-m", "atmega2560", "-f", "16000000", elf], timeout=120)
    text = re.sub(r"\x1b\[[0-9;]*m", "", result.stderr)
    return [line.removesuffix(".") for line in text.splitlines()]


@pytest.mark.parametrize("model", MODELS[:2])
def test_arduino_example_runs_on_avr_under_simavr(model, project, tmp_path):
    library = project("arduino", model)
    name = library.name + "SelfTest"  # the library folder is named after the library
    log = arduino_build(library, library / "examples" / name / f"{name}.ino", tmp_path)
    ours = [line for line in log.splitlines() if str(library) in line]
    assert not [line for line in ours if "warning" in line], ours
    lines = simavr_lines(tmp_path / f"{name}.ino.elf")
    assert "~~~ALL TESTS PASSED~~~" in lines, lines


def test_arduino_app_sketch_builds_for_avr_without_warnings(project, tmp_path):
    """The app example (typed API, read_input() hook, loop()) as the IDE builds it."""
    library = project("arduino")
    name = library.name  # the library folder is named after the library
    log = arduino_build(library, library / "examples" / name / f"{name}.ino", tmp_path)
    ours = [line for line in log.splitlines() if str(library) in line]
    assert not [line for line in ours if "warning" in line], ours
    assert (tmp_path / f"{name}.ino.elf").is_file()


SWEEP_SKETCH = """#include <Model.h>
#include <avr/interrupt.h>
#include <avr/sleep.h>

static union {
  tflm_max_align_t align;
  uint8_t bytes[MODEL_ARENA_BYTES];
} TFLM_ALIGNED16 arena;
static tflm_interpreter_t interpreter;

void setup() {
  int value;
  Serial.begin(115200);
  if (tflm_interpreter_init(&interpreter, model_model_data, MODEL_MODEL_SIZE,
                            &model_resolver, arena.bytes, sizeof(arena.bytes)) != TFLM_OK) {
    tflm_printf("init failed\\n");
  }
  for (value = -128; value < 128; ++value) {
    *(int8_t *)tflm_interpreter_input_data(&interpreter, 0) = (int8_t)value;
    if (tflm_interpreter_invoke(&interpreter) != TFLM_OK) tflm_printf("invoke failed\\n");
    tflm_printf("y %d %d\\n", value,
                (int)*(const int8_t *)tflm_interpreter_output_data(&interpreter, 0));
  }
  tflm_printf("done\\n");
  Serial.flush();
  cli();
  sleep_cpu();
}

void loop() {}
"""


def test_arduino_sine_on_avr_is_bit_exact_for_every_input(project, tmp_path):
    """All 256 int8 inputs of the sine model on the ATmega2560 (16-bit int, 32-bit double)
    against the host run of the same C files."""
    library = project("arduino")
    sketch = library / "examples" / "Sweep" / "Sweep.ino"
    sketch.parent.mkdir(exist_ok=True)
    sketch.write_text(SWEEP_SKETCH)
    try:
        arduino_build(library, sketch, tmp_path)
    finally:
        sketch.unlink()
        sketch.parent.rmdir()
    lines = simavr_lines(tmp_path / "Sweep.ino.elf")
    assert "done" in lines, lines[-5:]
    avr = {int(x): int(y) for x, y in (line.split()[1:] for line in lines if line.startswith("y "))}
    host = HostInterpreter(model_path(SINE).read_bytes())
    expected = {v: int(host.run([np.array([[v]], np.int8)])[0].ravel()[0]) for v in range(-128, 128)}
    assert avr == expected


# ---------------------------------------------------------------------------- platformio


def test_platformio_project_and_native_build(project, tmp_path):
    """pio itself downloads its toolchains; here the native environments' builds are done
    by hand: src/ (through the build_src_filter) and lib/tflm/ with the build_flags of
    platformio.ini; the app runs, the self-test (native_test) passes."""
    need_tool("gcc")
    folder = project("platformio")
    ini = (folder / "platformio.ini").read_text()
    manifest = json.loads((folder / "lib" / "tflm" / "library.json").read_text())
    assert re.search(rf"^lib_deps = {manifest['name']}$", ini, re.MULTILINE)
    assert manifest["build"] == {"srcDir": ".", "includeDir": "."} and manifest["version"]
    envs = dict(re.findall(r"^\[env:(native\w*)\]\nplatform = native\n(.*?)\n\n", ini,
                           re.MULTILINE | re.DOTALL))
    assert sorted(envs) == ["native", "native_test"]
    for env, body in envs.items():
        flags = re.search(r"^build_flags = (.*)$", body, re.MULTILINE).group(1).split()
        source_filter = re.search(r"^build_src_filter = (.*)$", body, re.MULTILINE).group(1)
        libraries = [flag for flag in flags if flag.startswith("-l")]
        compile_flags = [flag for flag in flags if not flag.startswith("-l")]
        sources = (platformio_source_filter(folder / "src", source_filter)
                   + sources_of(folder / "lib" / "tflm"))
        run(["gcc", *compile_flags, *sources, "-o", tmp_path / env, *libraries])
        output = run([tmp_path / env])
        assert ("~~~ALL TESTS PASSED~~~" in output.stderr) == (env == "native_test")
        assert ("score" in output.stderr) == (env == "native")  # the app prints its top class


# ---------------------------------------------------------------------------- CMake-based


CMAKE_PROBE = """set(CONFIG_TFLM_MODEL y)
function(zephyr_library_named name)
endfunction()
function(zephyr_include_directories)
endfunction()
function(zephyr_library_sources)
  set_property(GLOBAL APPEND PROPERTY PROBED ${ARGN})
endfunction()
function(idf_component_register)
  cmake_parse_arguments(ARG "" "" "SRCS;INCLUDE_DIRS;REQUIRES;PRIV_REQUIRES" ${ARGN})
  set_property(GLOBAL APPEND PROPERTY PROBED ${ARG_SRCS})
endfunction()
include(${LISTS})
get_property(probed GLOBAL PROPERTY PROBED)
foreach(source IN LISTS probed)
  message("SOURCE ${source}")
endforeach()
"""


def listed_sources(lists: Path, tmp_path: Path) -> set[Path]:
    """The sources a Zephyr or ESP-IDF CMakeLists.txt registers, read by CMake itself with
    the framework's functions replaced by probes."""
    need_tool("cmake")
    probe = tmp_path / "probe.cmake"
    probe.write_text(CMAKE_PROBE)
    output = run(["cmake", f"-DLISTS={lists}", "-P", probe]).stderr
    return {(lists.parent / line[7:]).resolve() for line in output.splitlines()
            if line.startswith("SOURCE ")}


def simple_yaml(path: Path) -> dict:
    """key: value pairs of a small YAML file, nested keys joined by dots."""
    values, parents = {}, []
    for line in path.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        depth = (len(line) - len(line.lstrip())) // 2
        key, _, value = line.strip().partition(":")
        parents = parents[:depth] + [key]
        values[".".join(parents)] = value.strip().strip('"')
    return values


def test_zephyr_module(project, tmp_path):
    folder = project("zephyr")
    module = simple_yaml(folder / "zephyr" / "module.yml")
    assert (folder / module["build.cmake"] / "CMakeLists.txt").is_file()
    kconfig = (folder / module["build.kconfig"]).read_text()
    assert re.search(r"^config TFLM_MODEL\n\tbool ", kconfig, re.MULTILINE)
    assert "CONFIG_TFLM_MODEL=y" in (folder / "sample" / "prj.conf").read_text().splitlines()
    library = {p.resolve() for p in sources_of(folder / "tflm")}
    assert listed_sources(folder / "zephyr" / "CMakeLists.txt", tmp_path) == library
    for app in ("sample", "test"):  # the user's app and the self-test
        lists = (folder / app / "CMakeLists.txt").read_text()
        assert "find_package(Zephyr" in lists and "target_sources(app PRIVATE src/main.c)" in lists
        assert (folder / app / "src" / "main.c").is_file()
        assert "CONFIG_TFLM_MODEL=y" in (folder / app / "prj.conf").read_text().splitlines()
    assert "_init()" in (folder / "sample" / "src" / "main.c").read_text()
    assert "~~~ALL TESTS PASSED~~~" in (folder / "test" / "src" / "main.c").read_text()
    assert "printk" in (folder / "tflm" / "tflm_debug_log.c").read_text()


def _conf(path: Path) -> dict:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines()
             if line.startswith("CONFIG_"))
    return dict(pairs)


def test_zephyr_configuration_builds_with_picolibc_or_a_distribution_newlib(project):
    """Nothing selects REQUIRES_FULL_LIBC (some Zephyr releases then pick newlib); the
    minimal libc, which has no libm, is excluded; prj.conf picks picolibc, and newlib.conf
    picks newlib without threads, whose locks a distribution newlib cannot provide."""
    folder = project("zephyr")
    kconfig = (folder / "zephyr" / "Kconfig").read_text()
    assert not re.search(r"^\s*select ", kconfig, re.MULTILINE)
    assert re.search(r"^\tdepends on !MINIMAL_LIBC$", kconfig, re.MULTILINE)
    for app in ("sample", "test"):
        picolibc = _conf(folder / app / "prj.conf")
        assert picolibc["CONFIG_PICOLIBC"] == "y" and picolibc["CONFIG_REBOOT"] == "y"
        assert "CONFIG_NEWLIB_LIBC" not in picolibc and "CONFIG_MULTITHREADING" not in picolibc
        newlib = _conf(folder / app / "newlib.conf")
        assert newlib == {"CONFIG_NEWLIB_LIBC": "y", "CONFIG_MULTITHREADING": "n"}
        assert "-DEXTRA_CONF_FILE=newlib.conf" in (folder / app / "newlib.conf").read_text()


def test_zephyr_sample_ends_qemu_when_done(project, stubs, tmp_path):
    """On a QEMU board (CONFIG_QEMU_TARGET) the self-test app's main reboots once it has
    printed its verdict, and its CMakeLists.txt gives QEMU -no-reboot, so the run ends."""
    need_tool("arm-none-eabi-gcc")
    folder = project("zephyr")
    lists = (folder / "test" / "CMakeLists.txt").read_text()
    flags = lists.index("list(APPEND QEMU_EXTRA_FLAGS -no-reboot)")
    assert flags < lists.index("find_package(Zephyr")  # read by Zephyr's qemu.cmake
    main_c = (folder / "test" / "src" / "main.c").read_text()
    body = main_c[main_c.index("\nint main(void) {"):]
    assert body.index("tflm_self_test()") < body.index("sys_reboot(SYS_REBOOT_COLD)")
    assert main_c.count("int main(void)") == 1 and "static int tflm_self_test(void)" in main_c
    for qemu in ([], ["-DCONFIG_QEMU_TARGET=1"]):
        run(["arm-none-eabi-gcc", *STRICT_C, "-mcpu=cortex-m3", "-mthumb", *qemu, "-I", stubs,
             "-c", folder / "test" / "src" / "main.c", "-o", tmp_path / "main.o"])
        symbols = run(["arm-none-eabi-nm", tmp_path / "main.o"]).stdout
        assert ("U sys_reboot" in symbols) == bool(qemu), symbols


# What a Zephyr build gives the sample on qemu_cortex_m3 (QEMU lm3s6965evb), reduced to the
# calls it makes: printk on UART0, sys_reboot as Zephyr's Cortex-M port does it (AIRCR
# SYSRESETREQ), and a reset handler that copies .data, zeroes .bss and calls main.
LM3S6965_SHIM = """#include <stdarg.h>
#include <stdint.h>
int main(void);
extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
extern uint32_t __stack_top[];
void printk(const char *format, ...);
void sys_reboot(int type);
void shim_reset(void);
void printk(const char *format, ...) {
  va_list args;
  const char *text;
  va_start(args, format);
  text = va_arg(args, const char *);
  while (*text) *(volatile uint32_t *)0x4000C000u = (uint32_t)*text++;
  va_end(args);
}
void sys_reboot(int type) {
  (void)type;
  *(volatile uint32_t *)0xE000ED0Cu = 0x05FA0004u;
  for (;;) {}
}
void shim_reset(void) {
  uint32_t *from = __data_load, *to = __data_start;
  while (to < __data_end) *to++ = *from++;
  for (to = __bss_start; to < __bss_end; ++to) *to = 0;
  main();
  printk("%s", "main returned: QEMU would run on\\n");
  for (;;) {}
}
__attribute__((section(".vectors"), used)) static const uintptr_t vectors[2] = {
    (uintptr_t)__stack_top, (uintptr_t)shim_reset};
"""
LM3S6965 = {"machine": "lm3s6965evb", "stack_bytes": 16384, "memory": {
    "code": {"name": "flash", "origin": 0, "length": 262144},
    "data": {"name": "SRAM", "origin": 0x20000000, "length": 65536}}}


def test_zephyr_sample_exit_path_ends_qemu(project, stubs, tmp_path):
    """The self-test app's own main.c and library, built as for qemu_cortex_m3 with
    CONFIG_QEMU_TARGET, print the verdict and then end QEMU run with -no-reboot (the flag
    the sample's CMakeLists.txt adds): the emulator exits by itself, status 0."""
    need_tool("qemu-system-arm")
    compiler = need_tool("arm-none-eabi-gcc")
    folder = project("zephyr")
    (tmp_path / "shim.c").write_text(LM3S6965_SHIM)
    (tmp_path / "link.ld").write_bytes(render("qemu/link.ld.j2", board=LM3S6965,
                                              banner_hash=""))
    sources = [folder / "test" / "src" / "main.c", tmp_path / "shim.c",
               *sources_of(folder / "tflm")]
    cpu = ["-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"]
    run([compiler, *STRICT_C, *cpu, "-O2", "-DCONFIG_QEMU_TARGET=1",
         "-I", stubs, *sources, "-nostartfiles",
         "-T", tmp_path / "link.ld", "--specs=nano.specs", "--specs=nosys.specs", "-lm",
         "-o", tmp_path / "sample.elf"])
    result = subprocess.run(["qemu-system-arm", "-M", "lm3s6965evb", "-nographic",
                             "-monitor", "none", "-serial", "stdio", "-no-reboot",
                             "-kernel", str(tmp_path / "sample.elf")],
                            capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("~~~ALL TESTS PASSED~~~"), result.stdout[-300:]


def test_esp_idf_component(project, tmp_path):
    folder = project("esp-idf")
    component = folder / "components" / "tflm"
    library = {p.resolve() for p in sources_of(component)}
    assert listed_sources(component / "CMakeLists.txt", tmp_path) == library
    assert simple_yaml(component / "idf_component.yml")["version"]
    for app in (folder, folder / "test"):  # the user's app and the self-test project
        assert listed_sources(app / "main" / "CMakeLists.txt", tmp_path) == {
            p.resolve() for p in sources_of(app / "main")}
        assert "PRIV_REQUIRES tflm" in (app / "main" / "CMakeLists.txt").read_text()
        assert "project.cmake" in (app / "CMakeLists.txt").read_text()
    assert "EXTRA_COMPONENT_DIRS ${CMAKE_CURRENT_LIST_DIR}/../components" in (
        folder / "test" / "CMakeLists.txt").read_text()
    assert "~~~ALL TESTS PASSED~~~" in (folder / "test" / "main" / "main.c").read_text()


# ---------------------------------------------------------------------------- mbed


def test_mbed_program(project, tmp_path):
    need_tool("arm-none-eabi-gcc")
    folder = project("mbed")
    overrides = json.loads((folder / "mbed_app.json").read_text())["target_overrides"]["*"]
    assert overrides["rtos.main-thread-stack-size"] >= 4096
    assert "build/*" in (folder / ".mbedignore").read_text().splitlines()
    assert "mbed::BufferedSerial" in (folder / "tflm" / "tflm_debug_log.cpp").read_text()
    # main.cpp (the app) or the self-test (Mbed builds TESTS/ only for `mbed test`) and the
    # runtime link as C++ with C (the Mbed part is the one stubbed file).
    objects = {}
    for index, source in enumerate(sources_of(folder)):
        if uses_framework(source):
            continue
        compiler = "arm-none-eabi-g++" if source.suffix == ".cpp" else "arm-none-eabi-gcc"
        objects[source.relative_to(folder).as_posix()] = tmp_path / f"{index}.o"
        run([compiler, *CORTEX_M4F, "-c", source, "-o", objects[source.relative_to(folder).as_posix()]])
    entries = ["main.cpp", "TESTS/tflm/self_test/main.cpp"]
    library = [obj for path, obj in objects.items() if path not in entries]
    log = tmp_path / "log.c"
    log.write_text('void tflm_debug_log(const char *text);\nvoid tflm_debug_log(const char *text) '
                   '{ (void)text; }\n')
    run(["arm-none-eabi-gcc", *CORTEX_M4F, "-c", log, "-o", tmp_path / "log.o"])
    for entry in entries:
        run(["arm-none-eabi-gcc", *CORTEX_M4F, "--specs=nosys.specs", objects[entry], *library,
             tmp_path / "log.o", "-lm", "-o", tmp_path / "main.elf"])


# ---------------------------------------------------------------------------- keil


def test_keil_project_lists_every_file_with_its_type(project, tmp_path):
    need_tool("arm-none-eabi-gcc")
    folder = project("keil")
    root = ElementTree.parse(folder / "model.uvprojx").getroot()
    assert root.tag == "Project" and root.findtext("SchemaVersion") == "2.1"
    targets = root.findall("Targets/Target")
    assert [t.findtext("TargetName") for t in targets] == ["model", "model Test"]  # app, self-test
    target = targets[0]
    cads = target.find("TargetOption/TargetArmAds/Cads")
    controls = cads.find("VariousControls")
    assert not controls.findtext("Define") and not controls.findtext("IncludePath")
    assert cads.findtext("v6Lang") == "3"  # c99
    cpu = target.findtext("TargetOption/TargetCommonOption/Cpu")
    assert 'CPUTYPE("Cortex-M4")' in cpu and "FPU2" in cpu  # = CORTEX_M4F
    types = {".c": "1", ".cpp": "8", ".h": "5"}
    listed = {}
    for entry in root.iter("File"):
        path = folder / entry.findtext("FilePath").replace("\\", "/")
        assert path.is_file() and path.name == entry.findtext("FileName")
        assert entry.findtext("FileType") == types[path.suffix]
        listed[path.resolve()] = path
    on_disk = {p.resolve() for p in folder.rglob("*") if p.suffix in types}
    assert set(listed) == on_disk
    for path in sorted(listed.values()):
        if path.suffix == ".c":
            compile_alone(path, "arm-none-eabi-gcc", STRICT_C + CORTEX_M4F, tmp_path)


# ---------------------------------------------------------------------------- stm32cube


def test_stm32cube_project(project, tmp_path):
    need_tool("arm-none-eabi-gcc")
    folder = project("stm32cube")
    description = ElementTree.parse(folder / ".project").getroot()
    natures = {n.text for n in description.iter("nature")}
    assert {"org.eclipse.cdt.core.cnature", "com.st.stm32cube.ide.mcu.MCUProjectNature",
            "org.eclipse.cdt.managedbuilder.core.managedBuildNature"} <= natures
    cproject = ElementTree.parse(folder / ".cproject").getroot()
    configurations = list(cproject.iter("configuration"))
    assert [c.get("name") for c in configurations] == ["Debug", "Release", "Test"]
    for configuration in configurations:
        mcu = [o.get("value") for o in configuration.iter("option")
               if o.get("superClass", "").endswith(".option.target_mcu")]
        assert mcu == ["STM32F407VGTx"]  # a Cortex-M4F: CORTEX_M4F
        entries = [e.get("name") for e in configuration.iter("entry")]
        assert all((folder / name).is_dir() for name in entries)
        symbols = [o for o in configuration.iter("option") if "definedsymbols" in o.get("id")]
        assert symbols and not list(symbols[0])
    for path in sources_of(folder):
        compile_alone(path, "arm-none-eabi-gcc", STRICT_C + CORTEX_M4F, tmp_path)


def test_cmsis_tag_composes_with_arduino(tmp_path):
    """--tags cmsis on arduino: the tag's kernels go into src/, the generator says what they
    do on AVR, and they compile both for an ARM board (DSP path) and portably."""
    from click.testing import CliRunner

    from tflm_gen.cli import main

    model = Path(__file__).resolve().parent.parent / "examples" / "sine" / "sine_int8.tflite"
    result = CliRunner().invoke(main, ["project", "--model", str(model), "--target", "arduino",
                                       "--tags", "cmsis", "-o", str(tmp_path / "lib")])
    assert result.exit_code == 0, result.output
    assert "note: the cmsis kernels" in result.output and "AVR" in result.output
    assert "cmsis tag" in next((tmp_path / "lib").rglob("fully_connected.c")).read_text()
    assert "__ARM_FEATURE_DSP" in next((tmp_path / "lib").rglob("cmsis_simd.h")).read_text()
    compiler = need_tool("arm-none-eabi-gcc")
    for cpu in (["-mcpu=cortex-m4", "-mthumb"], ["-mcpu=cortex-m0", "-mthumb"]):
        built = subprocess.run([compiler, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                                *cpu, "-c", str(next((tmp_path / "lib").rglob("fully_connected.c"))),
                                "-o", str(tmp_path / "fc.o")], capture_output=True, text=True,
                               check=False)
        assert built.returncode == 0, built.stderr
