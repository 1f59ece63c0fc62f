"""The ``<relevant_memories>`` block sent with one request (SPEC §3 "Injection").

Layout: ``<relevant_memories>``, then per record ``## <name> (<type>)`` (``(<type>,
user-wide)`` for the user scope's, SPEC §11) / notes said of it, one a line (a source
that changed since it was saved) / description / body, sections separated by blank
lines, then ``</relevant_memories>``. When the journal knows when a record was saved,
its header says so (SPEC §9): ``## <name> (<type>, saved YYYY-MM-DD)``.

Record text is untrusted (a model wrote it from a conversation), so it must not be
able to close the block or forge a record header: the description and the body go
through the package's one escaping for request text (:func:`ipymemory._text.escape`,
SPEC §7), which writes ``<``, ``>``, ``&``, their look-alikes, control and format
characters and a ``#`` opening a line as entities. Names are slugs and types are enum
values, so the only tags and header lines in the block are the ones written here; the
date comes from our journal and is written only when it is a plain ISO date, so the
age a header states cannot be forged by record text either. The system prompt tells
the model about this escaping and that the block is data.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from functools import lru_cache
from typing import Any

from .. import _constants as C
from .._secrets import redact
from .._text import escape
from ..store.record import MemoryRecord

__all__ = [
    "BLOCK_CLOSE",
    "BLOCK_OPEN",
    "escape_text",
    "query_index",
    "render_memory_block",
    "with_memory_block",
]

BLOCK_OPEN = "<relevant_memories>"
BLOCK_CLOSE = "</relevant_memories>"
_DAY = re.compile(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")


# A pure function of the text, and the credential scan is most of a selection's cost
# (the budget check renders each record; an MCP server or kernel renders the same
# immutable records again on every call): remembered per text.
@lru_cache(maxsize=C.ESCAPED_TEXT_CACHE)
def escape_text(text: str) -> str:
    """Escape record text for the block (the request form of :func:`escape`). A
    credential a record holds (one stored before screening, or by another tool) is
    redacted first: it is never re-sent to the model (SPEC §7)."""
    return escape(redact(text), "request")


def render_memory_block(
    records: Sequence[MemoryRecord],
    *,
    user_wide: Collection[str] = (),
    notes: Mapping[str, Sequence[str]] | None = None,
    saved: Mapping[str, str] | None = None,
) -> str:
    """The block for ``records``, or ``""`` when there are none (nothing is sent).

    A record named in ``user_wide`` comes from the user scope and says so in its header
    (SPEC §11); ``notes[name]`` are lines said of a record before its text (e.g. that
    its source changed since it was saved), escaped like the record; ``saved[name]`` is
    the ``YYYY-MM-DD`` the record was last saved (SPEC §9; others get no date)."""
    if not records:
        return ""
    notes = notes or {}
    dates = saved or {}
    sections = [BLOCK_OPEN]
    for record in records:
        label = f"{record.type.value}, user-wide" if record.name in user_wide else record.type.value
        day = dates.get(record.name)
        if isinstance(day, str) and _DAY.match(day):
            label += f", saved {day}"
        said = "".join(f"{escape_text(note)}\n" for note in notes.get(record.name, ()))
        sections.append(
            f"## {record.name} ({label})\n\n"
            + (f"{said}\n" if said else "")
            + f"{escape_text(record.description)}\n\n"
            f"{escape_text(record.body)}"
        )
    sections.append(BLOCK_CLOSE)
    return "\n\n".join(sections)


def query_index(messages: Sequence[dict[str, Any]], current: int) -> int:
    """Where the current turn's user message sits in a request whose last ``current``
    messages are the turn's own; ``-1`` when compression summarised it away."""
    index = len(messages) - current
    if 0 <= index < len(messages) and messages[index].get("role") == "user" and current > 0:
        return index
    return -1


def with_memory_block(
    messages: list[dict[str, Any]], current: int, block: str
) -> list[dict[str, Any]]:
    """``messages`` (a request built from the canonical history, ending with the
    ``current`` messages of the turn in progress) with ``block`` as a text block of the
    turn's user message, right before the query. If the query itself was summarised
    away, the block follows the summary in the first message. A new list; the input
    messages are not changed."""
    if not block or not messages:
        return messages
    index = query_index(messages, current)
    at = index if index >= 0 else 0
    target = messages[at]
    content = target.get("content")
    blocks: list[Any] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    )
    # Before the query (the message's last block); after a summary note if there is one.
    position = len(blocks) - 1 if index >= 0 else min(1, len(blocks))
    blocks.insert(max(position, 0), {"type": "text", "text": block})
    return [*messages[:at], {**target, "content": blocks}, *messages[at + 1 :]]
