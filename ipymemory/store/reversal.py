"""Planning an undo or a restore (SPEC §6): from the current set, the journal's entries
and the record files (in the set, or kept in ``history/files/``) to one
:class:`~.plan.CommitPlan`, writing nothing. ``MemoryStore`` commits the plan, and its
preview runs the very same planning, so the two cannot disagree."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal

from ..errors import MemoryConflictError, MemoryStoreError
from .history import Added, HistoryEntry, Journal, replay, sha256_hex
from .journal_sync import newest, plan_sync
from .kept import RecordFiles
from .layout import HISTORY_DIR_NAME
from .plan import CommitPlan, new_entry
from .record import StoredRecord

__all__ = ["plan_reversal", "preview_reversal"]


def plan_reversal(
    op: Literal["undo", "restore"],
    seq: int,
    current: Sequence[StoredRecord],
    entries: Sequence[HistoryEntry],
    files: RecordFiles,
    *,
    actor: Mapping[str, Any] | None = None,
    moving: Collection[str] = frozenset(),
) -> CommitPlan:
    """The commit an undo or restore of entry ``seq`` makes from ``current``, given the
    journal's ``entries`` (``moving``: files still in ``.memory/`` that bringing the
    journal up to date moves into history/files/).

    A record counts as present if its file is, or a byte-identical copy under another
    id (an earlier undo or restore brought it back). Raises
    :class:`MemoryConflictError` when that commit is not clean."""
    target = _find(entries, seq, files.folder.where(HISTORY_DIR_NAME))
    digests = _digests(files, current)
    by_file = {e.file: e for e in current}
    same = {(e.record.name, digests[e.file]): e for e in current}

    def present(a: Added) -> StoredRecord | None:
        return by_file.get(a.file) or same.get((a.name, a.sha256))

    if op == "undo":
        # An added record that left since (forgotten, undone) needs no undoing; one a
        # consolidation took in lives on in its merge: taking that back is not clean.
        stale = [a for a in target.added if present(a) is None and _replaced(entries, seq, a)]
        if stale:
            raise MemoryConflictError(
                f"undo #{seq}: {', '.join(repr(a.name) for a in stale)} added by it "
                "has since been replaced or removed; nothing changed"
            )
        leaving = {e.file for a in target.added if (e := present(a)) is not None}
        kept = tuple(e for e in current if e.file not in leaving)
        wanted = [(r.file, r.name) for r in target.removed]
        undoes, restores = seq, None
    else:
        staying: set[str] = set()
        wanted = []
        for file, a in replay(e for e in entries if e.seq <= target.seq).items():
            match = present(a)
            if match is None:
                wanted.append((file, a.name))
            else:
                staying.add(match.file)
        kept = tuple(e for e in current if e.file in staying)
        undoes, restores = None, seq
    recorded = {a.file: a.sha256 for e in entries for a in e.added if a.sha256}
    back, raw = _bring_back(files, wanted, kept, digests, recorded, moving)
    kept_files = {e.file for e in kept}
    removed = tuple(e for e in current if e.file not in kept_files)
    return CommitPlan(op, kept, back, removed, raw, actor=actor, undoes=undoes, restores=restores)


def _replaced(entries: Sequence[HistoryEntry], seq: int, added: Added) -> bool:
    """Whether the last entry after ``seq`` that took ``added`` (or a byte-identical copy
    an undo or restore brought back) out of the set was a consolidation -- or none did
    (it left without an entry: nothing to go by)."""
    later = sorted((e for e in entries if e.seq > seq), key=lambda e: e.seq)
    copies = {added.file} | {
        x.file
        for e in later
        for x in e.added
        if added.sha256 is not None and (x.name, x.sha256) == (added.name, added.sha256)
    }
    last = None
    for entry in later:
        if any(r.file in copies for r in entry.removed):
            last = entry
    return last is None or last.op == "consolidate"


def _digests(files: RecordFiles, entries: Sequence[StoredRecord]) -> dict[str, str | None]:
    """The sha256 of each entry's file bytes (None if it cannot be read)."""
    out: dict[str, str | None] = {}
    for e in entries:
        try:
            got = files.read(e.file)
        except MemoryStoreError:
            got = None
        out[e.file] = sha256_hex(got.data) if got else None
    return out


def _bring_back(
    files: RecordFiles,
    wanted: Sequence[tuple[str, str]],
    staying: Sequence[StoredRecord],
    digests: Mapping[str, str | None],
    recorded: Mapping[str, str],
    moving: Collection[str],
) -> tuple[tuple[StoredRecord, ...], dict[str, bytes]]:
    """New entries (new ids, the kept bytes unchanged) for kept ``(file, name)``s, and
    their bytes; one whose byte-identical copy is among ``staying`` is there already. A
    kept file whose bytes are not the ``recorded`` sha256 the journal gave it when it
    was added is refused: it would commit content that never was in the set. Name
    clashes are decided by the record name in the file, not the journal's."""
    taken = {e.record.name: e.file for e in staying}
    entries: list[StoredRecord] = []
    raw: dict[str, bytes] = {}
    for file, name in wanted:
        # A file that bringing the journal up to date is about to move is still here.
        got = files.read(file, in_set=file in moving)
        if got is None:
            raise MemoryConflictError(
                f"{file} ({name!r}) is no longer kept in history/files; nothing changed"
            )
        data = got.data
        if file in recorded and sha256_hex(data) != recorded[file]:
            raise MemoryConflictError(
                f"{file} ({name!r}) in history/files is not the file the journal "
                "recorded (its bytes changed since); nothing changed"
            )
        record = got.record()
        holder = taken.get(record.name)
        if holder is not None:
            if digests.get(holder) == sha256_hex(data):
                continue  # the same bytes are in the set already
            raise MemoryConflictError(
                f"the name {record.name!r} is now held by another record ({holder}); "
                "nothing changed"
            )
        entry = new_entry(record)
        entries.append(entry)
        raw[entry.file] = data
        taken[record.name] = entry.file
        digests = {**digests, entry.file: sha256_hex(data)}
    return tuple(entries), raw


def _find(entries: Sequence[HistoryEntry], seq: object, where: str) -> HistoryEntry:
    if type(seq) is not int:
        raise MemoryStoreError(f"seq must be an integer, got {seq!r}")
    for entry in entries:
        if entry.seq == seq:
            return entry
    raise MemoryStoreError(f"{where}: no history entry #{seq}")


def preview_reversal(
    op: Literal["undo", "restore"],
    seq: int,
    current: Sequence[StoredRecord],
    journal: Journal,
    files: RecordFiles,
    before: bytes | None,
) -> CommitPlan:
    """:func:`plan_reversal` of ``op`` of entry ``seq`` as the commit would plan it now,
    without the lock: a change the ``journal`` has not recorded yet (another tool's
    commit to the set ``current``, manifest bytes ``before``) counts as recorded, as the
    commit would first record it."""
    entries = journal.read().entries
    sync = plan_sync(entries, newest(entries), before, current, files)
    if sync.external is not None:
        entries = (*entries, sync.external)
    return plan_reversal(op, seq, current, entries, files, moving=sync.moving)
