"""Which offline layout records (tflm_gen/layout.py) a core's build of the cmsis kernels
reads, so that a project for a known core carries only those in flash (issue #18).

The kernels choose their path by instruction set at compile time (kernels_c/cmsis/
cmsis_simd.h): DSP (Cortex-M4/M7/M33), MVE (Cortex-M55/M85) or the portable C of cores
with neither (Cortex-M0/M3, RISC-V).  A project for a board knows its -mcpu; the host run,
`verify` and the generic targets (make, cmake, an IDE project without --board) may be
built for any core, so they keep every record (core None), as before: nothing gets slower.

On a DSP core, and on a core with neither (whose portable C reads the same records), every
path that can run a FULLY_CONNECTED or CONV_2D node with a record reads its int16 stream
(the assembly on the device, the same stream in C in the project's host build), so the
stream replaces the filter's int8 bytes (layout.IN_FILTER): on a Cortex-M3 kws takes
12.9 M instructions with them (20.4 M without, 13.5 M with the int8 copy kept beside) in
75 KB of model (59 KB without, 115 KB beside).  The portable C gets no depthwise record:
micro_speech was 2.4x slower with them.  MVE's conv loops read the int8 filter and the
record's folded constants only: its records keep nothing else (layout.CONV_FOLDED)."""

from __future__ import annotations

from tflm_gen import layout

DSP, MVE, PORTABLE = "dsp", "mve", "portable"
_ISA = {"cortex-m0": PORTABLE, "cortex-m0plus": PORTABLE, "cortex-m1": PORTABLE,
        "cortex-m3": PORTABLE, "cortex-m4": DSP, "cortex-m7": DSP, "cortex-m33": DSP,
        "cortex-m35p": DSP, "cortex-m55": MVE, "cortex-m85": MVE}
# The instruction sets whose build reads each kind (grep tflm_node_layout in
# kernels_c/cmsis/*.c).  A kind missing here is kept on every core (a new record is never
# lost, only its flash not yet spared).
READ_BY = {
    layout.CONV_INT16_PAIRS: {DSP, MVE, PORTABLE},  # MVE: the folded constants only
    layout.CONV_INT16_PAIRS_REQUANT: {DSP, MVE, PORTABLE},
    layout.CONV_PAIR_RECORDS: {DSP, MVE, PORTABLE},
    layout.CONV_RGB_BAND: {DSP},  # chosen for a DSP build only (layout.embed_layout)
    layout.DW_TAP_PAIRS: {DSP},  # depthwise_conv.c reads no record under CMSIS_MVE
    layout.DW_ROW_QUADS: {DSP},
    layout.FC_INT16_QUADS: {DSP, PORTABLE},  # fully_connected.c: reads_layout() is 0 under MVE
    layout.FC_SPARSE_FOLDED: {DSP},  # the row-sparse assembly only
}


def core_of_flags(cpu_flags: list[str]) -> str | None:
    """The core a board's compiler flags build for: its -mcpu (without extensions, `+nodsp`
    kept as a core without DSP), "riscv" for a -march=rv..., None when neither says."""
    for flag in cpu_flags:
        if flag.startswith("-mcpu="):
            name, *extensions = flag[len("-mcpu="):].split("+")
            return "cortex-m3" if "nodsp" in extensions and name in _ISA else name
        if flag.startswith("-march=rv"):
            return "riscv"
    return None


def core_of_target(target) -> str | None:
    """The core of a target whose board is fixed (a QEMU target, a --board port), else
    None: a generic project may run on any core."""
    board = target.values.get("board") if target.values else None
    return core_of_flags(board.get("cpu_flags", [])) if isinstance(board, dict) else None


def isa_of(core: str | None) -> str | None:
    """DSP, MVE or PORTABLE for a known core; None for no core or an unknown one."""
    if core == "riscv":
        return PORTABLE
    return _ISA.get(core) if core else None


def keeps(core: str | None):
    """The record-kind filter of embed_layout for a build on `core` (None: keep all)."""
    isa = isa_of(core)
    if isa is None:
        return None
    return lambda kind: isa in READ_BY.get(kind, {isa})


def record_form(core: str | None) -> str:
    """embed_layout's form for a build on `core`: on DSP every path reads the streams (so
    they replace the int8 filters), MVE reads the conv records' folded constants only."""
    return {DSP: "in_filter", PORTABLE: "in_filter", MVE: "folded"}.get(isa_of(core), "whole")
