"""Pending batches (what extraction and consolidation propose) and committing them.

A batch holds the extracted ``items``, optionally a consolidation ``plan`` over the
set it was made against (``base``) plus those items, and a ``status``: ``pending``
(waiting for the user), ``committed``, ``discarded`` or ``failed`` (a commit was
tried and refused; the batch can be committed again, e.g. without its plan, or
discarded).

Committing applies everything accepted in ONE store commit (one manifest swap):

* with an accepted plan whose sources include records of the base, or accepted
  updates (items with ``replaces``, SPEC §9), or an accepted "nothing to merge" plan:
  ``store.apply_consolidation(base_records=…, additions=<accepted items neither the
  plan nor an update consumes>, source_names=<the plan's sources in the base + the
  records the updates replace>, replacements=<the plan's records + the update items>,
  updates=<update item -> the record it replaces>)`` -- the store re-reads the set
  under its lock, refuses if a record it was planned on (the whole base for a plan
  over the set; only the replaced records for updates alone) changed or vanished,
  and keeps records others added. A "nothing to merge" plan is journalled as a
  consolidation that changes nothing, even when it is all the batch holds; beside
  plain additions (no update), the additions are an ``add`` entry and the empty
  consolidation an entry of its own after it (issue 44);
* with an accepted plan that only removes records of the base (another agent's
  proposals to forget) and nothing else accepted: ``store.forget(...)``, after checking
  each is still the record the removal was proposed on;
* with a plan that only merges this batch's own items, or without a plan or updates:
  ``store.extend(...)`` after checking that no accepted name appeared in the set
  meanwhile (the store checks again under its lock).

An update is an extracted item that corrects a current record (``replaces``, e.g. a
moved deadline): committed, the record it names leaves the set in the same swap (its
file kept in ``history/files/``, so undo brings it back); rejected, the record stays.

Screening (SPEC §7) marks items: ``redacted`` items are the redacted form of an item
that held a credential (the credential itself is never kept) and are committed only
when the decision names them explicitly (``redacted=``); otherwise they count as
rejected. ``flags`` says, per item, why it needs a person (redacted, from tool output,
instructs the assistant). Such a **held** item is committed only when the decision
names it (``accept=``: ``--accept NAME``, a tick in the review widget), and a flagged
plan only when ``accept`` names :data:`PLAN_FLAG` (or ``accept_plan=False`` leaves it
out): a plain commit commits the rest, and the held items stay pending in the same
batch (same id), which says what was committed from it so far (issue 28 item 0).

A batch half applied -- its user-scope commit done, the process killed before the
project's -- resumes with what is left: a scope part whose accepted items are all in
that store as proposed (and what they replace gone) is not applied again.

Rejecting an item that an accepted plan replaces would make the plan drop it
silently, so that commit is refused with a message and the batch stays as it was:
keep the item, or reject the plan too (``accept_plan=False``).
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from traitlets import Dict, HasTraits

from .._enum import StrEnum
from ..errors import BatchError, MemoryConflictError, MemoryStoreError
from ..screen.rules import Finding, findings_of_reasons
from ..sidequery.consolidate import ConsolidationPlan
from ..store.record import MemoryRecord
from ..store.store import MemoryStore
from .history_change import HistoryChange
from .provenance import TurnProvenance, commit_meta
from .scopes import prepare_user_scope

__all__ = [
    "PLAN_FLAG",
    "PROJECT_SCOPE",
    "USER_SCOPE",
    "BatchRegistry",
    "BatchStatus",
    "CommitEffect",
    "CommitResult",
    "PendingBatch",
    "apply_batch",
    "check_accept",
    "check_reject",
    "commit_effect",
    "effective_reject",
    "held_items",
    "plan_conflict",
    "rescoped",
    "scope_parts",
]


class BatchStatus(StrEnum):
    """Where a batch stands. ``pending`` and ``failed`` await a decision (``open``);
    ``committed`` and ``discarded`` are final. A ``str``: it compares equal to, prints
    as and serialises to its value."""

    PENDING = "pending"
    COMMITTED = "committed"
    DISCARDED = "discarded"
    FAILED = "failed"

    @property
    def open(self) -> bool:
        """Whether the batch still awaits a decision (commit or discard)."""
        return self in (BatchStatus.PENDING, BatchStatus.FAILED)


@dataclass(frozen=True)
class PendingBatch:
    """What one extraction (and/or consolidation) proposes; see module docstring.

    ``plan_error`` is set when consolidation was due but failed (the items can still
    be committed without a plan); ``error`` holds the last commit failure.
    ``rejected`` / ``plan_accepted`` record the decision of a finished commit.
    ``provenance`` is what is known about the turn that proposed it and ``origins``
    each item's origin (SPEC §7; an item not listed: ``user``); both reach the
    journal entry of the commit. ``history`` makes it an undo or restore proposal
    (no items, no plan): committing it applies that change whole. ``flags``: per item
    (or the plan, under :data:`PLAN_FLAG`), why screening wants a person; ``redacted``:
    the items that are redacted forms (committed only when chosen by name);
    ``replaces``: the items that update a current record, and which one.
    """

    id: str
    items: tuple[MemoryRecord, ...]
    plan: ConsolidationPlan | None
    base: tuple[MemoryRecord, ...]
    status: BatchStatus = BatchStatus.PENDING
    plan_error: str | None = None
    error: str | None = None
    committed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()
    plan_accepted: bool = True
    provenance: TurnProvenance | None = field(default=None, compare=False)
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)
    history: HistoryChange | None = None
    flags: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False)
    redacted: tuple[str, ...] = ()
    #: Updates (SPEC §9): item name -> the name of the current record it replaces.
    replaces: Mapping[str, str] = field(default_factory=dict)
    #: SPEC §11: the items committed to the user scope (name -> "user"); the others go to
    #: the project. An update goes where the record it replaces is (then ``base`` holds
    #: that user record too).
    scopes: Mapping[str, str] = field(default_factory=dict)
    #: The extractor's excerpts per item (SPEC §9): for the journal, never the record.
    evidence: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False)
    #: SPEC §11: per item, the files it depends on (path -> sha256 as read); an item not
    #: listed has unknown sources and is never reported stale.
    sources: Mapping[str, Mapping[str, str]] = field(default_factory=dict, compare=False)
    #: Issue 39 item 3: per flagged item (or the plan, :data:`PLAN_FLAG`), which
    #: screening rules fired and on what -- shown in review, kept in the journal.
    findings: Mapping[str, tuple[Finding, ...]] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        # One check of the status, whatever built the batch ("pending" is accepted).
        try:
            object.__setattr__(self, "status", BatchStatus(self.status))
        except ValueError:
            raise BatchError(
                f"batch {self.id}: status {self.status!r} is not one of {', '.join(BatchStatus)}"
            ) from None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(item.name for item in self.items)

    def findings_of(self, name: str) -> tuple[Finding, ...]:
        """Which rules hold item ``name`` (or the plan, :data:`PLAN_FLAG`): the findings
        screening recorded, else the rules its flags' reasons name."""
        return self.findings.get(name) or findings_of_reasons(self.flags.get(name, ()))

    def all_findings(self) -> dict[str, tuple[Finding, ...]]:
        """:meth:`findings_of` every flagged item and the plan, by name."""
        names = dict.fromkeys([*self.flags, *self.findings])
        return {n: found for n in names if (found := self.findings_of(n))}

    def scope_of(self, name: str) -> str:
        """Where item ``name`` is committed: ``"user"`` or ``"project"``."""
        return USER_SCOPE if self.scopes.get(name) == USER_SCOPE else PROJECT_SCOPE

    def restricted(self, names: Collection[str], **changes: Any) -> PendingBatch:
        """This batch with only the items named in ``names`` (and what is said of them:
        origins, flags, redactions, updates, evidence, scopes), plus ``changes``."""
        keep = set(names)
        return replace(
            self,
            **{
                "items": tuple(item for item in self.items if item.name in keep),
                "origins": {n: o for n, o in self.origins.items() if n in keep},
                "flags": {n: r for n, r in self.flags.items() if n in keep},
                "redacted": tuple(n for n in self.redacted if n in keep),
                "replaces": {n: o for n, o in self.replaces.items() if n in keep},
                "evidence": {n: e for n, e in self.evidence.items() if n in keep},
                "sources": {n: f for n, f in self.sources.items() if n in keep},
                "scopes": {n: v for n, v in self.scopes.items() if n in keep},
                "findings": {n: f for n, f in self.findings.items() if n in keep or n == PLAN_FLAG},
                **changes,
            },
        )

    @property
    def open(self) -> bool:
        """Whether the batch still awaits a decision."""
        return self.status.open


@dataclass(frozen=True)
class CommitResult:
    """Names added and removed by a commit, or the error that stopped it (nothing
    changed then). ``batch`` is the batch as it is after the attempt."""

    committed: tuple[str, ...]
    removed: tuple[str, ...]
    error: str | None
    batch: PendingBatch | None = field(default=None, compare=False)
    #: The store's typed error behind ``error`` (None for a refusal decided here).
    exception: MemoryStoreError | None = field(default=None, compare=False, repr=False)
    #: Items held for a person that the decision did not name: still pending in
    #: ``batch`` (same id), never committed by this commit.
    held: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


#: The key of ``PendingBatch.flags`` for the consolidation plan itself.
PLAN_FLAG = "(consolidation plan)"

#: Where an item is committed (SPEC §11).
PROJECT_SCOPE = "project"
USER_SCOPE = "user"


def rescoped(batch: PendingBatch, scopes: Mapping[str, str]) -> PendingBatch:
    """``batch`` with the items named in ``scopes`` moved to that scope (``project`` or
    ``user``), the person's choice in review (SPEC §11). An update stays where the
    record it replaces is. :class:`BatchError` names what is wrong."""
    if isinstance(scopes, str) or not isinstance(scopes, Mapping):
        raise BatchError("scopes must map item names to 'project' or 'user'")
    unknown = _unknown_names(list(scopes), batch.names, "scopes")
    if unknown:
        raise BatchError(
            f"batch {batch.id}: {', '.join(map(repr, unknown))}: not an item of this batch "
            f"(items: {', '.join(batch.names) or 'none'})"
        )
    new = dict(batch.scopes)
    for name, scope in scopes.items():
        if scope not in (PROJECT_SCOPE, USER_SCOPE):
            raise BatchError(
                f"batch {batch.id}: scope {scope!r} of {name!r} is not project or user"
            )
        if name in batch.replaces and scope != batch.scope_of(name):
            raise BatchError(
                f"batch {batch.id}: {name!r} updates {batch.replaces[name]!r} and stays in "
                f"its scope ({batch.scope_of(name)})"
            )
        if scope == USER_SCOPE:
            new[name] = USER_SCOPE
        else:
            new.pop(name, None)
    return replace(batch, scopes=new)


def scope_parts(batch: PendingBatch) -> tuple[PendingBatch, PendingBatch | None]:
    """(the project's part of ``batch``, the user scope's part or None).

    The user's part holds its items (no plan: a plan is made over the project's set),
    and as base the user records its updates replace; the project's part the rest."""
    user = [item.name for item in batch.items if batch.scope_of(item.name) == USER_SCOPE]
    if not user:
        return batch, None
    replaced = {batch.replaces[n] for n in user if n in batch.replaces}
    mine = tuple(r for r in batch.base if r.name in replaced)
    theirs = tuple(r for r in batch.base if r.name not in replaced)
    project = [item.name for item in batch.items if item.name not in set(user)]
    provenance = batch.provenance
    if provenance is not None:
        # Its sources are files of this project: the user's set cannot compare them.
        provenance = replace(provenance, files_sha256={})
    return (
        batch.restricted(project, base=theirs),
        batch.restricted(user, plan=None, base=mine, provenance=provenance, sources={}),
    )


def effective_reject(
    batch: PendingBatch, reject: Collection[str], redacted: Collection[str] = ()
) -> tuple[str, ...]:
    """``reject`` plus every redacted item not chosen in ``redacted`` (SPEC §7: the
    redacted text is committed only on an explicit choice). Refuses ``redacted`` names
    that are not redacted items of the batch."""
    unknown = _unknown_names(redacted, batch.redacted, "redacted")
    if unknown:
        raise BatchError(
            f"batch {batch.id}: {', '.join(map(repr, unknown))} "
            + ("is not a redacted item" if len(unknown) == 1 else "are not redacted items")
            + f" (redacted: {', '.join(batch.redacted) or 'none'})"
        )
    chosen = set(redacted)
    held = [name for name in batch.redacted if name not in chosen]
    return tuple(dict.fromkeys([*reject, *held]))


def _unknown_names(names: Collection[str], known: Collection[str], what: str) -> list[str]:
    """The ``names`` not in ``known``, sorted. A bare string is refused: it would be read
    as a collection of one-letter names."""
    if isinstance(names, str):
        raise BatchError(f"{what} must be a collection of item names, not one string")
    return sorted(set(names) - set(known))


def check_reject(batch: PendingBatch, reject: Collection[str]) -> None:
    """Refuse a reject list that is a string or names something not in the batch."""
    unknown = _unknown_names(reject, batch.names, "reject")
    if unknown:
        raise BatchError(
            f"batch {batch.id}: cannot reject {', '.join(map(repr, unknown))}: "
            f"not an item of this batch (items: {', '.join(batch.names) or 'none'})"
        )


def holdable(batch: PendingBatch) -> tuple[str, ...]:
    """What a decision must name to commit it (issue 28 item 0): the items screening
    flagged that are not redacted (a redacted item is chosen with ``redacted=``), and
    :data:`PLAN_FLAG` for a flagged plan."""
    items = [n for n in batch.names if n in batch.flags and n not in batch.redacted]
    plan = [PLAN_FLAG] if batch.plan is not None and PLAN_FLAG in batch.flags else []
    return (*items, *plan)


def check_accept(batch: PendingBatch, accept: Collection[str]) -> None:
    """Refuse an ``accept`` list naming anything but the batch's held items (or its
    held plan, :data:`PLAN_FLAG`)."""
    held = holdable(batch)
    unknown = _unknown_names(accept, held, "accept")
    if unknown:
        shown = ", ".join("the plan" if n == PLAN_FLAG else n for n in held) or "none"
        raise BatchError(
            f"batch {batch.id}: {', '.join(map(repr, unknown))}: not held for review "
            f"(held: {shown}); only a held item needs to be accepted by name"
        )


def held_items(
    batch: PendingBatch,
    reject: Collection[str] = (),
    accept: Collection[str] = (),
    accept_plan: bool = True,
) -> tuple[str, ...]:
    """The held items (:func:`holdable`) this decision leaves held: neither accepted
    nor rejected by name, nor merged by a plan the decision applies."""
    named = {*reject, *accept}
    merged = set(batch.plan.source_names) if batch.plan is not None and accept_plan else set()
    return tuple(
        n for n in holdable(batch) if n != PLAN_FLAG and n not in named and n not in merged
    )


def held_plan(batch: PendingBatch, accept: Collection[str], accept_plan: bool) -> str | None:
    """Why the decision cannot be applied: it would apply a flagged plan nobody
    accepted by name; ``None`` otherwise."""
    if batch.plan is None or not accept_plan or PLAN_FLAG not in batch.flags:
        return None
    if PLAN_FLAG in accept:
        return None
    return (
        "the consolidation plan is held for review ("
        + "; ".join(batch.flags[PLAN_FLAG])
        + "): accept the plan by name to apply it, or commit without it; nothing was "
        "committed"
    )


def plan_conflict(batch: PendingBatch, reject: Collection[str], accept_plan: bool) -> str | None:
    """Why this decision cannot be applied (the accepted plan replaces a rejected
    item), or ``None``."""
    if batch.plan is None or not accept_plan:
        return None
    consumed = sorted(set(reject) & set(batch.plan.source_names))
    if not consumed:
        return None
    return (
        f"the consolidation plan replaces {', '.join(map(repr, consumed))}, which you "
        "rejected; keep "
        + ("it" if len(consumed) == 1 else "them")
        + " or reject the plan too (accept_plan=False); nothing was committed"
    )


@dataclass(frozen=True)
class CommitEffect:
    """What committing a batch with a decision would do to the set it was made on.

    ``before`` / ``after``: the number of records; ``added`` the names written (kept
    items and the plan's records); ``replaced`` the set's records the plan replaces;
    ``merged`` accepted items the plan merges away at once (never written alone);
    ``conflict`` why the decision cannot be applied (then nothing would change).
    """

    before: int
    after: int
    added: tuple[str, ...]
    replaced: tuple[str, ...]
    merged: tuple[str, ...]
    conflict: str | None


@dataclass(frozen=True)
class _Split:
    """What one decision on a batch commits (see the module docstring)."""

    additions: tuple[MemoryRecord, ...]  # accepted items nothing consumes
    updates: tuple[MemoryRecord, ...]  # accepted update items the plan does not merge
    marks: Mapping[str, str]  # those update items -> the record each replaces
    replacements: tuple[MemoryRecord, ...]  # the plan's records, then the updates
    sources: tuple[str, ...]  # base records leaving: the plan's, then the updated ones
    merged: tuple[str, ...]  # accepted items the plan merges away at once
    plan: ConsolidationPlan | None  # the accepted plan
    swap: bool  # one consolidation swap (else a plain extend)
    whole_base: bool  # the swap rests on the whole base (a plan over the set)


def _split(batch: PendingBatch, reject: Collection[str], accept_plan: bool) -> _Split:
    rejected = set(reject)
    accepted = tuple(item for item in batch.items if item.name not in rejected)
    plan = batch.plan if accept_plan else None
    consumed = set(plan.source_names) if plan is not None else set()
    updating = {i.name: batch.replaces[i.name] for i in accepted if i.name in batch.replaces}
    base_names = {record.name for record in batch.base}
    plan_sources = tuple(n for n in (plan.source_names if plan else ()) if n in base_names)
    updates = tuple(i for i in accepted if i.name in updating and i.name not in consumed)
    replacements = (plan.records if plan is not None else ()) + updates
    sources = tuple(dict.fromkeys([*plan_sources, *updating.values()]))
    empty_plan = plan is not None and not plan.source_names and not plan.records
    return _Split(
        additions=tuple(i for i in accepted if i.name not in consumed and i.name not in updating),
        updates=updates,
        marks={i.name: updating[i.name] for i in updates},
        replacements=replacements,
        sources=sources,
        merged=tuple(i.name for i in accepted if i.name in consumed),
        plan=plan,
        swap=bool(plan_sources or updating or empty_plan),
        whole_base=bool(plan_sources),
    )


def commit_effect(batch: PendingBatch, reject: Collection[str], accept_plan: bool) -> CommitEffect:
    """The effect of ``apply_batch(…, reject, accept_plan)`` on ``batch.base``, computed
    the same way (see the module docstring), without writing anything."""
    before = len(batch.base)
    conflict = plan_conflict(batch, reject, accept_plan)
    if conflict is not None:
        return CommitEffect(before, before, (), (), (), conflict)
    split = _split(batch, reject, accept_plan)
    added = tuple(r.name for r in (*split.additions, *split.replacements))
    replaced = split.sources
    return CommitEffect(
        before, before - len(replaced) + len(added), added, replaced, split.merged, None
    )


def apply_batch(
    store: MemoryStore,
    batch: PendingBatch,
    reject: Collection[str],
    accept_plan: bool,
    *,
    decided_by: str = "review",
    redacted: Collection[str] = (),
    held: Collection[str] = (),
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Commit the accepted part of ``batch`` in one store commit, its provenance
    (and the decision: ``decided_by`` ``review`` or ``auto``) in the journal entry.

    Redacted items are written only when named in ``redacted`` (else they count as
    rejected). ``held`` names items of the whole batch this decision leaves pending
    (not items of ``batch``): the journal's actor lists them. Returns (names added,
    names removed). Raises :class:`BatchError` for a bad
    decision (nothing written; see :func:`check_reject` and :func:`plan_conflict`)
    and the store's errors (``MemoryConflictError``, ``MemoryFormatError``,
    ``MemoryLockTimeout``, …) when it refuses.
    """
    check_reject(batch, reject)
    # Redacted items not named in ``redacted`` are never written (SPEC §7).
    reject = effective_reject(batch, reject, redacted)
    conflict = plan_conflict(batch, reject, accept_plan)
    if conflict is not None:
        raise BatchError(f"batch {batch.id}: {conflict}")
    rejected = set(reject)
    accepted = [item for item in batch.items if item.name not in rejected]
    split = _split(batch, reject, accept_plan)
    plan = split.plan
    if batch.history is not None:
        actor = commit_meta(
            batch.provenance,
            (),
            batch_id=batch.id,
            accepted=(),
            rejected=(),
            plan_accepted=False,
            decided_by=decided_by,
            origins={},
        )[0]
        entry = batch.history.apply(store, {**actor, "batch": batch.id})
        return tuple(a.name for a in entry.added), tuple(r.name for r in entry.removed)

    def meta(added: Collection[str]) -> dict[str, Any]:
        actor, provenance = commit_meta(
            batch.provenance,
            list(added),
            batch_id=batch.id,
            accepted=[item.name for item in accepted],
            rejected=rejected,
            plan_accepted=plan is not None,
            decided_by=decided_by,
            origins=batch.origins,
            evidence=batch.evidence,
            sources=batch.sources,
            findings=batch.all_findings(),
        )
        if held:  # still pending in the same batch: neither accepted nor rejected
            actor["held"] = sorted(held)
        return {"actor": actor, "provenance": provenance}

    added = tuple(r.name for r in (*split.additions, *split.replacements))
    if split.sources and not added:
        # Records only leave (another agent's proposals to forget): the store's forget,
        # which a consolidation cannot be without replacements. Each must still be the
        # record the proposal was made on.
        _check_unchanged(store, batch.base, split.sources)
        store.forget(list(split.sources), actor=meta(())["actor"])
        return (), split.sources
    if not split.swap:
        # No plan, or one that only merges items of this batch: nothing of the set is
        # replaced.
        if not added:
            return (), ()
        _check_new_names(store, list(added))
        store.extend([*split.additions, *split.replacements], **meta(added))
        return added, ()
    if not split.sources and added:
        # "Nothing to merge" beside plain additions (issue 44): the additions are an
        # ``add`` (one manifest swap); the consolidation that found nothing is then
        # journalled on its own (``before`` = ``after``), after them, so the spacing
        # counts from it and they are not counted again.
        _check_new_names(store, list(added))
        store.extend(split.additions, **meta(added))
        store.apply_consolidation(base_records=(), source_names=(), replacements=(), **meta(()))
        return added, ()
    by_name = {record.name: record for record in batch.base}
    if split.whole_base:
        base: tuple[MemoryRecord, ...] = batch.base
    else:  # updates alone (or "nothing to merge"): only the records they replace matter
        missing = [name for name in split.sources if name not in by_name]
        if missing:
            raise MemoryConflictError(
                "memory collection changed: "
                + ", ".join(map(repr, missing))
                + " changed or left the set since the update was proposed; nothing changed"
            )
        base = tuple(by_name[name] for name in split.sources)
    store.apply_consolidation(
        base_records=base,
        additions=split.additions,
        source_names=split.sources,
        replacements=split.replacements,
        updates=split.marks,
        **meta(added),
    )
    return added, split.sources


def _apply_part(
    store: MemoryStore,
    part: PendingBatch,
    reject: Collection[str],
    redacted: Collection[str],
    accept_plan: bool,
    decided_by: str,
    held: Collection[str] = (),
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """:func:`apply_batch` of one scope's part of a batch, with the decision's names
    that are its items; a part already applied (:func:`_already_applied`) is not
    applied again."""
    mine_reject = [n for n in reject if n in part.names]
    mine_redacted = [n for n in redacted if n in part.names]
    done = _already_applied(store, part, mine_reject, mine_redacted, accept_plan)
    if done is not None:
        return done
    return apply_batch(
        store,
        part,
        mine_reject,
        accept_plan,
        decided_by=decided_by,
        redacted=mine_redacted,
        held=held,
    )


def _already_applied(
    store: MemoryStore,
    part: PendingBatch,
    reject: Collection[str],
    redacted: Collection[str],
    accept_plan: bool,
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(added, removed) when ``part`` is already in ``store`` as this decision would
    write it -- a batch half applied before a crash -- else None. Only parts without
    a plan: every accepted item is in the set exactly as proposed, and every record an
    update renames away is gone."""
    if part.history is not None or (part.plan is not None and accept_plan):
        return None
    skipped = set(effective_reject(part, reject, redacted))
    accepted = [item for item in part.items if item.name not in skipped]
    if not accepted:
        return None
    try:
        current = {record.name: record for record in store.records()}
    except MemoryStoreError:
        return None  # the commit itself says what is wrong
    if any(current.get(item.name) != item for item in accepted):
        return None
    left = [part.replaces[i.name] for i in accepted if part.replaces.get(i.name, i.name) != i.name]
    if any(name in current for name in left):
        return None
    return tuple(item.name for item in accepted), tuple(left)


_SCOPE_OFF = (
    "{} would go to the user scope, which is off in this session (user_dir); switch "
    "them to the project (%memory commit --to-project NAME …) or set user_dir; nothing "
    "was committed"
)


def _check_unchanged(
    store: MemoryStore, base: tuple[MemoryRecord, ...], names: tuple[str, ...]
) -> None:
    proposed = {record.name: record for record in base}
    current = {record.name: record for record in store.records()}
    changed = [n for n in names if n not in proposed or current.get(n) != proposed[n]]
    if changed:
        raise MemoryConflictError(
            "memory collection changed: "
            + ", ".join(map(repr, changed))
            + " changed or left the set since the removal was proposed; nothing changed"
        )


def _check_new_names(store: MemoryStore, names: list[str]) -> None:
    current = {record.name for record in store.records()}
    clash = [name for name in names if name in current]
    if clash:
        raise MemoryConflictError(
            "memory collection changed: "
            + ", ".join(map(repr, clash))
            + (" was" if len(clash) == 1 else " were")
            + " added by another session meanwhile"
        )


class BatchRegistry(HasTraits):
    """The batches of one session and where each stands: the one place a batch's state
    changes (add, commit, discard), each change checked here.

    ``state`` (id → :class:`PendingBatch`, in creation order) is replaced by a new dict
    on every change, so ``registry.observe(callback, names="state")`` sees each one:
    review widgets follow their batch that way, whoever decided it (the widget,
    ``%memory commit``, code calling the session).
    """

    state = Dict(help="id -> PendingBatch in its latest state; read-only outside the registry")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._lock = threading.RLock()

    @property
    def all(self) -> tuple[PendingBatch, ...]:
        """Every batch, in creation order, in its latest state."""
        return tuple(self.state.values())

    @property
    def pending(self) -> tuple[PendingBatch, ...]:
        """The batches awaiting a decision (``pending``, or ``failed`` and retryable)."""
        return tuple(b for b in self.state.values() if b.open)

    def add(self, batch: PendingBatch) -> PendingBatch:
        """Register a new batch awaiting a decision."""
        with self._lock:
            if batch.id in self.state:
                raise BatchError(f"batch {batch.id!r} is already registered")
            if not batch.open:
                raise BatchError(f"batch {batch.id}: a new batch must await a decision")
            return self._record(batch)

    def lookup(self, batch: PendingBatch | str, *, undecided: bool = False) -> PendingBatch:
        """The latest state of ``batch`` (a batch or its id); with ``undecided``, refuse
        a batch already committed or discarded."""
        batch_id = batch if isinstance(batch, str) else batch.id
        current: PendingBatch | None = self.state.get(batch_id)
        if current is None:
            raise BatchError(f"batch {batch_id!r} does not belong to this session")
        if undecided and not current.open:
            raise BatchError(f"batch {current.id} is already {current.status}")
        return current

    def choose(self, batch_id: str | None = None) -> PendingBatch | None:
        """The pending batch ``batch_id``, or the latest pending one (None if none is)."""
        pending = self.pending
        if batch_id is None:
            return pending[-1] if pending else None
        for batch in pending:
            if batch.id == batch_id:
                return batch
        ids = ", ".join(b.id for b in pending) or "none"
        raise BatchError(f"no pending batch {batch_id!r} (pending: {ids})")

    def commit(
        self,
        store: MemoryStore,
        batch: PendingBatch | str,
        reject: Collection[str] = (),
        accept_plan: bool = True,
        *,
        refusal: str | None = None,
        decided_by: str = "review",
        redacted: Collection[str] = (),
        user_store: MemoryStore | None = None,
        scopes: Mapping[str, str] | None = None,
        accept: Collection[str] = (),
    ) -> CommitResult:
        """Commit ``batch`` minus ``reject`` (see the module docstring); its user-scope
        items (SPEC §11; ``scopes`` moves items between scopes first, see
        :func:`rescoped`) into ``user_store`` first, in a commit of their own. A held
        item (:func:`holdable`) is committed only when ``accept`` names it; those left
        unnamed stay pending in the batch (``CommitResult.held``).

        Raises :class:`BatchError` for an unknown or decided batch or reject names that
        are not items (or ``redacted`` names that are not redacted items: only those
        named there are committed; ``accept`` names that are not held). Otherwise the
        outcome is in the result: ``refusal`` (a reason the caller refuses every
        commit), a plan conflict, a held plan not accepted, or nothing to commit but
        held items leave the batch as it was; a store failure marks it ``failed``
        (retryable); success marks it ``committed`` (``discarded`` when nothing was
        accepted), or leaves it pending with only its held items.
        """
        with self._lock:
            current = self.lookup(batch, undecided=True)
            check_reject(current, reject)
            check_accept(current, accept)
            reject = effective_reject(current, reject, redacted)
            conflict = (
                refusal
                or plan_conflict(current, reject, accept_plan)
                or held_plan(current, accept, accept_plan)
            )
            if conflict is not None:
                return CommitResult((), (), conflict, current)
            held = held_items(current, reject, accept, accept_plan)
            rest = [name for name in current.names if name not in held]
            if held and not rest and (current.plan is None or not accept_plan):
                why = (
                    f"{', '.join(held)} {'is' if len(held) == 1 else 'are'} held for review "
                    "and not accepted by name; nothing else to commit, nothing was committed"
                )
                return CommitResult((), (), why, current, held=held)
            if scopes:
                moved = rescoped(current, scopes)
                if moved != current:
                    current = self._record(moved)
            deciding = current.restricted(rest) if held else current
            project, user = scope_parts(deciding)
            if user is not None and user_store is None:
                return CommitResult((), (), _SCOPE_OFF.format(", ".join(user.names)), current)
            done_user: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
            try:
                if user is not None and user_store is not None:
                    prepare_user_scope(user_store)
                    done_user = _apply_part(
                        user_store, user, reject, redacted, False, decided_by, held
                    )
                added, removed = _apply_part(
                    store, project, reject, redacted, accept_plan, decided_by, held
                )
            except MemoryStoreError as e:
                if not done_user[0] and not done_user[1]:
                    failed = replace(current, status=BatchStatus.FAILED, error=str(e))
                    return CommitResult((), (), str(e), self._record(failed), e)
                # The user scope's commit stands; what is left is the project's part.
                message = (
                    f"{e} (the user-wide {', '.join(done_user[0])} "
                    "were committed; the rest of the batch is still pending)"
                )
                left = current.restricted(
                    [*project.names, *held], base=project.base, status=BatchStatus.FAILED
                )
                left = replace(left, error=message)
                return CommitResult(done_user[0], done_user[1], message, self._record(left), e)
            added, removed = done_user[0] + added, done_user[1] + removed
            rejected = set(reject)
            if held:  # the held items wait in the same batch, which says what it wrote
                left = current.restricted(held, plan=None, plan_error=None)
                left = replace(
                    left,
                    status=BatchStatus.PENDING,
                    error=None,
                    committed=(*current.committed, *added),
                    removed=(*current.removed, *removed),
                    rejected=(*current.rejected, *(n for n in rest if n in rejected)),
                )
                return CommitResult(added, removed, None, self._record(left), held=held)
            # An accepted plan is committed even when it merges nothing (it is journalled).
            planned = accept_plan and current.plan is not None
            done = self._record(
                replace(
                    current,
                    status=BatchStatus.COMMITTED
                    if added or removed or planned
                    else BatchStatus.DISCARDED,
                    error=None,
                    committed=added,
                    removed=removed,
                    rejected=tuple(name for name in current.names if name in rejected),
                    plan_accepted=accept_plan and current.plan is not None,
                )
            )
            return CommitResult(added, removed, None, done)

    def discard(self, batch: PendingBatch | str) -> PendingBatch:
        """Drop a batch awaiting a decision; nothing is written."""
        with self._lock:
            current = self.lookup(batch, undecided=True)
            return self._record(replace(current, status=BatchStatus.DISCARDED))

    def proposed_names(self) -> set[str]:
        """Names still awaiting a decision, or already rejected or discarded here."""
        return {record.name for record in self.proposed_records()}

    def proposed_records(self) -> set[MemoryRecord]:
        """The items still awaiting a decision, or already rejected or discarded here."""
        records: set[MemoryRecord] = set()
        for batch in self.state.values():
            if batch.status is BatchStatus.COMMITTED:
                records.update(item for item in batch.items if item.name in batch.rejected)
            else:
                records.update(batch.items)
        return records

    def _record(self, batch: PendingBatch) -> PendingBatch:
        self.state = {**self.state, batch.id: batch}
        return batch
