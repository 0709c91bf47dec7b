"""`tflm-gen run`: one invoke on the host-compiled runtime or on an emulated board."""

from __future__ import annotations

import time

import click
import numpy as np

from tflm_gen.errors import InputError
from tflm_gen.host import device_interpreter
from tflm_gen.inputs import random_inputs
from tflm_gen.inspect import read_model_bytes
from tflm_gen.model import ir
from tflm_gen.model.reader import read_model
from tflm_gen.optimize import supported_device_model
from tflm_gen.options import (
    ARENA_BYTES,
    compress_option,
    memory_option,
    tags_option,
    weights_option,
)
from tflm_gen.output import save_outputs
from tflm_gen.qemu import qemu_targets
from tflm_gen.samples import load_samples
from tflm_gen.text import examples, printable

RANDOM_INPUTS_NOTE = ("note: no -i given: the run used random inputs (seed 0); give one .npy "
                      "per input or an .npz keyed by input name")


def _run_inputs(paths: tuple[str, ...], model: ir.Model) -> list[np.ndarray]:
    """The one sample `run -i` names, or seeded random inputs (RANDOM_INPUTS_NOTE says so
    on stderr once the run succeeded: a failure stays one line)."""
    if not paths:
        return random_inputs(model)
    samples = load_samples(paths, model)
    if len(samples) != 1:
        raise InputError(f"the inputs hold {len(samples)} samples; `run` takes one "
                         "(`verify -i` takes several)")
    return samples[0]


def _report_outputs(outputs: list[np.ndarray], model: ir.Model, output_path) -> None:
    names = [model.subgraph.tensors[index].name for index in model.subgraph.outputs]
    for index, (array, name) in enumerate(zip(outputs, names)):
        click.echo(f"output_{index} '{printable(name)}': {array.dtype} {list(array.shape)} "
                   f"min {array.min()} max {array.max()}")
    if output_path:
        save_outputs(output_path, outputs, names)


@click.command("run", epilog=examples(
    "tflm-gen run model.tflite",
    "tflm-gen run model.tflite -i x.npy -o y.npz",
    "tflm-gen run model.tflite -i inputs.npz --target qemu-cortex-m4 --tags cmsis"))
@click.argument("model_path", type=click.Path(dir_okay=False))
@click.option("-i", "--input", "input_paths", multiple=True,
              help="one .npy per model input, or one .npz keyed by input tensor name "
                   "(or input_0, ...); random inputs when none is given")
@click.option("-o", "--output", "output_path",
              help="write the outputs to this .npz, keyed by output tensor name and output_0, ...")
@tags_option()
@click.option("--arena-bytes", type=ARENA_BYTES, default=None, help="run with exactly this arena")
@click.option("--target", type=click.Choice(["host", *qemu_targets()]), default="host",
              show_default=True,
              help="host, or a qemu-* target (cross-compiled, run under QEMU)")
@weights_option()
@memory_option()
@compress_option()
def run_command(model_path, input_paths, output_path, tags, arena_bytes, target, weights, memory,
                compress):
    """Run MODEL once on the host-compiled C runtime, or on --target under QEMU."""
    data = read_model_bytes(model_path)
    if target != "host":
        return _run_on_target(data, target, tags, input_paths, output_path, arena_bytes, weights,
                              memory, compress)
    model, _ = supported_device_model(data, tags, memory, compress)
    interpreter = device_interpreter(model, tags, arena_bytes, weights)
    named = read_model(model)  # the mini flatbuffer keeps no tensor names
    inputs = _run_inputs(input_paths, named)
    start = time.perf_counter()
    outputs = interpreter.run(inputs)
    elapsed = (time.perf_counter() - start) * 1e6
    _report_outputs(outputs, named, output_path)
    click.echo(f"arena {interpreter.arena_used_bytes:,} bytes; invoke {elapsed:,.0f} us")
    if not input_paths:
        click.echo(RANDOM_INPUTS_NOTE, err=True)


def _run_on_target(data: bytes, target: str, tags, input_paths, output_path, arena_bytes,
                   weights: str, memory: str, compress: bool):
    """`run --target`: the host run's report, from the emulated board."""
    from tflm_gen.qemu import run_on_target

    if arena_bytes is not None:
        raise InputError("--arena-bytes applies to the host run; a target uses the exact arena")
    model = read_model(data)
    result = run_on_target(data, target, _run_inputs(input_paths, model), tags, weights, memory,
                           compress)
    _report_outputs(result.outputs, model, output_path)
    same = "equal to" if result.matches_host else "DIFFERENT from"
    click.echo(f"arena {result.arena_bytes:,} bytes; {target} outputs {same} the host run's")
    if not input_paths:
        click.echo(RANDOM_INPUTS_NOTE, err=True)
