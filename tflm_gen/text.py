"""Untrusted text (tensor names, custom op names, a runtime's log) made safe to print: a
name holding a newline or a terminal escape must not forge lines or colours."""

from __future__ import annotations


def printable(text: str) -> str:
    """`text` with every non-printable character (newline, tab, ESC, ...) and the
    backslash written as a Python escape, so what is shown is unambiguous and one line."""
    return _control_escaped(text.replace("\\", "\\\\"))


def _control_escaped(text: str) -> str:
    # '\n', '\x1b', '\u2028': the form Python itself prints
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


def one_line(text: str) -> str:
    """A multi-line message (a compiler's or runtime's output folded into an error) as one
    line: lines stripped and joined with ' | ', then every control character escaped
    (backslashes stay: the parts were escaped where they were made)."""
    lines = [line.strip() for line in text.splitlines()]
    return _control_escaped(" | ".join(line for line in lines if line))


def c_identifier(text: str, fallback: str) -> str:
    """`text` (a file stem, a tensor name) as a lowercase C identifier: every character
    outside [a-z0-9_] becomes '_', runs of '_' fold to one and none leads (a leading '_'
    with a capital or a second '_' is reserved to the C implementation), and a leading
    digit gets 'm_'.  `fallback` when nothing is left."""
    folded = "".join(char if char in _IDENTIFIER_CHARS else "_" for char in text.lower())
    while "__" in folded:
        folded = folded.replace("__", "_")
    folded = folded.strip("_")
    if not folded:
        return fallback
    return "m_" + folded if folded[0].isdigit() else folded


_IDENTIFIER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
