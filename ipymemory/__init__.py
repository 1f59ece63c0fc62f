"""ipymemory: file-based long-term memory for agents in Jupyter notebooks."""

from __future__ import annotations

from .errors import (
    BatchError,
    CommandError,
    CommandUsageError,
    IPyMemoryError,
    MemoryConfigError,
    MemoryConflictError,
    MemoryFormatError,
    MemoryLockTimeout,
    MemoryRecoveryNeeded,
    MemorySecretError,
    MemoryStoreError,
    ModelAPIError,
    ModelConnectionError,
    ModelError,
    ModelNotConfigured,
    ModelResponseError,
    ModelTimeout,
    ScriptExhausted,
    SideQueryError,
    SideQueryReplyError,
    TurnError,
)
from .model import AnthropicModel, ModelClient, ModelReply, NoModel, ScriptedModel, Usage
from .sidequery import ConsolidationPlan, Selection, select_memories
from .sidequery.fallback import keyword_select
from .store.record import MemoryRecord, MemoryType, StoredRecord
from .store.store import MemoryStore
from .turn import (
    AgentSession,
    BatchRegistry,
    BatchStatus,
    CommitResult,
    PendingBatch,
    SessionConfig,
    TurnEvent,
    TurnResult,
)

__version__ = "0.1.0"

__all__ = [
    "AgentSession",
    "AnthropicModel",
    "BatchError",
    "BatchRegistry",
    "BatchStatus",
    "CommandError",
    "CommandUsageError",
    "CommitResult",
    "ConsolidationPlan",
    "IPyMemoryError",
    "MemoryConfigError",
    "MemoryConflictError",
    "MemoryFormatError",
    "MemoryLockTimeout",
    "MemoryRecord",
    "MemoryRecoveryNeeded",
    "MemorySecretError",
    "MemoryStore",
    "MemoryStoreError",
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
    "ScriptExhausted",
    "ScriptedModel",
    "Selection",
    "SessionConfig",
    "SideQueryError",
    "SideQueryReplyError",
    "StoredRecord",
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
