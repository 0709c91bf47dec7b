"""Click commands for the generate / run / verify verbs (inspect lives in inspect.py)."""

from __future__ import annotations

import time
from pathlib import Path

import click
import numpy as np

from tflm_gen.archive import zip_tree
from tflm_gen.boards import board_names, list_boards, load_board
from tflm_gen.errors import InputError, ModelError
from tflm_gen.host import HostInterpreter
from tflm_gen.inputs import random_inputs
from tflm_gen.model.reader import read_model
from tflm_gen.model_api import default_name
from tflm_gen.optimize import device_model
from tflm_gen.options import ARENA_BYTES, tags_option, target_choice
from tflm_gen.oracle import ORACLES
from tflm_gen.output import save_outputs, write_file, write_tree
from tflm_gen.project import GenerateOptions, generate, named_target
from tflm_gen.qemu import qemu_targets
from tflm_gen.samples import load_samples
from tflm_gen.targets import board_summary, list_targets, load_target, project_name
from tflm_gen.verify import report_lines, verify


def _model_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ModelError(f"cannot read model {path}: {error.strerror}") from None


def _load_inputs(paths: tuple[str, ...]) -> list[np.ndarray]:
    arrays = []
    for path in paths:
        try:
            arrays.append(np.load(path, allow_pickle=False))
        except (OSError, ValueError) as error:
            raise InputError(f"cannot read input {path}: {error}") from None
    return arrays


@click.command("project")
@click.option("--model", "model_paths", required=True, multiple=True,
              type=click.Path(dir_okay=False),
              help="the model; give it several times for models sharing one arena")
@click.option("--target", type=target_choice(), default="make", show_default=True,
              help="see `tflm-gen targets`")
@tags_option()
@click.option("--name", help="prefix of the model's files and C API (<name>.h, <name>_init, ...); "
              "default: the model file's name made a C identifier")
@click.option("--board", type=click.Choice(board_names()), default=None,
              help="a concrete board: for keil, stm32cube or platformio its startup code, linker "
                   "script and console; for arduino its sizes and FQBN (`tflm-gen targets`); a "
                   "model or arena too big for it is refused")
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False))
@click.option("--zip", "as_zip", is_flag=True,
              help="write the project as one NAME.zip in the output folder (Arduino: the "
                   "file \"Add .ZIP Library\" imports)")
@click.option("--force", is_flag=True,
              help="accepted for old scripts; tflm-gen never removes files it did not write")
def project_command(model_paths, target, tags, name, board, as_zip, out_dir, force):
    """Generate a self-contained C project for the model(s)."""
    models = [_model_bytes(path) for path in model_paths]
    name = default_name(Path(model_paths[0]).stem) if name is None else name
    options = GenerateOptions(target, tags, extra_models=tuple(models[1:]), name=name,
                              board=board)
    files = generate(models[0], options)
    count = len(files)
    if as_zip:
        top = project_name(named_target(load_target(target), name), name)
        files = {f"{top}.zip": zip_tree(files, top)}
    write_tree(files, out_dir, force)
    shown = f"{out_dir}/{next(iter(files))}" if as_zip else out_dir
    click.echo(f"wrote {count} files to {shown} (target {target})")
    for note in load_target(target).notes(tags):
        click.echo(f"note: {note}")


@click.command("run")
@click.argument("model_path", type=click.Path(dir_okay=False))
@click.option("-i", "--input", "input_paths", multiple=True, help=".npy file per model input")
@click.option("-o", "--output", "output_path", help="write outputs to this .npz")
@tags_option("comma-separated kernel/runtime tags")
@click.option("--arena-bytes", type=ARENA_BYTES, default=None, help="run with exactly this arena")
@click.option("--target", type=click.Choice(["host", *qemu_targets()]), default="host",
              show_default=True,
              help="host, or a qemu-* target (cross-compiled, run under QEMU)")
def run_command(model_path, input_paths, output_path, tags, arena_bytes, target):
    """Run MODEL once on the host-compiled C runtime, or on --target under QEMU."""
    if target != "host":
        from tflm_gen.qemu import run_on_target_command

        return run_on_target_command(_model_bytes(model_path), target, tags,
                                     _load_inputs(input_paths), output_path, arena_bytes)
    model, _ = device_model(_model_bytes(model_path))
    interpreter = HostInterpreter(model, tags, arena_bytes)
    inputs = _load_inputs(input_paths) if input_paths else random_inputs(interpreter.model)
    start = time.perf_counter()
    outputs = interpreter.run(inputs)
    elapsed = (time.perf_counter() - start) * 1e6
    for index, array in enumerate(outputs):
        click.echo(f"output_{index}: {array.dtype} {list(array.shape)} "
                   f"min {array.min()} max {array.max()}")
    click.echo(f"arena {interpreter.arena_used_bytes} bytes; invoke {elapsed:.0f} us")
    if output_path:
        save_outputs(output_path, outputs)


@click.command("verify")
@click.argument("model_path", type=click.Path(dir_okay=False))
@click.option("--against", type=click.Choice(("auto", *ORACLES)), default="auto",
              show_default=True, help="auto: tflm, or litert for ops TFLM cannot run")
@click.option("--runs", type=click.IntRange(1, 1000), default=3, show_default=True,
              help="invokes on seeded random inputs (when no -i is given)")
@click.option("-i", "--input", "input_paths", multiple=True,
              help="your own inputs: one .npy per model input, a .npz, or a folder of them; "
                   "a leading sample axis holds several samples (README: your own data)")
@click.option("--per-op", is_flag=True,
              help="also compare every intermediate tensor and name the first operator "
                   "whose output differs")
@tags_option("comma-separated kernel/runtime tags")
def verify_command(model_path, against, runs, input_paths, per_op, tags):
    """Compare the C runtime with the reference runtime; exit 0 only when bit-exact."""
    data = _model_bytes(model_path)
    samples = load_samples(input_paths, read_model(data)) if input_paths else None
    report = verify(data, against, runs, tags, samples, per_op)
    if report.against != "tflm":  # the default oracle goes unsaid; another one is explained
        click.echo(f"oracle: {report.against} ({report.reason})")
    for line in report_lines(report, read_model(data)):
        click.echo(line)
    if report.per_op_report is None and not report.bit_exact:
        click.echo("rerun with --per-op to name the first operator whose output differs")
    raise SystemExit(0 if report.passed else 1)


@click.command("plan")
@click.argument("model_path", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output_path", required=True, type=click.Path(dir_okay=False))
def plan_command(model_path, output_path):
    """Write MODEL with an offline memory plan (and flash requantisation) embedded."""
    planned, plan = device_model(_model_bytes(model_path))
    write_file(output_path, planned)
    click.echo(f"head {plan.head_bytes} bytes (lower bound {plan.lower_bound_bytes}); "
               f"wrote {output_path}")


@click.command("targets")
def targets_command():
    """List the project targets."""
    for name in list_targets():
        click.echo(f"{name:12} {load_target(name).description}")
    click.echo("boards (--board, with keil, stm32cube and platformio):")
    for name in list_boards():
        click.echo(f"  {name:14} {load_board(name)['description']}")
    for name in list_targets():  # targets with a table of their own (Arduino's)
        own = load_target(name).boards
        if own:
            click.echo(f"{name} boards (--board, with {name}; sizes checked at generation):")
        for board, facts in sorted(own.items()):
            click.echo(f"  {board:14} {board_summary(facts)}")
