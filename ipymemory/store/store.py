"""MemoryStore: the current set of records in ``<workspace>/.memory`` (SPEC §1, §4, §6).

Reads take no lock (:mod:`.reading`): the manifest is replaced atomically and record
files are immutable, so a reader reads the manifest, then the files it lists, and
starts over when a concurrent commit moved one away. A missing or unreadable manifest
beside record files (or a journal) is :class:`MemoryRecoveryNeeded`, never an empty set;
``recover`` rebuilds it.

Every change is one commit under the store lock, following SPEC §4 step by step, with
its journal line (SPEC §6, :mod:`.history`) right after the commit point and the files
it lets go moved into ``history/files/``. The history side is planned beside the store,
by functions that read and write nothing: bringing the journal up to the set and the
commit's own line (:mod:`.journal_sync`), undo and restore (:mod:`.reversal`), recover
(:mod:`.recovery`), a consolidation (:mod:`.consolidating`); the store holds the lock,
applies their plans and writes the set (:mod:`.writing`).
Each step is reported to :meth:`MemoryStore._checkpoint` (a no-op) under a name from
:data:`COMMIT_STEPS`, so crash tests can kill a process between any two steps.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from .. import _constants as C
from .._secrets import redact
from ..errors import (
    MemoryConflictError,
    MemoryFormatError,
    MemorySecretError,
    MemoryStoreError,
)
from . import durable
from .consolidating import Consolidation, check_records
from .history import HistoryEntry, Journal
from .index import render_catalog, render_index
from .journal_sync import (
    commit_entry,
    journal_entries,
    journal_errors,
    newest_entry,
    newest_first,
    refuse_broken,
    sync_journal,
    unchanged_entry,
)
from .kept import RecordFiles, read_record_file
from .layout import (
    HISTORY_DIR_NAME,
    INDEX_NAME,
    JOURNAL_NAME,
    MANIFEST_NAME,
    MemoryDir,
)
from .lock import DEFAULT_LOCK_TIMEOUT, LockWaitListener, StoreLock
from .manifest import render_manifest
from .plan import CommitPlan, new_entry
from .reading import RECOVER_HINT, UNREADABLE_HINT, ReadableSet, SetReader, name_clashes
from .record import (
    MemoryRecord,
    StoredRecord,
    record_secrets,
)
from .recovery import RecoveryPlan, plan_recovery, recovery_commit
from .reversal import plan_reversal, preview_reversal
from .writing import NewSet, SetWriter, check_new_set

__all__ = [
    "COMMIT_STEPS",
    "RECOVER_HINT",
    "UNREADABLE_HINT",
    "HistoryPreview",
    "MemoryStore",
    "ReadableSet",
    "name_clashes",
]

#: Every step of the commit protocol, in order. Per-record steps repeat for each new
#: record; ``old-kept`` repeats for each replaced or forgotten file.
COMMIT_STEPS: tuple[str, ...] = (
    "locked",  # 1. the store lock is held
    "manifest-read",  # 1. current set re-read (2., 3. checked in memory)
    "empty-manifest-temp-written",  # first set only: an empty manifest goes first
    "empty-manifest-replaced",
    "record-created",  # 4. new record file created exclusively (empty)
    "record-written",  # 4. its bytes written
    "record-synced",  # 4. fsynced
    "record-verified",  # 4. read back and compared
    "dir-synced",  # 5. directory fsynced: new names durable
    "index-temp-written",  # 5. MEMORY.md temp written and fsynced
    "index-replaced",  # 5. renamed over MEMORY.md
    "manifest-temp-written",  # 6. manifest temp written and fsynced
    "manifest-replaced",  # 6. renamed over manifest.json: the new set is visible
    "commit-dir-synced",  # 6. directory fsynced: the commit point
    "journal-appended",  # §6: the commit's journal line written and fsynced
    "old-kept",  # 7. a replaced record file moved into history/files/
    "external-appended",  # §6, before 4.: a change not ours recorded first
)


class MemoryStore:
    """The memory set of one workspace, stored in ``<workspace>/.memory``.

    ``max_index_lines`` / ``max_index_bytes`` bound MEMORY.md (what it lists, never what
    the set holds: issue 31);
    ``lock_timeout`` bounds the wait for the writer lock (seconds); ``on_lock_wait``
    hears about a long wait for it (default: the context's ``reporting_lock_waits``).
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        max_index_lines: int = C.DEFAULT_MAX_INDEX_LINES,
        max_index_bytes: int = C.DEFAULT_MAX_INDEX_BYTES,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        on_lock_wait: LockWaitListener | None = None,
    ) -> None:
        for label, value in (
            ("max_index_lines", max_index_lines),
            ("max_index_bytes", max_index_bytes),
        ):
            if type(value) is not int or value < 1:
                raise MemoryStoreError(f"{label} must be a positive integer, got {value!r}")
        if not isinstance(lock_timeout, (int, float)) or lock_timeout < 0:
            raise MemoryStoreError(f"lock_timeout must be a number >= 0, got {lock_timeout!r}")
        self.dir = MemoryDir.of(workspace)
        self.workspace = self.dir.workspace
        self.root = self.dir.root
        self.max_index_lines = max_index_lines
        self.max_index_bytes = max_index_bytes
        self.lock_timeout = float(lock_timeout)
        self.on_lock_wait = on_lock_wait
        self._reader = SetReader(self.dir)
        self._store_lock: tuple[str, StoreLock] | None = None

    def __repr__(self) -> str:
        return f"MemoryStore({str(self.workspace)!r})"

    # --- hooks -------------------------------------------------------------------

    def _checkpoint(self, step: str) -> None:
        """Called at each step of :data:`COMMIT_STEPS`; a no-op (crash tests replace it)."""

    # --- reading -----------------------------------------------------------------

    def records(self) -> tuple[MemoryRecord, ...]:
        """The current records in manifest order; ``()`` if there is no store yet."""
        return tuple(e.record for e in self.entries())

    def entries(self, *, reuse: bool = False) -> tuple[StoredRecord, ...]:
        """The current set as (file, record) entries in manifest order. ``reuse``: the
        last read while the set did not change (a turn's: ``SetReader.read_set``)."""
        real = self.directory()
        return () if real is None else self._reader.read_set(real, self._load, reuse=reuse)[1]

    def readable(self, *, reuse: bool = False) -> ReadableSet:
        """The current set without the listed record files that do not load (each named
        in ``unreadable``), for readers that go on without them: a turn, a listing, a
        selection. What :meth:`entries` raises for the manifest itself (missing,
        unreadable: :class:`MemoryRecoveryNeeded`) is raised here too; every write still
        refuses the set until the file is fixed or ``recover`` rebuilds it (issue 43);
        ``reuse`` as for :meth:`entries`."""
        real = self.directory()
        return self._reader.readable(real, self._load, reuse=reuse) if real else ReadableSet(())

    def catalog(self) -> str:
        """The MEMORY.md text of the current set, rendered from the manifest."""
        return render_catalog(self.entries())

    def get(self, name: str) -> MemoryRecord:
        """The current record called ``name``; :class:`MemoryStoreError` if there is none."""
        for entry in self.entries():
            if entry.record.name == name:
                return entry.record
        raise MemoryStoreError(f"{self.root}: no record named {name!r}")

    def directory(self, *, create: bool = False) -> str | None:
        """The resolved ``.memory`` directory, checked; None if absent and not ``create``."""
        return self.dir.resolve(create=create)

    def listed_files(self) -> tuple[str, ...]:
        """The file names the manifest lists, in set order (``()`` if there is no store).

        Raises :class:`MemoryRecoveryNeeded` if the manifest is missing or unreadable
        while records or a history exist (never read as an empty set).
        """
        real = self.directory()
        return () if real is None else self._read_manifest(real)[1]

    def read_entry(self, file: str) -> StoredRecord:
        """The record in ``file`` (a record file name in ``.memory``), validated; a file
        that does not load is :class:`MemoryRecordUnreadable`."""
        real = self.directory()
        got = None if real is None else self._reader.record_file(real, file)
        if got is None:
            raise MemoryFormatError(
                f"{self.dir.where(file)}: listed in {MANIFEST_NAME} but missing"
            )
        return StoredRecord(file, self._reader.parse(file, got[0]))

    def _read_manifest(self, real: str) -> tuple[bytes | None, tuple[str, ...]]:
        return self._reader.manifest(real)

    def _load(self, real: str, file: str, present: set[str] | None) -> StoredRecord:
        """One listed file's entry (:meth:`SetReader.load`; a test races a commit here)."""
        return self._reader.load(real, file, present)

    def _read_set(
        self, real: str, *, locked: bool = False
    ) -> tuple[bytes | None, tuple[StoredRecord, ...]]:
        """The manifest's bytes and the set it lists (:meth:`SetReader.read_set`);
        ``locked``: the caller holds the writer lock."""
        return self._reader.read_set(real, self._load, locked=locked)

    # --- writing -----------------------------------------------------------------

    def _lock(self, real: str) -> StoreLock:
        cached = self._store_lock
        if cached is None or cached[0] != real:
            # Kept: building one resolves the path (a syscall per path component).
            cached = self._store_lock = (real, StoreLock(real))
        lock = cached[1]
        lock.timeout = self.lock_timeout
        lock.on_wait = self.on_lock_wait
        return lock

    @contextlib.contextmanager
    def _locked(self) -> Iterator[tuple[str, StoreLock]]:
        """Hold the writer lock (creating ``.memory`` if needed); yields its real path."""
        real = self.directory(create=True)
        assert real is not None
        with self._lock(real) as lock:
            self._checkpoint("locked")
            yield real, lock

    @contextlib.contextmanager
    def locked(self) -> Iterator[str]:
        """Hold the writer lock (creating ``.memory`` if needed) for maintenance work;
        yields the resolved directory. Commits from this thread may nest inside."""
        with self._locked() as (real, _lock):
            yield real

    def rebuild_index(self) -> int:
        """Rewrite MEMORY.md from the manifest, atomically, under the lock.

        Returns the number of records in the set. Refuses (raises) if there is no memory
        directory or the set does not load.
        """
        if self.directory() is None:
            raise MemoryStoreError(f"{self.root}: no memory directory to reindex")
        with self._locked() as (real, _lock):
            entries = self._read_set(real, locked=True)[1]
            data = render_index(entries, self.max_index_lines, self.max_index_bytes)
            durable.replace_atomic(real, INDEX_NAME, data, _no_step, "index")
            durable.fsync_dir(real)
        return len(entries)

    def extend(
        self,
        records: Iterable[MemoryRecord],
        *,
        provenance: Mapping[str, Mapping[str, Any]] | None = None,
        actor: Mapping[str, Any] | None = None,
    ) -> tuple[StoredRecord, ...]:
        """Add ``records`` in one commit; refuses names already in the set.

        ``provenance`` (per added name: the turn's query, ``origin``, files read, ...) and
        ``actor`` (session, notebook, cell) go into the journal entry (SPEC §6).
        """
        new = check_records(records, "extend")
        if not new:
            return ()
        with self._locked() as (real, lock):
            before, current = self._read_set(real, locked=True)
            self._checkpoint("manifest-read")
            taken = {e.record.name for e in current}
            clash = [r.name for r in new if r.name in taken]
            if clash:
                raise MemoryStoreError(
                    f"{self.root / MANIFEST_NAME}: already holds a record named "
                    f"{', '.join(map(repr, clash))}; extend refused, nothing changed"
                )
            added = tuple(new_entry(r) for r in new)
            plan = CommitPlan("add", current, added, actor=actor, provenance=provenance)
            self._commit(real, lock, before, current, plan)
            return added

    def forget(self, names: Iterable[str] | str, *, actor: Mapping[str, Any] | None = None) -> None:
        """Remove the records called ``names`` in one commit (their files are kept in
        ``history/files/`` after it, for undo)."""
        wanted = [names] if isinstance(names, str) else list(names)
        for name in wanted:
            if not isinstance(name, str):
                raise MemoryStoreError(f"forget: names must be strings, got {name!r}")
        if not wanted:
            return
        with self._locked() as (real, lock):
            before, current = self._read_set(real, locked=True)
            self._checkpoint("manifest-read")
            have = {e.record.name for e in current}
            unknown = [n for n in dict.fromkeys(wanted) if n not in have]
            if unknown:
                raise MemoryStoreError(
                    f"{self.root / MANIFEST_NAME}: no record named "
                    f"{', '.join(map(repr, unknown))}; forget refused, nothing changed"
                )
            drop = set(wanted)
            kept = tuple(e for e in current if e.record.name not in drop)
            removed = tuple(e for e in current if e.record.name in drop)
            self._commit(
                real, lock, before, current, CommitPlan("forget", kept, (), removed, actor=actor)
            )

    def apply_consolidation(
        self,
        *,
        base_records: Iterable[MemoryRecord],
        additions: Iterable[MemoryRecord] = (),
        source_names: Iterable[str],
        replacements: Iterable[MemoryRecord],
        provenance: Mapping[str, Mapping[str, Any]] | None = None,
        actor: Mapping[str, Any] | None = None,
        updates: Mapping[str, str] | None = None,
    ) -> tuple[StoredRecord, ...]:
        """Commit a consolidation planned on ``base_records`` (+ this turn's ``additions``).

        The records named in ``source_names`` are replaced by ``replacements``; additions
        not in ``source_names`` are added; every other current record is kept, including
        records committed by others since the plan was made. If any base record is gone
        or changed: :class:`MemoryConflictError`, nothing changed. Returns the new entries.
        The replaced files are kept in ``history/files/``.

        Empty ``source_names`` and ``replacements`` is "nothing to merge" (SPEC §9): a
        successful consolidation that changes nothing but the ``additions``; with none,
        its journal entry has ``before`` = ``after`` and the set is not rewritten.
        ``updates`` (replacement name -> the source it replaces) marks replacements that
        are extractor updates (SPEC §9 ``replaces``); the journal entry records them.
        """
        asked = Consolidation.checked(base_records, additions, source_names, replacements, updates)
        unchanged = CommitPlan(
            "consolidate",
            (),
            actor=actor,
            provenance=provenance,
            source_names=asked.sources,
            updates=asked.updates,
        )
        with self._locked() as (real, lock):
            before, current = self._read_set(real, locked=True)
            self._checkpoint("manifest-read")
            if not asked.sources and not asked.additions:
                return self._record_unchanged(real, before, current, unchanged)
            plan = asked.commit_plan(current, unchanged, self.root / MANIFEST_NAME)
            self._commit(real, lock, before, current, plan)
            return plan.additions

    # --- history (SPEC §6) ---------------------------------------------------------

    def journal(self) -> Journal | None:
        """The history journal of this directory (None if there is no ``.memory``)."""
        real = self.directory()
        return None if real is None else self._journal(real)

    def _journal(self, real: str) -> Journal:
        return Journal(real, self.dir.where(HISTORY_DIR_NAME, JOURNAL_NAME))

    def history(self, limit: int | None = None) -> tuple[HistoryEntry, ...]:
        """The journal's entries, newest first (at most ``limit``); ``()`` if none."""
        if limit is not None and (type(limit) is not int or limit < 0):
            raise MemoryStoreError(f"history: limit must be an integer >= 0, got {limit!r}")
        real = self.directory()
        return () if real is None else newest_first(self._journal(real), limit)

    def read_history_record(self, file: str) -> MemoryRecord | None:
        """The record a journal entry names by ``file``: from the set's directory, else
        from ``history/files/`` once it left the set; None when neither holds it (or
        there is no ``.memory``). An unreadable or invalid file raises
        :class:`MemoryStoreError` (:class:`MemoryFormatError`) naming it."""
        real = self.directory()
        got = None if real is None else read_record_file(self.dir, self._journal(real), file)
        return None if got is None else got.record()

    def undo(self, seq: int, *, actor: Mapping[str, Any] | None = None) -> HistoryEntry:
        """Commit the inverse of journal entry ``seq`` against the current set.

        Records it removed come back byte-identical (new ids); records it added leave.
        If that is not clean (a name now held by another record, an added record since
        replaced, a file no longer kept), or if it would change nothing (it was undone
        already): :class:`MemoryConflictError`, nothing written. Returns the new journal
        entry. Planned after the journal is brought up to date (a change another tool
        made is recorded first, as by every commit).
        """
        return self._reverse("undo", seq, actor)

    def restore(self, seq: int, *, actor: Mapping[str, Any] | None = None) -> HistoryEntry:
        """Commit the set to be exactly the set after journal entry ``seq`` (records no
        longer current come back byte-identical from ``history/files/``, with new ids).
        :class:`MemoryConflictError` and nothing written if a needed file is not kept,
        or if the set already is that set."""
        return self._reverse("restore", seq, actor)

    def preview(self, op: Literal["undo", "restore"], seq: int) -> HistoryPreview:
        """What ``undo(seq)`` / ``restore(seq)`` would do now, without the lock and
        without writing: the names that would leave and come back, or why it is refused
        (the very planning the commit runs, so the preview cannot disagree with it).
        A change the journal has not recorded yet (another tool's commit) counts as
        recorded, as the commit would first record it."""
        real = self.directory()
        if real is None:
            raise MemoryStoreError(f"{self.root}: no history entry #{seq}")
        before, current = self._read_set(real)
        journal = self._journal(real)
        try:
            plan = preview_reversal(op, seq, current, journal, self._files(journal), before)
            # The commit would refuse it too (SPEC §7): say so now, not at commit.
            refuse_secrets([e.record for e in plan.additions], self.root)
        except (MemoryConflictError, MemorySecretError) as e:
            return HistoryPreview(op, seq, (), (), str(e))
        return HistoryPreview.of(op, seq, plan)

    def _reverse(
        self, op: Literal["undo", "restore"], seq: int, actor: Mapping[str, Any] | None
    ) -> HistoryEntry:
        with self._locked() as (real, lock):
            before, current = self._read_set(real, locked=True)
            self._checkpoint("manifest-read")
            # Planned on an up-to-date journal: a record another tool took out of the
            # set is in history/files/ (and the journal) before undo looks for it.
            self._bring_journal_up_to_date(real, before, current)
            journal = self._journal(real)
            entries = journal.read().entries
            plan = plan_reversal(op, seq, current, entries, self._files(journal), actor=actor)
            if not plan.additions and not plan.removals:
                # An undo run twice (two proposals of it, say): no empty entry.
                said = (
                    "what it removed is in the set again and what it added has left"
                    if op == "undo"
                    else f"the set already is the set after #{seq}"
                )
                raise MemoryConflictError(f"{op} #{seq}: nothing to {op} ({said}); nothing changed")
            return self._commit(real, lock, before, current, plan)

    def _files(self, journal: Journal) -> RecordFiles:
        return RecordFiles(self.dir, journal)

    def recover(
        self, *, dry_run: bool = False, actor: Mapping[str, Any] | None = None
    ) -> RecoveryPlan:
        """Rebuild a manifest that is missing or unreadable, in one commit (SPEC §6).

        From the journal's last known set where its files exist (or are kept), else from
        the valid record files present. ``dry_run``: only return the plan. Nothing is
        deleted: invalid files and older duplicates are left where they are and listed
        in the plan; a manifest path that cannot be replaced (a directory) is moved
        aside. When the set loads, nothing is written and the plan says so.
        """
        real = self.directory()
        if real is None:
            return RecoveryPlan("none", None)
        if dry_run:
            return self._recovery_plan(real)
        with self._locked() as (real, lock):
            plan = self._recovery_plan(real)
            if not plan.needed:
                return plan
            journal = self._journal(real)
            try:
                if plan.set_aside is not None:
                    os.rename(f"{real}/{MANIFEST_NAME}", f"{real}/{plan.set_aside}")
                for file in plan.from_history:
                    journal.unkeep(file)
            except OSError as e:
                raise MemoryStoreError(f"{self.root}: recover could not move a file ({e})") from e
            # The set was unknown: the journal's last set stands for the one replaced.
            entries = journal_entries(journal) or ()
            rebuilt = recovery_commit(plan, entries, self._files(journal), actor=actor)
            self._commit(real, lock, self._reader.raw_manifest(real), None, rebuilt)
            return replace(plan, applied=True)

    def _recovery_plan(self, real: str) -> RecoveryPlan:
        """:func:`plan_recovery` over what this store reads now: why the set does not
        load, the files the manifest lists (if it parses), the journal's entries."""
        journal = self._journal(real)
        files = self._files(journal)
        try:
            self.entries()
        except MemoryStoreError as e:
            problem = str(e)
        else:
            return plan_recovery(None, None, None, files)
        try:
            listed: Sequence[str] | None = self.listed_files()
        except MemoryStoreError:
            listed = None
        return plan_recovery(problem, listed, journal_entries(journal), files)

    def sync_journal(self) -> HistoryEntry | None:
        """Bring the journal up to the current set, under the lock (what every commit
        does first): cut a torn line, finish the last entry's file moves, and record a
        change that is not ours as an ``external`` entry, moving the record files it
        took out of the set into history/files/. Returns the newest entry (None if
        there is no journal and no set). Used by ``gc`` before it looks for leftovers."""
        with self._locked() as (real, _lock):
            before, current = self._read_set(real, locked=True)
            return self._bring_journal_up_to_date(real, before, current)

    def _bring_journal_up_to_date(
        self, real: str, before: bytes | None, current: Sequence[StoredRecord]
    ) -> HistoryEntry | None:
        """:meth:`_sync_journal` with its refusals (a broken history, an I/O error) as
        :class:`MemoryStoreError` saying nothing changed."""
        journal = self._journal(real)
        refuse_broken(journal, self.root)
        with journal_errors(journal, "bring the history journal up to date"):
            return self._sync_journal(journal, before, current)

    def _sync_journal(
        self, journal: Journal, before: bytes | None, current: Sequence[StoredRecord]
    ) -> HistoryEntry | None:
        """Bring the journal up to the set about to be changed, under the lock
        (:func:`~.journal_sync.sync_journal`). Returns the newest entry."""
        return sync_journal(journal, before, current, self._files(journal), self._checkpoint)

    def _commit(
        self,
        real: str,
        lock: StoreLock,
        before: bytes | None,
        current: Sequence[StoredRecord] | None,
        plan: CommitPlan,
    ) -> HistoryEntry:
        """SPEC §4 steps 4-7 for ``plan`` (caller holds the lock, steps 1-3 done), and
        its journal entry (SPEC §6), over the set ``current`` (manifest bytes
        ``before``); ``current`` None: the set replaced is unknown (recover), so there
        is no set to bring the journal up to date against. Returns the entry."""
        # Everything that can be refused is checked before the first byte is written
        # (SPEC §4 step 3 for the new set as a whole, whatever the caller planned), so
        # nothing after the commit point can fail but a write.
        check_new_set(plan.new_set, self.root)
        refuse_secrets([e.record for e in plan.additions], self.root)
        index_bytes = render_index(plan.new_set, self.max_index_lines, self.max_index_bytes)
        manifest_bytes = render_manifest([e.file for e in plan.new_set])
        payloads = [(f"{real}/{e.file}", plan.payload(e)) for e in plan.additions]
        journal = self._journal(real)
        refuse_broken(journal, self.root)
        meta = plan.meta()
        last = self._journal_base(journal, before, current)
        line, line_bytes = commit_entry(journal, last, before, manifest_bytes, plan, meta)
        if before is None and current is not None:
            # The first set here: an empty manifest goes first, so no record file ever
            # exists without a manifest (which would read as a lost set, SPEC §6).
            try:
                durable.replace_atomic(
                    real, MANIFEST_NAME, render_manifest([]), self._checkpoint, "empty-manifest"
                )
                durable.fsync_dir(real)
            except OSError as e:
                raise MemoryStoreError(f"{self.root}: cannot create {MANIFEST_NAME} ({e})") from e
        writer = SetWriter(real, self.root, self.max_index_bytes, self._checkpoint)
        backups = writer.write(lock, NewSet(payloads, index_bytes, manifest_bytes))
        # Past the commit point: the commit has happened. Only writes are left, and none
        # may skip the others: a journal line that cannot be written is made up by the
        # next writer's `external` entry; a file that cannot be moved is moved by the
        # next writer (or `gc`); discarding the backups only leaves unreferenced files.
        try:
            with contextlib.suppress(OSError, MemoryStoreError):
                journal.append(line, line_bytes)
                self._checkpoint("journal-appended")
        finally:
            for gone in plan.removals:
                with contextlib.suppress(OSError, MemoryStoreError):
                    journal.keep(gone.file)
                self._checkpoint("old-kept")
            for backup in backups:
                backup.discard()
        return line

    def _journal_base(
        self, journal: Journal, before: bytes | None, current: Sequence[StoredRecord] | None
    ) -> HistoryEntry | None:
        """The entry the commit's entry follows: the newest once the journal is brought
        up to ``current``; with ``current`` None (the set replaced is unknown), the
        newest as the journal stands."""
        if current is not None:
            return self._bring_journal_up_to_date(journal.real, before, current)
        return newest_entry(journal)

    def _record_unchanged(
        self, real: str, before: bytes | None, current: Sequence[StoredRecord], plan: CommitPlan
    ) -> tuple[StoredRecord, ...]:
        """Journal a commit that changes nothing ("nothing to merge", under the lock):
        the set is not rewritten, the entry has ``before`` = ``after``."""
        journal = self._journal(real)
        refuse_broken(journal, self.root)
        with journal_errors(journal, "record the consolidation"):
            meta = plan.meta()
            last = self._sync_journal(journal, before, current)
            journal.append(unchanged_entry(last, before, plan, meta))
        self._checkpoint("journal-appended")
        return ()


@dataclass(frozen=True)
class HistoryPreview:
    """What an undo or restore would do now (:meth:`MemoryStore.preview`)."""

    op: str
    seq: int
    leaving: tuple[str, ...]  # names that would leave the set
    returning: tuple[str, ...]  # names that would come back from history/files/
    conflict: str | None  # why it would be refused; None if it is clean

    @classmethod
    def of(cls, op: str, seq: int, plan: CommitPlan) -> HistoryPreview:
        """The preview of a clean ``plan``."""
        leaving = tuple(e.record.name for e in plan.removals)
        return cls(op, seq, leaving, tuple(e.record.name for e in plan.additions), None)


def refuse_secrets(records: Iterable[MemoryRecord], where: object) -> None:
    """Raise :class:`MemorySecretError` (nothing written) if a record holds a credential
    (SPEC §7): the one check every commit path passes -- the API, the CLI, imports,
    batches, consolidation plans, undo and restore. The message names the record, the
    field and the kind of credential, never the credential."""
    findings = tuple(
        (redact(r.name), field, hit.kind) for r in records for field, hit in record_secrets(r)
    )
    if findings:
        said = "; ".join(f"{n!r} holds a credential ({k}) in its {f}" for n, f, k in findings)
        raise MemorySecretError(
            f"{where}: {said}; a credential is never stored -- write the redacted record "
            "(ipymemory.screen.screen_records(...)[i].redacted()); nothing changed",
            findings,
        )


def _no_step(_: str) -> None:
    pass
