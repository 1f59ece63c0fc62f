"""The options at the end of a literal tail: ``%memory select tabs --limit 1``.

A subcommand's literal tail (a query) is the rest of the line verbatim, so a user who
writes the options after it, as the CLI allows, would have them read as part of the
query. Only the subcommand's own options are taken from the end, and only whole words;
everything before them stays the query, exactly as written.
"""

from __future__ import annotations

import re

from ..commands import Arg
from ..errors import CommandUsageError

__all__ = ["trailing_options"]


def trailing_options(tail: str, args: tuple[Arg, ...]) -> tuple[str, list[str]]:
    """``(query, option words)``: ``tail`` without the options of ``args`` it ends with."""
    known = {name: a for a in args if not a.positional for name in a.names}
    words = [(m.start(), m.group()) for m in re.finditer(r"\S+", tail)]
    taken: list[str] = []
    while words:
        last = words[-1][1]
        name, eq, _ = last.partition("=")
        option = known.get(name)
        if option is not None and (bool(eq) == option.takes_value):
            taken[:0] = [last]
            words.pop()
        elif option is not None and not eq:  # `select tabs --limit`: its value is missing
            raise CommandUsageError(f"{name} needs a {option.metavar.lower()}")
        elif len(words) >= 2 and (before := known.get(words[-2][1])) and before.takes_value:
            taken[:0] = [words[-2][1], last]
            del words[-2:]
        else:
            break
    query = tail[: words[-1][0] + len(words[-1][1])] if words else ""
    return query.strip(), taken
