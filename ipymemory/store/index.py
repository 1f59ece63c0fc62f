"""MEMORY.md: the derived, bounded catalog of the current set (SPEC §1).

One line per record in manifest order, ``- [<name>](<file>) - <description>\\n``; an empty
set is an empty file. It is never trusted when reading: the manifest is the authority.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import MemoryStoreError
from .layout import INDEX_NAME
from .record import StoredRecord

__all__ = ["INDEX_NAME", "index_line", "render_catalog", "render_index"]


def index_line(entry: StoredRecord) -> str:
    """The catalog line of one entry, with its trailing newline."""
    return f"- [{entry.record.name}]({entry.file}) - {entry.record.description}\n"


def render_catalog(entries: Iterable[StoredRecord]) -> str:
    """The catalog text of ``entries`` (no bounds applied)."""
    return "".join(index_line(e) for e in entries)


def render_index(entries: Sequence[StoredRecord], max_lines: int, max_bytes: int) -> bytes:
    """The exact bytes of MEMORY.md for ``entries``.

    Raises :class:`MemoryStoreError` if the index would exceed either bound; callers
    render before touching the disk, so a refused commit changes nothing.
    """
    if len(entries) > max_lines:
        raise MemoryStoreError(
            f"{INDEX_NAME}: the new set has {len(entries)} records, over the index limit "
            f"of {max_lines} lines; commit refused, nothing changed"
        )
    data = render_catalog(entries).encode("utf-8")
    if len(data) > max_bytes:
        raise MemoryStoreError(
            f"{INDEX_NAME}: the new index would be {len(data)} bytes, over the limit of "
            f"{max_bytes} bytes; commit refused, nothing changed"
        )
    return data
