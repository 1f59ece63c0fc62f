"""The exception hierarchy: every error ipymemory raises on purpose derives from one root."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .sidequery.model import Usage

__all__ = [
    "BatchError",
    "MemoryConfigError",
    "MemoryConflictError",
    "MemoryFormatError",
    "MemoryLockTimeout",
    "MemoryStoreError",
    "ModelNotConfigured",
    "ScriptExhausted",
    "SideQueryError",
    "SideQueryReplyError",
    "TurnError",
]


class MemoryStoreError(Exception):
    """Root of every ipymemory error: the memory set could not be read or changed."""


class MemoryFormatError(MemoryStoreError):
    """A record, a manifest or a file on disk breaks the format rules (SPEC §1)."""


class MemoryConflictError(MemoryStoreError):
    """The set changed underneath an operation planned on an older set."""


class MemoryLockTimeout(MemoryStoreError):
    """The store lock could not be acquired in time."""


class SideQueryError(MemoryStoreError):
    """A side-query (select / extract / consolidate) failed or its reply was invalid."""


class ModelNotConfigured(SideQueryError):
    """No model is configured (e.g. no ANTHROPIC_API_KEY), so no model call can be made."""


class SideQueryReplyError(SideQueryError):
    """A side-query reply arrived but broke the rules (SPEC §3); ``usage`` is what it cost."""

    def __init__(self, message: str, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage


class ScriptExhausted(SideQueryError):
    """A ``ScriptedModel`` was called after its last scripted reply."""


class TurnError(MemoryStoreError):
    """The agent turn itself failed (e.g. the main model call); history stays consistent."""


class BatchError(MemoryStoreError, ValueError):
    """A pending-batch operation got bad input (unknown batch, unknown item names)."""


class MemoryConfigError(MemoryStoreError, ValueError):
    """A setting (``%config IPyMemory``, an ``IPYMEMORY_*`` variable) has a bad value."""
