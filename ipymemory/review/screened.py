"""Screening a turn's batch before anything of it is kept or committed (SPEC §7).

:func:`screen_items` runs :func:`~ipymemory.screen.screen_batch` on the extracted items
against the canonical messages the extractor read (the same ``[*context, *history]``):
each item gets its origin (decided by our code), an item holding a credential is
replaced by its redacted form at once (the credential is never kept, not even in the
session), and every item needing a person gets its reasons.

:func:`screen_plan` does the same for a consolidation plan: each new record is as
trusted as the least trusted record it replaces (records of the set count as ``user``:
they were committed by a person or passed screening), and in ``auto`` mode a plan
replacing more than half the set or more than five records waits for review.

:func:`split_for_auto` cuts an ``auto``-mode batch into what may be committed without a
person and what stays pending for one.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import MemoryFormatError
from ..screen import (
    Origin,
    OriginDecision,
    Screening,
    Verdict,
    consolidation_needs_review,
    history_sources,
    least_trusted,
    screen_batch,
    screen_record,
)
from ..screen.dependence import file_outputs, item_sources
from ..sidequery.consolidate import ConsolidationPlan
from ..store.record import MemoryRecord
from .batch import PendingBatch
from .item import Item, flags_of, origins_of, redacted_of
from .provenance import DEFAULT_ORIGIN

__all__ = [
    "NOTHING_SCREENED",
    "FilesRead",
    "ScreenedItems",
    "keep_screened",
    "screen_items",
    "screen_plan",
    "split_for_auto",
]


@dataclass(frozen=True)
class ScreenedItems:
    """Items as they may be kept (``kept``: each with its origin, flags, findings,
    whether it is redacted, and the files it depends on), with what screening found.

    ``dropped`` says (without the credential) why an item was left out entirely: its
    redacted form breaks the format or takes a name already used.
    """

    kept: tuple[Item, ...]
    dropped: tuple[str, ...] = ()
    #: How each kept item's origin was decided (by kept name): for tests and review.
    decisions: Mapping[str, OriginDecision] = field(default_factory=dict)
    #: A redacted item whose name changed: kept name -> the name it was proposed under.
    renamed: Mapping[str, str] = field(default_factory=dict)
    #: How the same batch is screened again with the translation check's answers (item
    #: name -> the user's words it states); None: it was not screened from a history.
    again: Callable[[Mapping[str, Collection[str]]], ScreenedItems] | None = field(
        default=None, compare=False, repr=False
    )

    @property
    def items(self) -> tuple[MemoryRecord, ...]:
        return tuple(item.record for item in self.kept)

    @property
    def held(self) -> tuple[str, ...]:
        """The items that need a person (flagged: redacted, tool, instructs)."""
        return tuple(item.name for item in self.kept if item.flagged)

    @property
    def origins(self) -> dict[str, str]:
        return origins_of(self.kept)

    @property
    def flags(self) -> dict[str, tuple[str, ...]]:
        return flags_of(self.kept)

    @property
    def redacted(self) -> tuple[str, ...]:
        return redacted_of(self.kept)

    def confirmed(self, answers: Mapping[str, Collection[str]]) -> ScreenedItems:
        """The batch screened again, the translation check having said which of the
        user's words each held item states (issue 39); itself when nothing was said."""
        if self.again is None or not answers:
            return self
        return self.again(answers)

    @property
    def questions(self) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
        """Held items whose origin turns on a translation only the model can judge:
        name -> (the user's words it may state, the lines of tool output it may state
        instead) (``OriginDecision.asks``, ``.beside``)."""
        # A redacted item waits for an explicit choice whatever its origin.
        held = set(self.held) - set(self.redacted)
        return {
            name: (decision.asks, decision.beside)
            for name, decision in self.decisions.items()
            if decision.asks and decision.beside and name in held
        }


#: No extracted items (a consolidation asked for directly).
NOTHING_SCREENED = ScreenedItems(())


@dataclass(frozen=True)
class FilesRead:
    """The files a session read (SPEC §11): ``hashes``, path -> sha256 as read, and
    ``outputs``, what the session's tool calls on each returned (None: those of the
    history screened)."""

    hashes: Mapping[str, str]
    outputs: Mapping[str, str] | None = None


def screen_items(
    items: Sequence[MemoryRecord],
    history: Sequence[dict[str, Any]],
    taken: set[str],
    *,
    evidence: Mapping[str, Sequence[str]] | None = None,
    files: FilesRead | None = None,
) -> ScreenedItems:
    """Screen extracted ``items`` against the ``history`` they were extracted from;
    ``taken`` holds names a redacted item must not take (the set's, others pending);
    ``evidence`` maps an item's name to the extractor's excerpts for it (SPEC §9);
    with the ``files`` the session read, each kept item gets those it depends on
    (:func:`~ipymemory.screen.dependence.item_sources`). The result screens again with
    the translation check's answers (:meth:`ScreenedItems.confirmed`)."""
    sources = history_sources(history)

    def screen(confirmed: Mapping[str, Collection[str]] | None) -> ScreenedItems:
        screened = keep_screened(
            screen_batch(items, sources, evidence=evidence, confirmed=confirmed), taken
        )
        screened = replace(screened, again=screen)
        if files is None or not files.hashes:
            return screened
        reads = files.hashes
        by_name = {item.name: item for item in items}
        texts = file_outputs(sources) if files.outputs is None else files.outputs
        depends = []
        for kept in screened.kept:
            # Judged on what the extractor wrote (a redacted item may have been renamed).
            original = by_name[screened.renamed.get(kept.name, kept.name)]
            text = f"{original.description}\n{original.body}"
            excerpts = (evidence or {}).get(original.name, ())
            paths = item_sources(text, excerpts, texts, sources.terms[0], reads)
            depends.append(kept.but(sources={path: reads[path] for path in paths}))
        return replace(screened, kept=tuple(depends))

    return screen(None)


def keep_screened(screenings: Sequence[Screening], taken: set[str]) -> ScreenedItems:
    """The screened records as they may be kept (see :func:`screen_items`); for records
    whose origin is given rather than decided (another agent's proposals)."""
    kept: list[Item] = []
    dropped: list[str] = []
    decisions: dict[str, OriginDecision] = {}
    renamed: dict[str, str] = {}
    used = set(taken) | {screening.name for screening in screenings}
    for screening in screenings:
        record = screening.record
        redacted = screening.verdict is Verdict.REDACT
        if redacted:
            try:
                record = screening.redacted()
            except MemoryFormatError:
                dropped.append(f"an item whose redacted form is not a valid record ({record.type})")
                continue
            if record.name != screening.record.name and record.name in used:
                dropped.append(f"a redacted item named like another ({record.name!r})")
                continue
            used.add(record.name)
            if record.name != screening.record.name:
                renamed[record.name] = screening.record.name
        person = screening.needs_person
        kept.append(
            Item(
                record,
                screening.origin,
                flags=screening.reasons() if person else (),
                # A held item's rules; a committed one's where a rule that allows changed
                # the outcome (issue 39 item 3).
                findings=screening.findings(),
                redacted=redacted,
            )
        )
        if screening.decision is not None:
            decisions[record.name] = screening.decision
    return ScreenedItems(tuple(kept), tuple(dropped), decisions, renamed)


def screen_plan(
    plan: ConsolidationPlan,
    base: Sequence[MemoryRecord],
    screened: ScreenedItems,
    *,
    auto: bool,
) -> tuple[ConsolidationPlan, Origin, tuple[str, ...]]:
    """The plan with its records redacted where needed, the origin of its records (as
    trusted as the least trusted record they replace), and why it needs a person
    (empty: it does not)."""
    base_names = {record.name for record in base}
    origins = screened.origins
    source_origins = [Origin(origins.get(name, DEFAULT_ORIGIN)) for name in plan.source_names]
    origin = least_trusted(source_origins)
    records: list[MemoryRecord] = []
    reasons: list[str] = []
    for record in plan.records:
        screening = screen_record(record, origin)
        if screening.verdict is Verdict.REDACT:
            # The plan then carries a redacted text: it waits for an explicit choice.
            record = screening.redacted()
        records.append(record)
        reasons.extend(f"its record {record.name!r} {why}" for why in screening.reasons())
    merged_held = [name for name in plan.source_names if name in screened.held]
    if merged_held:
        reasons.append(f"it merges item(s) held for review: {', '.join(merged_held)}")
    replaced = sum(1 for name in plan.source_names if name in base_names)
    if auto and consolidation_needs_review(len(base), replaced):
        reasons.append(
            f"it would replace {replaced} of the {len(base)} records "
            "(more than half the set, or more than five)"
        )
    new_plan = replace(plan, records=tuple(records))
    return new_plan, origin, tuple(reasons)


def split_for_auto(batch: PendingBatch) -> tuple[PendingBatch | None, PendingBatch | None]:
    """(what ``auto`` mode commits now, what stays pending for a person).

    A flagged plan keeps the whole batch pending (its items are its candidates);
    otherwise the flagged items are moved into a batch of their own (no plan) and the
    rest is committed.
    """
    held = [item.name for item in batch.proposed if item.flagged]
    if batch.plan_held:
        return None, batch
    if not held:
        return batch, None
    clean = [item.name for item in batch.proposed if not item.flagged]
    now = batch.restricted(clean) if clean or batch.plan is not None else None
    later = batch.restricted(held, id=uuid.uuid4().hex[:12], plan=None, plan_error=None)
    return now, later
