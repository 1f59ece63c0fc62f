"""The agent turn, in phases (each a module; :mod:`.session` runs them in order):
choosing (select, inject: :mod:`.choosing`) → answering (the tool loop: :mod:`.answering`,
:mod:`.loop`) → the memory work (extract → screen → review/commit → consolidate:
:mod:`.memory_work`, :mod:`.consolidation`)."""

from __future__ import annotations

from ..model import ScriptedModel
from ..review import BatchRegistry, BatchStatus, CommitResult, MemoryFailure, PendingBatch
from .config import SessionConfig
from .session import AgentSession, AnsweredTurn, TurnEvent, TurnResult
from .usage import TurnUsage, UsageLedger

__all__ = [
    "AgentSession",
    "AnsweredTurn",
    "BatchRegistry",
    "BatchStatus",
    "CommitResult",
    "MemoryFailure",
    "PendingBatch",
    "ScriptedModel",
    "SessionConfig",
    "TurnEvent",
    "TurnResult",
    "TurnUsage",
    "UsageLedger",
]
