"""Progress of long work (cross builds, QEMU runs, host compiles, verify loops) on stderr,
drawn by rich: a spinner with the elapsed time, and a bar where the count is known.  Off
when stderr is not a terminal, so that logs, pipes and tests see only the result lines.

Work nested inside other work (a build inside `bench`) adds a line to the display already
shown: rich allows one live display at a time."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

_shown = None  # the rich Progress on screen, if any


def on_terminal() -> bool:
    return sys.stderr.isatty()


def _console():
    from rich.console import Console

    return Console(stderr=True)


def _new_display():
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.text import Text

    class CountColumn(MofNCompleteColumn):
        """`3/10` for a counted task; nothing for one step of unknown length."""

        def render(self, task):
            return Text("") if task.total is None else super().render(task)

    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                    CountColumn(), TimeElapsedColumn(), console=_console(), transient=True)


@contextmanager
def _task(description: str, total: int | None):
    """A task id on the display (opened here unless one is shown), or None off a terminal."""
    global _shown
    if not on_terminal():
        yield None
        return
    if _shown is not None:
        display, task = _shown, _shown.add_task(description, total=total)
        try:
            yield display, task
        finally:
            display.remove_task(task)
        return
    _shown = _new_display()
    try:
        with _shown:
            yield _shown, _shown.add_task(description, total=total)
    finally:
        _shown = None


@contextmanager
def activity(description: str) -> Iterator[None]:
    """A spinner and the elapsed time while the block runs (one step of unknown length)."""
    with _task(description, None):
        yield


def tracked(items: Iterable, description: str, total: int | None = None) -> Iterator:
    """`items`, one by one, with a bar of how many are done."""
    items = list(items) if total is None else items
    with _task(description, total if total is not None else len(items)) as shown:
        for item in items:
            yield item
            if shown is not None:
                shown[0].advance(shown[1])
