"""A ``%memory`` line that ends with ``?`` is a query, not a request for help.

IPython reads a line ending in ``?`` as "show help on the name before it": its
``help_end`` transformer turns ``%memory select which slides?`` into ``pinfo slides``
before the magic ever runs. :func:`keep_question_marks` runs first (it is a cleanup
transform, IPython's documented hook for rewriting a cell's lines) and turns each such
``%memory`` line into the very call IPython would make for it without the ``?``, with
the text verbatim. ``%memory?`` and ``%memory??`` alone still ask for the magic's help.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["install", "keep_question_marks", "uninstall"]

# `%memory ARGS?` at the start of a line (after indentation), ARGS not empty.
_QUERY = re.compile(r"^(?P<indent>[ \t]*)%memory[ \t]+(?P<args>\S.*\?)[ \t]*(?P<end>\r?\n?)$")


def keep_question_marks(lines: list[str]) -> list[str]:
    """The cell's ``lines`` with each ``%memory … ?`` line made an explicit magic call
    (other lines untouched; a line continued from the one before is left alone, and so
    is a cell magic's cell: its body is the magic's text, e.g. an ``%%agent`` query)."""
    if lines and lines[0].lstrip().startswith("%%"):
        return lines
    out: list[str] = []
    for i, line in enumerate(lines):
        match = _QUERY.match(line)
        continued = i > 0 and lines[i - 1].rstrip("\r\n").endswith("\\")
        if match is None or continued or not match["args"].rstrip("?").strip():
            out.append(line)
            continue
        args = match["args"]
        out.append(
            f"{match['indent']}get_ipython().run_line_magic('memory', {args!r}){match['end']}"
        )
    return out


def install(shell: Any) -> None:
    """Add the transform to ``shell`` (once)."""
    transforms = shell.input_transformers_cleanup
    if keep_question_marks not in transforms:
        transforms.append(keep_question_marks)


def uninstall(shell: Any) -> None:
    transforms = shell.input_transformers_cleanup
    while keep_question_marks in transforms:
        transforms.remove(keep_question_marks)
