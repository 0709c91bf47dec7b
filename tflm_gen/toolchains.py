"""The compilers and emulators tflm-gen and its tests use: one table of what each is for
and the exact command that installs it on Debian/Ubuntu (the package names `.ci/run`
installs), macOS (Homebrew) and Windows (winget, or what to do instead); `tflm-gen
doctor` prints it, and every "not found" error carries the same hint (`install_hint`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

WSL = "no native package: use WSL (Ubuntu) and the Debian command"


@dataclass(frozen=True)
class Tool:
    name: str  # as doctor shows it
    commands: tuple[str, ...]  # executables that provide it, the first found is used
    purpose: str
    debian: str
    macos: str
    windows: str
    version_flag: str | None = "--version"  # None: the tool has no version option
    note: str = ""  # what a user must know beyond installing it


ARDUINO_BUILDER_NOTE = (
    "off Debian, arduino-cli replaces arduino-builder (`arduino-cli compile --fqbn "
    "arduino:avr:mega:cpu=atmega2560 SKETCH`). Debian's arduino-builder needs `-hardware /usr/share/arduino/hardware -hardware "
    "/usr/share/arduino-builder -tools /usr/share/arduino-builder` and, because the core's "
    "WString.cpp uses DECIMAL_DIG, which Debian's avr-gcc 5.4 <float.h> defines for C only, "
    "`-prefs compiler.cpp.extra_flags=-DDECIMAL_DIG=__DECIMAL_DIG__` (docs/targets.md)")

TOOLS = (
    Tool("host cc", ("cc", "gcc", "clang"), "run, verify, inspect --memory (host builds)",
         "sudo apt-get install gcc libc6-dev", "xcode-select --install",
         "winget install -e --id MSYS2.MSYS2 && "
         "C:\\msys64\\usr\\bin\\bash -lc 'pacman -S --noconfirm mingw-w64-ucrt-x86_64-gcc'"),
    Tool("make", ("make",), "make target, QEMU builds (run/bench --target qemu-*)",
         "sudo apt-get install make", "xcode-select --install",
         "winget install -e --id ezwinports.make"),
    Tool("arm-none-eabi-gcc", ("arm-none-eabi-gcc",), "qemu-cortex-m* targets, cross builds",
         "sudo apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi",
         "brew install --cask gcc-arm-embedded",
         "winget install -e --id Arm.GnuArmEmbeddedToolchain"),
    Tool("qemu-system-arm", ("qemu-system-arm",), "run/bench on qemu-cortex-m*",
         "sudo apt-get install qemu-system-arm", "brew install qemu",
         "winget install -e --id SoftwareFreedomConservancy.QEMU"),
    Tool("riscv64-unknown-elf-gcc", ("riscv64-unknown-elf-gcc",), "qemu-riscv32 target",
         "sudo apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf",
         "brew tap riscv-software-src/riscv && brew install riscv-tools", WSL),
    Tool("qemu-system-riscv32", ("qemu-system-riscv32",), "run/bench on qemu-riscv32",
         "sudo apt-get install qemu-system-misc", "brew install qemu",
         "winget install -e --id SoftwareFreedomConservancy.QEMU"),
    Tool("cmake", ("cmake",), "cmake, esp-idf, zephyr targets", "sudo apt-get install cmake",
         "brew install cmake", "winget install -e --id Kitware.CMake"),
    Tool("arduino-builder", ("arduino-builder",), "arduino target (AVR builds)",
         "sudo apt-get install arduino-builder arduino-core-avr",
         "brew install arduino-cli && arduino-cli core install arduino:avr",
         "winget install -e --id ArduinoSA.CLI && arduino-cli core install arduino:avr",
         version_flag="-version", note=ARDUINO_BUILDER_NOTE),
    Tool("simavr", ("simavr",), "running the arduino target's AVR build",
         "sudo apt-get install simavr", "brew tap osx-cross/avr && brew install simavr", WSL,
         version_flag=None),
    Tool("clang", ("clang",), "the loader fuzzer (tests/test_fuzz.py)",
         "sudo apt-get install clang libclang-rt-14-dev", "brew install llvm",
         "winget install -e --id LLVM.LLVM"),
    Tool("chromium", ("chromium", "chromium-browser", "google-chrome"),
         "checking `tflm-gen report` in a browser (tests)", "sudo apt-get install chromium",
         "brew install --cask chromium", "winget install -e --id Google.Chrome"),
)

_VERSION = re.compile(r"\d+\.\d+")


def tool_named(name: str) -> Tool | None:
    """The table row of a tool by its name, else by one of its executables (`cc`, `gcc`)."""
    by_name = next((tool for tool in TOOLS if name == tool.name), None)
    return by_name or next((tool for tool in TOOLS if name in tool.commands), None)


def install_hint(executable: str) -> str:
    """How to install `executable` on the three systems; ends every "not found" error.
    A cross tool (arm-none-eabi-nm) is found through its compiler's row."""
    tool = tool_named(executable) or _cross_tool(executable)
    if tool is None:
        return "`tflm-gen doctor` lists what each target needs"
    return (f"install it: Debian/Ubuntu `{tool.debian}`; macOS `{tool.macos}`; Windows "
            f"{_command_text(tool.windows)} (`tflm-gen doctor` checks every tool)")


def _command_text(install: str) -> str:
    """A command in backquotes; advice (WSL) as it is."""
    return install if install == WSL else f"`{install}`"


def _cross_tool(executable: str) -> Tool | None:
    prefix = executable.rsplit("-", 1)[0] + "-"
    return next((tool for tool in TOOLS if tool.name.startswith(prefix) and prefix != "-"), None)


def find_tool(tool: Tool) -> str | None:
    """Path of the first of the tool's executables on PATH ($CC first for the host cc)."""
    commands = tool.commands
    if tool.name == "host cc" and os.environ.get("CC"):
        commands = (os.environ["CC"],)
    for command in commands:
        path = shutil.which(command)
        if path:
            return path
    return None


def tool_version(path: str, flag: str | None) -> str:
    """The first line of `path flag` that holds a version number, or "installed"."""
    if flag is None:
        return "installed (no version option)"
    try:
        done = subprocess.run([path, flag], capture_output=True, text=True, timeout=20,
                              check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"does not run: {error}"
    lines = (done.stdout + done.stderr).splitlines()
    return next((line.strip() for line in lines if _VERSION.search(line)), "installed")


def doctor_rows() -> list[dict]:
    """One row per tool: found or not, its path and version."""
    rows = []
    for tool in TOOLS:
        path = find_tool(tool)
        rows.append({"tool": tool.name, "found": path is not None, "path": path or "",
                     "version": tool_version(path, tool.version_flag) if path else "",
                     "needed_for": tool.purpose})
    return rows
