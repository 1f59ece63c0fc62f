"""``sync push`` / ``pull`` / ``status``: one scope's ``.memory/`` and one memory store.

* **push** sends every change made here since the last sync (:mod:`.plan`) as a create,
  or an update / delete whose precondition is the hash the last sync saw there. A 409
  (someone changed it there) stops that record only: it is reported, nothing of it is
  written, and the next pull shows both versions. A remote that cannot be reached (or
  answers 5xx, 401, 403, 429) stops the push; what was done is kept. The state is saved
  every ``SYNC_SAVE_EVERY`` writes and at the end, so a push killed in between redoes
  at most those and finds them done (same content on both sides: in sync, nothing sent
  twice). Nothing changed here: no request at all.
* **pull** brings every change made there since the last sync as a pending batch
  (one, unless it would not fit one file of ``pending/``: then in runs kept one after
  the other, each fetched once the last is kept, each written to the state as
  ``tentative`` before it is kept and confirmed after, so a pull killed or stopped
  part-way keeps exactly what it kept), screened as another agent's proposals
  (:func:`~ipymemory.review.proposals.keep_proposals`: origin ``agent``, credentials
  redacted, instructions held; a deletion is a proposal to forget, always held; a
  conflict is held with both versions shown), decided like any batch (``commit --batch
  ID``, widgets, the Lab panel). Its provenance names the store, and per record the
  version and who wrote it, so the journal entry of its commit says where each record
  came from. A memory that is not a valid record file, whose version was redacted
  there, or whose name is a user-wide record the project lacks
  (:class:`~ipymemory.review.scopes.AgentNames`) is reported and not imported. When the
  store's versions since the last pull show nothing new for this prefix, that one
  request is all.
* **status** (and ``--dry-run``) plan both ways without writing anything.

Only one sync of a ``.memory/`` runs at a time (an OS lock on ``sync/.lock``, dropped
when a holder dies); the state is written under the store's lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

from .. import _constants as C
from ..errors import (
    BatchTooLarge,
    MemoryFormatError,
    ProposalError,
    SyncBusy,
    SyncPreconditionFailed,
    SyncRemoteError,
)
from ..review.door import Door
from ..review.pending import PendingFiles
from ..review.proposals import (
    CommitChoice,
    Intake,
    ItemVerdict,
    Proposal,
    keep_proposals,
    new_batch_id,
)
from ..review.provenance import TurnProvenance
from ..review.scopes import AgentNames
from ..review.screened import keep_screened
from ..screen import Origin, screen_record
from ..store.record import MemoryRecord
from ..store.store import MemoryStore
from .paths import name_of
from .plan import (
    LocalRecord,
    PullChange,
    PushOp,
    SyncPlan,
    local_changes,
    local_records,
    make_plan,
    parse_remote,
)
from .remote import RemoteMemory, RemoteStore, RemoteVersion
from .report import ConflictSide, SyncConflict, SyncReport
from .state import (
    Pulled,
    Skipped,
    Synced,
    SyncState,
    read_state,
    reconcile,
    sync_directory,
    write_state,
)

__all__ = ["VIA", "Sync", "feed_news"]

#: ``via`` of a pulled batch's provenance: the door of another agent (SPEC §13).
VIA = Door.MEMORY_STORE
# A remote that answers these stops a push: every further request would fail alike.
_STOPPING = frozenset({401, 403, 429})
# Conflicts whose store side ``status`` fetches to show both versions.
_SHOWN_CONFLICTS = 20


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def feed_news(versions: Sequence[RemoteVersion], state: SyncState) -> bool:
    """Whether any of ``versions`` (the store's, since the newest one the last pull
    saw) may concern this prefix and is not one this state already knows: then the
    memories must be listed. When in doubt (a redacted version names no path), yes."""
    known_versions = state.known_versions()
    known_memories = state.known_memories()
    for version in versions:
        if version.id in known_versions:
            continue
        ours = version.memory_id in known_memories
        if version.operation == "deleted" and not ours:
            continue  # a memory this sync never took: nothing to undo here
        if ours or version.path is None or version.path.startswith(state.prefix):
            return True
    return False


@dataclass(frozen=True)
class _Fetched:
    """A pull change with what the store said of its version: the proposal to make,
    or why it is not imported."""

    change: PullChange
    version: RemoteVersion | None
    proposal: Proposal | None = None
    local: LocalRecord | None = None
    skipped: str | None = None

    @property
    def by(self) -> str | None:
        author = self.version.author if self.version is not None else None
        return None if author is None else author.describe()


class Sync:
    """One scope's store (``store``: its ``.memory/``) and the memories of ``remote``
    under ``prefix`` (``user_store``: the user scope beside a project's ``store``);
    see the module docstring."""

    def __init__(
        self,
        store: MemoryStore,
        remote: RemoteStore,
        prefix: str,
        *,
        user_store: MemoryStore | None,
        scope: str = "project",
        files: PendingFiles | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.remote = remote
        self.prefix = prefix
        #: The user scope, whose names a pulled memory may not take (None: off, or
        #: ``store`` is the user scope).
        self.user_store = user_store
        self.scope = scope
        self.files = files if files is not None else PendingFiles(store.root)
        self.clock = clock

    # --- shared ---------------------------------------------------------------------

    def _current(self, save: bool) -> SyncState:
        """The saved state with every decided pulled batch taken into account (saved
        so when ``save``)."""
        saved = read_state(self.store.root, self.remote.store_id, self.prefix)
        state = reconcile(saved, self.files.holds)
        if save and state is not saved:
            write_state(self.store, state)
        return state

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """The sync lock of this ``.memory/`` (:class:`SyncBusy` when another holds it)."""
        import filelock  # here: `import ipymemory` stays light

        real = self.store.directory(create=True)
        assert real is not None
        directory = sync_directory(real)
        lock = filelock.FileLock(str(directory / ".lock"), timeout=0, is_singleton=False)
        try:
            lock.acquire()
        except filelock.Timeout:
            raise SyncBusy(
                f"{directory}: another sync of this .memory is running; try again when it ends"
            ) from None
        try:
            yield
        finally:
            lock.release()

    def _start(self, action: str, dry_run: bool) -> _Measure:
        return _Measure(action, dry_run, time.perf_counter(), self.remote.requests)

    def _report(
        self,
        measure: _Measure,
        state: SyncState,
        plan: SyncPlan | None = None,
        *,
        not_imported: Sequence[Mapping[str, str]] = (),
        **kw: Any,
    ) -> SyncReport:
        """The report of a run; with ``plan``, what it says waits, is not imported (as
        well as ``not_imported``) and is in sync."""
        planned: dict[str, Any] = {}
        if plan is not None:
            waiting: dict[str, list[str]] = {}
            for name, batch in sorted(plan.waiting.items()):
                waiting.setdefault(batch, []).append(name)
            held = [{"path": s.path, "reason": s.reason} for s in plan.held.values()]
            foreign = [{"path": p, "reason": why} for p, why in plan.foreign]
            not_imported = (*held, *foreign, *not_imported)
            planned = {
                "listed": True,
                "waiting": {batch: tuple(names) for batch, names in waiting.items()},
                "in_sync": plan.in_sync + len(plan.converged),
            }
        return SyncReport(
            action=measure.action,
            scope=self.scope,
            directory=str(self.store.root),
            memory_store=self.remote.store_id,
            prefix=self.prefix,
            dry_run=measure.dry_run,
            requests=self.remote.requests - measure.first,
            seconds=time.perf_counter() - measure.started,
            last_push=state.last_push,
            last_pull=state.last_pull,
            not_imported=tuple(not_imported),
            **planned,
            **kw,
        )

    @staticmethod
    def _settled(records: dict[str, Synced], plan: SyncPlan) -> None:
        """What both sides already agree on, recorded (no request needed)."""
        records.update(plan.converged)
        for name in plan.dropped:
            records.pop(name, None)

    # --- push -------------------------------------------------------------------------

    def push(self, *, dry_run: bool = False) -> SyncReport:
        """Send the changes made here since the last sync (see the module docstring)."""
        measure = self._start("push", dry_run)
        with contextlib.nullcontext() if dry_run else self._exclusive():
            state = self._current(save=not dry_run)
            local, refused = local_records(self.store.entries())
            cannot = tuple({"name": n, "reason": why} for n, why in sorted(refused.items()))
            # Nothing to send: no request (a dry run still looks, to say what is there).
            if not dry_run and not local_changes(local, state, refused):
                return self._report(
                    measure,
                    state,
                    cannot_push=cannot,
                    note="nothing changed here since the last sync",
                )
            plan = make_plan(local, self.remote.memories(self.prefix), state, refused)
            records = dict(state.records)
            self._settled(records, plan)
            done, failed, stopped = self._send(plan.pushes, records, state, dry_run)
            if not dry_run:
                state = replace(state, records=records, last_push=_now())
                write_state(self.store, state)
        return self._report(
            measure,
            state,
            plan,
            pushed=tuple(done),
            failed=tuple(failed),
            conflicts=_unfetched_conflicts(plan, local),
            cannot_push=cannot,
            to_pull=tuple(p.name for p in plan.pulls if p.conflict is None),
            stopped=stopped,
        )

    def _send(
        self,
        ops: Sequence[PushOp],
        records: dict[str, Synced],
        state: SyncState,
        dry_run: bool,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None]:
        done: list[dict[str, Any]] = []
        failed: list[dict[str, Any]] = []
        unsaved = 0
        for op in ops:
            row = {"name": op.name, "kind": op.kind, "path": op.path}
            if dry_run:
                done.append(row)
                continue
            try:
                self._write(op, records)
            except SyncPreconditionFailed as e:
                failed.append({**row, "conflict": True, "error": _changed_there(op, e)})
                continue
            except SyncRemoteError as e:
                if e.status_code == 404:
                    why = "it is gone there (deleted since the last sync): pull to decide"
                    failed.append({**row, "conflict": True, "error": why})
                    continue
                if e.status_code is None or e.status_code >= 500 or e.status_code in _STOPPING:
                    return done, failed, f"{e}; {len(done)} written, the rest not: run push again"
                failed.append({**row, "conflict": False, "error": str(e)})
                continue
            done.append(row)
            unsaved += 1
            if unsaved >= C.SYNC_SAVE_EVERY:
                write_state(self.store, replace(state, records=dict(records)))
                unsaved = 0
        return done, failed, None

    def _write(self, op: PushOp, records: dict[str, Synced]) -> None:
        if op.kind == "delete":
            assert op.memory_id is not None and op.expected_sha256 is not None
            self.remote.delete(op.memory_id, op.expected_sha256)
            records.pop(op.name, None)
            return
        assert op.local is not None
        if op.kind == "create":
            got = self.remote.create(op.path, op.local.content)
        else:
            assert op.memory_id is not None and op.expected_sha256 is not None
            got = self.remote.update(op.memory_id, op.local.content, op.expected_sha256)
        records[op.name] = Synced(got.id, got.version_id, got.sha256, op.local.sha256)

    # --- pull -------------------------------------------------------------------------

    def pull(self, *, dry_run: bool = False, commit: CommitChoice = "review") -> SyncReport:
        """Bring the changes made there since the last sync (see the module docstring)."""
        measure = self._start("pull", dry_run)
        with contextlib.nullcontext() if dry_run else self._exclusive():
            state = self._current(save=not dry_run)
            local, refused = local_records(self.store.entries())
            memories = self._memories_if_changed(state, dry_run)
            if memories is None:
                if not dry_run:
                    state = replace(state, last_pull=_now())
                    write_state(self.store, state)
                return self._report(
                    measure,
                    state,
                    to_push=local_changes(local, state, refused),
                    not_imported=tuple(
                        {"path": s.path, "reason": s.reason} for s in state.skipped.values()
                    ),
                    note="nothing changed there since the last pull",
                )
            plan = make_plan(local, memories, state, refused)
            if dry_run:
                return self._planned_pull(plan, local, state, measure)
            return self._pull(plan, memories, local, state, commit, measure)

    def _memories_if_changed(
        self, state: SyncState, dry_run: bool
    ) -> tuple[RemoteMemory, ...] | None:
        """The memories under the prefix, or None when the versions written there since
        the last pull's listing concern nobody here (one request instead of a listing)."""
        fresh = state.listed_at is not None and self.clock() - state.listed_at < (
            C.SYNC_FULL_LIST_SECONDS
        )
        if not dry_run and state.feed_mark is not None and fresh:
            versions, complete = self.remote.versions_since(state.feed_mark)
            if complete and not feed_news(versions, state):
                return None
        return self.remote.memories(self.prefix)

    def _planned_pull(
        self,
        plan: SyncPlan,
        local: Mapping[str, LocalRecord],
        state: SyncState,
        measure: _Measure,
    ) -> SyncReport:
        rows = tuple(
            {
                "name": p.name,
                "kind": p.kind,
                "replaces": p.replaces,
                "conflict": p.conflict,
                "by": None,
                "version": None if p.memory is None else p.memory.version_id,
            }
            for p in plan.pulls
        )
        return self._report(
            measure,
            state,
            plan,
            pulled=rows,
            conflicts=_unfetched_conflicts(plan, local),
            to_push=tuple(op.name for op in plan.pushes),
        )

    def _fetch(self, change: PullChange) -> _Fetched:
        """What the store says of ``change``'s version, and the proposal it makes."""
        if change.kind == "forget":
            assert change.base is not None
            return _Fetched(
                change,
                self.remote.deletion(change.base.memory_id),
                Proposal(None, replaces=change.name),
            )
        assert change.memory is not None
        version = self.remote.version(change.memory.version_id)
        if version.redacted_at is not None or version.content is None:
            by = f" by {version.redacted_by.describe()}" if version.redacted_by else ""
            when = "" if version.redacted_at is None else f" at {version.redacted_at.isoformat()}"
            why = f"version {version.id} was redacted there{by}{when}; not imported"
            return _Fetched(change, version, skipped=why)
        try:
            record = parse_remote(self.prefix, change.memory.path, version.content)
        except MemoryFormatError as e:
            return _Fetched(change, version, skipped=f"not a valid record file: {e}")
        unredactable = _unredactable(record)
        if unredactable is not None:
            return _Fetched(change, version, skipped=unredactable)
        return _Fetched(
            change, version, Proposal(record, replaces=change.replaces), LocalRecord.of(record)
        )

    def _pull(
        self,
        plan: SyncPlan,
        memories: Sequence[RemoteMemory],
        local: Mapping[str, LocalRecord],
        state: SyncState,
        commit: CommitChoice,
        measure: _Measure,
    ) -> SyncReport:
        listed = {m.id for m in memories}
        records = dict(state.records)
        self._settled(records, plan)
        skipped = {m: s for m, s in state.skipped.items() if m in listed}
        kept = _Kept(replace(state, records=records, skipped=skipped))
        names = AgentNames.of(self.user_store)
        # Deletions wait in batches of their own: a commit can forget records, or add
        # and update them, but the store takes no removal without a replacement in one
        # consolidation (so a person declining every other change could not commit).
        groups = [
            [c for c in plan.pulls if c.kind != "forget"],
            [c for c in plan.pulls if c.kind == "forget"],
        ]
        stopped = None
        try:
            for group in groups:
                for chunk in self._fetched(group, names, local, kept):
                    self._keep(chunk, commit, kept)
        except (ProposalError, SyncRemoteError) as e:
            usable = len(plan.pulls) - sum(1 for f in kept.fetched if f.skipped is not None)
            left = usable - len(kept.verdicts) - len(kept.too_large)
            batches = f" in batches {', '.join(kept.batches)}" if kept.batches else ""
            stopped = (
                f"{e}; {left} of {usable} changes not kept (what was kept waits{batches}): "
                "pull again for the rest"
            )
        state = replace(kept.state, last_pull=_now())
        if stopped is None and _all_seen(memories, state):
            marks = [m.updated_at for m in memories]
            state = replace(
                state,
                feed_mark=max(marks).isoformat() if marks else state.feed_mark,
                listed_at=self.clock(),
            )
        write_state(self.store, state)
        verdicts = kept.verdicts
        rows = tuple(
            {
                "name": f.change.name,
                "kind": f.change.kind,
                "replaces": f.change.replaces if f.change.kind == "rename" else None,
                "conflict": f.change.conflict,
                "by": f.by,
                "version": None if f.version is None else f.version.id,
                "verdict": verdicts[f.change.name].verdict,
                "reasons": list(verdicts[f.change.name].reasons),
                "status": verdicts[f.change.name].status,
            }
            for f in kept.fetched
            if f.proposal is not None and f.change.name in verdicts
        )
        not_imported = [
            {"path": f.change.memory.path, "reason": why}
            for f, why in [
                *((f, f.skipped) for f in kept.fetched if f.skipped is not None),
                *kept.too_large,
            ]
            if f.change.memory is not None
        ]
        conflicts = [f for f in kept.fetched if f.change.conflict]
        return self._report(
            measure,
            state,
            plan,
            not_imported=not_imported,
            pulled=rows,
            batches=tuple(kept.batches),
            committed=tuple(kept.committed),
            conflicts=tuple(_conflict(f, local, self.prefix) for f in conflicts),
            to_push=tuple(op.name for op in plan.pushes),
            stopped=stopped,
        )

    def _fetched(
        self,
        changes: Sequence[PullChange],
        names: AgentNames,
        local: Mapping[str, LocalRecord],
        kept: _Kept,
    ) -> Iterator[list[_Fetched]]:
        """``changes`` fetched one by one, in runs to keep as one batch each: a run's
        records take at most half of ``pending/``'s bound as JSON (one batch when the
        pull is that small, as most are), the rest of the bound being for what a batch
        says of each (provenance, flags); :meth:`_keep` halves a run that still does
        not fit. Fetching the next run waits until the last one is kept, so a pull
        stopped part-way keeps what it had. What is not imported goes to
        ``kept.state.skipped``."""
        run: list[_Fetched] = []
        size = 0
        for change in changes:
            f = _unshadowing(self._fetch(change), names, local)
            kept.fetched.append(f)
            if f.skipped is not None and f.change.memory is not None:
                kept.skip(f.change.memory, f.skipped)
            record = f.proposal.record if f.proposal is not None else None
            if f.proposal is None:
                continue
            weight = 0 if record is None else len(_json_bytes(record.to_json()))
            if run and size + weight > C.MAX_PENDING_FILE_BYTES // 2:
                yield run
                run, size = [], 0
            run.append(f)
            size += weight
        if run:
            yield run

    def _keep(self, chunk: Sequence[_Fetched], commit: CommitChoice, kept: _Kept) -> None:
        """Keep ``chunk`` as one pending batch (in auto mode, commit what needs nobody
        first), halved until each part fits ``pending/``; ``kept.state`` saved before
        (its changes tentative) and after. Raises :class:`ProposalError` when it cannot
        be kept (the saved state then holds none of it)."""
        state = kept.state
        batch_id = new_batch_id()
        tentative = {f.change.name: _pulled(f, batch_id, tentative=True) for f in chunk}
        write_state(self.store, replace(state, pulled={**state.pulled, **tentative}))
        try:
            outcome = keep_proposals(
                self.store,
                [f.proposal for f in chunk if f.proposal is not None],
                Intake(
                    self._provenance(chunk),
                    self.user_store,
                    commit=commit,
                    batch_id=batch_id,
                    files=self.files,
                    held={f.change.name: (_held(f),) for f in chunk if f.change.conflict},
                ),
            )
        except BatchTooLarge as e:
            if len(chunk) > 1:
                half = len(chunk) // 2
                self._keep(chunk[:half], commit, kept)
                self._keep(chunk[half:], commit, kept)
                return
            # No batch can hold it: reported, and not imported while it stays so there.
            (f,) = chunk
            why = f"{e}; not imported"
            kept.too_large.append((f, why))
            if f.change.memory is not None:
                kept.skip(f.change.memory, why)
            write_state(self.store, kept.state)
            return
        except ProposalError:
            write_state(self.store, state)  # none of it waits
            raise
        if outcome.batch_id is not None:
            kept.batches.append(outcome.batch_id)
        kept.committed += [*outcome.committed, *outcome.removed]
        kept.verdicts.update({v.name: v for v in outcome.items})
        pulled = dict(state.pulled)
        for f in chunk:
            done = kept.verdicts[f.change.name].status == "committed"
            batch = outcome.committed_batch if done else outcome.batch_id
            pulled[f.change.name] = _pulled(f, str(batch))
        # What auto mode committed is synced now.
        kept.state = reconcile(replace(state, pulled=pulled), self.files.holds)
        write_state(self.store, kept.state)

    def _provenance(self, fetched: Sequence[_Fetched]) -> TurnProvenance:
        """Where the pulled batch came from: the store, and per record the version and
        who wrote it there (it reaches the journal entry of the batch's commit)."""
        items: dict[str, Any] = {}
        for f in fetched:
            version = f.version
            author = version.author if version is not None else None
            items[f.change.name] = {
                "memory_id": f.change.memory.id
                if f.change.memory is not None
                else (f.change.base.memory_id if f.change.base else None),
                "version_id": None if version is None else version.id,
                "operation": None if version is None else version.operation,
                "by": None if author is None else author.describe(),
                "author": None if author is None else author.to_json(),
            }
        return TurnProvenance(
            f"sync-{os.getpid()}",
            via=VIA,
            caller={
                "memory_store": self.remote.store_id,
                "prefix": self.prefix,
                "scope": self.scope,
                "pulled": items,
            },
        )

    # --- status -----------------------------------------------------------------------

    def status(self) -> SyncReport:
        """Both ways, planned, nothing written; conflicts with both versions."""
        measure = self._start("status", True)
        state = self._current(save=False)
        local, refused = local_records(self.store.entries())
        plan = make_plan(local, self.remote.memories(self.prefix), state, refused)
        conflicts = []
        for change in plan.conflicts[:_SHOWN_CONFLICTS]:
            version = (
                self.remote.version(change.memory.version_id) if change.memory is not None else None
            )
            conflicts.append(_conflict(_Fetched(change, version), local, self.prefix))
        return self._report(
            measure,
            state,
            plan,
            pushed=tuple({"name": op.name, "kind": op.kind, "path": op.path} for op in plan.pushes),
            pulled=tuple(
                {"name": p.name, "kind": p.kind, "replaces": p.replaces, "conflict": p.conflict}
                for p in plan.pulls
            ),
            conflicts=tuple(conflicts),
            cannot_push=tuple({"name": n, "reason": w} for n, w in sorted(refused.items())),
        )


# --- helpers --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Measure:
    """One run: what it is, when it started, the requests made before it."""

    action: str
    dry_run: bool
    started: float
    first: int


def _unfetched_conflicts(
    plan: SyncPlan, local: Mapping[str, LocalRecord]
) -> tuple[SyncConflict, ...]:
    """The plan's conflicts, the store's side not fetched (a push or dry run)."""
    return tuple(
        SyncConflict(c.name, c.conflict or "", _here(local.get(c.name)), None)
        for c in plan.conflicts
    )


def _here(local: LocalRecord | None) -> ConflictSide:
    return ConflictSide(
        None if local is None else local.record, None if local is None else local.sha256
    )


def _conflict(fetched: _Fetched, local: Mapping[str, LocalRecord], prefix: str) -> SyncConflict:
    """Both versions of a conflict (the store's as far as it was fetched)."""
    change, version = fetched.change, fetched.version
    there: ConflictSide | None = None
    if change.memory is None:  # deleted there
        there = ConflictSide(
            None, None, version=None if version is None else version.id, by=fetched.by
        )
    elif version is not None:
        record: MemoryRecord | None = None
        text = version.content
        if text is not None:
            with contextlib.suppress(MemoryFormatError):
                record = parse_remote(prefix, change.memory.path, text)
                text = None
        there = ConflictSide(record, version.sha256, text, version.id, fetched.by)
    return SyncConflict(change.name, change.conflict or "", _here(local.get(change.name)), there)


def _changed_there(op: PushOp, error: SyncPreconditionFailed) -> str:
    if op.kind == "create":
        return f"a memory is already at {op.path} (HTTP 409): pull to see both sides"
    return "changed there since the last sync (HTTP 409): pull to see both sides"


def _held(fetched: _Fetched) -> str:
    by = f" (by {fetched.by})" if fetched.by else ""
    return (
        f"{fetched.change.conflict}: committing takes the memory store's version{by}, "
        "rejecting keeps this one (the next push sends it); `sync status` shows both"
    )


def _unredactable(record: MemoryRecord) -> str | None:
    """Why ``record`` cannot be proposed although valid: it holds a credential whose
    redacted form is no record of the same name (else None)."""
    screening = screen_record(record, Origin.AGENT)
    kept = keep_screened([screening], set())
    if kept.dropped or not kept.items or kept.items[0].name != record.name:
        return "holds a credential, and its redacted form is not a valid record; not imported"
    return None


def _pulled(fetched: _Fetched, batch: str, *, tentative: bool = False) -> Pulled:
    change, version = fetched.change, fetched.version
    if change.kind == "forget":
        assert change.base is not None
        return Pulled(
            batch,
            "forget",
            change.base.memory_id,
            version.id if version is not None else change.base.version_id,
            replaces=change.name,
            by=fetched.by,
            tentative=tentative,
        )
    assert change.memory is not None and fetched.local is not None
    return Pulled(
        batch,
        change.kind,
        change.memory.id,
        change.memory.version_id,
        change.memory.sha256,
        fetched.local.sha256,
        replaces=change.replaces,
        by=fetched.by,
        tentative=tentative,
    )


@dataclass
class _Kept:
    """What a pull did so far: the state as saved, the changes fetched, its batches,
    what auto mode committed, each item's verdict, and the changes no batch could
    hold."""

    state: SyncState
    fetched: list[_Fetched] = field(default_factory=list)
    batches: list[str] = field(default_factory=list)
    committed: list[str] = field(default_factory=list)
    verdicts: dict[str, ItemVerdict] = field(default_factory=dict)
    too_large: list[tuple[_Fetched, str]] = field(default_factory=list)

    def skip(self, memory: RemoteMemory, why: str) -> None:
        """``memory`` is reported and not imported while its version stays this one."""
        skipped = {**self.state.skipped, memory.id: Skipped(memory.path, memory.version_id, why)}
        self.state = replace(self.state, skipped=skipped)


def _json_bytes(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _unshadowing(
    fetched: _Fetched, names: AgentNames, local: Mapping[str, LocalRecord]
) -> _Fetched:
    """``fetched``, or not imported when its record would take a user-wide name
    (:class:`AgentNames`, the check every door asks)."""
    record = fetched.proposal.record if fetched.proposal is not None else None
    refused = record and names.refusal(record.name, local)
    if not refused:
        return fetched
    return replace(fetched, proposal=None, skipped=f"{refused} (rename it there); not imported")


def _all_seen(memories: Sequence[RemoteMemory], state: SyncState) -> bool:
    """Whether every record's memory listed there is accounted for by ``state`` (its
    current version synced, pulled or skipped) and every record synced is still there
    as seen: only then may an idle pull trust the versions written after these."""
    known = state.known_versions()
    if any(name_of(state.prefix, m.path) and m.version_id not in known for m in memories):
        return False
    listed = {m.id: m.version_id for m in memories}
    waiting = set(state.pulled) | {p.replaces for p in state.pulled.values() if p.replaces}
    return all(
        listed.get(s.memory_id) == s.version_id
        for n, s in state.records.items()
        if n not in waiting
    )
