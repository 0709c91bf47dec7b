"""Click commands for the generate / run / verify verbs (inspect lives in inspect.py)."""

from __future__ import annotations

import shlex
import textwrap
import time
from pathlib import Path

import click
import numpy as np

from tflm_gen.archive import zip_tree
from tflm_gen.boards import board_names, list_boards, load_board
from tflm_gen.errors import InputError, ModelError
from tflm_gen.host import HostInterpreter
from tflm_gen.inputs import random_inputs
from tflm_gen.kernels import known_tags, tag_description
from tflm_gen.model import ir
from tflm_gen.model.reader import read_model
from tflm_gen.model_api import default_name
from tflm_gen.optimize import device_model
from tflm_gen.options import ARENA_BYTES, tags_option, target_choice
from tflm_gen.oracle import ORACLES
from tflm_gen.output import save_outputs, write_file, write_tree
from tflm_gen.project import GenerateOptions, generate, named_target
from tflm_gen.qemu import qemu_targets
from tflm_gen.readme import README, next_command
from tflm_gen.samples import load_samples
from tflm_gen.table import format_table
from tflm_gen.targets import board_summary, list_targets, load_target, project_name
from tflm_gen.text import examples, printable
from tflm_gen.verify import report_lines, verify


def _model_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ModelError(f"cannot read model {path}: {error.strerror}") from None


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


@click.command("project", epilog=examples(
    "tflm-gen project --model model.tflite -o out && make -C out test",
    "tflm-gen project --model model.tflite --target arduino --tags cmsis -o TflmModel",
    "tflm-gen project --model a.tflite --model b.tflite -o shared_arena"))
@click.option("--model", "model_paths", required=True, multiple=True,
              type=click.Path(dir_okay=False),
              help="the model; give it several times for models sharing one arena")
@click.option("--target", type=target_choice(), default="make", show_default=True,
              help="the project kind (`tflm-gen targets` describes each)")
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
                              command=command_line(click.get_current_context()),
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
    if as_zip:
        ide = ("add the .zip in the Arduino IDE (Sketch > Include Library > Add .ZIP Library), "
               "or unzip it" if target == "arduino" else "unzip it")
        click.echo(f"next: {ide}; {top}/{README} inside says how to build it")
        return
    click.echo(f"next: {next_command(load_target(target), out_dir, sorted(files))}")
    click.echo(f"      (see {Path(out_dir) / README})")


def _option_words(option: click.Option, value) -> list[str]:
    """How `value` of `option` is written on a command line (nothing for its default)."""
    flag = max(option.opts, key=len)
    if option.is_flag:
        return [flag] if value else []
    if isinstance(value, tuple) and option.multiple:
        return [word for each in value for word in (flag, str(each))]
    if isinstance(value, tuple):  # a list type such as --tags
        return [flag, ",".join(value)] if value else []
    return [] if value is None or value == option.default else [flag, str(value)]


def command_line(context: click.Context) -> str:
    """The command being run, as the user could type it again: every option they gave
    (defaults left out), in the command's order."""
    words = ["tflm-gen", context.info_name]
    for parameter in context.command.params:
        if isinstance(parameter, click.Option):
            words += _option_words(parameter, context.params[parameter.name])
    return shlex.join(words)


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
def run_command(model_path, input_paths, output_path, tags, arena_bytes, target):
    """Run MODEL once on the host-compiled C runtime, or on --target under QEMU."""
    data = _model_bytes(model_path)
    if target != "host":
        return _run_on_target(data, target, tags, input_paths, output_path, arena_bytes)
    model, _ = device_model(data, tags)
    interpreter = HostInterpreter(model, tags, arena_bytes)
    inputs = _run_inputs(input_paths, interpreter.model)
    start = time.perf_counter()
    outputs = interpreter.run(inputs)
    elapsed = (time.perf_counter() - start) * 1e6
    _report_outputs(outputs, interpreter.model, output_path)
    click.echo(f"arena {interpreter.arena_used_bytes:,} bytes; invoke {elapsed:,.0f} us")
    if not input_paths:
        click.echo(RANDOM_INPUTS_NOTE, err=True)


def _run_on_target(data: bytes, target: str, tags, input_paths, output_path, arena_bytes):
    """`run --target`: the host run's report, from the emulated board."""
    from tflm_gen.qemu import run_on_target

    if arena_bytes is not None:
        raise InputError("--arena-bytes applies to the host run; a target uses the exact arena")
    model = read_model(data)
    result = run_on_target(data, target, _run_inputs(input_paths, model), tags)
    _report_outputs(result.outputs, model, output_path)
    same = "equal to" if result.matches_host else "DIFFERENT from"
    click.echo(f"arena {result.arena_bytes:,} bytes; {target} outputs {same} the host run's")
    if not input_paths:
        click.echo(RANDOM_INPUTS_NOTE, err=True)


@click.command("verify", epilog=examples(
    "tflm-gen verify model.tflite",
    "tflm-gen verify model.tflite --runs 20 --tags cmsis",
    "tflm-gen verify model.tflite -i my_samples/ --per-op"))
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
@tags_option()
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


@click.command("plan", epilog=examples("tflm-gen plan model.tflite -o model_planned.tflite"))
@click.argument("model_path", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output_path", required=True, type=click.Path(dir_okay=False))
def plan_command(model_path, output_path):
    """Write MODEL with an offline memory plan (and flash requantisation) embedded."""
    planned, plan = device_model(_model_bytes(model_path))
    write_file(output_path, planned)
    click.echo(f"head {plan.head_bytes} bytes (op-by-op bound {plan.lower_bound_bytes}); "
               f"wrote {output_path}")


@click.command("targets", epilog=examples("tflm-gen targets",
                                           "tflm-gen project --model m.tflite --target cmake -o out"))
def targets_command():
    """List the project targets, the tags each implies and what each is."""
    rows = [[name, ",".join(load_target(name).tags) or "-", load_target(name).description]
            for name in list_targets()]
    click.echo(format_table(["target", "tags", "description"], rows))
    click.echo("\nboards (--board, with keil, stm32cube and platformio):")
    click.echo(format_table(["board", "description"],
                            [[name, load_board(name)["description"]] for name in list_boards()]))
    for name in list_targets():  # targets with a table of their own (Arduino's)
        own = load_target(name).boards
        if own:
            click.echo(f"\n{name} boards (--board, with {name}; sizes checked at generation):")
            click.echo(format_table(["board", "summary"], [[board, board_summary(facts)]
                                                           for board, facts in sorted(own.items())]))


@click.command("tags", epilog=examples("tflm-gen tags",
                                        "tflm-gen project --model m.tflite --target make "
                                        "--tags cmsis -o out"))
def tags_command():
    """Describe every tag: what it replaces, and which targets imply it."""
    for tag in known_tags():
        implied = [name for name in list_targets() if tag in load_target(name).tags]
        click.echo(tag)
        click.echo(textwrap.fill(tag_description(tag), 88, initial_indent="    ",
                                 subsequent_indent="    "))
        click.echo(f"    implied by the targets: {', '.join(implied) or 'none'}")
    click.echo("\nGive tags as --tags a,b; where two replace the same file, the later wins.")


@click.command("partition", epilog=examples(
    "tflm-gen partition model.tflite --accelerator conv_only -o model_npu.tflite",
    "tflm-gen partition model.tflite --accelerator my_npu.toml --cut conv3_out -o out.tflite"))
@click.argument("model_path", type=click.Path(dir_okay=False))
@click.option("--accelerator", "spec", required=True,
              help="an accelerators/*.toml file, or a shipped one's name (conv_only, "
                   "all_but_softmax, small_pool)")
@click.option("-o", "--output", "output_path", required=True, type=click.Path(dir_okay=False))
@click.option("--cut", "cuts", multiple=True, help="a tensor name the groups may not span")
def partition_command(model_path, spec, output_path, cuts):
    """Move the ops an accelerator runs into custom ops, one per maximal group."""
    from tflm_gen.accelerator import load_accelerator
    from tflm_gen.model.writer import write_model
    from tflm_gen.partition import partition_model, partition_summary, plan_partition, summary_line

    model = read_model(_model_bytes(model_path))
    accelerator = load_accelerator(spec)
    plan = plan_partition(model, accelerator, tuple(cuts))
    write_file(output_path, write_model(partition_model(model, accelerator, plan)))
    summary = partition_summary(model, plan, accelerator)
    click.echo(f"{summary_line(summary)}; wrote {output_path}")
