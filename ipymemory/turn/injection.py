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
from .history import estimate_tokens

__all__ = [
    "BLOCK_CLOSE",
    "BLOCK_OPEN",
    "escape_text",
    "query_index",
    "render_block",
    "render_memory_block",
    "render_section",
    "section_tokens",
    "sections_of",
    "with_memory_blocks",
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


@lru_cache(maxsize=C.ESCAPED_TEXT_CACHE)
def section_tokens(record: MemoryRecord) -> int:
    """The estimated tokens ``record`` adds to a block (a header with a saved date, the
    blank lines between sections): what the budget counts. An estimate that reads no
    record for credentials (a set's every record may be counted on a turn; redaction
    changes a record's size by a few tokens at most)."""
    section = (
        f"## {record.name} ({record.type.value}, user-wide, saved 2000-01-01)\n\n"
        f"{escape(record.description, 'request')}\n\n{escape(record.body, 'request')}"
    )
    return estimate_tokens(f"\n\n{section}")


def render_section(
    record: MemoryRecord,
    *,
    user_wide: bool = False,
    notes: Sequence[str] = (),
    saved: str | None = None,
) -> str:
    """One record's section of a block: its ``## <name> (<label>)`` header, the notes said
    of it, its description and body (see the module docstring)."""
    label = f"{record.type.value}, user-wide" if user_wide else record.type.value
    if isinstance(saved, str) and _DAY.match(saved):
        label += f", saved {saved}"
    said = "".join(f"{escape_text(note)}\n" for note in notes)
    return (
        f"## {record.name} ({label})\n\n"
        + (f"{said}\n" if said else "")
        + f"{escape_text(record.description)}\n\n"
        f"{escape_text(record.body)}"
    )


def render_block(sections: Sequence[str]) -> str:
    """The block holding ``sections`` (from :func:`render_section`), or ``""`` for none."""
    return "\n\n".join([BLOCK_OPEN, *sections, BLOCK_CLOSE]) if sections else ""


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
    notes = notes or {}
    dates = saved or {}
    return render_block(
        [
            render_section(
                record,
                user_wide=record.name in user_wide,
                notes=notes.get(record.name, ()),
                saved=dates.get(record.name),
            )
            for record in records
        ]
    )


def sections_of(block: str) -> dict[str, str]:
    """Name -> section of a block this module rendered (the inverse of
    :func:`render_block`: record text cannot forge a header line, see above)."""
    inner = block[len(BLOCK_OPEN) : len(block) - len(BLOCK_CLOSE)].strip("\n")
    parts = ("\n\n" + inner).split("\n\n## ")[1:]
    return {part.split(" ", 1)[0]: f"## {part}" for part in parts}


def query_index(messages: Sequence[dict[str, Any]], current: int) -> int:
    """Where the current turn's user message sits in a request whose last ``current``
    messages are the turn's own; ``-1`` when compression summarised it away."""
    index = len(messages) - current
    if 0 <= index < len(messages) and messages[index].get("role") == "user" and current > 0:
        return index
    return -1


def with_memory_blocks(
    messages: list[dict[str, Any]],
    placed: Mapping[int, Sequence[str]],
    *,
    first: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """``messages`` (a request) with memory blocks as text blocks of user messages:
    ``placed[i]`` go into message ``i`` -- before its query when it ends with one (a
    turn's user message), after its tool results otherwise; ``first`` go into the first
    message right after its summary note (blocks whose own messages compression
    summarised away). A new list; the input messages are not changed."""
    out = list(messages)
    targets = dict(placed)
    if first and out:
        targets[0] = [*first, *targets.get(0, ())]
    for index, texts in targets.items():
        if not texts or not 0 <= index < len(out):
            continue
        target = out[index]
        content = target.get("content")
        blocks: list[Any] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        )
        if index == 0 and first:
            position = min(1, len(blocks))  # after the summary note
        elif blocks and isinstance(blocks[-1], dict) and blocks[-1].get("type") == "text":
            position = len(blocks) - 1  # before the query
        else:
            position = len(blocks)  # after the tool results
        blocks[position:position] = [{"type": "text", "text": text} for text in texts]
        out[index] = {**target, "content": blocks}
    return out
