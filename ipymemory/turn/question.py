"""The user's question, made encodable once where it enters (``ipymemory._encodable``).

Every front end that asks something of the memory -- a turn (``AgentSession.answer`` /
``begin_turn``), ``%memory select`` / ``ipymemory select``, MCP ``memory_select`` --
wraps the text in a :class:`Question` first; the phases take a ``Question``, so none
of them encodes (or forgets to encode) it again.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._encodable import encodable
from ..errors import TurnError

__all__ = ["Question"]


@dataclass(frozen=True)
class Question:
    """What the memories are chosen for and the model is asked: encodable text."""

    text: str

    @classmethod
    def of(cls, text: str) -> Question:
        """``text`` made encodable (a lone surrogate becomes U+FFFD)."""
        return cls(encodable(text))

    @classmethod
    def asked(cls, text: object) -> Question:
        """The question of a turn: :class:`TurnError` when there is nothing to ask."""
        if not isinstance(text, str) or not text.strip():
            raise TurnError("the query is empty: nothing to ask the model")
        return cls.of(text)
