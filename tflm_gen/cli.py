"""Command line: one click group; every user error becomes one line on stderr and exit 2."""

from __future__ import annotations

import sys

import click

from tflm_gen import __version__
from tflm_gen.errors import TflmGenError


class _Group(click.Group):
    """Turns TflmGenError from any command into a one-line message and exit status 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except TflmGenError as error:
            click.echo(f"tflm-gen: error: {error}", err=True)
            sys.exit(2)


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="tflm-gen")
def main() -> None:
    """Generate, run and verify C projects from TensorFlow Lite models."""


def _register_commands() -> None:
    # Each stage module owns its click command; the CLI only gathers them.
    from tflm_gen.bench import bench_command
    from tflm_gen.commands import (
        plan_command,
        project_command,
        run_command,
        targets_command,
        verify_command,
    )
    from tflm_gen.inspect import inspect_command
    from tflm_gen.ops_table import ops_command

    for command in (inspect_command, project_command, run_command, verify_command,
                    targets_command, bench_command, plan_command, ops_command):
        main.add_command(command)


_register_commands()


if __name__ == "__main__":
    main()
