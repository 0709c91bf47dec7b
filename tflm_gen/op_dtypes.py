"""TFLM's (op, input dtype) matrix beside tflm-gen's.

TFLM's side is tflm_op_dtypes.tsv beside this module, written by reading TFLM's kernel
sources (its header says how); tflm-gen's side is the `types:` of each kernel's marker
line (tflm_gen.kernels).  A pair is keyed by the dtype of the tensor that selects the
kernel (tflm_gen.support.activation_tensor).  Each TFLM row says what tflm-gen does with
the pair: "run", "refuse" (a documented gap, refused at generation) or "pending" (an op
another branch implements; compared once a kernel declares it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

TFLM_DTYPES_FILE = Path(__file__).with_name("tflm_op_dtypes.tsv")
STATUSES = ("run", "refuse", "pending")


@dataclass(frozen=True)
class TflmPair:
    op: str  # BuiltinOperator name
    dtype: str  # dtype of the kernel-selecting tensor, "none" when the op has no tensors
    tflm_kernel: str  # the TFLM source file(s) it was read from
    tflm_gen: str  # one of STATUSES
    notes: str  # conditions TFLM adds (zero points, companion types) or why we refuse


def read_pairs(path: Path = TFLM_DTYPES_FILE) -> list[TflmPair]:
    """The rows of the TSV (comment lines start with #; the first other line is the header)."""
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    pairs = []
    for line in lines[1:]:
        fields = line.split("\t")
        if len(fields) != 5 or fields[3] not in STATUSES:
            raise ValueError(f"{path.name}: bad row {line!r}")
        pairs.append(TflmPair(*fields))
    return pairs


@cache
def tflm_pairs() -> tuple[TflmPair, ...]:
    return tuple(read_pairs())


def tflm_dtypes() -> dict[str, list[str]]:
    """Op -> the dtypes TFLM's kernel accepts, sorted."""
    table: dict[str, set[str]] = {}
    for pair in tflm_pairs():
        table.setdefault(pair.op, set()).add(pair.dtype)
    return {op: sorted(dtypes) for op, dtypes in table.items()}


def expected_pairs(ours: dict[str, set[str]]) -> set[tuple[str, str]]:
    """The pairs tflm-gen should run: "run" rows, and "pending" rows of ops that `ours`
    (op -> dtypes of our kernels) already has a kernel for."""
    return {(pair.op, pair.dtype) for pair in tflm_pairs()
            if pair.tflm_gen == "run" or (pair.tflm_gen == "pending" and pair.op in ours)}  # fmt: skip


def _grouped(pairs: set[tuple[str, str]], notes: dict[tuple[str, str], TflmPair]) -> list[str]:
    """"OP dtype,dtype (status: note)", one entry per op and documented reason."""
    groups: dict[tuple[str, str], list[str]] = {}
    for op, dtype in sorted(pairs):
        pair = notes.get((op, dtype))
        reason = f" ({pair.tflm_gen}: {pair.notes})" if pair and pair.tflm_gen != "run" else ""
        groups.setdefault((op, reason), []).append(dtype)
    return [f"{op} {','.join(dtypes)}{reason}" for (op, reason), dtypes in groups.items()]


def differences(ours: dict[str, set[str]], tflm_ops: frozenset[str]) -> dict[str, list[str]]:
    """Pairs where tflm-gen and TFLM differ, over TFLM's ops only (LiteRT-only ops have no
    TFLM side), grouped per op: "tflm_only" (TFLM runs them, we refuse; documented rows say
    why) and "tflm_gen_only" (we run them, TFLM refuses: always a defect)."""
    tflm = {(pair.op, pair.dtype) for pair in tflm_pairs()}
    mine = {(op, dtype) for op, dtypes in ours.items() if op in tflm_ops for dtype in dtypes}
    by_pair = {(pair.op, pair.dtype): pair for pair in tflm_pairs()}
    return {"tflm_only": _grouped(tflm - mine, by_pair),
            "tflm_gen_only": _grouped(mine - tflm, by_pair)}  # fmt: skip


def undocumented(ours: dict[str, set[str]], tflm_ops: frozenset[str]) -> list[str]:
    """Pairs that break "our matrix equals TFLM's": TFLM pairs we should run and do not,
    and pairs we run that TFLM refuses or that the table says we refuse."""
    expected = expected_pairs(ours)
    mine = {(op, dtype) for op, dtypes in ours.items() if op in tflm_ops for dtype in dtypes}
    return [f"{op} {dtype}: TFLM runs it, tflm-gen does not" for op, dtype in sorted(expected - mine)] + [
        f"{op} {dtype}: tflm-gen runs it, the table does not say so" for op, dtype in sorted(mine - expected)
    ]  # fmt: skip
