"""The agent turn: select → inject → tool loop → extract → review → commit → consolidate."""

from __future__ import annotations

from ..model import ScriptedModel
from .batch import BatchRegistry, BatchStatus, CommitResult, PendingBatch
from .config import SessionConfig
from .failures import MemoryFailure
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
