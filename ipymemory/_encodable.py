"""Text from a user or a model made encodable once, where it enters the package.

A lone surrogate (half an emoji, ``"\\ud83d"``: from a JSON escape in a model's reply, a
paste, a file name decoded with ``surrogateescape``) is a valid Python ``str`` that no
UTF-8 writer accepts: the SDK cannot send it, the journal and ``pending/`` cannot hold
it. Rather than every writer coping, each entry point passes outside text through
:func:`encodable` (a lone surrogate becomes U+FFFD; a pair spelled as two surrogates
becomes its character), so nothing downstream meets one:

* the user's question: ``AgentSession.run_turn`` / ``begin_turn``, the ``select`` command;
* the model's replies: :class:`~ipymemory.model.client.ModelReply` (every client), and
  each piece of streamed text;
* tool outputs: :class:`~ipymemory.turn.tools.ToolOutcome` (what goes back to the
  model) and the workspace paths ``read_file`` read;
* a turn's provenance: :class:`~ipymemory.review.provenance.TurnProvenance` (the query,
  files read, models, and the front end's caller facts such as a notebook path).

Record fields are not altered: a :class:`~ipymemory.store.record.MemoryRecord` holding a
lone surrogate is refused (``MemoryFormatError``) before anything is written, and the
store refuses a commit whose journal line would not encode before its commit point.
"""

from __future__ import annotations

from typing import Any

__all__ = ["encodable", "encodable_data"]


def encodable(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (unchanged if it encodes)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def encodable_data(value: Any) -> Any:
    """:func:`encodable` applied to every string in JSON-like data (dict keys and
    values, list and tuple items); other values are returned as they are."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {encodable_data(k): encodable_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encodable_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(encodable_data(v) for v in value)
    return value
