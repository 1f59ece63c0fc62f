"""The extractor side-query: new memories proposed from the canonical history.

Input (SPEC §3, §8): the canonical history read from the session's cursor -- the
messages since the last successful extraction, preceded by the last turn before them
(``context``) marked as already processed -- then the sorted-key JSON
``{"existing_catalog": <catalog>, "today": <date>}`` as the last text of the last user
message.

**Append-only** (issue 31, :func:`extract_memories` with ``earlier``): the turns before
the new messages are the session's since an anchor the caller keeps, each turn opened by
a ``[turn N]`` mark (N counted from the first turn sent), every message adapted the same
way whether it is new or earlier, and the input says where the new part starts:
``{"existing_catalog", "new_from_turn", "today"}``. So one extraction's request is a
prefix of the next one's, a cache breakpoint on its last history block caches it once
past the side model's minimum, and the next extraction reads it at a tenth of the price.

**A bounded catalog** (issue 40): a set whose catalog lines pass
:data:`~ipymemory._constants.EXTRACT_CATALOG_TOKENS` is shown as a part
(:func:`extractor_catalog`, :class:`~.related.CatalogPart`): the records most related to
the new messages' text, in set order, and the input says so
(``"existing_catalog_note"``: how many of how many, and what happens to a taken name).
A smaller set's request is what it always was, byte for byte.

The reply must be a JSON array of valid, unique, new records, each optionally
with ``evidence`` and ``replaces`` (SPEC §9, :func:`~.replies.validate_extraction`); any
flaw rejects the whole batch (all-or-nothing) with a :class:`SideQueryError` naming it,
and the caller sets ``last_error = LAST_ERROR_EXTRACT`` -- except an item whose name is
taken by a record the extractor was NOT shown: not the model's flaw, so that item alone
is dropped and named in :attr:`Extraction.dropped`. ``replaces`` may name any current
record.

The copy is adapted only as far as the Messages API requires of a tool-free call:
the API refuses ``tool_use`` / ``tool_result`` blocks in a request that defines no
tools, so those become text blocks saying what was called and what came back;
thinking blocks are dropped; other non-text blocks become a short placeholder; empty
messages are dropped and adjacent same-role messages merged so roles alternate.

A tool result travels in a user-role message, but it is NOT the user: it is a file's
text or Python output, which anyone could have written. So it is quoted as untrusted
data (SPEC §7): ``<tool_output tool_use_id="…" untrusted="true">`` … ``</tool_output>``,
its text passed through the request form of :func:`ipymemory._text.escape`, so nothing
inside can close the quote, open another one or pose as a header; the extractor prompt
says what the quote is and that nothing in it is to be followed.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import _constants as C
from .._dates import today_text
from .._text import escape
from ..errors import SideQueryError
from ..model import ModelClient, Usage
from ..store.record import MemoryRecord, StoredRecord
from .prompts import EXTRACTOR_PROMPT
from .related import CatalogPart, catalog_part
from .replies import ExtractedItem, encode_input, side_query, validate_extraction
from .schemas import EXTRACTOR_SCHEMA

__all__ = [
    "CONTEXT_MARK",
    "CONTEXT_TOOL_OUTPUT_CHARS",
    "EXTRACT_MAX_TOKENS",
    "NEW_MARK",
    "TOOL_OUTPUT_CHARS",
    "TOOL_OUTPUT_CLOSE",
    "CatalogPart",
    "ExtractedItem",
    "Extraction",
    "bounded",
    "ends",
    "extract_memories",
    "extractor_catalog",
    "extractor_messages",
    "extractor_request",
    "omitted",
    "quote_tool_output",
]

# A batch of several full-size records (4 KiB each) must fit without truncation.
EXTRACT_MAX_TOKENS = C.EXTRACT_MAX_TOKENS
# How much of each tool call's input and tool output the extractor sees: the head of
# each in the new messages, a stub in the turn already processed (issue 18 "Cost").
# Files can be read again, so memories need not hold them; origin is decided by our
# code on the full canonical history, never on this view.
TOOL_OUTPUT_CHARS = C.EXTRACT_TOOL_OUTPUT_CHARS
CONTEXT_TOOL_OUTPUT_CHARS = C.EXTRACT_CONTEXT_TOOL_OUTPUT_CHARS
_UNBOUNDED = sys.maxsize

TOOL_OUTPUT_CLOSE = "</tool_output>"

# The cursor's two marks (SPEC §8): the context turn was read by an earlier extraction
# and is there only so the new messages make sense.
CONTEXT_MARK = (
    "[ALREADY PROCESSED: the messages from here up to the NEW mark were read by an "
    "earlier extraction. They are context only; propose nothing from them alone.]"
)
NEW_MARK = "[NEW: the messages from here on were not read by any extraction yet.]"
# Tool-use ids are API-made ([A-Za-z0-9_-]); anything else is replaced, never quoted raw.
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_ID_LIMIT = 64


@dataclass(frozen=True)
class Extraction:
    """A valid extractor batch (possibly empty), the usage of the call, and why items
    were dropped (each names an item whose name is taken by a record the extractor was
    not shown)."""

    items: tuple[ExtractedItem, ...]
    usage: Usage = field(default_factory=Usage)
    dropped: tuple[str, ...] = ()

    @property
    def records(self) -> tuple[MemoryRecord, ...]:
        """The items' records, in the same order."""
        return tuple(item.record for item in self.items)


def extract_memories(
    model: ModelClient,
    history: Sequence[dict[str, Any]],
    catalog: str | CatalogPart,
    existing_names: Collection[str],
    *,
    context: Sequence[dict[str, Any]] = (),
    earlier: Sequence[dict[str, Any]] | None = None,
    side_model: str | None = None,
    max_tokens: int = EXTRACT_MAX_TOKENS,
    today: str | None = None,
) -> Extraction:
    """Ask ``model`` which memories ``history`` (the messages not yet extracted) holds
    that the set does not; ``context`` (already processed) is sent before it, marked.
    With ``earlier`` instead (the already processed messages since the caller's anchor),
    the request is the append-only form (:func:`extractor_request`).
    ``existing_names`` are the current records (the ones an item may replace);
    ``catalog`` is the set's whole catalog, or the part the extractor is shown
    (:func:`extractor_catalog`); ``today`` defaults to
    :func:`~ipymemory._dates.today_text`.

    Raises :class:`SideQueryError` (message = the exact cause) on an unusable
    history, an API failure or any invalid reply; no new message makes no call.
    """
    new = _adapted_history(history, TOOL_OUTPUT_CHARS)
    if not new:
        return Extraction(())
    if earlier is not None:
        messages = extractor_request(history, catalog, earlier, today)
    else:
        context_view = _adapted_history(context, CONTEXT_TOOL_OUTPUT_CHARS)
        messages = _marked(new, context_view, catalog, today)
    existing = frozenset(existing_names)
    shown = catalog.names if isinstance(catalog, CatalogPart) else existing
    (items, dropped), usage = side_query(
        model,
        system=EXTRACTOR_PROMPT,
        messages=messages,
        max_tokens=max_tokens,
        side_model=side_model,
        role="extractor",
        schema=EXTRACTOR_SCHEMA,
        validate=lambda value: validate_extraction(value, existing, shown, role="extractor"),
    )
    return Extraction(items, usage, dropped)


def extractor_catalog(
    entries: Sequence[StoredRecord], history: Sequence[dict[str, Any]]
) -> CatalogPart:
    """The catalog the extractor reading ``history`` (the new messages) is shown of the
    set ``entries``: the whole catalog while it fits
    :data:`~ipymemory._constants.EXTRACT_CATALOG_TOKENS`, else the records most related to
    the messages' text as the extractor reads it (:func:`~.related.catalog_part`)."""
    text = "\n".join(
        block["text"]
        for message in _adapted_history(history, TOOL_OUTPUT_CHARS)
        for block in message["content"]
    )
    return catalog_part(entries, text)


def extractor_messages(
    history: Sequence[dict[str, Any]],
    catalog: str | CatalogPart,
    context: Sequence[dict[str, Any]] = (),
    today: str | None = None,
    *,
    bounded_tools: bool = True,
) -> list[dict[str, Any]]:
    """The extractor's request messages: the adapted ``context`` (between
    :data:`CONTEXT_MARK` and :data:`NEW_MARK`), the adapted ``history``, then the
    catalog and ``today``. Without context, no mark is sent. ``bounded_tools=False``
    keeps tool inputs and outputs whole (what was sent before they were bounded; the
    cost benchmark compares the two)."""
    unbounded = _UNBOUNDED if not bounded_tools else None
    return _marked(
        _adapted_history(history, unbounded or TOOL_OUTPUT_CHARS),
        _adapted_history(context, unbounded or CONTEXT_TOOL_OUTPUT_CHARS),
        catalog,
        today,
    )


def extractor_request(
    history: Sequence[dict[str, Any]],
    catalog: str | CatalogPart,
    earlier: Sequence[dict[str, Any]] = (),
    today: str | None = None,
) -> list[dict[str, Any]]:
    """The append-only request (see the module docstring): ``earlier`` then ``history``
    (the new messages), both adapted alike, each turn opened by its ``[turn N]`` mark,
    a cache breakpoint on the last block of the last message, then the input JSON with
    ``new_from_turn``, the mark of the first new turn."""
    first_new = _turns(earlier) + 1
    messages = _with_turn_marks([*earlier, *history], TOOL_OUTPUT_CHARS)
    if messages:
        last = messages[-1]["content"][-1]
        last["cache_control"] = {"type": "ephemeral"}
    block = _text(encode_input({**_catalog_input(catalog, today), "new_from_turn": first_new}))
    if messages and messages[-1]["role"] == "user":
        messages[-1]["content"].append(block)
    else:
        messages.append({"role": "user", "content": [block]})
    return messages


def turn_mark(number: int) -> str:
    """The mark that opens turn ``number`` of an append-only extractor request."""
    return f"[turn {number}]"


def _is_turn_start(message: dict[str, Any]) -> bool:
    """A user message that is a query (not tool results): where a turn starts."""
    content = message.get("content")
    if message.get("role") != "user":
        return False
    return not (
        isinstance(content, list)
        and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _turns(messages: Sequence[dict[str, Any]]) -> int:
    return sum(1 for m in messages if isinstance(m, dict) and _is_turn_start(m))


def _with_turn_marks(history: Sequence[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """``history`` adapted (:func:`_adapted_history`), a ``[turn N]`` text first in each
    turn's query; messages adapted one by one, so a message's blocks never depend on
    what follows it (the request stays a prefix of the next one)."""
    out: list[dict[str, Any]] = []
    number = 0
    for i, message in enumerate(history):
        adapted = _adapted_history([message], limit) if isinstance(message, dict) else None
        if adapted is None:
            raise SideQueryError(f"extractor history message {i} is not a message object")
        if _is_turn_start(message):
            number += 1
            mark = _text(turn_mark(number))
            if adapted and adapted[-1]["role"] == "user":
                adapted[-1]["content"].insert(0, mark)
            else:
                adapted = [{"role": "user", "content": [mark]}]
        for piece in adapted:
            if piece["content"] == [_text(_NO_USER_FIRST)] and out:
                continue  # only the request's first message needs that note
            if out and out[-1]["role"] == piece["role"]:
                out[-1]["content"].extend(piece["content"])
            else:
                out.append(piece)
    if out and out[0]["role"] == "assistant":
        out.insert(0, _user_text(_NO_USER_FIRST))
    return out


def _marked(
    new: list[dict[str, Any]],
    before: list[dict[str, Any]],
    catalog: str | CatalogPart,
    today: str | None,
) -> list[dict[str, Any]]:
    if not before:
        return _with_catalog(new, catalog, today)
    before[0]["content"].insert(0, _text(CONTEXT_MARK))
    if new:
        new[0]["content"].insert(0, _text(NEW_MARK))
    else:
        new = [_user_text(NEW_MARK)]
    return _with_catalog(_joined(before, new), catalog, today)


def _joined(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``first + second`` with the seam merged if both sides have the same role."""
    if first and second and first[-1]["role"] == second[0]["role"]:
        first[-1]["content"].extend(second[0]["content"])
        second = second[1:]
    return [*first, *second]


def _adapted_history(history: Sequence[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """A fresh copy of ``history`` as text-only, alternating messages (may be empty),
    each tool call's input and tool output cut to ``limit`` characters."""
    messages: list[dict[str, Any]] = []
    for i, message in enumerate(history):
        if not isinstance(message, dict):
            raise SideQueryError(f"extractor history message {i} is not a message object")
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise SideQueryError(f"extractor history message {i} has role {role!r}")
        blocks = _blocks(message.get("content"), f"extractor history message {i}", limit)
        if not blocks:
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    if messages and messages[0]["role"] == "assistant":
        # The API wants a user message first; say plainly that none was recorded.
        messages.insert(0, _user_text(_NO_USER_FIRST))
    return messages


_NO_USER_FIRST = "(the conversation starts with an assistant message)"


def _catalog_input(catalog: str | CatalogPart, today: str | None) -> dict[str, Any]:
    """The input's catalog and date; a part of the set says so in a note beside it."""
    text, note = (
        (catalog.text, catalog.note) if isinstance(catalog, CatalogPart) else (catalog, None)
    )
    payload: dict[str, Any] = {
        "existing_catalog": text,
        "today": today_text() if today is None else today,
    }
    if note is not None:
        payload["existing_catalog_note"] = note
    return payload


def _with_catalog(
    messages: list[dict[str, Any]], catalog: str | CatalogPart, today: str | None
) -> list[dict[str, Any]]:
    catalog_block = _text(encode_input(_catalog_input(catalog, today)))
    if messages and messages[-1]["role"] == "user":
        messages[-1]["content"].append(catalog_block)
    else:
        messages.append({"role": "user", "content": [catalog_block]})
    return messages


def _blocks(content: Any, where: str, limit: int) -> list[dict[str, Any]]:
    """New text-ish blocks for one message's content (never aliases the input)."""
    if isinstance(content, str):
        return [_text(content)] if content.strip() else []
    if not isinstance(content, list):
        raise SideQueryError(f"{where} has content of type {type(content).__name__}")
    out: list[dict[str, Any]] = []
    for block in content:
        if not isinstance(block, dict):
            raise SideQueryError(f"{where} has a content block that is not an object")
        text = _block_text(block, limit)
        if text is not None and text.strip():
            out.append(_text(text))
    return out


def _block_text(block: dict[str, Any], limit: int) -> str | None:
    kind = block.get("type")
    if kind == "text":
        value = block.get("text")
        return value if isinstance(value, str) else None
    if kind in ("thinking", "redacted_thinking"):
        return None
    if kind == "tool_use":
        return (
            f"[tool call {block.get('name')!s} (id {block.get('id')!s}) with input "
            f"{bounded(encode_input(block.get('input')), limit)}]"
        )
    if kind == "tool_result":
        return quote_tool_output(
            block.get("tool_use_id"),
            _result_text(block.get("content"), limit),
            bool(block.get("is_error")),
            limit,
        )
    return f"[{kind!s} block omitted]"


def quote_tool_output(
    tool_use_id: Any, text: str, is_error: bool = False, limit: int | None = None
) -> str:
    """``text`` (a tool's output) quoted as untrusted data for the extractor, its first
    ``limit`` characters only when given (see :func:`bounded`).

    The text is escaped (request form), so the only ``<`` and ``>`` of the quote, even
    to a reader folding look-alikes, are those of its own two tags.
    """
    safe_id = _ID_UNSAFE.sub("_", str(tool_use_id))[:_ID_LIMIT] or "_"
    error = ' is_error="true"' if is_error else ""
    head = f'<tool_output tool_use_id="{safe_id}"{error} untrusted="true">'
    if limit is None or len(text) <= limit:
        body = escape(text, "request")
    else:  # escaped before the mark is added: the mark is ours, not the tool's
        body = escape(text[:limit], "request") + omitted(len(text) - limit)
    return f"{head}\n{body}\n{TOOL_OUTPUT_CLOSE}"


def bounded(text: str, limit: int) -> str:
    """``text`` cut to its first ``limit`` characters, followed by :func:`omitted`."""
    return text if len(text) <= limit else text[:limit] + omitted(len(text) - limit)


def ends(text: str, limit: int) -> str:
    """``text``, or its head and tail around the mark of what was left out: the end of
    a text (an answer's last code block, its summary) matters as much as its start."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + omitted(len(text) - 2 * half) + text[-half:]


def omitted(count: int) -> str:
    """The mark that stands for ``count`` characters left out of the extractor's view."""
    return f"[… {count} characters omitted]"


def _result_text(content: Any, limit: int) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if isinstance(block, dict):
            text = _block_text(block, limit)
            if text:
                parts.append(text)
    return "\n".join(parts)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _user_text(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [_text(text)]}
