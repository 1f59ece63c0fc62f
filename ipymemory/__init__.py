"""ipymemory: file-based long-term memory for agents in Jupyter notebooks."""

from __future__ import annotations

from .errors import (
    MemoryConflictError,
    MemoryFormatError,
    MemoryLockTimeout,
    MemoryStoreError,
    ModelNotConfigured,
    SideQueryError,
)
from .store.record import MemoryRecord, MemoryType, StoredRecord

__version__ = "0.1.0"

__all__ = [
    "MemoryConflictError",
    "MemoryFormatError",
    "MemoryLockTimeout",
    "MemoryRecord",
    "MemoryStoreError",
    "MemoryType",
    "ModelNotConfigured",
    "SideQueryError",
    "StoredRecord",
    "__version__",
]
