"""MEMORY.md: the derived, bounded catalog of the current set (SPEC §1).

One line per record in manifest order, ``- [<name>](<file>) - <description>\\n``; an empty
set is an empty file. It is never trusted when reading: the manifest is the authority.

The catalog is bounded (``max_lines`` lines, ``max_bytes`` UTF-8 bytes, the reference
agent's bounds), but a bound never refuses a commit (issue 31): when the whole set's
lines do not fit, MEMORY.md holds the newest records' lines that do (in manifest order),
then one :func:`omitted_note` line saying how many more records the manifest holds.
A set that fits is written exactly as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .layout import INDEX_NAME

if TYPE_CHECKING:  # not imported: the git merge driver renders lines without YAML
    from .record import StoredRecord

__all__ = [
    "INDEX_NAME",
    "OMITTED_NOTE",
    "bounded_catalog",
    "index_line",
    "omitted_count",
    "omitted_note",
    "render_catalog",
    "render_index",
]

# The note that ends a MEMORY.md too small for the set: an HTML comment, so a Markdown
# view shows nothing and no reader takes it for a record line.
OMITTED_NOTE = re.compile(
    r"<!-- (?P<count>[1-9][0-9]*) more records? (?:is|are) listed only in manifest\.json "
    r"\(MEMORY\.md is bounded\) -->"
)


def index_line(entry: StoredRecord) -> str:
    """The catalog line of one entry, with its trailing newline."""
    return f"- [{entry.record.name}]({entry.file}) - {entry.record.description}\n"


def render_catalog(entries: Iterable[StoredRecord]) -> str:
    """The catalog text of ``entries`` (no bounds applied)."""
    return "".join(index_line(e) for e in entries)


def omitted_note(count: int) -> str:
    """The last line of a bounded MEMORY.md that leaves ``count`` records out."""
    verb = "record is" if count == 1 else "records are"
    return f"<!-- {count} more {verb} listed only in manifest.json (MEMORY.md is bounded) -->\n"


def omitted_count(line: str) -> int | None:
    """How many records an :func:`omitted_note` line (without its newline) leaves out,
    or None when ``line`` is not one."""
    match = OMITTED_NOTE.fullmatch(line)
    return int(match.group("count")) if match else None


def bounded_catalog(lines: Sequence[str], max_lines: int, max_bytes: int) -> bytes:
    """MEMORY.md's bytes for catalog ``lines`` (each ending in ``\\n``, in set order):
    all of them when they fit both bounds; else the last ones that fit together with
    the :func:`omitted_note` after them (nothing but an empty file if not even the note
    fits). Never raises: the bound shapes the file, it refuses nothing."""
    encoded = [line.encode("utf-8") for line in lines]
    if len(encoded) <= max_lines and sum(map(len, encoded)) <= max_bytes:
        return b"".join(encoded)
    # The note's length grows with its count: reserve the longest it can be.
    room = max_bytes - len(omitted_note(len(encoded)).encode("utf-8"))
    kept: list[bytes] = []
    size = 0
    for line in reversed(encoded):
        if len(kept) + 1 >= max_lines or size + len(line) > room:
            break
        kept.append(line)
        size += len(line)
    if room < 0 or max_lines < 1:
        return b""
    kept.reverse()
    return b"".join(kept) + omitted_note(len(encoded) - len(kept)).encode("utf-8")


def render_index(entries: Sequence[StoredRecord], max_lines: int, max_bytes: int) -> bytes:
    """The exact bytes of MEMORY.md for ``entries`` (see :func:`bounded_catalog`)."""
    return bounded_catalog([index_line(e) for e in entries], max_lines, max_bytes)
