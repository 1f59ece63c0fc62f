"""What every phase of a turn is given: :class:`TurnContext`.

The session builds one when a phase starts -- from its settings as they are then, its
model, both scopes' stores and its :class:`~ipymemory.turn.turnlog.TurnLog` -- and hands
it to the phase (:mod:`~ipymemory.turn.choosing`, :mod:`~ipymemory.turn.answering`,
:mod:`~ipymemory.turn.memory_work`). A phase reads what it needs from it and reports into
its log; it never reaches back into the session.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import SideQueryError, SideQueryReplyError
from ..model import ModelClient, ModelReply, Usage
from ..model.usage import Role
from ..store.store import MemoryStore
from .config import SessionConfig
from .turnlog import TurnLog
from .usage import CallUsage

__all__ = ["TurnContext"]


@dataclass(frozen=True)
class TurnContext:
    """The model, the settings, the project's store and the user scope's (None when
    ``config.user_dir`` is), and the log the phase reports into."""

    model: ModelClient
    config: SessionConfig
    store: MemoryStore
    user_store: MemoryStore | None
    log: TurnLog

    @property
    def side_model_name(self) -> str:
        return self.config.side_model or str(getattr(self.model, "side_model", "") or "")

    def record_main(self, reply: ModelReply) -> None:
        """A main-model call of the tool loop, under the model that answered."""
        name = reply.model or self.config.model or str(getattr(self.model, "model", ""))
        self.log.record(CallUsage("main", name, reply.usage))

    def record_side(self, role: Role, usage: Usage | None) -> None:
        """A side-query's call (selector, extractor, consolidator, summarizer)."""
        if usage is None or usage == Usage():
            return  # no call was made (empty set, no model) or it cost nothing
        self.log.record(CallUsage(role, self.side_model_name, usage))

    def record_failed_side(self, role: Role, error: SideQueryError) -> None:
        """A side-query that failed: what it still cost (a reply that came back unusable)."""
        self.record_side(role, error.usage if isinstance(error, SideQueryReplyError) else None)
