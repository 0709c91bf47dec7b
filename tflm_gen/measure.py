"""Measuring a project before it is assembled: the stage of generation that runs things.

The arena size comes from the host run of the generated C files when a host C compiler
exists, else from the arena model in Python (tflm_gen.arena, proven equal to the host run
for every supported model of the corpus and zoo), so IDE users need no compiler.  The
self-test's expected outputs come from the oracle (TFLM or LiteRT) when installed, else
from the host run; with neither, the project's self-test says it has no reference."""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field

import numpy as np

from tflm_gen import arena as arena_model
from tflm_gen.errors import ToolchainError
from tflm_gen.inputs import random_inputs
from tflm_gen.model import ir

NO_REFERENCE = "no reference runtime (neither the oracle nor a host C compiler was found)"
ROUNDS = 2  # invokes per model in a multitenant test, alternating between models


@dataclass(frozen=True)
class Measured:
    """What assembling a project needs from running things."""

    arena_bytes: int
    arena_source: str  # "host run" or "arena model"
    inputs: tuple[np.ndarray, ...] = field(compare=False)
    outputs: tuple[np.ndarray, ...] = field(compare=False)  # empty: no reference found
    expected_source: str = NO_REFERENCE
    rounds: tuple[tuple[tuple[np.ndarray, ...], ...], ...] = field(default=(), compare=False)
    # per model of a multitenant project: the inputs, then ROUNDS lists of outputs
    model_inputs: tuple[tuple[np.ndarray, ...], ...] = field(default=(), compare=False)


def host_compiler_available() -> bool:
    from tflm_gen.host import compiler

    try:
        compiler()
    except ToolchainError:
        return False
    return True


def _reference(original: bytes, host):
    """The runtime whose outputs a project embeds and its name: the oracle when installed,
    else the host run, else None."""
    from tflm_gen.oracle import ORACLE_NAMES, Oracle, choose_oracle, oracle_available

    against, _ = choose_oracle(original)
    if oracle_available(against):
        return Oracle(original, against), ORACLE_NAMES[against]
    if host is not None:
        return host, "tflm-gen host run"
    return None, NO_REFERENCE


def _hosts(devices: list[bytes], tags: tuple[str, ...]) -> list:
    from tflm_gen.host import HostInterpreter
    from tflm_gen.kernels import host_tags

    return [HostInterpreter(each, host_tags(tags)) for each in devices]


def shared_arena_bytes(sizes: list[tuple[int, int]]) -> int:
    """The arena several interpreters need, given each one's (used, tail) bytes, when each
    gets the space below the tails of the ones before it
    (tflm_interpreter_arena_shared_size): the largest, over the models, of the tails
    stacked above it plus its own peak."""
    tails = [tail for _, tail in sizes]
    return max(sum(tails[:k]) + used for k, (used, _) in enumerate(sizes))


def _modelled_sizes(models: list[ir.Model], tags: tuple[str, ...]) -> list[tuple[int, int]]:
    try:
        return [arena_model.arena_sizes(model, tags) for model in models]
    except arena_model.NotModelled as error:
        raise ToolchainError(f"no host C compiler found, and the arena of {error} is only "
                             "measured by a host run: install gcc or clang (or set CC)") from None


def _rounds(reference, inputs) -> tuple:
    return tuple(tuple(reference.run(list(inputs))) for _ in range(ROUNDS))


def measure(originals: list[bytes], devices: list[bytes], models: list[ir.Model],
            tags: tuple[str, ...], seed: int) -> Measured:
    """Arena size and reference outputs for the project of `devices` (the device models of
    `originals`, read as `models`), running the host build only where a compiler exists."""
    hosts = _hosts(devices, tags) if host_compiler_available() else None
    if hosts is not None:
        sizes = [(host.arena_used_bytes, host.arena_tail_bytes) for host in hosts]
        source = "host run"
    else:
        sizes, source = _modelled_sizes(models, tags), "arena model"
    inputs = tuple(random_inputs(models[0], seed))
    reference, expected_source = _reference(originals[0], hosts[0] if hosts else None)
    outputs = tuple(reference.run(list(inputs))) if reference is not None else ()
    if reference is None:  # the project still builds and runs; its self-test cannot compare
        sys.stderr.write("tflm-gen: note: neither the oracle (pip install tflm-gen[verify]) "
                         "nor a host C compiler was found: the self-test has no reference "
                         "output to compare\n")
    measured = Measured(shared_arena_bytes(sizes), source, inputs, outputs, expected_source)
    if len(devices) == 1:
        return measured
    return _multitenant(measured, originals, models, hosts, seed)


def _multitenant(measured: Measured, originals, models, hosts, seed: int) -> Measured:
    """The per-model inputs and per-invoke outputs of a multitenant self-test."""
    model_inputs, rounds = [], []
    for index, (original, model) in enumerate(zip(originals, models)):
        inputs = tuple(random_inputs(model, seed))
        reference, _ = _reference(original, hosts[index] if hosts else None)
        if reference is None:
            raise ToolchainError("a multitenant self-test needs reference outputs: install "
                                 "the oracle (pip install tflm-gen[verify]) or a C compiler")
        model_inputs.append(inputs)
        rounds.append(_rounds(reference, inputs))
    return dataclasses.replace(measured, rounds=tuple(rounds), model_inputs=tuple(model_inputs))
