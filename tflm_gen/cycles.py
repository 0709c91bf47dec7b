"""Cycle estimates for `tflm-gen bench`: a cycle cost for every instruction of the linked
program, from a per-instruction-class table of its core (docs/cycles.md gives the sources
and the limits), written to a file the QEMU plugin reads.

The plugin adds an instruction's `cost` each time it executes and, when execution does not
continue at the address after a block's last instruction (a taken branch, a call, a return,
a load of PC), that instruction's `taken` penalty: the pipeline refill.  Everything here is
static; the only run-time input is which branches were taken.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CoreTimings:
    """Cycles per instruction class of one core, zero wait states (docs/cycles.md)."""

    refill: int  # P: cycles added by a taken branch (pipeline refill)
    load: int  # LDR/LDRB/LDRH/LDRS* and VLDR, not pipelined with the previous access
    load_pipelined: int  # a load or store right after a load (the TRMs' LDR pipelining)
    store: int  # STR* with an immediate offset (the data phase overlaps the next instruction)
    store_register: int  # STR* with a register offset
    pair: int  # LDRD / STRD
    multiple_base: int  # LDM/STM/PUSH/POP/VLDM/VSTM/VPUSH/VPOP: base + registers
    multiply: int  # MUL, SMUL*, SMLA*, SMLAD and the other DSP multiplies
    multiply_accumulate: int  # MLA, MLS
    multiply_long: int  # SMULL, UMULL (worst case where the TRM gives a range)
    multiply_long_accumulate: int  # SMLAL, UMLAL (worst case)
    divide: int  # SDIV, UDIV: the worst case of the TRM's range (early termination ignored)
    table_branch: int  # TBB / TBH before the refill
    call: int  # BL / BLX before the refill
    float_mac: int  # VMLA, VMLS, VFMA, VFMS, VNMLA... (single precision)
    float_divide: int  # VDIV, VSQRT
    vector: int  # an MVE instruction on Q registers (beats), 0 when the core has none


# Cortex-M4 TRM (DDI 0439, table 3-1 and 7-1): one cycle for data processing, every multiply
# and DSP instruction; LDR 2 (N+1 when loads follow each other); LDRD/STRD 1+N; LDM/STM 1+N;
# SDIV/UDIV 2..12; VMLA 3; VDIV/VSQRT 14; P (refill) 1..3, taken as 2.
CORTEX_M4 = CoreTimings(refill=2, load=2, load_pipelined=1, store=1, store_register=2, pair=3,
                        multiple_base=1, multiply=1, multiply_accumulate=1, multiply_long=1,
                        multiply_long_accumulate=1, divide=12, table_branch=2, call=1,
                        float_mac=3, float_divide=14, vector=0)
# Cortex-M3 TRM (DDI 0337, table 18-1): as the M4 but MLA/MLS 2, SMULL/UMULL 3..5,
# SMLAL/UMLAL 4..7; no DSP or floating-point instructions.
CORTEX_M3 = CoreTimings(**{**CORTEX_M4.__dict__, "multiply_accumulate": 2, "multiply_long": 5,
                           "multiply_long_accumulate": 7})
# Cortex-M0 TRM (DDI 0432, table 3-1): loads and stores 2, LDM/STM/PUSH/POP 1+N, taken
# branch 3 (refill 2), BL 4, MULS 1 (the fast multiplier; the small one takes 32); no divide.
CORTEX_M0 = CoreTimings(refill=2, load=2, load_pipelined=2, store=2, store_register=2, pair=3,
                        multiple_base=1, multiply=1, multiply_accumulate=1, multiply_long=1,
                        multiply_long_accumulate=1, divide=1, table_branch=2, call=2,
                        float_mac=1, float_divide=1, vector=0)
# Cortex-M33 (TRM 100230 gives no instruction table; a 3-stage ARMv8-M Mainline pipeline
# like the M4's): the M4's table.
CORTEX_M33 = CORTEX_M4
# Cortex-M55 (TRM 101051): the scalar pipeline as the M33's; an MVE instruction on Q
# registers takes its two beats (64-bit datapath), with no overlap of successive vector
# instructions counted: an upper bound.
CORTEX_M55 = CoreTimings(**{**CORTEX_M4.__dict__, "vector": 2})
# Cortex-M7 (TRM DDI 0489 publishes no instruction table): one cycle per instruction, loads
# and multiplies included, no dual issue and a refill of 1 (the branch predictor), floating
# point as the M4: an upper bound for code that dual-issues.
CORTEX_M7 = CoreTimings(refill=1, load=1, load_pipelined=1, store=1, store_register=1, pair=2,
                        multiple_base=0, multiply=1, multiply_accumulate=1, multiply_long=1,
                        multiply_long_accumulate=1, divide=12, table_branch=2, call=1,
                        float_mac=3, float_divide=14, vector=0)

CORES = {"cortex-m0": CORTEX_M0, "cortex-m3": CORTEX_M3, "cortex-m4": CORTEX_M4,
         "cortex-m7": CORTEX_M7, "cortex-m33": CORTEX_M33, "cortex-m55": CORTEX_M55}

_LINE = re.compile(r"^\s*([0-9a-f]+):\t(\S+)(?:\t(.*))?$")
_CONDITIONS = ("eq", "ne", "cs", "cc", "hs", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge",
               "lt", "gt", "le", "al")
_LOADS = ("ldr", "ldrb", "ldrh", "ldrsb", "ldrsh", "ldrex", "ldrexb", "ldrexh", "ldrt",
          "ldrbt", "ldrht", "ldrsbt", "ldrsht", "vldr")
_STORES = ("str", "strb", "strh", "strex", "strexb", "strexh", "strt", "strbt", "strht",
           "vstr")
_MULTIPLE = ("ldm", "ldmia", "ldmdb", "ldmfd", "stm", "stmia", "stmdb", "stmea", "push", "pop",
             "vldm", "vldmia", "vldmdb", "vstm", "vstmia", "vstmdb", "vpush", "vpop")
_BRANCHES = ("b", "bx", "cbz", "cbnz", "le", "letp", "wls", "wlstp", "dls", "dlstp")
_CALLS = ("bl", "blx")
_FLOAT_MAC = ("vmla", "vmls", "vnmla", "vnmls", "vfma", "vfms", "vfnma", "vfnms")


def core_of(cpu_flags: list[str]) -> str | None:
    """The core name of a board's -mcpu flag, when there is a cycle table for it."""
    for flag in cpu_flags:
        if flag.startswith("-mcpu=") and flag[6:] in CORES:
            return flag[6:]
    return None


def _base(mnemonic: str) -> str:
    """The mnemonic without width qualifier, data type and condition (`ldr.w` -> `ldr`,
    `bne.n` -> `b`, `vmla.f32` -> `vmla`, `movne` -> `mov`)."""
    name = mnemonic.split(".", 1)[0]
    if name.startswith("it") and set(name[2:]) <= {"t", "e"}:
        return "it"
    for condition in _CONDITIONS:
        if name.endswith(condition) and len(name) > len(condition):
            stem = name[: -len(condition)]
            if stem in _BRANCHES or stem in _CALLS or stem in _LOADS or stem in _STORES or stem in (
                    "mov", "add", "sub", "cmp", "str", "ldr", "orr", "and", "eor", "bx", "pop"):
                return stem
    return name


def _registers(operands: str) -> int:
    """Words moved by a register list such as `{r4, r5, lr}` or `{d8-d15}`."""
    inside = operands[operands.find("{") + 1: operands.find("}")]
    count = 0
    for item in filter(None, (part.strip() for part in inside.split(","))):
        width = 2 if item.startswith("d") else 1
        if "-" in item:
            low, high = (int(end.strip()[1:]) for end in item.split("-"))
            count += width * (high - low + 1)
        else:
            count += width
    return count


def instruction_cycles(mnemonic: str, operands: str, timing: CoreTimings,
                       after_load: bool) -> tuple[int, int]:
    """(cost, taken penalty) of one instruction; after_load: the previous one was a load."""
    base = _base(mnemonic)
    if base in _BRANCHES or base == "tbb" or base == "tbh" or base in _CALLS:
        cost = timing.table_branch if base in ("tbb", "tbh") else (
            timing.call if base in _CALLS else 1)
        return cost, 0 if base in ("le", "letp") and timing.vector else timing.refill
    if base in _MULTIPLE:
        return timing.multiple_base + _registers(operands), timing.refill
    if base in ("ldrd", "strd"):
        return timing.pair, 0
    if base in _LOADS:
        return (timing.load_pipelined if after_load else timing.load), timing.refill
    if base in _STORES:
        if after_load:
            return timing.load_pipelined, 0
        register_offset = re.search(r"\[\w+, (?:r\d+|ip|lr|sl|fp)", operands)
        return (timing.store_register if register_offset else timing.store), 0
    return _arithmetic(base, operands, timing), timing.refill if "pc" in _destination(
        operands) else 0


def _destination(operands: str) -> str:
    return operands.split(",", 1)[0].strip()


def _arithmetic(base: str, operands: str, timing: CoreTimings) -> int:
    if timing.vector and base.startswith("v") and re.search(r"\bq\d", operands):
        return timing.vector
    if base in ("sdiv", "udiv"):
        return timing.divide
    if base in ("mla", "mls"):
        return timing.multiply_accumulate
    if base in ("smull", "umull"):
        return timing.multiply_long
    if base in ("smlal", "umlal"):
        return timing.multiply_long_accumulate
    if base in _FLOAT_MAC:
        return timing.float_mac
    if base in ("vdiv", "vsqrt"):
        return timing.float_divide
    return 1


def cycle_table(elf: Path, objdump: str, functions: dict[str, tuple[int, int]],
                core: str) -> list[tuple[int, int, int]]:
    """(address, cost, taken penalty) of every instruction inside a function of `elf`."""
    timing = CORES[core]
    listing = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(elf)],
                             capture_output=True, text=True, check=True).stdout
    ranges = sorted((start, start + size) for start, size in functions.values() if size)
    rows, after_load, index = [], False, 0
    for line in listing.splitlines():
        match = _LINE.match(line)
        if match is None:
            after_load = False
            continue
        address = int(match.group(1), 16)
        while index < len(ranges) and ranges[index][1] <= address:
            index += 1
        if index == len(ranges) or address < ranges[index][0]:
            continue  # data inside .text (the model, tables), never executed
        mnemonic, operands = match.group(2), match.group(3) or ""
        cost, taken = instruction_cycles(mnemonic, operands, timing, after_load)
        after_load = _base(mnemonic) in _LOADS and "pc" not in _destination(operands)
        rows.append((address, cost, taken))
    return rows


def write_cycle_table(rows: list[tuple[int, int, int]], path: Path) -> None:
    """The plugin's input: one `address cost taken` line (hex address) per instruction."""
    path.write_text("".join(f"{a:x} {c} {t}\n" for a, c, t in rows))
