"""Committing a decided batch: everything accepted in ONE store commit (one manifest
swap), its provenance and the decision in the journal entry.

* with an applied plan whose sources include records of the base, or accepted updates
  (items with ``replaces``, SPEC §9), or an applied "nothing to merge" plan:
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
* with an applied plan that only removes records of the base (another agent's
  proposals to forget) and nothing else accepted: ``store.forget(...)``, after checking
  each is still the record the removal was proposed on;
* with a plan that only merges this batch's own items, or without a plan or updates:
  ``store.extend(...)`` after checking that no accepted name appeared in the set
  meanwhile (the store checks again under its lock).

An update is an item that corrects a current record (``replaces``, e.g. a moved
deadline): committed, the record it names leaves the set in the same swap (its file
kept in ``history/files/``, so undo brings it back); rejected, the record stays.

A batch half applied -- its user-scope commit done, the process killed before the
project's -- resumes with what is left: a scope part whose accepted items are all in
that store as proposed (and what they replace gone) is not applied again.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast

from .. import _constants as C
from .._secrets import redact, redact_data
from ..errors import BatchError, MemoryConflictError, MemoryStoreError
from ..sidequery.consolidate import ConsolidationPlan
from ..store.record import MemoryRecord
from ..store.store import MemoryStore
from .batch import PendingBatch, check_reject, effective_reject, plan_conflict
from .decision import PLAIN, Decision
from .provenance import fit_provenance

__all__ = ["Applied", "CommitEffect", "apply_batch", "apply_part", "commit_effect", "commit_meta"]


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

    accepted: tuple[str, ...] = ()  # the items the decision lets through
    rejected: frozenset[str] = frozenset()  # those it does not (redacted not chosen too)
    additions: tuple[MemoryRecord, ...] = ()  # accepted items nothing consumes
    marks: dict[str, str] = field(default_factory=dict)  # update item -> record replaced
    replacements: tuple[MemoryRecord, ...] = ()  # the plan's records, then the updates
    sources: tuple[str, ...] = ()  # base records leaving: the plan's, then the updated ones
    merged: tuple[str, ...] = ()  # accepted items the plan merges away at once
    plan: ConsolidationPlan | None = None  # the applied plan
    swap: bool = False  # one consolidation swap (else a plain extend)
    whole_base: bool = False  # the swap rests on the whole base (a plan over the set)

    @property
    def added(self) -> tuple[str, ...]:
        return tuple(r.name for r in (*self.additions, *self.replacements))


def _split(batch: PendingBatch, reject: Collection[str], decision: Decision) -> _Split:
    rejected = frozenset(reject)
    accepted = tuple(item for item in batch.proposed if item.name not in rejected)
    plan = batch.plan if decision.applies_plan else None
    consumed = set(plan.source_names) if plan is not None else set()
    updating = {i.name: i.replaces for i in accepted if i.replaces is not None}
    base_names = {record.name for record in batch.base}
    plan_sources = tuple(n for n in (plan.source_names if plan else ()) if n in base_names)
    updates = tuple(i.record for i in accepted if i.name in updating and i.name not in consumed)
    empty_plan = plan is not None and not plan.source_names and not plan.records
    return _Split(
        accepted=tuple(i.name for i in accepted),
        rejected=rejected,
        additions=tuple(
            i.record for i in accepted if i.name not in consumed and i.name not in updating
        ),
        marks={i.name: updating[i.name] for i in updates},
        replacements=(plan.records if plan is not None else ()) + updates,
        sources=tuple(dict.fromkeys([*plan_sources, *updating.values()])),
        merged=tuple(i.name for i in accepted if i.name in consumed),
        plan=plan,
        swap=bool(plan_sources or updating or empty_plan),
        whole_base=bool(plan_sources),
    )


def commit_effect(batch: PendingBatch, decision: Decision) -> CommitEffect:
    """The effect of ``apply_batch(…, decision)`` on ``batch.base``, computed the same
    way (see the module docstring), without writing anything."""
    before = len(batch.base)
    reject = effective_reject(batch, decision)
    conflict = plan_conflict(batch, reject, decision)
    if conflict is not None:
        return CommitEffect(before, before, (), (), (), conflict)
    split = _split(batch, reject, decision)
    replaced = split.sources
    return CommitEffect(
        before, before - len(replaced) + len(split.added), split.added, replaced, split.merged, None
    )


def commit_meta(
    batch: PendingBatch,
    added: Sequence[str],
    split: _Split,
    decision: Decision,
    held: Collection[str] = (),
) -> dict[str, Any]:
    """The journal's ``actor`` and per-added-name ``provenance`` for one batch commit.

    The actor holds what concerns the whole commit once: who (the caller's notebook and
    cell, the session) and the decision (``batch``, ``decided_by`` -- a person in a
    review or a command, in the Lab's Memory panel, or auto mode --, the ``accepted``
    and ``rejected`` item names, ``plan_accepted``, and the items still ``held``). Each
    added name gets the batch's query, models, files read and its ``origin``, bounded
    (see :func:`~ipymemory.review.provenance.fit_provenance`), the extractor's
    ``evidence`` for it when it gave some (SPEC §9: redacted, in the journal only, never
    in the record file), the files it depends on with their sha256 as read
    (``files_sha256``, SPEC §11; absent when unknown -- not every file the turn read),
    and the screening rules that fired on it, with their evidence (``findings``, issue
    39: an item a person accepted although screening held it says why it was held).
    """
    provenance = batch.provenance
    # A question may hold a credential: it never reaches the journal (SPEC §7).
    turn = dict(cast("dict[str, Any]", redact_data(provenance.to_json()))) if provenance else {}
    caller = turn.pop("caller", {})
    actor: dict[str, Any] = {
        **caller,
        "batch": batch.id,
        "decided_by": decision.decided_by.value,
        "accepted": sorted(split.accepted),
        "rejected": sorted(split.rejected),
        "plan_accepted": split.plan is not None,
    }
    if "session" in turn:
        actor["session"] = turn["session"]
    if held:  # still pending in the same batch: neither accepted nor rejected
        actor["held"] = sorted(held)
    memories = turn.pop("memories", None)
    if isinstance(memories, dict):  # the turn's, once per commit (SPEC §13)
        actor["memories"] = _bounded_memories(memories)
    turn.pop("files_sha256", None)
    out = fit_provenance(turn, added, batch.origins)
    for item in batch.proposed:
        entry = out.get(item.name)
        if entry is None:
            continue
        if item.evidence:
            entry["evidence"] = [redact(text) for text in item.evidence]
        hashes = _bounded_hashes(item.sources)
        if hashes:
            entry["files_sha256"] = hashes
        fired = item.rules if item.flagged or item.findings else ()
        if fired:
            entry["findings"] = [f.to_json() for f in fired[: C.PROVENANCE_FINDINGS]]
    return {"actor": actor, "provenance": out}


def _bounded_memories(memories: Mapping[str, Any]) -> dict[str, Any]:
    """A turn's memory trace with each list of names cut to ``PROVENANCE_MEMORY_NAMES``
    (its full length beside it as ``<key>_count``)."""
    cap = C.PROVENANCE_MEMORY_NAMES

    def cut(item: Any) -> Any:
        if not isinstance(item, dict):
            return item
        out = dict(item)
        for key, value in item.items():
            if isinstance(value, list) and len(value) > cap:
                out[key] = value[:cap]
                out[f"{key}_count"] = len(value)
        return out

    requests = memories.get("requests")
    return {
        **memories,
        "requests": [cut(r) for r in requests] if isinstance(requests, list) else [],
        "model_pick": cut(memories.get("model_pick")),
    }


def _bounded_hashes(hashes: Mapping[str, str]) -> dict[str, str]:
    """At most ``PROVENANCE_FILES`` of an item's source hashes, whole paths only (a cut
    path names no file to compare)."""
    kept = [(p, h) for p, h in hashes.items() if len(p) <= C.PROVENANCE_PATH_CHARS]
    return dict(kept[: C.PROVENANCE_FILES])


def apply_batch(
    store: MemoryStore,
    batch: PendingBatch,
    decision: Decision = PLAIN,
    held: Collection[str] = (),
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Commit the part of ``batch`` that ``decision`` accepts in one store commit, its
    provenance and the decision in the journal entry.

    Redacted items are written only when the decision chooses them (else they count as
    rejected). ``held`` names items of the whole batch this decision leaves pending
    (not items of ``batch``): the journal's actor lists them. Returns (names added,
    names removed). Raises :class:`BatchError` for a bad decision (nothing written; see
    :func:`~ipymemory.review.batch.check_reject` and
    :func:`~ipymemory.review.batch.plan_conflict`) and the store's errors
    (``MemoryConflictError``, ``MemoryFormatError``, ``MemoryLockTimeout``, …) when it
    refuses.
    """
    check_reject(batch, decision)
    # Redacted items not chosen are never written (SPEC §7).
    reject = effective_reject(batch, decision)
    conflict = plan_conflict(batch, reject, decision)
    if conflict is not None:
        raise BatchError(f"batch {batch.id}: {conflict}")
    if batch.history is not None:
        actor = commit_meta(batch, (), _Split(), decision)["actor"]
        entry = batch.history.apply(store, actor)
        return tuple(a.name for a in entry.added), tuple(r.name for r in entry.removed)
    split = _split(batch, reject, decision)
    added = split.added

    def meta(names: Sequence[str]) -> dict[str, Any]:
        return commit_meta(batch, names, split, decision, held)

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
        store.extend(
            [*split.additions, *split.replacements],
            **meta(added),
        )
        return added, ()
    if not split.sources and added:
        # "Nothing to merge" beside plain additions (issue 44): the additions are an
        # ``add`` (one manifest swap); the consolidation that found nothing is then
        # journalled on its own (``before`` = ``after``), after them, so the spacing
        # counts from it and they are not counted again.
        _check_new_names(store, list(added))
        store.extend(split.additions, **meta(added))
        store.apply_consolidation(
            base_records=(),
            source_names=(),
            replacements=(),
            **meta(()),
        )
        return added, ()
    store.apply_consolidation(
        base_records=_base(batch, split),
        additions=split.additions,
        source_names=split.sources,
        replacements=split.replacements,
        updates=split.marks,
        **meta(added),
    )
    return added, split.sources


def _base(batch: PendingBatch, split: _Split) -> tuple[MemoryRecord, ...]:
    """The records the swap rests on: the whole base for a plan over the set, else only
    the records the updates replace (each must still be there)."""
    if split.whole_base:
        return batch.base
    by_name = {record.name: record for record in batch.base}
    missing = [name for name in split.sources if name not in by_name]
    if missing:
        raise MemoryConflictError(
            "memory collection changed: "
            + ", ".join(map(repr, missing))
            + " changed or left the set since the update was proposed; nothing changed"
        )
    return tuple(by_name[name] for name in split.sources)


class Applied(NamedTuple):
    """What committing one scope's part did: names added, names removed, and accepted
    names found already in the set exactly as proposed (nothing written for them)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    present: tuple[str, ...] = ()


def apply_part(
    store: MemoryStore,
    part: PendingBatch,
    decision: Decision,
    held: Collection[str] = (),
) -> Applied:
    """:func:`apply_batch` of one scope's part of a batch, with the part of ``decision``
    about its items; a part already in the set (:func:`_already_applied`) is not
    applied again."""
    mine = decision.within(part.names)
    done = _already_applied(store, part, mine)
    if done is not None:
        return done
    added, removed = apply_batch(store, part, mine, held)
    return Applied(added, removed)


def _already_applied(store: MemoryStore, part: PendingBatch, decision: Decision) -> Applied | None:
    """What applying ``part`` did when it is already in ``store`` as this decision would
    write it, else None. Only parts without a plan: every accepted item is in the set
    exactly as proposed, and every record an update renames away is gone. Written by
    this very batch (its journal entry says so: a batch half applied before a crash),
    they count as added; else another batch proposed the same, and they are ``present``
    (nothing was written; issue 43: not "committed")."""
    if part.history is not None or (part.plan is not None and decision.applies_plan):
        return None
    skipped = set(effective_reject(part, decision))
    accepted = [item for item in part.proposed if item.name not in skipped]
    if not accepted:
        return None
    try:
        current = {record.name: record for record in store.records()}
    except MemoryStoreError:
        return None  # the commit itself says what is wrong
    if any(current.get(item.name) != item.record for item in accepted):
        return None
    left = [i.replaces for i in accepted if i.replaces is not None and i.replaces != i.name]
    if any(name in current for name in left):
        return None
    names = tuple(item.name for item in accepted)
    try:
        ours = any(entry.actor.get("batch") == part.id for entry in store.history())
    except MemoryStoreError:
        ours = False
    return Applied(names, tuple(left)) if ours else Applied(present=names)


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
