"""Click parameter types shared by the commands: names that must exist (targets, tags) are
checked while parsing and listed in `--help`, so a path never reaches the file system."""

from __future__ import annotations

import functools

import click

from tflm_gen.compress import BALANCED, GOALS
from tflm_gen.host import MAX_ARENA_BYTES
from tflm_gen.kernels import known_tags
from tflm_gen.patches import DEFAULT_MEMORY, MEMORY_CHOICES
from tflm_gen.targets import list_targets
from tflm_gen.weights import MODES as WEIGHT_MODES


class TagList(click.ParamType):
    """A comma-separated list of known tags, e.g. `cmsis` or `cmsis,semihost`."""

    name = "TAGS"

    def convert(self, value, param, ctx) -> tuple[str, ...]:
        if isinstance(value, tuple):
            return value
        tags = tuple(tag.strip() for tag in (value or "").split(",") if tag.strip())
        unknown = [tag for tag in tags if tag not in known_tags()]
        if unknown:
            self.fail(f"unknown tag {', '.join(repr(tag) for tag in unknown)}; known tags: "
                      f"{', '.join(known_tags())}", param, ctx)
        return tags

    def get_metavar(self, param, ctx=None) -> str:
        return "[" + "|".join(known_tags()) + "],..."


def tags_option(help_text: str = "comma-separated kernel/runtime tags, later wins "
                                 "(`tflm-gen tags` describes each)"):
    return click.option("--tags", type=TagList(), default="", help=help_text)


def weights_option():
    """`--weights whole|separate` (tflm_gen.weights), the same for project, run and bench."""
    return click.option("--weights", type=click.Choice(WEIGHT_MODES), default="whole",
                        show_default=True,
                        help="separate: a mini flatbuffer (the structure) and a separate "
                             "weight array, e.g. for external flash")


def memory_option():
    """`--memory small|balanced|fast` (tflm_gen.patches): how much the arena may be traded
    for recomputed rows by running a chain of operators band by band."""
    return click.option(
        "--memory", type=click.Choice(MEMORY_CHOICES), default=DEFAULT_MEMORY, show_default=True,
        help="small: the smallest arena (patch stage, more MACs); balanced: the smallest "
             "costing at most 10% more instructions (estimated); fast: no patch stage")


def compress_option():
    """`--compress` and `--compress-goal` of project, run, bench, verify and report
    (tflm_gen/compress.py): the command receives `compress` as False, True (the balanced
    goal) or the goal's name when another goal is asked for."""
    def decorate(command):
        @functools.wraps(command)
        def with_goal(*args, compress_goal: str, **kwargs):
            if compress_goal != BALANCED:
                if not kwargs.get("compress"):
                    raise click.UsageError("--compress-goal needs --compress")
                kwargs["compress"] = compress_goal
            return command(*args, **kwargs)
        with_goal = click.option(
            "--compress-goal", type=click.Choice(GOALS), default=BALANCED, show_default=True,
            help="with --compress: balanced codes a FULLY_CONNECTED filter only where its "
                 "kernel stays within 25% of the plain one's instructions (estimated); "
                 "size takes its smallest coding whatever it costs (ad01 pruned to 0.8: "
                 "28.0% of the filter bytes at +63% instructions, balanced 32.9% at "
                 "+10%)")(with_goal)
        return click.option(
            "--compress", is_flag=True,
            help="code the int8 filters losslessly (zero runs, Huffman), decoded a block of "
                 "channels at a time (`inspect` shows each coding)")(with_goal)
    return decorate


def target_choice(*extra: str) -> click.Choice:
    """The project targets (plus `extra` names such as `host`) as a click choice."""
    return click.Choice([*extra, *list_targets()])


ARENA_BYTES = click.IntRange(0, MAX_ARENA_BYTES)
