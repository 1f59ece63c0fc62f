"""The consolidation step of the memory work, and ``consolidate_now`` (SPEC §8, §9).

When a turn asks the consolidator (:meth:`SessionSpacing.due`): the set with the turn's items
reaches ``consolidate_threshold``, and ``consolidate_every`` records were added since
the last consolidation -- counted from the journal (any kernel or process, and files
another tool added since its last entry), plus this session's undecided items and this
turn's, since this session last got a plan. The journal's newest seq when a plan was
given is remembered, so a plan pending in review mode is not asked for again on every
turn.

:func:`plan_for_turn` asks for a plan over a turn's candidates and screens it (SPEC §7);
:func:`consolidate_now` asks over the whole set, for a review in every mode. A failed
consolidation never holds back the turn's items. Past
:data:`~ipymemory._constants.CONSOLIDATE_CANDIDATE_TOKENS` both show the consolidator a
part of the set (:func:`~ipymemory.sidequery.consolidate.bounded_candidates`): the records
most related to the turn's items, or the newest when there are none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import MemoryStoreError, SideQueryError
from ..review import BatchRegistry, BatchStatus, PendingBatch
from ..review.proposals import new_batch_id
from ..review.provenance import TurnProvenance
from ..review.screened import NOTHING_SCREENED, ScreenedItems, screen_plan
from ..screen import Origin
from ..sidequery import LAST_ERROR_CONSOLIDATE, ConsolidationPlan, plan_consolidation
from ..sidequery.consolidate import bounded_candidates
from ..store.recency import JournalCache
from ..store.recency import spacing as journal_spacing
from ..store.record import MemoryRecord, StoredRecord
from .context import TurnContext

__all__ = ["PlanOutcome", "SessionSpacing", "consolidate_now", "no_plan", "plan_for_turn"]


class SessionSpacing:
    """This session's part of the SPEC §9 spacing (see the module docstring); the
    journal's entries come from ``journal``, the session's cache of them."""

    def __init__(self, journal: JournalCache) -> None:
        self.journal = journal
        self._asked_seq = 0  # the journal's newest seq when this session last got a plan
        self._since_ask: set[str] = set()  # its batches proposed since

    def due(
        self,
        ctx: TurnContext,
        registry: BatchRegistry,
        stored: Sequence[StoredRecord],
        n_items: int,
    ) -> bool:
        """Whether a turn adding ``n_items`` records to ``stored`` asks for a plan."""
        config = ctx.config
        if len(stored) + n_items < config.consolidate_threshold:
            return False
        try:
            entries = self.journal.entries(ctx.store.journal())
        except MemoryStoreError:
            entries = ()  # an unreadable journal: count what this session knows
        current = [entry.file for entry in stored]
        counted = journal_spacing(entries, after_seq=self._asked_seq, current=current)
        undecided = sum(
            sum(1 for item in b.proposed if item.replaces is None)  # an update adds none
            for b in registry.pending
            if b.id in self._since_ask
        )
        return counted.added + undecided + n_items >= config.consolidate_every

    def journal_seq(self, ctx: TurnContext) -> int:
        """The journal's newest seq (0 when empty or unreadable)."""
        try:
            entries = self.journal.entries(ctx.store.journal())
        except MemoryStoreError:
            return 0
        return entries[-1].seq if entries else 0

    def asked(self, seq: int) -> None:
        """The consolidator gave a plan when the journal ended at ``seq``."""
        self._asked_seq = seq
        self._since_ask = set()

    def proposed(self, batch: PendingBatch, asked: bool) -> PendingBatch:
        """Note a batch of this turn for the count (not when this turn's plan already
        took its items as candidates)."""
        if not asked:
            self._since_ask.add(batch.id)
        return batch


@dataclass(frozen=True)
class PlanOutcome:
    """A turn's consolidation: the screened plan (None when none was given), the origin
    of its records and why it needs a person (empty: it does not), why it failed,
    whether a plan was given."""

    plan: ConsolidationPlan | None = None
    origin: Origin = Origin.USER
    reasons: tuple[str, ...] = ()
    error: str | None = None
    asked: bool = False


def plan_for_turn(
    ctx: TurnContext,
    spacing: SessionSpacing,
    records: Sequence[MemoryRecord],
    items: Sequence[MemoryRecord],
    base: Sequence[MemoryRecord],
    screened: ScreenedItems,
    *,
    auto: bool,
) -> PlanOutcome:
    """Ask for a plan over the candidates -- ``records`` (the project's set as the
    turn's updates leave it; past the bound, those most related to ``items``) and
    ``items`` (the turn's for the project) -- and screen it against ``base``; a failure
    is logged and not asked again until the next eligible turn."""
    candidates, others = _bounded(ctx, records, items)
    asked_at = spacing.journal_seq(ctx)
    try:
        plan, usage = plan_consolidation(
            ctx.model, candidates, side_model=ctx.config.side_model, others=others
        )
    except SideQueryError as e:  # not asked: the next eligible turn asks again
        ctx.record_failed_side("consolidator", e)
        ctx.log.fail(LAST_ERROR_CONSOLIDATE, str(e), e)
        return PlanOutcome(error=str(e))
    ctx.record_side("consolidator", usage)
    spacing.asked(asked_at)
    plan, origin, reasons = screen_plan(plan, base, screened, auto=auto)
    return PlanOutcome(plan, origin, reasons, asked=True)


def consolidate_now(
    ctx: TurnContext, registry: BatchRegistry, spacing: SessionSpacing, provenance: TurnProvenance
) -> PendingBatch:
    """A plan over the current set, registered for review (in every mode). On failure
    the returned batch has status ``failed``, no plan and the cause in ``plan_error``
    (not registered)."""
    log = ctx.log
    try:
        base = ctx.store.records()
    except MemoryStoreError as e:
        log.fail(LAST_ERROR_CONSOLIDATE, f"the memory set could not be read: {e}", e)
        return no_plan((), str(e))
    if not base:
        return no_plan((), "the memory set is empty: nothing to consolidate")
    candidates, others = _bounded(ctx, base)
    try:
        asked_at = spacing.journal_seq(ctx)
        plan, usage = plan_consolidation(
            ctx.model, candidates, side_model=ctx.config.side_model, others=others
        )
        ctx.record_side("consolidator", usage)
        spacing.asked(asked_at)
    except SideQueryError as e:
        ctx.record_failed_side("consolidator", e)
        log.fail(LAST_ERROR_CONSOLIDATE, str(e), e)
        return no_plan(base, str(e))
    # SPEC §7: its records redacted where needed, flagged when they need a person.
    plan, origin, reasons = screen_plan(plan, base, NOTHING_SCREENED, auto=False)
    return registry.add(
        PendingBatch(
            new_batch_id(),
            (),
            plan,
            base,
            provenance=provenance,
            plan_origin=origin,
            plan_flags=reasons,
        )
    )


def _bounded(
    ctx: TurnContext, records: Sequence[MemoryRecord], items: Sequence[MemoryRecord] = ()
) -> tuple[tuple[MemoryRecord, ...], frozenset[str]]:
    """The candidates the consolidator is shown, and the names of the records it is not
    (said in the progress event)."""
    candidates = bounded_candidates(records, items)
    shown = {record.name for record in candidates}
    others = frozenset(record.name for record in records) - shown
    part = f" ({len(candidates) - len(items)} of {len(records)} records)" if others else ""
    ctx.log.emit("consolidating", f"{len(candidates)} candidates{part}")
    return candidates, others


def no_plan(base: tuple[MemoryRecord, ...], reason: str) -> PendingBatch:
    """The failed, unregistered batch of a consolidation that produced no plan."""
    return PendingBatch(new_batch_id(), (), None, base, BatchStatus.FAILED, plan_error=reason)
