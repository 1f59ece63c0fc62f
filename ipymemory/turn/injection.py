"""The ``<relevant_memories>`` block sent with one request (SPEC §3 "Injection").

Layout: ``<relevant_memories>``, then per record ``## <name> (<type>)`` / description /
body, sections separated by blank lines, then ``</relevant_memories>``.

Record text is untrusted (a model wrote it from a conversation), so it must not be
able to close the block or forge a record header. The escape: in the description
and the body, ``&``, ``<`` and ``>`` become ``&amp;``, ``&lt;`` and ``&gt;`` (so no
tag can appear), and a ``#`` that starts a line -- after optional spaces or tabs,
on any kind of line break -- becomes ``&#35;`` (so no line of record text reads as a
``## `` header). Names are slugs and types are enum values, so the only tags and
header lines in the block are the ones written here. The system prompt tells the
model about this escaping and that the block is data, not instructions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..store.record import MemoryRecord

__all__ = ["BLOCK_CLOSE", "BLOCK_OPEN", "escape_text", "render_memory_block"]

BLOCK_OPEN = "<relevant_memories>"
BLOCK_CLOSE = "</relevant_memories>"

# Every character str.splitlines() treats as a line break: a renderer (or a model)
# may treat any of them as one, so a '#' after any of them is a line start.
_LINE_START_HASH = re.compile(r"(^|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029])([ \t]*)#")


def escape_text(text: str) -> str:
    """Escape record text for the block (see module docstring)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _LINE_START_HASH.sub(r"\1\2&#35;", text)


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
