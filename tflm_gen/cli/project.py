"""`tflm-gen project`: generate a project (tflm_gen/project.py) and write it; the command
line it was run with is recorded in the project's README."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from tflm_gen.archive import zip_tree
from tflm_gen.boards import board_names
from tflm_gen.inspect import read_model_bytes
from tflm_gen.model_api import default_name
from tflm_gen.options import (
    compress_option,
    memory_option,
    tags_option,
    target_choice,
    weights_option,
)
from tflm_gen.output import write_tree
from tflm_gen.project import GenerateOptions, generate, named_target
from tflm_gen.readme import README, next_command
from tflm_gen.targets import load_target, project_name
from tflm_gen.text import examples


@click.command("project", epilog=examples(
    "tflm-gen project --model model.tflite -o out && make -C out test",
    "tflm-gen project --model model.tflite --target arduino --tags cmsis -o TflmModel",
    "tflm-gen project --model a.tflite --model b.tflite -o shared_arena",
    "tflm-gen project --model person_detect.tflite --memory small -o out"))
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
@weights_option()
@memory_option()
@compress_option()
def project_command(model_paths, target, tags, name, board, as_zip, out_dir, force, weights,
                    memory, compress):
    """Generate a self-contained C project for the model(s)."""
    models = [read_model_bytes(path) for path in model_paths]
    name = default_name(Path(model_paths[0]).stem) if name is None else name
    options = GenerateOptions(target, tags, extra_models=tuple(models[1:]), name=name,
                              command=command_line(click.get_current_context()),
                              board=board, weights=weights, memory=memory,
                              compress=compress)
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
