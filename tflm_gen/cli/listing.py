"""`tflm-gen targets` and `tflm-gen tags`: what can be generated, described."""

from __future__ import annotations

import textwrap

import click

from tflm_gen.boards import list_boards, load_board
from tflm_gen.kernels import known_tags, tag_description
from tflm_gen.table import format_table
from tflm_gen.targets import board_summary, list_targets, load_target
from tflm_gen.text import examples


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
