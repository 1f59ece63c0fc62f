"""The history side of the store (SPEC §6): reading the journal, bringing it up to the
set, and the journal line a commit writes -- beside :class:`~.store.MemoryStore`, which
holds the lock and writes the set.

Planned by pure functions, which read (the set, the journal's entries, the record files
through :class:`~.kept.RecordFiles`) and write nothing, as :mod:`.reversal` and
:mod:`.recovery` plan undo, restore and recover::

    plan_sync       what bringing the journal up to the set would write: the ``external``
                    entry describing a change that is not ours (None when the journal is
                    up to date) and the record files still in .memory/ to move into
                    history/files/ -- a commit's first step, and preview's view of it
    commit_entry    the commit's own entry and its exact bytes, refused before anything
                    is written when it could not be written or read back
    unchanged_entry the entry of a commit that changes nothing ("nothing to merge")

and applied by small ones, under the store lock: :func:`sync_journal` (cut a torn line,
finish the last entry's file moves, append the ``external`` entry), :func:`newest_entry`
(the journal as it stands, when the set replaced is unknown), with the refusals of
:func:`refuse_broken` and :func:`journal_errors` (nothing changed). Reading:
:func:`journal_entries`, :func:`newest_first`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import MemoryFormatError, MemoryStoreError
from .history import (
    MAX_LINE_BYTES,
    Added,
    HistoryEntry,
    Journal,
    Removed,
    actor_info,
    now_utc,
    replay,
    sha256_hex,
)
from .kept import RecordFiles
from .plan import CommitPlan
from .record import StoredRecord

__all__ = [
    "SyncPlan",
    "commit_entry",
    "journal_entries",
    "journal_errors",
    "newest",
    "newest_entry",
    "newest_first",
    "plan_sync",
    "refuse_broken",
    "sync_journal",
    "unchanged_entry",
]

Meta = tuple[dict[str, Any], dict[str, dict[str, Any]]]


# --- reading -------------------------------------------------------------------------


def newest_first(journal: Journal, limit: int | None = None) -> tuple[HistoryEntry, ...]:
    """The journal's entries, newest first (at most ``limit``)."""
    entries = journal.read().entries[::-1]
    return entries if limit is None else entries[:limit]


def journal_entries(journal: Journal) -> tuple[HistoryEntry, ...] | None:
    """The journal's entries, oldest first; None without a usable journal (or an
    empty one)."""
    try:
        report = journal.read()
    except MemoryStoreError:
        return None
    return report.entries or None


def newest(entries: Sequence[HistoryEntry]) -> HistoryEntry | None:
    """The entry of the highest seq (None for none)."""
    return max(entries, key=lambda e: e.seq) if entries else None


# --- planning ------------------------------------------------------------------------


@dataclass(frozen=True)
class SyncPlan:
    """What bringing the journal up to a set writes: the ``external`` entry (None when
    the journal is up to date) and the files to move into history/files/."""

    external: HistoryEntry | None
    moving: frozenset[str]


def plan_sync(
    entries: Sequence[HistoryEntry],
    last: HistoryEntry | None,
    before: bytes | None,
    current: Sequence[StoredRecord],
    files: RecordFiles,
) -> SyncPlan:
    """What bringing the journal (its ``entries``, its newest entry ``last``) up to
    ``current`` (manifest bytes ``before``) would write, without writing: the
    ``external`` entry describing a change that is not ours, and the record files still
    in ``.memory/`` it moves into history/files/ (the last entry's interrupted moves,
    and files another tool took out of the set but left)."""
    listed = {e.file for e in current}
    moving: set[str] = set()
    if last is not None:
        for r in last.removed:
            # A crash between the journal line and the moves: finish them.
            if r.kept and r.file not in listed and files.here(r.file):
                moving.add(r.file)
    after = sha256_hex(before)
    if (last.after if last is not None else None) == after:
        return SyncPlan(None, frozenset(moving))
    if last is None and not current:
        return SyncPlan(None, frozenset(moving))  # nothing to describe yet
    known = replay(entries)
    added = [
        Added(e.record.name, e.file, sha256_hex(files.bytes_here(e.file)))
        for e in current
        if e.file not in known
    ]
    removed = []
    for file, was in known.items():
        if file not in listed:
            # The other tool may have left the file: keep it rather than lose it.
            here = files.here(file)
            if here:
                moving.add(file)
            removed.append(Removed(was.name, file, here or files.kept(file)))
    entry = HistoryEntry(
        seq=last.seq + 1 if last is not None else 1,
        at=now_utc(),
        op="external",
        before=last.after if last is not None else None,
        after=after,
        added=tuple(added),
        removed=tuple(removed),
        actor={"tool": "unknown", "seen_by": actor_info()},
    )
    return SyncPlan(entry, frozenset(moving))


def commit_entry(
    journal: Journal,
    last: HistoryEntry | None,
    before: bytes | None,
    manifest_bytes: bytes,
    plan: CommitPlan,
    meta: Meta,
) -> tuple[HistoryEntry, bytes]:
    """The commit's journal entry (following ``last``) and its exact bytes, made before
    anything is written: a line that cannot be encoded (a lone surrogate) or read back
    (over :data:`MAX_LINE_BYTES`) refuses the commit instead of failing after it."""
    added, removed = plan.journal_lines()
    line = HistoryEntry(
        seq=last.seq + 1 if last is not None else 1,
        at=now_utc(),
        op=plan.op,
        before=sha256_hex(before),
        after=sha256_hex(manifest_bytes),
        added=added,
        removed=removed,
        source_names=plan.source_names,
        undoes=plan.undoes,
        restores=plan.restores,
        actor=meta[0],
        provenance=meta[1],
        updates=plan.updates,
    )
    try:
        data = line.line()
    except (UnicodeError, TypeError, ValueError) as e:
        raise MemoryStoreError(
            f"{journal.shown}: the journal entry cannot be written ({e}); nothing changed"
        ) from e
    if len(data) > MAX_LINE_BYTES:
        raise MemoryStoreError(
            f"{journal.shown}: the journal entry would be {len(data)} bytes, over "
            f"{MAX_LINE_BYTES}; nothing changed"
        )
    return line, data


def unchanged_entry(
    last: HistoryEntry | None, before: bytes | None, plan: CommitPlan, meta: Meta
) -> HistoryEntry:
    """The entry of a commit that changes nothing: ``before`` = ``after``."""
    digest = sha256_hex(before)
    return HistoryEntry(
        seq=last.seq + 1 if last is not None else 1,
        at=now_utc(),
        op=plan.op,
        before=digest,
        after=digest,
        actor=meta[0],
        provenance=meta[1],
    )


# --- applying (under the store lock) -------------------------------------------------


def refuse_broken(journal: Journal, where: object) -> None:
    """:class:`MemoryFormatError` when the history cannot be used (a file where its
    directory belongs ...): every commit is refused until it is moved away."""
    broken = journal.broken()
    if broken is not None:
        raise MemoryFormatError(f"{where}: {broken}; nothing changed")


@contextlib.contextmanager
def journal_errors(journal: Journal, doing: str) -> Iterator[None]:
    """An I/O error while ``doing`` something to the journal, as the
    :class:`MemoryStoreError` that says nothing changed."""
    try:
        yield
    except OSError as e:
        raise MemoryStoreError(f"{journal.shown}: cannot {doing} ({e}); nothing changed") from e


def sync_journal(
    journal: Journal,
    before: bytes | None,
    current: Sequence[StoredRecord],
    files: RecordFiles,
    step: Callable[[str], None],
) -> HistoryEntry | None:
    """Bring the journal up to the set about to be changed: cut a torn line, finish the
    last entry's file moves, and record a change that is not ours as an ``external``
    entry (:func:`plan_sync`). Returns the newest entry. ``step`` hears
    ``external-appended`` (the store's checkpoint)."""
    journal.cut_torn_tail()
    try:
        last = journal.last()
        entries: Sequence[HistoryEntry] | None = None
    except MemoryFormatError:
        entries = journal.read().entries
        last = newest(entries)
    if last is not None and last.after != sha256_hex(before):
        entries = journal.read().entries if entries is None else entries
    plan = plan_sync(entries or (), last, before, current, files)
    for file in sorted(plan.moving):
        journal.keep(file)
    if plan.external is None:
        return last
    journal.append(plan.external)
    step("external-appended")
    return plan.external


def newest_entry(journal: Journal) -> HistoryEntry | None:
    """The journal's newest entry as it stands (a torn line cut first): what a commit
    follows when the set it replaces is unknown (recover)."""
    with journal_errors(journal, "read the history journal"):
        journal.cut_torn_tail()
        return newest(journal.read().entries)
