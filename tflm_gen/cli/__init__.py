"""Command line: one click group; every user error becomes one line on stderr and exit 2."""

from __future__ import annotations

import errno
import os

import click

from tflm_gen import __version__
from tflm_gen.errors import TflmGenError
from tflm_gen.text import one_line

# Set to 1 to see the traceback of an unexpected error instead of its one-line summary.
TRACEBACK_VARIABLE = "TFLM_GEN_TRACEBACK"


class OneLineError(click.ClickException):
    """Any failure, shown as `tflm-gen: error: ...` on one line; exit status 2."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"tflm-gen: error: {one_line(self.message)}", err=True)


def os_error_text(error: OSError) -> str:
    """`path: reason` for an OSError that escaped (an output path, a cache folder)."""
    reason = error.strerror or str(error)
    return f"{error.filename}: {reason}" if error.filename else reason


def _usage_text(error: click.ClickException) -> str:
    text = error.format_message()
    context = getattr(error, "ctx", None)
    if isinstance(error, click.UsageError) and context is not None:
        text = f"{text.rstrip('.')} (see `{context.command_path} --help`)"
    return text


def _one_line_errors(call):
    """Runs call(); whatever a user can cause leaves as OneLineError (click's usage errors
    included, which click would otherwise print as three lines)."""
    try:
        return call()
    except (click.exceptions.Exit, click.exceptions.Abort, OneLineError):
        raise
    except click.exceptions.NoArgsIsHelpError as error:  # bare `tflm-gen`: asking for help
        click.echo(error.ctx.get_help())
        raise click.exceptions.Exit(0) from None
    except click.ClickException as error:
        raise OneLineError(_usage_text(error)) from None
    except TflmGenError as error:
        raise OneLineError(str(error)) from None
    except OSError as error:
        if error.errno == errno.EPIPE:  # click quiets a closed pipe (`| head`) itself
            raise
        raise OneLineError(os_error_text(error)) from None
    except MemoryError:
        raise OneLineError("out of memory") from None
    except Exception as error:
        if os.environ.get(TRACEBACK_VARIABLE) == "1":
            raise
        raise OneLineError(f"internal error: {type(error).__name__}: {error} (please report "
                           f"it; {TRACEBACK_VARIABLE}=1 shows the traceback)") from None


class _Group(click.Group):
    """Parses and runs every command under _one_line_errors."""

    def make_context(self, info_name, args, parent=None, **extra):
        return _one_line_errors(lambda: super(_Group, self).make_context(
            info_name, args, parent, **extra))

    def invoke(self, ctx):
        return _one_line_errors(lambda: super(_Group, self).invoke(ctx))


@click.group(cls=_Group, epilog="""Examples:

\b
  tflm-gen doctor                     which compilers and emulators are installed
  tflm-gen inspect model.tflite       what the model holds and whether it runs
  tflm-gen verify model.tflite        bit-exact with TFLM?
  tflm-gen project --model model.tflite -o out && make -C out test

Every command has its own --help with examples.""")
@click.version_option(__version__, prog_name="tflm-gen")
def main() -> None:
    """Generate, run and verify C projects from TensorFlow Lite models."""


def _register_commands() -> None:
    # The commands live in tflm_gen/cli/, one module per command group, over stage
    # functions that return data; the group only gathers them.
    from tflm_gen.cli.bench import bench_command
    from tflm_gen.cli.doctor import doctor_command
    from tflm_gen.cli.inspect import inspect_command
    from tflm_gen.cli.listing import tags_command, targets_command
    from tflm_gen.cli.models import partition_command, plan_command
    from tflm_gen.cli.ops import ops_command
    from tflm_gen.cli.project import project_command
    from tflm_gen.cli.prune import prune_command
    from tflm_gen.cli.report import report_command
    from tflm_gen.cli.run import run_command
    from tflm_gen.cli.verify import verify_command

    for command in (inspect_command, project_command, run_command, verify_command,
                    targets_command, tags_command, bench_command, plan_command, partition_command,
                    ops_command, prune_command,
                    report_command, doctor_command):
        main.add_command(command)


_register_commands()
