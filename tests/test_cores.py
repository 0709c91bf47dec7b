"""The Cortex-M0, M3 and M33 boards, the cycle estimate and the stack high-water mark of
`tflm-gen bench`.

One corpus int8 model per new core runs bit-exact with TFLM (the embedded expected output
comes from the oracle) with the reference kernels and with `--tags cmsis` (its portable C
path on the M0 and M3, DSP on the M33); each build and run happens once per session (the
`benched` fixture) and serves every test below.  Cycle figures are estimates, so the tests
check what must hold whatever the table: they repeat exactly, they are at least the
instruction counts, and the per-operator split adds up.  Speed is never asserted."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import need_corpus
from test_qemu import need_board

from tflm_gen import qemu
from tflm_gen.bench import bench, map_contributions
from tflm_gen.cli import main
from tflm_gen.cycles import CORES, CORTEX_M3, CORTEX_M4, CORTEX_M55, instruction_cycles
from tflm_gen.errors import UnsupportedModelError
from tflm_gen.host import HostInterpreter
from tflm_gen.kernels import host_tags
from tflm_gen.model.builder import ModelBuilder
from tflm_gen.optimize import device_model
from tflm_gen.project import GenerateOptions, generate

NEW_CORES = {"qemu-cortex-m0": "micro_speech_quantized.tflite",
             "qemu-cortex-m3": "micro_speech_quantized.tflite",
             "qemu-cortex-m33": "kws_ref_model.tflite"}
CASES = [(target, tags) for target in NEW_CORES for tags in ((), ("cmsis",))]


@pytest.fixture(scope="session")
def benched():
    """bench() of (target, tags), computed once per session."""
    results: dict = {}

    def get(target: str, tags: tuple[str, ...]) -> dict:
        if (target, tags) not in results:
            need_board(target)
            model = (need_corpus() / NEW_CORES[target]).read_bytes()
            results[target, tags] = bench(model, target, tags)
        return results[target, tags]

    return get


@pytest.mark.parametrize("target,tags", CASES)
def test_new_core_runs_bit_exact(benched, target, tags):
    result = benched(target, tags)
    assert result["bit_exact"], (target, tags)
    model = (need_corpus() / NEW_CORES[target]).read_bytes()
    all_tags = qemu.load_target(target).tags + tags
    host = HostInterpreter(device_model(model, host_tags(all_tags))[0], host_tags(all_tags))
    assert result["arena_bytes"] == host.memory_stats()["arena_bytes"]
    board = qemu.board_of(target)
    assert 0 < result["stack_bytes"] < board["stack_bytes"]


@pytest.mark.parametrize("target,tags", CASES)
def test_cycle_estimate_is_consistent(benched, target, tags):
    result = benched(target, tags)
    assert result["core"] == target.removeprefix("qemu-")
    assert result["cycles_per_invoke"] >= result["instructions_per_invoke"] > 0
    assert result["init_cycles"] >= result["init_instructions"] > 0
    for op in result["ops"]:
        assert op["cycles"] >= op["instructions"] > 0, op
    # The profiled invoke's operators and the interpreter's own share make up the invoke.
    kernels = sum(op["cycles"] for op in result["ops"])
    assert kernels + result["interpreter_overhead_cycles"] == result["cycles_per_invoke"]
    assert 0 <= result["interpreter_overhead_cycles"] < kernels


def test_cycle_estimate_repeats_exactly(benched):
    target = "qemu-cortex-m33"
    first = benched(target, ("cmsis",))
    second = bench((need_corpus() / NEW_CORES[target]).read_bytes(), target, ("cmsis",))
    for key in ("instructions_per_invoke", "cycles_per_invoke", "init_cycles", "ops",
                "stack_bytes"):
        assert first[key] == second[key], key


@pytest.mark.parametrize("target,dsp", [("qemu-cortex-m3", False), ("qemu-cortex-m33", True)])
def test_cmsis_takes_the_path_of_the_core(benched, target, dsp):
    """No DSP instruction in the M3's cmsis build (its portable C path), SMLAD on the M33's."""
    assert benched(target, ("cmsis",))["bit_exact"]
    model = (need_corpus() / NEW_CORES[target]).read_bytes()
    program = qemu.build(qemu.project_files(model, target, ("cmsis",)), target)  # cached
    listing = subprocess.run([program.tool("objdump"), "-d", str(program.elf)],
                             capture_output=True, text=True, check=True).stdout
    assert ("\tsmlad" in listing) == dsp


def test_clock_mhz_prints_milliseconds(tmp_path):
    need_board("qemu-cortex-m0")
    out = tmp_path / "bench.json"
    model = need_corpus() / "hello_world_int8.tflite"
    result = CliRunner().invoke(main, ["bench", str(model), "--target", "qemu-cortex-m0",
                                       "--clock-mhz", "16", "--json", str(out)])
    assert result.exit_code == 0, result.output
    figures = json.loads(out.read_text())
    assert figures["ms_per_invoke"] == round(figures["cycles_per_invoke"] / 16000.0, 6)
    assert f"{figures['ms_per_invoke']:.3f} ms at 16 MHz" in result.output


def test_m0_refuses_what_does_not_fit_with_sizes():
    """The microbit has 256 KB of flash and 16 KB of RAM: ad01's 277 KB model and the 35 KB
    arena of pretrainedResnet_quant are refused in one sentence with the sizes, before any
    build (kws_ref_model's 12.4 KB arena fits since the planner overlaps buffers)."""
    with pytest.raises(UnsupportedModelError, match=r"model \(\d+ bytes\) does not fit "
                                                    r"qemu-cortex-m0: flash holds 262144"):
        generate((need_corpus() / "ad01_int8.tflite").read_bytes(),
                 GenerateOptions("qemu-cortex-m0"))
    with pytest.raises(UnsupportedModelError, match=r"arena \(\d+ bytes\) and stack \(2048 "
                                                    r"bytes\) do not fit qemu-cortex-m0: RAM "
                                                    r"holds 16384"):
        generate((need_corpus() / "pretrainedResnet_quant.tflite").read_bytes(),
                 GenerateOptions("qemu-cortex-m0"))


def test_m55_places_a_700_kb_model_beside_the_itcm():
    """The AN547's ITCM holds 512 KiB; the model goes to its 2 MB SRAM as a board's linker
    script would put it, and the program runs bit-exact."""
    need_board("qemu-cortex-m55")
    builder = ModelBuilder()
    x = builder.input("x", [1, 256], "float32")
    weights = np.random.default_rng(0).uniform(-1, 1, size=(700, 256)).astype(np.float32)
    w = builder.constant("w", weights)
    builder.output(builder.add_op("FULLY_CONNECTED", [x, w], [1, 700], "float32"))
    model = builder.build()
    assert len(model) > 700 * 1024
    _, completed = qemu.run_project(model, "qemu-cortex-m55")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert qemu.PASSED in completed.stdout


def test_cycle_classes_follow_the_core_tables():
    """A few instructions of each class take their table's cost, and taken branches the
    refill: the classifier reads objdump's spelling (widths, conditions, register lists)."""
    m4 = CORTEX_M4
    assert instruction_cycles("sdiv", "r0, r1, r2", m4, False) == (m4.divide, 0)
    assert instruction_cycles("ldr.w", "r3, [r1, #4]", m4, False) == (m4.load, m4.refill)
    assert instruction_cycles("ldr", "r2, [r0]", m4, True)[0] == m4.load_pipelined
    assert instruction_cycles("str", "r2, [r0, r1]", m4, False) == (m4.store_register, 0)
    assert instruction_cycles("bne.n", "1b", m4, False) == (1, m4.refill)
    assert instruction_cycles("pop", "{r4, r5, r6, pc}", m4, False) == (
        m4.multiple_base + 4, m4.refill)
    assert instruction_cycles("vpush", "{d8-d15}", m4, False)[0] == m4.multiple_base + 16
    assert instruction_cycles("smlad", "r1, r2, r3, r1", m4, False) == (m4.multiply, 0)
    assert instruction_cycles("smlal", "r0, r1, r2, r3", CORTEX_M3, False)[0] == \
        CORTEX_M3.multiply_long_accumulate
    assert instruction_cycles("vmladava.s8", "r0, q1, q2", CORTEX_M55, False)[0] == \
        CORTEX_M55.vector
    assert instruction_cycles("movne", "r0, #1", m4, False) == (1, 0)
    assert set(CORES) >= {"cortex-m0", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33",
                          "cortex-m55"}


def test_constants_in_a_memory_of_their_own_count_as_flash():
    """The M55 board links the model into a .rodata output section beside the ITCM's
    .text: bench counts it as text and as the model's bytes (it reported 0)."""
    map_text = ("Linker script and memory map\n\n"
                ".text           0x00000000      0x80\n"
                " .text          0x00000000      0x80 build/tflm/tflm_interpreter.o\n"
                ".rodata         0x21000000    0x2000\n"
                " .rodata        0x21000000    0x2000 build/tflm/vww_model_data.o\n")
    assert map_contributions(map_text) == [("text", "build/tflm/tflm_interpreter.o", 0x80),
                                           ("text", "build/tflm/vww_model_data.o", 0x2000)]
