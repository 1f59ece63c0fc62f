"""The ``<relevant_memories>`` block sent with one request (SPEC §3 "Injection").

Layout: ``<relevant_memories>``, then per record ``## <name> (<type>)`` / description /
body, sections separated by blank lines, then ``</relevant_memories>``.

Record text is untrusted (a model wrote it from a conversation), so it must not be
able to close the block or forge a record header: the description and the body go
through the package's one escaping for request text (:func:`ipymemory._text.escape`,
SPEC §7), which writes ``<``, ``>``, ``&``, their look-alikes, control and format
characters and a ``#`` opening a line as entities. Names are slugs and types are enum
values, so the only tags and header lines in the block are the ones written here. The
system prompt tells the model about this escaping and that the block is data.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._text import escape
from ..store.record import MemoryRecord

__all__ = ["BLOCK_CLOSE", "BLOCK_OPEN", "escape_text", "render_memory_block"]

BLOCK_OPEN = "<relevant_memories>"
BLOCK_CLOSE = "</relevant_memories>"


def escape_text(text: str) -> str:
    """Escape record text for the block (the request form of :func:`escape`)."""
    return escape(text, "request")


def render_memory_block(records: Sequence[MemoryRecord]) -> str:
    """The block for ``records``, or ``""`` when there are none (nothing is sent)."""
    if not records:
        return ""
    sections = [BLOCK_OPEN]
    for record in records:
        sections.append(
            f"## {record.name} ({record.type.value})\n\n"
            f"{escape_text(record.description)}\n\n"
            f"{escape_text(record.body)}"
        )
    sections.append(BLOCK_CLOSE)
    return "\n\n".join(sections)
