"""A pending batch: what one door proposes, waiting for a decision, and the checks of a
decision against it.

A batch holds its :class:`~ipymemory.review.item.Item` values (``proposed``: each record
with what is known of it), optionally a consolidation ``plan`` over the set it was made
against (``base``) plus those items, and a ``status``: ``pending`` (waiting for a
person), ``committed``, ``discarded`` or ``failed`` (a commit was tried and refused; the
batch can be committed again, e.g. without its plan, or discarded). An undo or restore
proposal (``history``) has no items and no plan: committing it applies that change.

Screening (SPEC §7) marks items: a **redacted** item is the redacted form of one that
held a credential (the credential itself is never kept) and is committed only when the
decision names it (``Decision.redacted``); a **held** item (flagged by screening: from
tool output, instructs the assistant, an agent's risky item) only when the decision
accepts it by name (``Decision.accept``: ``--accept NAME``, a tick in the review); a
flagged plan only when the decision accepts it (``PlanChoice.ACCEPT``) or leaves it out.
A plain commit commits the rest, and the held items stay pending in the same batch
(same id), which says what was committed from it so far (issue 28 item 0).

Rejecting an item that an applied plan replaces would make the plan drop it silently,
so that decision is refused (:func:`plan_conflict`): keep the item, or leave the plan
out too. How a decision is committed: :mod:`ipymemory.review.commit`; where each batch
stands: :mod:`ipymemory.review.registry`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .._enum import StrEnum
from ..errors import BatchError, MemoryStoreError
from ..screen import Origin
from ..screen.rules import Finding, findings_of_reasons
from ..sidequery.consolidate import ConsolidationPlan
from ..store.record import MemoryRecord
from .decision import Decision
from .history_change import HistoryChange
from .item import Item, flags_of, origins_of, redacted_of
from .provenance import TurnProvenance
from .scopes import PROJECT, USER

__all__ = [
    "BatchStatus",
    "CommitResult",
    "PendingBatch",
    "check_decision",
    "check_reject",
    "effective_reject",
    "held_items",
    "held_plan",
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
    """What one door proposes (see the module docstring).

    ``proposed`` holds the items (a bare record given there is a plain item);
    ``items`` is their records. ``plan_error`` is set when consolidation was due but
    failed (the items can still be committed without a plan); ``error`` holds the last
    commit failure. ``rejected`` / ``plan_accepted`` record the decision of a finished
    commit. ``provenance`` is what is known about where it came from (it reaches the
    journal). ``plan_origin``, ``plan_flags`` and ``plan_findings`` say of the plan what
    an item's fields say of it: how trusted its records are, why it needs a person,
    which rules fired.
    """

    id: str
    proposed: tuple[Item, ...]
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
    history: HistoryChange | None = None
    plan_origin: Origin = Origin.USER
    plan_flags: tuple[str, ...] = ()
    plan_findings: tuple[Finding, ...] = field(default=(), compare=False)
    #: Accepted items the set already held exactly as proposed when the batch was
    #: committed (another batch proposed the same): nothing was written for them.
    present: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # One check of the status, whatever built the batch ("pending" is accepted).
        try:
            object.__setattr__(self, "status", BatchStatus(self.status))
        except ValueError:
            raise BatchError(
                f"batch {self.id}: status {self.status!r} is not one of {', '.join(BatchStatus)}"
            ) from None
        object.__setattr__(self, "proposed", tuple(Item.of(i) for i in self.proposed))
        object.__setattr__(self, "plan_origin", Origin(self.plan_origin))
        object.__setattr__(self, "plan_flags", tuple(self.plan_flags))
        object.__setattr__(self, "plan_findings", tuple(self.plan_findings))

    @property
    def items(self) -> tuple[MemoryRecord, ...]:
        """The proposed records, in order."""
        return tuple(item.record for item in self.proposed)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(item.name for item in self.proposed)

    def item(self, name: str) -> Item:
        """The item named ``name``; :class:`BatchError` when the batch has none."""
        for item in self.proposed:
            if item.name == name:
                return item
        raise BatchError(
            f"batch {self.id}: {name!r} is not an item of this batch "
            f"(items: {', '.join(self.names) or 'none'})"
        )

    def scope_of(self, name: str) -> str:
        """Where item ``name`` is committed: ``"user"`` or ``"project"``."""
        return next((i.scope for i in self.proposed if i.name == name), PROJECT)

    @property
    def plan_held(self) -> bool:
        """Whether screening holds the plan for a person."""
        return self.plan is not None and bool(self.plan_flags)

    @property
    def plan_rules(self) -> tuple[Finding, ...]:
        """Which rules hold the plan (as :attr:`Item.rules` says of an item)."""
        return self.plan_findings or findings_of_reasons(self.plan_flags)

    def restricted(self, names: Collection[str], **changes: Any) -> PendingBatch:
        """This batch with only the items named in ``names``, plus ``changes``."""
        keep = set(names)
        return replace(self, proposed=tuple(i for i in self.proposed if i.name in keep), **changes)

    @property
    def open(self) -> bool:
        """Whether the batch still awaits a decision."""
        return self.status.open

    # --- what older code read as maps by item name (computed from the items) ----------

    @property
    def origins(self) -> dict[str, str]:
        """Each item's origin, and the plan's records' (SPEC §7)."""
        plan = self.plan.records if self.plan is not None else ()
        return {**origins_of(self.proposed), **{r.name: self.plan_origin.value for r in plan}}

    @property
    def flags(self) -> dict[str, tuple[str, ...]]:
        """Why screening wants a person, per flagged item (the plan's: ``plan_flags``)."""
        return flags_of(self.proposed)

    @property
    def redacted(self) -> tuple[str, ...]:
        """The items that are redacted forms."""
        return redacted_of(self.proposed)

    @property
    def replaces(self) -> dict[str, str]:
        """The items that update a current record, and which one (SPEC §9)."""
        return {i.name: i.replaces for i in self.proposed if i.replaces is not None}

    @property
    def scopes(self) -> dict[str, str]:
        """The items committed to the user scope (name -> "user", SPEC §11)."""
        return {i.name: USER for i in self.proposed if i.scope == USER}

    @property
    def evidence(self) -> dict[str, tuple[str, ...]]:
        """The extractor's excerpts, per item that has some (SPEC §9)."""
        return {i.name: i.evidence for i in self.proposed if i.evidence}

    @property
    def sources(self) -> dict[str, dict[str, str]]:
        """The files each item depends on, per item that has some (SPEC §11)."""
        return {i.name: dict(i.sources) for i in self.proposed if i.sources}

    @property
    def findings(self) -> dict[str, tuple[Finding, ...]]:
        """The rules screening recorded, per item that has some (issue 39)."""
        return {i.name: i.findings for i in self.proposed if i.findings}

    def findings_of(self, name: str) -> tuple[Finding, ...]:
        """Which rules hold item ``name`` (:attr:`Item.rules`; none for another name)."""
        return next((i.rules for i in self.proposed if i.name == name), ())


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
    #: Accepted items memory already held exactly as proposed: nothing written for them.
    present: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


def rescoped(batch: PendingBatch, scopes: Mapping[str, str]) -> PendingBatch:
    """``batch`` with the items named in ``scopes`` moved to that scope (``project`` or
    ``user``), the person's choice in review (SPEC §11). An update stays where the
    record it replaces is. :class:`BatchError` names what is wrong."""
    unknown = _unknown_names(list(scopes), batch.names)
    if unknown:
        raise BatchError(
            f"batch {batch.id}: {', '.join(map(repr, unknown))}: not an item of this batch "
            f"(items: {', '.join(batch.names) or 'none'})"
        )
    moved = []
    for item in batch.proposed:
        scope = scopes.get(item.name, item.scope)
        if scope not in (PROJECT, USER):
            raise BatchError(
                f"batch {batch.id}: scope {scope!r} of {item.name!r} is not project or user"
            )
        if item.replaces is not None and scope != item.scope:
            raise BatchError(
                f"batch {batch.id}: {item.name!r} updates {item.replaces!r} and stays in "
                f"its scope ({item.scope})"
            )
        moved.append(item.but(scope=scope))
    return replace(batch, proposed=tuple(moved))


def scope_parts(batch: PendingBatch) -> tuple[PendingBatch, PendingBatch | None]:
    """(the project's part of ``batch``, the user scope's part or None).

    The user's part holds its items (no plan: a plan is made over the project's set),
    and as base the user records its updates replace; the project's part the rest."""
    user = [item for item in batch.proposed if item.scope == USER]
    if not user:
        return batch, None
    replaced = {item.replaces for item in user if item.replaces is not None}
    mine = tuple(r for r in batch.base if r.name in replaced)
    theirs = tuple(r for r in batch.base if r.name not in replaced)
    project = [item.name for item in batch.proposed if item.scope != USER]
    provenance = batch.provenance
    if provenance is not None:
        # Its sources are files of this project: the user's set cannot compare them.
        provenance = replace(provenance, files_sha256={})
    return (
        batch.restricted(project, base=theirs),
        replace(
            batch,
            proposed=tuple(item.but(sources={}) for item in user),
            plan=None,
            base=mine,
            provenance=provenance,
        ),
    )


def effective_reject(batch: PendingBatch, decision: Decision) -> tuple[str, ...]:
    """What ``decision`` rejects, plus every redacted item it does not choose (SPEC
    §7: the redacted text is committed only on an explicit choice). Refuses ``redacted``
    names that are not redacted items of the batch."""
    unknown = _unknown_names(decision.redacted, batch.redacted)
    if unknown:
        raise BatchError(
            f"batch {batch.id}: {', '.join(map(repr, unknown))} "
            + ("is not a redacted item" if len(unknown) == 1 else "are not redacted items")
            + f" (redacted: {', '.join(batch.redacted) or 'none'})"
        )
    chosen = set(decision.redacted)
    held = [item.name for item in batch.proposed if item.redacted and item.name not in chosen]
    return tuple(dict.fromkeys([*decision.reject, *held]))


def _unknown_names(names: Iterable[str], known: Collection[str]) -> list[str]:
    return sorted(set(names) - set(known))


def check_decision(batch: PendingBatch, decision: Decision) -> None:
    """Refuse a decision that names what the batch does not have: a rejected name that
    is no item, an accepted one that screening does not hold (or a plan it does not)."""
    check_reject(batch, decision)
    held = [item.name for item in batch.proposed if item.held]
    shown = ", ".join([*held, *(["the plan"] if batch.plan_held else [])]) or "none"
    unknown = _unknown_names(decision.accept, held)
    if unknown:
        raise BatchError(
            f"batch {batch.id}: {', '.join(map(repr, unknown))}: not held for review "
            f"(held: {shown}); only a held item needs to be accepted by name"
        )
    if decision.accepts_plan and not batch.plan_held:
        raise BatchError(
            f"batch {batch.id}: the plan: not held for review (held: {shown}); only a "
            "held plan needs to be accepted"
        )


def check_reject(batch: PendingBatch, decision: Decision) -> None:
    """Refuse a decision rejecting a name that is not an item of ``batch``."""
    unknown = _unknown_names(decision.reject, batch.names)
    if unknown:
        raise BatchError(
            f"batch {batch.id}: cannot reject {', '.join(map(repr, unknown))}: "
            f"not an item of this batch (items: {', '.join(batch.names) or 'none'})"
        )


def held_items(batch: PendingBatch, decision: Decision) -> tuple[str, ...]:
    """The held items this decision leaves held: neither accepted nor rejected by name,
    nor merged by a plan the decision applies."""
    named = {*decision.reject, *decision.accept}
    plan = batch.plan
    merged = set(plan.source_names) if plan is not None and decision.applies_plan else set()
    return tuple(
        item.name
        for item in batch.proposed
        if item.held and item.name not in named and item.name not in merged
    )


def held_plan(batch: PendingBatch, decision: Decision) -> str | None:
    """Why the decision cannot be applied: it would apply a flagged plan nobody
    accepted; ``None`` otherwise."""
    if not batch.plan_held or not decision.applies_plan or decision.accepts_plan:
        return None
    return (
        "the consolidation plan is held for review ("
        + "; ".join(batch.plan_flags)
        + "): accept the plan by name to apply it, or commit without it; nothing was "
        "committed"
    )


def plan_conflict(batch: PendingBatch, reject: Collection[str], decision: Decision) -> str | None:
    """Why this decision cannot be applied (the plan it applies replaces a rejected
    item, ``reject``), or ``None``."""
    if batch.plan is None or not decision.applies_plan:
        return None
    consumed = sorted(set(reject) & set(batch.plan.source_names))
    if not consumed:
        return None
    return (
        f"the consolidation plan replaces {', '.join(map(repr, consumed))}, which you "
        "rejected; keep "
        + ("it" if len(consumed) == 1 else "them")
        + " or reject the plan too (accept_plan=False, --no-plan); nothing was committed"
    )
