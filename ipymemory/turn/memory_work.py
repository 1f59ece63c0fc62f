"""Phase 3 of a turn, after its answer: the memory work (SPEC §7-§11).

::

    window       the canonical messages no successful extraction read, after the turns
                 before them since the session's anchor as context (SPEC §8, issue 31:
                 the requests are append-only, so their prefix is cached):
                 extraction_window
    extract      the extractor over them, knowing both scopes' records (no duplicate of
                 either; past EXTRACT_CATALOG_TOKENS it is shown the part of their
                 catalog most related to the messages, and an item whose name is taken
                 by a record it was not shown is dropped and named); a failure leaves
                 the cursor where it was, so the next turn's extraction reads these
                 messages again
    fresh items  drop what already waits for review or what the user turned down in this
                 session (a new name, or an update that says something new, is a new
                 proposal)
    screen       origin, credentials, instructions, before anything is kept
                 (review/screened.py)
    scopes       which items go to the user scope (SPEC §11): new ``user``-type items and
                 updates of a user-scope record; the extractor never chooses a path
    consolidate  when due (turn/consolidation.py): a plan over the project's set as the
                 updates leave it and the turn's items for the project (past
                 CONSOLIDATE_CANDIDATE_TOKENS, the records most related to the items)
    register     the memory tool's proposals joined (SPEC §10); review: the batch waits;
                 auto: what needs nobody is committed (commit_batch), the rest is held
                 for a person (SPEC §7)

:meth:`MemoryWork.run` runs the steps in that order; every failure is logged in the
context's log and ends the work early with what it has (never an exception for a memory
failure). :func:`commit_batch` is also how a person's decision is committed
(``AgentSession.commit``).
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .. import _constants as C
from ..errors import MemoryStoreError, ProposalError, SideQueryError
from ..review import AUTO, BatchRegistry, BatchStatus, CommitResult, Decision, PendingBatch
from ..review.proposals import (
    Proposal,
    ProposalScreen,
    assemble_batch,
    join_batches,
    new_batch_id,
    recent_agent_updates,
    screen_proposals,
)
from ..review.provenance import TurnProvenance
from ..review.scopes import USER, AgentNames, ScopedSet, read_scopes
from ..review.screened import FilesRead, ScreenedItems, screen_items, split_for_auto
from ..screen import history_sources
from ..screen.dependence import file_outputs
from ..sidequery import LAST_ERROR_EXTRACT, extract_memories
from ..sidequery.extract import ExtractedItem, extractor_catalog
from ..sidequery.translation import Question, check_translations
from ..store.record import MemoryRecord, MemoryType
from .choosing import LAST_ERROR_READ
from .consolidation import PlanOutcome, SessionSpacing, plan_for_turn
from .context import TurnContext
from .history import message_tokens, previous_turn_start

__all__ = [
    "LAST_ERROR_AGENT",
    "LAST_ERROR_COMMIT",
    "LAST_ERROR_EXTRACT_DROPPED",
    "LAST_ERROR_SCREEN",
    "LAST_ERROR_TRANSLATION",
    "MemoryWork",
    "Window",
    "WorkOutcome",
    "commit_batch",
    "extraction_window",
    "new_scopes",
    "skipped",
]

# Texts for the failures SPEC §3 does not name (its own come from sidequery).
LAST_ERROR_COMMIT = "Memory commit failed"
LAST_ERROR_SCREEN = "Memory screening dropped an item"
LAST_ERROR_TRANSLATION = "Memory translation check failed; its items wait for review"
LAST_ERROR_AGENT = "Memory tool proposals failed"
LAST_ERROR_EXTRACT_DROPPED = "Memory extraction dropped an item"


@dataclass(frozen=True)
class Window:
    """What one extraction reads: ``messages`` (copies of the canonical messages no
    successful extraction read), ``context`` (the turn before them: what screening
    reads beside them), ``end``, where the cursor moves once they are read, and
    ``earlier`` (the messages since ``anchor``, the turn before included: what the
    append-only request sends before them)."""

    messages: list[dict[str, Any]]
    context: list[dict[str, Any]]
    end: int
    earlier: list[dict[str, Any]] = field(default_factory=list)
    anchor: int = 0


def extraction_window(
    history: Sequence[dict[str, Any]], cursor: int, anchor: int | None = None
) -> Window:
    """SPEC §8: the messages from ``cursor`` on, after the turn before them; with an
    ``anchor``, the request also sends the messages since it (issue 31), unless they
    pass :data:`~ipymemory._constants.EXTRACT_PREFIX_TOKENS`: then the anchor moves up
    to the turn before the cursor (one rewrite of the cache, then append-only again)."""
    end = len(history)
    start = min(cursor, end)
    before = previous_turn_start(history, start)
    at = before if anchor is None else min(max(anchor, 0), before)
    if sum(message_tokens(m) for m in history[at:start]) > C.EXTRACT_PREFIX_TOKENS:
        at = before
    return Window(
        copy.deepcopy(list(history[start:end])),
        copy.deepcopy(list(history[before:start])),
        end,
        copy.deepcopy(list(history[at:start])),
        at,
    )


@dataclass(frozen=True)
class WorkOutcome:
    """The turn's batch -- pending (review), committed or failed (auto), ``None`` when
    nothing was extracted -- the batch held for a person (auto mode), and where the
    extraction cursor moves (``None``: it stays)."""

    batch: PendingBatch | None
    held: PendingBatch | None = None
    extracted_upto: int | None = None
    #: Where the next extraction's append-only request starts (None: where it was).
    anchor: int | None = None


@dataclass(frozen=True)
class _Read:
    """What the extraction read and found: both scopes' sets, the fresh items."""

    scoped: ScopedSet
    items: list[ExtractedItem]


class MemoryWork:
    """One run of the memory work (see the module docstring) over ``ctx``: the batches
    go to ``registry``, the consolidation spacing is ``spacing``'s, the journal's
    provenance is ``provenance``, and ``proposals`` are the memory tool's of this turn."""

    def __init__(
        self,
        ctx: TurnContext,
        registry: BatchRegistry,
        spacing: SessionSpacing,
        provenance: TurnProvenance,
        proposals: Sequence[Proposal] = (),
        reads: Mapping[str, str] | None = None,
        memory_tool_name: str | None = None,
    ) -> None:
        self.ctx, self.registry, self.spacing = ctx, registry, spacing
        self.provenance = provenance
        self.proposals = tuple(proposals)
        #: The tool the proposals came through (its calls are not the turn's evidence).
        self.memory_tool_name = memory_tool_name
        #: SPEC §11: the files the session read, sha256 as last read (each item keeps
        #: those it depends on).
        self.reads = dict(reads or {})
        self._outputs: Mapping[str, str] = {}
        self._held: PendingBatch | None = None
        self._upto: int | None = None
        self._anchor: int | None = None

    def run(
        self, mode: str, history: Sequence[dict[str, Any]], cursor: int, anchor: int = 0
    ) -> WorkOutcome:
        """The memory work of a turn in commit ``mode`` over the canonical ``history``
        whose messages before ``cursor`` were already read (the extractor's request
        starting at ``anchor``)."""
        if mode == "off":  # nothing extracted, nothing proposed: the cursor moves past
            return skipped(history)
        self.ctx.log.emit("extracting", "looking for memories worth keeping")
        window = extraction_window(history, cursor, anchor)
        self._anchor = window.anchor
        # What each file read returned in the whole session: a record may be about a
        # file an earlier turn read.
        self._outputs = file_outputs(history) if self.reads else {}
        batch, asked = self._extracted_batch(window, auto=mode == "auto")
        registered = self._register(batch, mode, window, asked=asked)
        return WorkOutcome(registered, self._held, self._upto, self._anchor)

    # --- extract, screen, scope, consolidate -------------------------------------------

    def _extracted_batch(self, window: Window, *, auto: bool) -> tuple[PendingBatch | None, bool]:
        """The turn's batch of extracted items (None: nothing to propose), and whether
        its consolidation got a plan."""
        read = self._extract(window)
        if read is None:
            return None, False
        scoped, extracted = read.scoped, read.items
        base = tuple(entry.record for entry in scoped.project)
        theirs = {entry.record.name: entry.record for entry in scoped.user}
        # SPEC §9: the excerpts the model cites (origin is decided from them, they go to
        # the journal) and the current records the items update.
        evidence = {i.record.name: i.evidence for i in extracted if i.evidence}
        current = {record.name for record in base}
        screened = self._screen(window, extracted, evidence, current | set(theirs), auto=auto)
        items = screened.items
        if not items:
            return None, False
        kept = {item.name for item in items}
        replaces = {
            i.record.name: i.replaces
            for i in extracted
            if (i.replaces in current or i.replaces in theirs) and i.record.name in kept
        }
        # SPEC §11: a user scope that cannot be read now takes no new items.
        user_on = self.ctx.user_store is not None and scoped.error is None
        scopes = new_scopes(items, replaces, current, user_on)
        consolidation = self._consolidation(scoped, items, replaces, scopes, screened, auto=auto)
        batch = PendingBatch(
            new_batch_id(),
            tuple(
                item.but(
                    replaces=replaces.get(item.name),
                    scope=scopes.get(item.name, item.scope),
                    evidence=evidence.get(item.name, ()),
                    # A user-wide item's sources are this project's files: not kept.
                    sources={} if item.name in scopes else item.sources,
                )
                for item in screened.kept
            ),
            consolidation.plan,
            # The user records its updates replace travel in the base (their digests are
            # how a later kernel knows they did not change).
            (*base, *(theirs[n] for n in set(replaces.values()) - current)),
            plan_error=consolidation.error,
            provenance=replace(self.provenance, models=self.ctx.log.models()),
            plan_origin=consolidation.origin,
            plan_flags=consolidation.reasons,
        )
        return batch, consolidation.asked

    def _extract(self, window: Window) -> _Read | None:
        """Run the extractor on ``window``; the fresh items and the sets it knew, or
        None when the set could not be read or the extractor failed (logged)."""
        ctx = self.ctx
        try:
            scoped = read_scopes(ctx.store, ctx.user_store)
        except MemoryStoreError as e:
            ctx.log.fail(LAST_ERROR_EXTRACT, f"the memory set could not be read: {e}", e)
            return None
        if scoped.unreadable_note is not None:
            # Writes refuse until the file is fixed: extract nothing now, leave the cursor
            # (the turn after the fix reads these messages too). Said once per turn.
            ctx.log.fail(LAST_ERROR_READ, scoped.unreadable_note)
            return None
        try:
            extraction = extract_memories(
                ctx.model,
                window.messages,
                extractor_catalog((*scoped.project, *scoped.user), window.messages),
                {record.name for record in scoped.records},
                earlier=window.earlier,
                side_model=ctx.config.side_model,
            )
        except SideQueryError as e:  # the cursor stays: the next turn reads these too
            ctx.record_failed_side("extractor", e)
            ctx.log.fail(LAST_ERROR_EXTRACT, str(e), e)
            return None
        ctx.record_side("extractor", extraction.usage)
        if extraction.dropped:  # the rest of the batch goes on
            ctx.log.fail(LAST_ERROR_EXTRACT_DROPPED, "; ".join(extraction.dropped))
        self._upto = window.end
        return _Read(scoped, self._fresh(extraction.items))

    def _fresh(self, items: Sequence[ExtractedItem]) -> list[ExtractedItem]:
        """The extractor sees the turn before the new messages again, so it may propose
        what already waits for review or what the user turned down: drop those. An
        update keeps its record's name, so it is dropped only when it says the same
        again (a later correction of a record is a new proposal)."""
        decided = self.registry.proposed_names()
        seen = self.registry.proposed_records()
        return [
            item
            for item in items
            if (item.record not in seen if item.replaces else item.record.name not in decided)
        ]

    def _screen(
        self,
        window: Window,
        extracted: Sequence[ExtractedItem],
        evidence: Mapping[str, tuple[str, ...]],
        taken: set[str],
        *,
        auto: bool,
    ) -> ScreenedItems:
        """SPEC §7: origin, credentials and instructions, before anything is kept. In
        ``auto`` mode, an item held only because which of the user's words or a file's
        it translates cannot be told from words is asked of the model (issue 39), and
        the batch screened again with the answer."""
        records = [item.record for item in extracted]
        screened = screen_items(
            records,
            [*window.context, *window.messages],
            self.registry.proposed_names() | taken,
            evidence=evidence,
            files=FilesRead(self.reads, self._outputs),
        )
        if auto and (questions := screened.questions):
            screened = screened.confirmed(self._translation_check(records, questions))
        if screened.dropped:
            self.ctx.log.fail(LAST_ERROR_SCREEN, "; ".join(screened.dropped))
        return screened

    def _translation_check(
        self,
        records: Sequence[MemoryRecord],
        questions: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]],
    ) -> dict[str, frozenset[str]]:
        """The user's words the model says each held item states (empty on a failure,
        logged: the items stay held)."""
        ctx = self.ctx
        by_name = {record.name: record for record in records}
        asked = [
            Question(by_name[name], words, beside)
            for name, (words, beside) in questions.items()
            if name in by_name
        ]
        if not asked:
            return {}
        ctx.log.emit("screening", "asking the model which of your words held memories state")
        try:
            confirmed, usage = check_translations(
                ctx.model, asked, side_model=ctx.config.side_model
            )
        except SideQueryError as e:
            ctx.record_failed_side("screener", e)
            ctx.log.fail(LAST_ERROR_TRANSLATION, str(e), e)
            return {}
        ctx.record_side("screener", usage)
        return {name: said for name, said in confirmed.items() if said}

    def _consolidation(
        self,
        scoped: ScopedSet,
        items: Sequence[MemoryRecord],
        replaces: Mapping[str, str],
        scopes: Mapping[str, str],
        screened: ScreenedItems,
        *,
        auto: bool,
    ) -> PlanOutcome:
        """A plan when one is due, over one scope: the project's set as the updates
        leave it, and this turn's items for the project."""
        base = tuple(entry.record for entry in scoped.project)
        project_items = [item for item in items if item.name not in scopes]
        project_updates = [n for n in replaces if n not in scopes]
        n_added = len(project_items) - len(project_updates)
        if not self.spacing.due(self.ctx, self.registry, scoped.project, n_added):
            return PlanOutcome()
        updated = set(replaces.values())
        rest = tuple(r for r in base if r.name not in updated)
        return plan_for_turn(self.ctx, self.spacing, rest, project_items, base, screened, auto=auto)

    # --- register: review, or auto commit ----------------------------------------------

    def _register(
        self, batch: PendingBatch | None, mode: str, window: Window, *, asked: bool
    ) -> PendingBatch | None:
        """Register this turn's batch (the memory tool's proposals joined) for review,
        or in ``auto`` mode commit what needs nobody and hold the rest."""
        agent = self._agent_batch(mode, window)
        if agent is not None and batch is not None:
            batch, separate = join_batches(batch, agent)
            if separate is not None:  # both carry a plan: reviewed side by side
                self.registry.add(separate)
        batch = batch if batch is not None else agent
        if batch is None:
            return None
        if mode != "auto":
            return self._proposed(batch, asked)
        # SPEC §9: a failed consolidation does not hold back the clean items.
        now, later = split_for_auto(batch)
        if later is not None:  # waits for a person; the turn says so (TurnResult.held)
            self._held = self._proposed(later, asked)
        if now is None:
            return self._held
        done = commit_batch(self.ctx, self.registry, self._proposed(now, asked), AUTO)
        return done.batch

    def _proposed(self, batch: PendingBatch, asked: bool) -> PendingBatch:
        return self.spacing.proposed(self.registry.add(batch), asked)

    def _agent_batch(self, mode: str, window: Window) -> PendingBatch | None:
        """The memory tool's proposals of this turn as one batch, each judged against
        the turn's history by the rules of an extracted item (SPEC §9, issue 28 item
        1): copied from tool output, it is origin ``tool`` and held, as the extractor's
        would be. The memory tool's own calls and results are left out of that
        history: the records it showed are the set's, not a file's."""
        if not self.proposals:
            return None
        auto = mode == "auto"
        read = [*window.context, *window.messages]
        sources = history_sources(without_tool(read, self.memory_tool_name))
        try:
            current = self.ctx.store.records()
            screened = screen_proposals(
                self.proposals,
                current,
                ProposalScreen(
                    auto=auto,
                    sources=sources,
                    names=AgentNames.of(self.ctx.user_store),
                    recent_updates=frozenset(recent_agent_updates(self.ctx.store))
                    if auto
                    else frozenset(),
                ),
            )
        except (ProposalError, MemoryStoreError) as e:  # the set changed under them
            why = f"the memory tool's proposals were not kept: {e}"
            self.ctx.log.fail(LAST_ERROR_AGENT, why, e)
            return None
        return assemble_batch(
            screened,
            current,
            batch_id=new_batch_id(),
            provenance=replace(self.provenance, models=self.ctx.log.models()),
        )


def skipped(history: Sequence[dict[str, Any]]) -> WorkOutcome:
    """A turn with no extraction (commit mode off, memory not used): the cursor moves
    past it, and the next request starts at it (the turn before, as context), never
    earlier -- a turn that opted out is no one's context but the next turn's."""
    end = len(history)
    return WorkOutcome(None, extracted_upto=end, anchor=previous_turn_start(history, end))


def without_tool(history: Sequence[dict[str, Any]], name: str | None) -> list[dict[str, Any]]:
    """``history`` without the calls of tool ``name`` and their results (a message left
    empty is left out)."""
    if name is None:
        return list(history)
    calls = {
        str(block.get("id"))
        for message in history
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == name
    }
    out = []
    for message in history:
        content = message.get("content")
        if not isinstance(content, list) or not calls:
            out.append(message)
            continue
        kept = [
            block
            for block in content
            if not (
                isinstance(block, dict)
                and (
                    (block.get("type") == "tool_use" and str(block.get("id")) in calls)
                    or (
                        block.get("type") == "tool_result"
                        and str(block.get("tool_use_id")) in calls
                    )
                )
            )
        ]
        if kept:
            out.append({**message, "content": kept})
    return out


def new_scopes(
    items: Sequence[MemoryRecord],
    replaces: Mapping[str, str],
    project: Collection[str],
    user_on: bool,
) -> dict[str, str]:
    """SPEC §11: which items go to the user scope -- new ``user``-type items, and updates
    of a user-scope record; the rest (and everything when the scope is off) to the
    project. The extractor never chooses a path."""
    if not user_on:
        return {}
    out: dict[str, str] = {}
    for item in items:
        target = replaces.get(item.name)
        if target is not None:
            if target not in project:
                out[item.name] = USER
        elif item.type is MemoryType.USER:
            out[item.name] = USER
    return out


def commit_batch(
    ctx: TurnContext, registry: BatchRegistry, batch: PendingBatch, decision: Decision
) -> CommitResult:
    """Commit ``batch`` as ``decision`` says (see :meth:`BatchRegistry.commit`), decided
    by a person or by auto mode (:data:`~ipymemory.review.decision.AUTO`); a store's
    refusal is logged as ``LAST_ERROR_COMMIT``."""
    # Mode off stops writing what a turn extracted; an undo/restore was asked for
    # explicitly, like forget, and is applied.
    auto = decision.decided_by is AUTO.decided_by
    off = not auto and ctx.config.commit_mode == "off" and batch.history is None
    result = registry.commit(
        ctx.store,
        batch,
        decision,
        user_store=ctx.user_store,
        refusal="commit mode is 'off': this session never writes memories" if off else None,
    )
    failed = result.batch is not None and result.batch.status is BatchStatus.FAILED
    if failed and result.error is not None:  # the store refused
        ctx.log.fail(LAST_ERROR_COMMIT, result.error, result.exception)
    return result
