"""ipymemory: file-based long-term memory for agents in Jupyter notebooks.

The contract the code implements (cited as "SPEC §N") is ``docs/contract.md``.

Imports run one way. The units (top-level modules and subpackages) sit in layers,
lowest first; a module imports from its own unit and from units of lower layers only,
never from a peer in its own layer or from above -- at the top of a module, inside a
function, or under ``TYPE_CHECKING`` alike (``tests/test_layers.py`` parses every
import and holds the code to this list):

1. ``_constants`` ``_dates`` ``_encodable`` ``_enum`` ``_json`` ``_text`` ``_tokens``
   ``_secrets`` ``_version`` ``errors`` -- the bottom: defaults, small helpers (today's
   date as the side-queries see it, outside text made encodable), the tokenizer, the
   credential scanner, the version and the error tree; standard library only.
2. ``_language`` ``model`` ``store`` -- the one language detector (word lists of
   ``wordfreq``); the model clients; the memory directory on disk.
3. ``config`` ``screen`` ``sidequery`` ``follow`` -- settings resolution; screening of
   what is remembered; the selector, extractor, consolidator and follow-up checker
   side-queries; the exact checks of an answer against its memories.
4. ``review`` -- the review queue: a proposed change from any door (a turn, another
   agent, a sync, an import, undo/restore), its screening, the batch waiting for a
   person and its commit.
5. ``turn`` -- the agent session: one turn, in phases.
6. ``agents`` ``sync`` ``team`` ``views`` -- other agents on the same memory (the MCP
   server, Jupyter AI's tools and persona, Claude's memory tool); a set synced with an
   Anthropic memory store; sharing a set through git and Claude Code; views and widgets.
7. ``commands`` -- the command layer the CLI and ``%memory`` share.
8. ``cli`` ``notebook`` ``server`` -- the front ends.
9. ``ipymemory`` -- this module, the public API; nothing inside the package imports it.

A front end may import lazily inside a function (to keep ``import ipymemory`` light);
anywhere else an import inside a function is a deliberate exception the test lists
with its reason.
"""

from __future__ import annotations

import typing

from ._version import __version__
from .errors import (
    BatchError,
    BatchTooLarge,
    CommandError,
    CommandUsageError,
    IPyMemoryError,
    MemoryConfigError,
    MemoryConflictError,
    MemoryFormatError,
    MemoryLockTimeout,
    MemoryRecordUnreadable,
    MemoryRecoveryNeeded,
    MemorySecretError,
    MemoryStoreError,
    ModelAPIError,
    ModelConnectionError,
    ModelError,
    ModelNotConfigured,
    ModelResponseError,
    ModelTimeout,
    ProposalError,
    ScriptExhausted,
    SideQueryError,
    SideQueryReplyError,
    SyncBusy,
    SyncError,
    SyncNotConfigured,
    SyncPreconditionFailed,
    SyncRemoteError,
    SyncStateError,
    TurnError,
)
from .model import AnthropicModel, ModelClient, ModelReply, NoModel, ScriptedModel, Usage
from .review import BatchRegistry, BatchStatus, CommitResult, MemoryFailure, PendingBatch
from .sidequery import ConsolidationPlan, Selection, select_memories
from .sidequery.fallback import keyword_select
from .store.record import MemoryRecord, MemoryType, StoredRecord
from .store.store import MemoryStore
from .turn import AgentSession, AnsweredTurn, SessionConfig, TurnEvent, TurnResult

if typing.TYPE_CHECKING:
    from .agents.memory_tool import MemoryTool

# Public names imported on first use (``ipymemory.MemoryTool``): the anthropic SDK's tool
# classes take seconds to import, which `import ipymemory` must not pay.
_LAZY = {"MemoryTool": "ipymemory.agents.memory_tool"}

__all__ = [
    "AgentSession",
    "AnsweredTurn",
    "AnthropicModel",
    "BatchError",
    "BatchRegistry",
    "BatchStatus",
    "BatchTooLarge",
    "CommandError",
    "CommandUsageError",
    "CommitResult",
    "ConsolidationPlan",
    "IPyMemoryError",
    "MemoryConfigError",
    "MemoryConflictError",
    "MemoryFailure",
    "MemoryFormatError",
    "MemoryLockTimeout",
    "MemoryRecord",
    "MemoryRecordUnreadable",
    "MemoryRecoveryNeeded",
    "MemorySecretError",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryTool",
    "MemoryType",
    "ModelAPIError",
    "ModelClient",
    "ModelConnectionError",
    "ModelError",
    "ModelNotConfigured",
    "ModelReply",
    "ModelResponseError",
    "ModelTimeout",
    "NoModel",
    "PendingBatch",
    "ProposalError",
    "ScriptExhausted",
    "ScriptedModel",
    "Selection",
    "SessionConfig",
    "SideQueryError",
    "SideQueryReplyError",
    "StoredRecord",
    "SyncBusy",
    "SyncError",
    "SyncNotConfigured",
    "SyncPreconditionFailed",
    "SyncRemoteError",
    "SyncStateError",
    "TurnError",
    "TurnEvent",
    "TurnResult",
    "Usage",
    "__version__",
    "keyword_select",
    "load_ipython_extension",
    "select_memories",
    "unload_ipython_extension",
]


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_ipython_extension(ip: object) -> None:
    """``%load_ext ipymemory``: register ``%%agent``, ``%memory`` and ``%config IPyMemory``."""
    # Imported lazily: `import ipymemory` must stay light outside IPython.
    from .notebook import load_ipython_extension as load

    load(ip)


def unload_ipython_extension(ip: object) -> None:
    """``%unload_ext ipymemory``: unregister the magics, close widgets and sessions."""
    from .notebook import unload_ipython_extension as unload

    unload(ip)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    # Imported lazily: plain `import ipymemory` must not need jupyter_server.
    from .server import jupyter_server_extension_points

    return jupyter_server_extension_points()


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    from .server import labextension_paths

    return labextension_paths()
