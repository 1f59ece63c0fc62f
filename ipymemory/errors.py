"""The exception hierarchy: everything ipymemory raises on purpose derives from one root.

Callers decide by type, never by message text. Third-party errors are wrapped
(``raise ... from e``), so the original stays as ``__cause__``::

    IPyMemoryError
    ├── MemoryStoreError ............. the memory set could not be read or changed (SPEC §5)
    │   ├── MemoryFormatError ........ a record, manifest or file breaks the format (SPEC §1)
    │   │   ├── MemoryRecoveryNeeded . the manifest is gone or unreadable: run recover
    │   │   └── MemoryRecordUnreadable  one listed record file: the rest reads, writes refuse
    │   ├── MemoryConflictError ...... the set changed under an operation
    │   ├── MemorySecretError ........ a record to write holds a credential (SPEC §7)
    │   └── MemoryLockTimeout ........ the store lock was not acquired in time
    ├── MemoryConfigError (ValueError)  a setting has a bad value
    ├── ModelError ................... a model call could not be made or failed
    │   ├── ModelNotConfigured ....... no key: no call can be made
    │   ├── ModelAPIError ............ an HTTP error status (status_code, error_type, request_id)
    │   ├── ModelConnectionError ..... the API could not be reached
    │   │   └── ModelTimeout ......... the request timed out
    │   ├── ModelResponseError ....... a response that could not be read
    │   └── ScriptExhausted .......... a ScriptedModel ran out of replies
    ├── SideQueryError ............... select / extract / consolidate / summarise failed
    │   └── SideQueryReplyError ...... the reply broke SPEC §3 (usage = what it cost)
    ├── TurnError .................... the agent turn could not run (e.g. an empty query)
    ├── BatchError (ValueError) ...... bad input to a pending-batch operation
    ├── ProposalError (ValueError) ... another agent's proposal is malformed (SPEC §10)
    │   └── BatchTooLarge ............ (also a BatchError) one file over pending/'s bound
    ├── SyncError .................... a sync with an Anthropic memory store failed (SPEC §13)
    │   ├── SyncNotConfigured ........ no memory store id, or no API key
    │   ├── SyncBusy ................. another sync of the same .memory is running
    │   ├── SyncStateError ........... .memory/sync/ holds a state that cannot be trusted
    │   └── SyncRemoteError .......... the memory store refused a request or was unreachable
    │       └── SyncPreconditionFailed  HTTP 409: the memory changed there since last seen
    └── CommandError ................. a command asked for something that is not there
        └── CommandUsageError ........ a command was called wrongly
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model.usage import Usage

__all__ = [
    "BatchError",
    "BatchTooLarge",
    "CommandError",
    "CommandUsageError",
    "IPyMemoryError",
    "MemoryConfigError",
    "MemoryConflictError",
    "MemoryFormatError",
    "MemoryLockTimeout",
    "MemoryRecordUnreadable",
    "MemoryRecoveryNeeded",
    "MemorySecretError",
    "MemoryStoreError",
    "ModelAPIError",
    "ModelConnectionError",
    "ModelError",
    "ModelNotConfigured",
    "ModelResponseError",
    "ModelTimeout",
    "ProposalError",
    "ScriptExhausted",
    "SideQueryError",
    "SideQueryReplyError",
    "SyncBusy",
    "SyncError",
    "SyncNotConfigured",
    "SyncPreconditionFailed",
    "SyncRemoteError",
    "SyncStateError",
    "TurnError",
]


class IPyMemoryError(Exception):
    """Root of every error ipymemory raises on purpose."""


class MemoryStoreError(IPyMemoryError):
    """The memory set could not be read or changed (the store's error, SPEC §5)."""


class MemoryFormatError(MemoryStoreError):
    """A record, a manifest or a file on disk breaks the format rules (SPEC §1)."""


class MemoryConflictError(MemoryStoreError):
    """The set changed underneath an operation planned on an older set."""


class MemorySecretError(MemoryStoreError):
    """A record to be written holds a credential (SPEC §7): nothing was written.

    ``findings`` holds ``(record name, field, kind)`` -- never the secret itself; a name
    that holds one is given redacted. Write the redacted record instead
    (``ipymemory.screen_records(records)[i].redacted()``).
    """

    def __init__(self, message: str, findings: tuple[tuple[str, str, str], ...] = ()) -> None:
        super().__init__(message)
        self.findings = findings


class MemoryLockTimeout(MemoryStoreError):
    """The store lock could not be acquired in time."""


class MemoryRecoveryNeeded(MemoryFormatError):
    """``manifest.json`` is missing or unreadable while records or a history exist:
    the set is unknown until ``recover`` rebuilds it (SPEC §6)."""


class MemoryRecordUnreadable(MemoryFormatError):
    """A record file the manifest lists cannot be read or breaks the format (a
    hand-edited ``type:``, an unquoted colon in a description). The other records still
    read (``MemoryStore.readable()``: a turn, a listing, a selection go on without it);
    every write refuses until the file is fixed or ``recover`` rebuilds the set without
    it. ``file`` is its name in ``.memory/``; the message names its path and the rule."""

    def __init__(self, message: str, file: str) -> None:
        super().__init__(message)
        self.file = file


class SideQueryError(IPyMemoryError):
    """A side-query (select / extract / consolidate) failed or its reply was invalid."""


class SideQueryReplyError(SideQueryError):
    """A side-query reply arrived but broke the rules (SPEC §3); ``usage`` is what it cost."""

    def __init__(self, message: str, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage


class TurnError(IPyMemoryError):
    """The agent turn could not run (e.g. an empty query). A failed main model call
    raises its :class:`ModelError` instead; either way the history stays consistent."""


class BatchError(IPyMemoryError, ValueError):
    """A pending-batch operation got bad input (unknown batch, unknown item names)."""


class MemoryConfigError(IPyMemoryError, ValueError):
    """A setting (``%config IPyMemory``, an ``IPYMEMORY_*`` variable) has a bad value."""


class ModelError(IPyMemoryError):
    """A model call could not be made or did not return a usable reply."""


class ModelNotConfigured(ModelError):
    """No model is configured (e.g. no ANTHROPIC_API_KEY), so no model call can be made."""


class ModelAPIError(ModelError):
    """The Messages API answered with an error status (4xx/5xx).

    ``status_code`` is the HTTP status, ``error_type`` the API's ``error.type`` (e.g.
    ``"overloaded_error"``) and ``request_id`` its ``request-id`` header, when present.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        error_type: str | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.error_type = error_type
        self.request_id = request_id


class ModelConnectionError(ModelError):
    """The Messages API could not be reached (DNS, refused, reset, ...)."""


class ModelTimeout(ModelConnectionError):
    """A model request timed out (after the SDK's retries)."""


class ModelResponseError(ModelError):
    """A response arrived but could not be read (e.g. a body that is not JSON)."""


class ScriptExhausted(ModelError):
    """A ``ScriptedModel`` was called after its last scripted reply."""


class CommandError(IPyMemoryError):
    """A command (``ipymemory …``, ``%memory …``) was asked for something that is not
    there: an unknown memory name, no such pending batch. The CLI exits 1; ``%memory``
    raises IPython's ``UsageError``."""


class CommandUsageError(CommandError):
    """A command was called wrongly (a missing or malformed argument). The CLI prints
    the usage and exits 2; ``%memory`` raises IPython's ``UsageError``."""


class ProposalError(IPyMemoryError, ValueError):
    """Another agent's proposal (MCP ``memory_propose``, the memory tool) is malformed:
    the message names the item and the field (``records[1].name: …``). Nothing was
    kept or written."""


class BatchTooLarge(ProposalError, BatchError):
    """A batch that, as one file, would pass ``pending/``'s bound (a ``BatchError`` where
    a batch is saved; a ``ProposalError`` where agents' proposals are kept: nothing was
    kept or written, fewer at a time fit; a sync's pull splits)."""


class SyncError(IPyMemoryError):
    """A sync between a ``.memory/`` and an Anthropic memory store failed (SPEC §13)."""


class SyncNotConfigured(SyncError):
    """No memory store to sync with (``--store``, ``memory_store``), or no API key."""


class SyncBusy(SyncError):
    """Another sync of the same ``.memory/`` (any store) holds the sync lock."""


class SyncStateError(SyncError):
    """The sync state in ``.memory/sync/`` is unreadable or breaks its format; the
    message names the file and the field. Nothing was sent or changed."""


class SyncRemoteError(SyncError):
    """The memory store answered with an error status, or could not be reached.
    ``status_code`` is the HTTP status (None: no answer)."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class SyncPreconditionFailed(SyncRemoteError):
    """HTTP 409: the memory's content is no longer what this sync last saw (someone
    changed it there) or its path is taken. Never retried: nothing was written."""
