"""What one ``sync push`` / ``pull`` / ``status`` did or would do, as data.

:class:`SyncReport` is what the command layer turns into a view (``views/sync.py``
renders its :meth:`~SyncReport.to_json`; the views sit beside this unit, so they get
data, not these objects).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..store.record import MemoryRecord

__all__ = ["ConflictSide", "SyncConflict", "SyncReport"]


@dataclass(frozen=True)
class ConflictSide:
    """One side of a conflict: the record (None: it is gone there or here; or the text
    is not a valid record: ``text`` then holds it), its hash, and for the store's side
    the version and who wrote it."""

    record: MemoryRecord | None
    sha256: str | None
    text: str | None = None
    version: str | None = None
    by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "record": None if self.record is None else self.record.to_json(),
            "sha256": self.sha256,
            "text": self.text,
            "version": self.version,
            "by": self.by,
        }


@dataclass(frozen=True)
class SyncConflict:
    """A record changed on both sides since the last sync, both versions for a person."""

    name: str
    why: str
    here: ConflictSide
    there: ConflictSide | None  # None: not fetched (a push learns only that it changed)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "why": self.why,
            "here": self.here.to_json(),
            "there": None if self.there is None else self.there.to_json(),
        }


@dataclass(frozen=True)
class SyncReport:
    """See the module docstring; lists of plain data, ready for JSON."""

    action: str
    scope: str
    directory: str
    memory_store: str
    prefix: str
    dry_run: bool = False
    requests: int = 0
    seconds: float = 0.0
    #: Whether the memories were listed in full (else the versions since the last
    #: sync said nothing there changed).
    listed: bool = False
    pushed: tuple[Mapping[str, Any], ...] = ()
    failed: tuple[Mapping[str, Any], ...] = ()
    pulled: tuple[Mapping[str, Any], ...] = ()
    #: The pending batches a pull made (its deletions wait in one of their own).
    batches: tuple[str, ...] = ()
    committed: tuple[str, ...] = ()
    conflicts: tuple[SyncConflict, ...] = ()
    waiting: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    not_imported: tuple[Mapping[str, str], ...] = ()
    cannot_push: tuple[Mapping[str, str], ...] = ()
    to_push: tuple[str, ...] = ()
    to_pull: tuple[str, ...] = ()
    in_sync: int = 0
    stopped: str | None = None
    note: str | None = None
    last_push: str | None = None
    last_pull: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "sync",
            "action": self.action,
            "dry_run": self.dry_run,
            "scope": self.scope,
            "directory": self.directory,
            "memory_store": self.memory_store,
            "prefix": self.prefix,
            "requests": self.requests,
            "seconds": round(self.seconds, 3),
            "listed": self.listed,
            "pushed": [dict(p) for p in self.pushed],
            "failed": [dict(f) for f in self.failed],
            "pulled": [dict(p) for p in self.pulled],
            "batches": list(self.batches),
            "committed": list(self.committed),
            "conflicts": [c.to_json() for c in self.conflicts],
            "waiting": {batch: list(names) for batch, names in self.waiting.items()},
            "not_imported": [dict(n) for n in self.not_imported],
            "cannot_push": [dict(c) for c in self.cannot_push],
            "to_push": list(self.to_push),
            "to_pull": list(self.to_pull),
            "in_sync": self.in_sync,
            "stopped": self.stopped,
            "note": self.note,
            "last_push": self.last_push,
            "last_pull": self.last_pull,
        }
