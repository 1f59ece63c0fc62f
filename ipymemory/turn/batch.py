"""Pending batches (what extraction and consolidation propose) and committing them.

A batch holds the extracted ``items``, optionally a consolidation ``plan`` over the
set it was made against (``base``) plus those items, and a ``status``: ``pending``
(waiting for the user), ``committed``, ``discarded`` or ``failed`` (a commit was
tried and refused; the batch can be committed again, e.g. without its plan, or
discarded).

Committing applies everything accepted in ONE store commit (one manifest swap):

* with an accepted plan whose sources include records of the base:
  ``store.apply_consolidation(base_records=base, additions=<accepted items the plan
  does not replace>, source_names=<the plan's sources in the base>,
  replacements=<the plan's records>)`` -- the store re-reads the set under its lock,
  refuses if a base record changed or vanished, and keeps records others added;
* with a plan that only merges this batch's own items, or without a plan:
  ``store.extend(...)`` after checking that no accepted name appeared in the set
  meanwhile (the store checks again under its lock).

Rejecting an item that an accepted plan replaces would make the plan drop it
silently, so that commit is refused with a message and the batch stays as it was:
keep the item, or reject the plan too (``accept_plan=False``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from ..errors import BatchError, MemoryConflictError
from ..sidequery.consolidate import ConsolidationPlan
from ..store.record import MemoryRecord
from ..store.store import MemoryStore

__all__ = [
    "BATCH_STATUSES",
    "CommitResult",
    "PendingBatch",
    "apply_batch",
    "check_reject",
    "plan_conflict",
]

BATCH_STATUSES = ("pending", "committed", "discarded", "failed")


@dataclass(frozen=True)
class PendingBatch:
    """What one extraction (and/or consolidation) proposes; see module docstring.

    ``plan_error`` is set when consolidation was due but failed (the items can still
    be committed without a plan); ``error`` holds the last commit failure.
    ``rejected`` / ``plan_accepted`` record the decision of a finished commit.
    """

    id: str
    items: tuple[MemoryRecord, ...]
    plan: ConsolidationPlan | None
    base: tuple[MemoryRecord, ...]
    status: str = "pending"
    plan_error: str | None = None
    error: str | None = None
    committed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()
    plan_accepted: bool = True

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(item.name for item in self.items)


@dataclass(frozen=True)
class CommitResult:
    """Names added and removed by a commit, or the error that stopped it (nothing
    changed then). ``batch`` is the batch as it is after the attempt."""

    committed: tuple[str, ...]
    removed: tuple[str, ...]
    error: str | None
    batch: PendingBatch | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None


def check_reject(batch: PendingBatch, reject: Collection[str]) -> None:
    """Refuse a reject list that is a string or names something not in the batch."""
    if isinstance(reject, str):
        raise BatchError("reject must be a collection of item names, not one string")
    unknown = sorted(set(reject) - set(batch.names))
    if unknown:
        raise BatchError(
            f"batch {batch.id}: cannot reject {', '.join(map(repr, unknown))}: "
            f"not an item of this batch (items: {', '.join(batch.names) or 'none'})"
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


def apply_batch(
    store: MemoryStore, batch: PendingBatch, reject: Collection[str], accept_plan: bool
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Commit the accepted part of ``batch`` in one store commit.

    Returns (names added, names removed). Raises :class:`BatchError` for a bad
    decision (nothing written; see :func:`check_reject` and :func:`plan_conflict`)
    and the store's errors (``MemoryConflictError``, ``MemoryFormatError``,
    ``MemoryLockTimeout``, …) when it refuses.
    """
    check_reject(batch, reject)
    conflict = plan_conflict(batch, reject, accept_plan)
    if conflict is not None:
        raise BatchError(f"batch {batch.id}: {conflict}")
    rejected = set(reject)
    accepted = [item for item in batch.items if item.name not in rejected]
    plan = batch.plan if accept_plan else None
    if plan is None:
        if not accepted:
            return (), ()
        _check_new_names(store, [item.name for item in accepted])
        store.extend(accepted)
        return tuple(item.name for item in accepted), ()
    sources = set(plan.source_names)
    additions = [item for item in accepted if item.name not in sources]
    base_names = {record.name for record in batch.base}
    base_sources = [name for name in plan.source_names if name in base_names]
    added = tuple(r.name for r in additions) + tuple(r.name for r in plan.records)
    if base_sources:
        store.apply_consolidation(
            base_records=batch.base,
            additions=tuple(additions),
            source_names=tuple(base_sources),
            replacements=plan.records,
        )
    else:
        # The plan only merges items of this batch: nothing of the set is replaced.
        _check_new_names(store, list(added))
        store.extend([*additions, *plan.records])
    return added, tuple(base_sources)


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
