"""Untrusted text (tensor names, custom op names, a runtime's log) made safe to print: a
name holding a newline or a terminal escape must not forge lines or colours."""

from __future__ import annotations


def printable(text: str) -> str:
    """`text` with every non-printable character (newline, tab, ESC, ...) and the
    backslash written as a Python escape, so what is shown is unambiguous and one line."""
    return "".join(_escaped(char) for char in text)


def _escaped(char: str) -> str:
    if char == "\\":
        return "\\\\"
    if char.isprintable():
        return char
    return repr(char)[1:-1]  # '\n', '\x1b', '\u2028': the form Python itself prints


def one_line(text: str) -> str:
    """A multi-line message (a compiler's or runtime's output folded into an error) as one
    line: lines stripped and joined with ' | ', then every control character escaped."""
    lines = [line.strip() for line in text.splitlines()]
    return printable(" | ".join(line for line in lines if line))
