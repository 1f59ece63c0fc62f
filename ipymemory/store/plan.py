"""A commit, planned: the set after it and what its journal entry says (SPEC §4, §6).

Every change -- add, forget, consolidate, undo, restore, recover -- is decided first, as
one :class:`CommitPlan`, and ``MemoryStore._commit`` applies whichever plan it is given
the same way (the planners for undo and restore are in :mod:`.reversal`, for recover in
:mod:`.recovery`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import MemoryStoreError
from .history import MAX_LINE_BYTES, Added, Removed, actor_info, sha256_hex
from .record import MemoryRecord, StoredRecord, render_record

__all__ = ["CommitPlan", "new_entry"]

# Records that come back through undo/restore/recover were decided earlier; their
# origin says how they came back.
_DEFAULT_ORIGIN = {"undo": "undo", "restore": "restore", "recover": "recover"}


@dataclass(frozen=True)
class CommitPlan:
    """One commit: the entries that stay, the new files it writes after them, the files
    it lets go (moved into ``history/files/`` after the commit point), and the journal
    entry's fields."""

    op: str
    kept: tuple[StoredRecord, ...]  # current entries that stay, in set order
    additions: tuple[StoredRecord, ...] = ()  # new record files, after ``kept``
    removals: tuple[StoredRecord, ...] = ()  # entries leaving the set
    raw: Mapping[str, bytes] = field(default_factory=dict)  # addition file -> exact bytes
    actor: Mapping[str, Any] | None = None
    provenance: Mapping[str, Mapping[str, Any]] | None = None
    source_names: tuple[str, ...] = ()
    undoes: int | None = None
    restores: int | None = None
    updates: Mapping[str, str] = field(default_factory=dict)  # new name -> replaced name
    # What the entry says was added and removed, when the planner says it (recover:
    # against the journal's last set, the set replaced being unknown).
    recorded: tuple[tuple[Added, ...], tuple[Removed, ...]] | None = None

    @property
    def new_set(self) -> tuple[StoredRecord, ...]:
        return self.kept + self.additions

    def payload(self, entry: StoredRecord) -> bytes:
        """The bytes an addition's file gets: kept bytes unchanged, else rendered."""
        return self.raw.get(entry.file) or render_record(entry.record)

    def journal_lines(self) -> tuple[tuple[Added, ...], tuple[Removed, ...]]:
        """The entry's ``added`` and ``removed``: the files this commit writes (with the
        sha256 of their bytes) and lets go (kept in history/files/), unless ``recorded``."""
        if self.recorded is not None:
            return self.recorded
        added = tuple(
            Added(e.record.name, e.file, sha256_hex(self.payload(e))) for e in self.additions
        )
        return added, tuple(Removed(e.record.name, e.file, True) for e in self.removals)

    def meta(self) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """The entry's actor and provenance, checked before anything is written: JSON
        only, provenance only for names this commit adds (origin ``manual`` unless
        given: a write through the API or the CLI)."""
        added = [e.record.name for e in self.additions]
        actor = actor_info(self.actor)
        given = dict(self.provenance or {})
        unknown = sorted(set(given) - set(added))
        if unknown:
            raise MemoryStoreError(
                f"provenance names {', '.join(map(repr, unknown))}, which this commit "
                "does not add; nothing changed"
            )
        provenance: dict[str, dict[str, Any]] = {}
        for name in added:
            item = given.get(name)
            if item is not None and not isinstance(item, Mapping):
                raise MemoryStoreError(f"provenance of {name!r} must be a mapping")
            provenance[name] = {"origin": _DEFAULT_ORIGIN.get(self.op, "manual"), **(item or {})}
        try:
            text = json.dumps([actor, provenance], sort_keys=True, ensure_ascii=False)
            # As the journal line is written: a lone surrogate (half an emoji) fails here.
            size = len(text.encode("utf-8"))
        except (TypeError, ValueError) as e:
            raise MemoryStoreError(
                f"actor/provenance must be JSON data encodable as UTF-8 ({e}); nothing changed"
            ) from e
        if size > MAX_LINE_BYTES // 2:  # the rest of the line: names, files, hashes
            raise MemoryStoreError(
                f"actor/provenance are {size} bytes of JSON, over the journal line's "
                f"budget of {MAX_LINE_BYTES // 2}; nothing changed"
            )
        return actor, provenance


def new_entry(record: MemoryRecord) -> StoredRecord:
    """A new entry with a fresh id (ours, never a model's): ``<name>-<uuid4 hex>.md``."""
    return StoredRecord(f"{record.name}-{uuid.uuid4().hex}.md", record)
