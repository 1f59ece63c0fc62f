"""``AgentSession``: one agent conversation with long-term memory (SPEC §2).

One session per notebook kernel. A turn::

    begin_turn(query)   read the set, select (model, else fallback), build the
                        <relevant_memories> block for this turn's requests only
    tool loop           request = system prompt + request history (compressed
                        canonical history) + the turn's messages, the memory block
                        before the query (SPEC §8) ; canonical history grows
    complete()          extract from the canonical history since the cursor (SPEC §8)
                        -> a pending batch (+ a consolidation plan when the set
                        reaches the threshold and ``consolidate_every`` records were
                        added since the last consolidation, counted from the
                        journal: SPEC §9) -> review / auto commit / off

The extractor reads the messages no successful extraction read, after the turn
before them as context, so it can propose an item again; items named like one still
pending, or one the user rejected or discarded in this session, are dropped from
later batches (a new name is a new proposal).

Every memory failure (reading the set, selection, extraction, consolidation,
commit) is caught and recorded in ``last_error`` (the SPEC's fixed text) with the
exact cause in ``last_error_cause``; the answer is still returned. ``last_error`` is
cleared when a turn (or ``begin_turn``) starts.

A KeyboardInterrupt during a turn closes the partial turn in the canonical history
(see :mod:`ipymemory.turn.loop`), records the usage spent, skips extraction and is
re-raised. A failed main model call does the same and raises its :class:`ModelError`.
"""

from __future__ import annotations

import copy
import threading
import time
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from .._encodable import encodable
from ..config import default_model
from ..errors import (
    BatchError,
    MemoryStoreError,
    ProposalError,
    SideQueryError,
    SideQueryReplyError,
    TurnError,
)
from ..model import ModelClient, ModelReply, Usage, cached_system
from ..model.usage import Role
from ..screen import redact
from ..sidequery import (
    LAST_ERROR_CONSOLIDATE,
    LAST_ERROR_EXTRACT,
    LAST_ERROR_SELECT,
    Selection,
    extract_memories,
    plan_consolidation,
    select_memories,
)
from ..store.recency import JournalCache, saved_dates, spacing
from ..store.record import MemoryRecord, MemoryType, StoredRecord
from ..store.sources import stale_records
from ..store.store import MemoryStore
from .batch import USER_SCOPE, BatchRegistry, BatchStatus, CommitResult, PendingBatch
from .config import COMMIT_MODES, SessionConfig
from .failures import MemoryFailure
from .followed import FollowReport, FollowTracker, FollowTurn
from .history import RequestHistory, previous_turn_start, summarize_history
from .history_change import HistoryChange
from .injection import render_memory_block
from .loop import LoopOutcome, ToolStep, run_tool_loop
from .pending import PendingFiles
from .proposals import Proposal, assemble_batch, join_batches, screen_proposals
from .provenance import TurnProvenance
from .scopes import ScopedSet, read_scopes, user_store_for
from .screened import (
    NOTHING_SCREENED,
    plan_flags,
    screen_items,
    screen_plan,
    split_for_auto,
)
from .tools import OfferedTool, ToolBox
from .usage import CallUsage, TurnUsage, UsageLedger

__all__ = [
    "LAST_ERROR_COMMIT",
    "LAST_ERROR_READ",
    "AgentSession",
    "AnsweredTurn",
    "TurnEvent",
    "TurnResult",
]

# Texts for the failures SPEC §3 does not name (its three come from sidequery).
LAST_ERROR_READ = "Memory could not be read"
LAST_ERROR_COMMIT = "Memory commit failed"
LAST_ERROR_SCREEN = "Memory screening dropped an item"
LAST_ERROR_AGENT = "Memory tool proposals failed"


@dataclass(frozen=True)
class TurnEvent:
    """Progress of a turn, for a spinner or a progress line.

    ``kind`` is one of ``selecting``, ``model`` (a model call starts), ``text`` (a
    piece of the model's reply streamed in: ``detail`` is that text), ``tool`` (a tool
    starts), ``step`` (a tool ran: ``step`` says which, on what, with what result),
    ``summarizing`` (older history is being compressed), ``answered`` (the final
    answer is known: ``detail`` is the whole answer; memory work follows),
    ``extracting``, ``consolidating``, ``done``; otherwise ``detail`` is a short
    human-readable text.
    """

    kind: str
    detail: str = ""
    step: ToolStep | None = None


@dataclass(frozen=True)
class TurnResult:
    """What a turn produced. ``batch`` is the extracted batch (pending in review
    mode, committed or failed in auto mode, ``None`` if nothing was extracted);
    ``committed`` the names written by this turn; ``memory_errors`` every memory
    failure of the turn, in order (its ``last_error`` text, cause and typed error).
    ``held`` (``auto`` mode): the batch of items screening keeps for a person (redacted,
    from tool output, or instructing the assistant; or the whole batch when its plan
    needs review), pending; ``held_reasons`` says why, per item (SPEC §7)."""

    answer: str
    selection: Selection
    batch: PendingBatch | None
    committed: tuple[str, ...]
    usage: TurnUsage
    last_error: str | None
    tool_calls: int
    last_error_cause: str | None = None
    memory_errors: tuple[MemoryFailure, ...] = ()
    stopped_at_limit: bool = False
    #: Seconds from the start of the turn to the answer, and then the memory work.
    answer_seconds: float = 0.0
    memory_seconds: float = 0.0
    steps: tuple[ToolStep, ...] = ()
    held: PendingBatch | None = None
    #: SPEC §13: the verdicts on the injected feedback/user memories (None: not checked).
    followed: FollowReport | None = None

    @property
    def held_reasons(self) -> dict[str, tuple[str, ...]]:
        return dict(self.held.flags) if self.held is not None else {}


Listener = Callable[[TurnEvent], None]


class OfferedMemoryTool(OfferedTool, Protocol):
    """The memory tool as a turn uses it: offered to the model, then its proposals
    handed over (``take``) to join the extracted batch."""

    def take(self) -> tuple[Proposal, ...]: ...


@dataclass(frozen=True)
class AnsweredTurn:
    """A turn whose answer is complete (:meth:`AgentSession.answer`); :meth:`finish`
    runs its memory work -- extraction, screening, review or commit, consolidation --
    and returns the whole :class:`TurnResult`. ``finish`` may run on another thread
    (the notebook's worker, SPEC §12); the session starts nothing else until it ran."""

    answer: str
    selection: Selection
    steps: tuple[ToolStep, ...]
    tool_calls: int
    answer_seconds: float
    _finish: Callable[[], TurnResult] = field(repr=False, compare=False)

    def finish(self) -> TurnResult:
        """The memory work, once (a second call raises :class:`TurnError`)."""
        return self._finish()


class AgentSession:
    """See the module docstring. ``model=None`` takes the configured model (settings
    resolved by :func:`ipymemory.config.resolve`; the key is the SDK's
    ``ANTHROPIC_API_KEY`` …), or a "no model" state that still selects memories with
    the deterministic fallback."""

    def __init__(
        self,
        workspace: str | Path,
        model: ModelClient | None = None,
        config: SessionConfig | None = None,
        store: MemoryStore | None = None,
    ) -> None:
        self._config = config if config is not None else SessionConfig()
        self.workspace = Path(workspace)
        self.store = store if store is not None else MemoryStore(self.workspace)
        if model is None:
            model = default_model(self.config.model, self.config.side_model)
        self.model: ModelClient = model
        self.namespace: dict[str, Any] = {}
        self.selected: tuple[MemoryRecord, ...] = ()
        self.selection: Selection | None = None
        self.last_error: str | None = None
        self.last_error_cause: str | None = None
        self.usage = UsageLedger()
        self._history: list[dict[str, Any]] = []
        self._request_history = RequestHistory(self.config.history_token_budget, self._summarize)
        self.batch_registry = BatchRegistry()
        #: Undecided batches kept in .memory/pending/ (they survive the kernel).
        self.pending_files = PendingFiles(self.store.root)
        self.pending_files.follow(self.batch_registry)
        #: This session's id in the journal's provenance.
        self.id = uuid.uuid4().hex[:12]
        #: What the front end knows about the running cell (notebook, cell_id,
        #: execution_count), asked when a turn starts; set by the notebook extension.
        self.caller: Callable[[], Mapping[str, Any]] | None = None
        self._provenance: TurnProvenance | None = None
        self._held: PendingBatch | None = None  # this turn's batch held for a person
        self._memory_tool: OfferedMemoryTool | None = None  # offered during a turn only
        self._agent_proposals: tuple[Proposal, ...] = ()
        self._memory_block = ""
        # SPEC §8: canonical messages before this index were read by a successful
        # extraction (or belong to turns that opted out of it).
        self._extracted_upto = 0
        # SPEC §9 spacing is counted from the journal; what this session adds to it:
        # the journal's newest seq when it last got a plan (one pending in review mode
        # is not asked for again on every turn) and its open batches proposed since.
        self._journal_entries = JournalCache()
        self._asked_seq = 0
        self._since_ask: set[str] = set()
        self._calls: list[CallUsage] | None = None
        self._errors: list[MemoryFailure] = []
        self._listener: Listener | None = None
        self._lock = threading.RLock()
        self._user_store: MemoryStore | None = None
        self._scoped = ScopedSet(())  # the sets the turn in progress selected from
        #: SPEC §13: each answer against its injected memories; counts per memory.
        self.followed = FollowTracker()

    # --- state ---------------------------------------------------------------------

    @property
    def user_store(self) -> MemoryStore | None:
        """The user scope's store (SPEC §11), or None when ``config.user_dir`` is."""
        self._user_store = user_store_for(
            self.config.user_dir, self._user_store, self.store.lock_timeout
        )
        return self._user_store

    @property
    def config(self) -> SessionConfig:
        """The session's settings; assigning new ones is :meth:`reconfigure`."""
        return self._config

    @config.setter
    def config(self, config: SessionConfig) -> None:
        self.reconfigure(config)

    def reconfigure(self, config: SessionConfig) -> None:
        """Use ``config`` from now on: the one path by which settings change, so what
        is built from a setting (the request history's budget) follows it too."""
        if not isinstance(config, SessionConfig):
            raise TypeError(f"config must be a SessionConfig, not {type(config).__name__}")
        with self._lock:
            self._config = config
            self._request_history.budget = config.history_token_budget

    @property
    def history(self) -> tuple[dict[str, Any], ...]:
        """The canonical history (copies: changing them changes nothing)."""
        return tuple(copy.deepcopy(self._history))

    @property
    def pending(self) -> tuple[PendingBatch, ...]:
        """Batches waiting for a decision (``pending``, or ``failed`` and retryable)."""
        return self.batch_registry.pending

    @property
    def batches(self) -> tuple[PendingBatch, ...]:
        """Every batch of this session, in creation order, in its latest state."""
        return self.batch_registry.all

    @property
    def memory_block(self) -> str:
        """The ``<relevant_memories>`` block of the turn in progress (``""`` if none)."""
        return self._memory_block

    def clear_history(self) -> None:
        """Start a fresh conversation (memories and pending batches are kept)."""
        with self._lock:
            self._history.clear()
            self._request_history.reset()
            self._extracted_upto = 0

    # --- the turn ------------------------------------------------------------------

    def begin_turn(self, query: str) -> Selection:
        """Select the memories for ``query`` and build this turn's memory block."""
        query = encodable(query)  # the user's text enters here (ipymemory._encodable)
        with self._lock:
            self._clear_errors()
            self._emit("selecting", "choosing relevant memories")
            selection = self._select(query)
            self.selection = selection
            self.selected = selection.records
            self._memory_block = render_memory_block(
                selection.records,
                user_wide=self._scoped.user_names,
                notes=self.followed.notes(
                    selection.records,
                    self._source_notes(selection.records),
                    self.config.mark_missed,
                ),
                saved=self._saved_dates(selection.records),
            )
            return selection

    def run_turn(
        self,
        query: str,
        *,
        allow_python: bool = False,
        use_memory: bool = True,
        commit_mode: str | None = None,
        namespace: dict[str, Any] | None = None,
        on_event: Listener | None = None,
        allow_hidden: bool | None = None,
        memory_tool: OfferedMemoryTool | None = None,
    ) -> TurnResult:
        """One full turn: select, answer (with tools), extract, then review/auto/off.

        ``use_memory=False`` neither selects nor extracts for this turn.
        ``namespace`` is where ``run_python`` runs (default: ``self.namespace``);
        it is offered to the model only with ``allow_python=True``.
        ``allow_hidden`` lets the file tools see hidden files for this turn (default:
        ``config.allow_hidden``). ``memory_tool`` (an :class:`ipymemory.MemoryTool` made
        with ``keep=False``) is offered to the model; what it proposes joins this turn's
        extracted batch, in the same review (SPEC §10).
        """
        return self.answer(
            query,
            allow_python=allow_python,
            use_memory=use_memory,
            commit_mode=commit_mode,
            namespace=namespace,
            on_event=on_event,
            allow_hidden=allow_hidden,
            memory_tool=memory_tool,
        ).finish()

    def answer(
        self,
        query: str,
        *,
        allow_python: bool = False,
        use_memory: bool = True,
        commit_mode: str | None = None,
        namespace: dict[str, Any] | None = None,
        on_event: Listener | None = None,
        allow_hidden: bool | None = None,
        memory_tool: OfferedMemoryTool | None = None,
    ) -> AnsweredTurn:
        """The turn up to its complete answer (the arguments of :meth:`run_turn`); its
        memory work waits for :meth:`AnsweredTurn.finish` (``run_turn`` calls it at once)."""
        mode = commit_mode or self.config.commit_mode
        if mode not in COMMIT_MODES:
            raise BatchError(f"commit_mode {mode!r} is not one of {', '.join(COMMIT_MODES)}")
        if not isinstance(query, str) or not query.strip():
            raise TurnError("the query is empty: nothing to ask the model")
        query = encodable(query)  # the user's text enters here (ipymemory._encodable)
        with self._lock:
            self._listener = on_event
            self._calls = []
            self._memory_tool = memory_tool
            try:
                hidden = self.config.allow_hidden if allow_hidden is None else allow_hidden
                return self._answer(query, mode, allow_python, use_memory, namespace, hidden)
            except BaseException:
                self._end_turn()
                raise

    def _end_turn(self) -> None:
        self.usage.turns.append(TurnUsage(tuple(self._calls or ())))
        self._calls = None
        self._listener = None
        self._memory_block = ""
        self._memory_tool = None

    def _answer(
        self,
        query: str,
        mode: str,
        allow_python: bool,
        use_memory: bool,
        namespace: dict[str, Any] | None,
        allow_hidden: bool,
    ) -> AnsweredTurn:
        started = time.monotonic()
        turn = TurnProvenance(self.id, query=query, caller=self._caller())
        self._provenance = turn
        if use_memory:
            selection = self.begin_turn(query)
        else:
            self._clear_errors()
            selection = Selection((), "none", "memory was not used for this turn")
            self.selection, self.selected, self._memory_block = selection, (), ""
        system = cached_system(self.config.system_prompt)
        tools = ToolBox(
            self.workspace,
            allow_python=allow_python,
            namespace=namespace if namespace is not None else self.namespace,
            read_limit=self.config.file_read_limit,
            list_limit=self.config.list_files_limit,
            output_limit=self.config.python_output_limit,
            allow_hidden=allow_hidden,
            python_timeout=self.config.python_timeout,
            offered=self._memory_tool,
        )
        self._history.append({"role": "user", "content": query})
        outcome = run_tool_loop(
            self.model,
            system=system,
            history=self._history,
            request_history=self._request_history,
            tools=tools,
            max_tool_steps=self.config.max_tool_steps,
            max_tokens=self.config.max_tokens,
            model_name=self.config.model,
            on_reply=self._record_main,
            emit=self._emit,
            memory_block=self._memory_block,
            # Stream only to someone listening (a notebook cell shows the text).
            on_text=self._stream_text if self._listener is not None else None,
            on_step=self._step,
        )
        answered = time.monotonic()
        # The answer is complete: show it now, before any memory work (issue 13).
        self._emit("answered", outcome.answer)
        self._provenance = replace(
            turn, files_read=tuple(tools.files_read), files_sha256=dict(tools.files_sha256)
        )
        finished = threading.Event()

        def finish() -> TurnResult:
            if finished.is_set():
                raise TurnError("this turn's memory work already ran")
            finished.set()
            with self._lock:
                try:
                    return self._memory_work(
                        mode, use_memory, selection, outcome, started, answered
                    )
                finally:
                    self._end_turn()

        return AnsweredTurn(
            outcome.answer, selection, outcome.steps, outcome.tool_calls, answered - started, finish
        )

    def _memory_work(
        self,
        mode: str,
        use_memory: bool,
        selection: Selection,
        outcome: LoopOutcome,
        started: float,
        answered: float,
    ) -> TurnResult:
        self._held = None
        # What the memory tool proposed this turn joins the extracted batch.
        self._agent_proposals = self._memory_tool.take() if self._memory_tool else ()
        if use_memory:
            batch = self._complete(mode)
        else:
            batch = None
            self._skip_extraction()
        held, self._held = self._held, None
        followed = self.followed.after_answer(
            FollowTurn(
                self.model,
                selection.records,
                outcome.answer,
                (self._provenance.query if self._provenance else None) or "",
                self._scoped,
                self.store,
                self.id,
                len(self.usage.turns) + 1,
                side_model=self.config.side_model,
                user_store=self.user_store,
                caller=self._provenance.caller if self._provenance else {},
                enabled=use_memory and self.config.follow_check,
                persist=mode != "off",
            ),
            record=self._record_side,
            fail=self._fail,
            emit=self._emit,
        )
        committed = batch.committed if batch is not None else ()
        said = f"{len(batch.items)} memory item(s) {batch.status}" if batch else "no new memories"
        if held is not None:
            said += f"; {len(held.items) or 'a plan'} held for review (see held_reasons)"
        self._emit("done", f"{outcome.tool_calls} tool call(s); {said}")
        return TurnResult(
            answer=outcome.answer,
            selection=selection,
            batch=batch,
            committed=committed,
            usage=TurnUsage(tuple(self._calls or ())),
            last_error=self.last_error,
            tool_calls=outcome.tool_calls,
            last_error_cause=self.last_error_cause,
            memory_errors=tuple(self._errors),
            stopped_at_limit=outcome.stopped_at_limit,
            answer_seconds=answered - started,
            memory_seconds=time.monotonic() - answered,
            steps=outcome.steps,
            held=held,
            followed=followed,
        )

    def complete(self) -> PendingBatch | None:
        """Extract from a copy of the canonical history (after the final answer).

        Returns the new batch -- pending in ``review`` mode, already committed (or
        failed) in ``auto`` mode -- or ``None`` (nothing new, extraction failed, or
        mode ``off``). A failed consolidation does not hold back the clean items (SPEC §9).
        """
        with self._lock:
            return self._complete(self.config.commit_mode)

    def _skip_extraction(self) -> None:
        """A turn that opted out of extraction (``use_memory=False``, mode ``off``):
        the cursor moves past it, so no later extraction reads it either."""
        self._extracted_upto = len(self._history)

    def _complete(self, mode: str) -> PendingBatch | None:
        if mode == "off":
            self._skip_extraction()
            self._agent_proposals = ()
            return None
        self._emit("extracting", "looking for memories worth keeping")
        # SPEC §8: only what no successful extraction read yet, after the turn before it.
        end = len(self._history)
        start = min(self._extracted_upto, end)
        history = copy.deepcopy(self._history[start:end])
        context = copy.deepcopy(self._history[previous_turn_start(self._history, start) : start])
        try:
            scoped = read_scopes(self.store, self.user_store)
        except MemoryStoreError as e:
            self._fail(LAST_ERROR_EXTRACT, f"the memory set could not be read: {e}", e)
            return self._register(None, mode, asked=False)
        stored = scoped.project
        base = tuple(entry.record for entry in stored)
        # SPEC §11: the extractor knows both scopes' records (no duplicate in either);
        # a user scope that cannot be read now takes no new items.
        user_on = self.user_store is not None and scoped.error is None
        theirs = {entry.record.name: entry.record for entry in scoped.user}
        try:
            extraction = extract_memories(
                self.model,
                history,
                scoped.catalog,
                {record.name for record in scoped.records},
                context=context,
                side_model=self.config.side_model,
            )
        except SideQueryError as e:  # the cursor stays: the next turn reads these too
            self._record_side("extractor", _error_usage(e))
            self._fail(LAST_ERROR_EXTRACT, str(e), e)
            return self._register(None, mode, asked=False)
        self._record_side("extractor", extraction.usage)
        self._extracted_upto = end
        # The extractor sees the turn before the new messages again, so it may propose
        # what already waits for review or what the user turned down: drop those. An
        # update keeps its record's name, so it is dropped only when it says the same
        # again (a later correction of a record is a new proposal).
        decided = self.batch_registry.proposed_names()
        seen = self.batch_registry.proposed_records()
        extracted = [
            item
            for item in extraction.items
            if (item.record not in seen if item.replaces else item.record.name not in decided)
        ]
        # SPEC §9: the excerpts the model cites (origin is decided from them, they go to
        # the journal) and the current records the items update.
        evidence = {i.record.name: i.evidence for i in extracted if i.evidence}
        current = {record.name for record in base}
        # SPEC §7: origin, credentials and instructions, before anything is kept.
        screened = screen_items(
            [item.record for item in extracted],
            [*context, *history],
            decided | current | set(theirs),
            evidence=evidence,
        )
        items = screened.items
        if screened.dropped:
            self._fail(LAST_ERROR_SCREEN, "; ".join(screened.dropped))
        if not items:
            return self._register(None, mode, asked=False)
        kept = {item.name for item in items}
        replaces = {
            i.record.name: i.replaces
            for i in extracted
            if (i.replaces in current or i.replaces in theirs) and i.record.name in kept
        }
        scopes = _new_scopes(items, replaces, current, user_on)
        # The user records its updates replace travel in the base (their digests are how
        # a later kernel knows they did not change).
        base_with_user = (*base, *(theirs[n] for n in set(replaces.values()) - current))
        project_items = [item for item in items if item.name not in scopes]
        origins = dict(screened.origins)
        flags = dict(screened.flags)
        plan = None
        plan_error = None
        asked = False
        project_updates = [n for n in replaces if n not in scopes]
        if self._consolidation_due(stored, len(project_items) - len(project_updates)):
            # The candidates: the project's set as the updates leave it, and this turn's
            # items for the project (a plan is made over one scope).
            updated = set(replaces.values())
            candidates = (*(r for r in base if r.name not in updated), *project_items)
            self._emit("consolidating", f"{len(candidates)} candidates")
            asked_at = self._journal_seq()
            try:
                plan, usage = plan_consolidation(
                    self.model, candidates, side_model=self.config.side_model
                )
                self._record_side("consolidator", usage)
                asked = True
                self._asked(asked_at)
            except SideQueryError as e:  # not asked: the next eligible turn asks again
                self._record_side("consolidator", _error_usage(e))
                self._fail(LAST_ERROR_CONSOLIDATE, str(e), e)
                plan_error = str(e)
            if plan is not None:
                plan, plan_origins, reasons = screen_plan(plan, base, screened, auto=mode == "auto")
                origins.update(plan_origins)
                flags.update(plan_flags(reasons))
        provenance = self._provenance or TurnProvenance(self.id, caller=self._caller())
        batch = PendingBatch(
            _batch_id(),
            items,
            plan,
            base_with_user,
            plan_error=plan_error,
            provenance=replace(provenance, models=self._models()),
            origins=origins,
            flags=flags,
            redacted=screened.redacted,
            replaces=replaces,
            evidence={name: why for name, why in evidence.items() if name in kept},
            scopes=scopes,
        )
        return self._register(batch, mode, asked=asked)

    def _register(
        self, batch: PendingBatch | None, mode: str, *, asked: bool
    ) -> PendingBatch | None:
        """Register this turn's batch (the memory tool's proposals joined) for review,
        or in ``auto`` mode commit what needs nobody and hold the rest."""
        agent = self._agent_batch(mode)
        if agent is not None and batch is not None:
            batch, separate = join_batches(batch, agent)
            if separate is not None:  # both carry a plan: reviewed side by side
                self.batch_registry.add(separate)
        batch = batch if batch is not None else agent
        if batch is None:
            return None
        if mode != "auto":
            return self._proposed(self.batch_registry.add(batch), asked)
        # SPEC §9: a failed consolidation does not hold back the clean items.
        now, later = split_for_auto(batch)
        if later is not None:  # waits for a person; the turn says so (TurnResult.held)
            self._held = self._proposed(self.batch_registry.add(later), asked)
        if now is None:
            return self._held
        return self._commit(
            self._proposed(self.batch_registry.add(now), asked), (), True, auto=True
        ).batch

    def _consolidation_due(self, stored: Sequence[StoredRecord], n_items: int) -> bool:
        """SPEC §8/§9: the set with this turn's items reaches the threshold, and
        ``consolidate_every`` records were added since the last consolidation -- counted
        from the journal (any kernel or process, and files another tool added since its
        last entry), plus this session's undecided items and this turn's, since this
        session last got a plan."""
        if len(stored) + n_items < self.config.consolidate_threshold:
            return False
        try:
            entries = self._journal_entries.entries(self.store.journal())
        except MemoryStoreError:
            entries = ()  # an unreadable journal: count what this session knows
        current = [entry.file for entry in stored]
        counted = spacing(entries, after_seq=self._asked_seq, current=current)
        undecided = sum(
            len(b.items) - len(b.replaces)  # an update adds no record
            for b in self.batch_registry.pending
            if b.id in self._since_ask
        )
        return counted.added + undecided + n_items >= self.config.consolidate_every

    def _journal_seq(self) -> int:
        """The journal's newest seq (0 when empty or unreadable)."""
        try:
            entries = self._journal_entries.entries(self.store.journal())
        except MemoryStoreError:
            return 0
        return entries[-1].seq if entries else 0

    def _asked(self, seq: int) -> None:
        """The consolidator gave a plan when the journal ended at ``seq``."""
        self._asked_seq = seq
        self._since_ask = set()

    def _proposed(self, batch: PendingBatch, asked: bool) -> PendingBatch:
        """Note a batch of this turn for the spacing count (not when this turn's plan
        already took its items as candidates)."""
        if not asked:
            self._since_ask.add(batch.id)
        return batch

    def _agent_batch(self, mode: str) -> PendingBatch | None:
        """The memory tool's proposals of this turn as one batch (origin ``agent``)."""
        proposals, self._agent_proposals = self._agent_proposals, ()
        if not proposals:
            return None
        try:
            current = self.store.records()
            screened = screen_proposals(proposals, current, auto=mode == "auto")
        except (ProposalError, MemoryStoreError) as e:  # the set changed under them
            self._fail(LAST_ERROR_AGENT, f"the memory tool's proposals were not kept: {e}", e)
            return None
        provenance = self._provenance or TurnProvenance(self.id, caller=self._caller())
        return assemble_batch(
            screened,
            current,
            batch_id=_batch_id(),
            provenance=replace(provenance, models=self._models()),
        )

    # --- batches -------------------------------------------------------------------

    def commit(
        self,
        batch: PendingBatch,
        *,
        reject: Collection[str] = (),
        accept_plan: bool = True,
        redacted: Collection[str] = (),
        scopes: Mapping[str, str] | None = None,
    ) -> CommitResult:
        """Commit ``batch`` minus the ``reject``-ed item names, with or without its
        plan, in one store commit (see :mod:`ipymemory.turn.batch`). Redacted items
        (``batch.redacted``) are committed only when named in ``redacted``. ``scopes``
        moves items between the project and the user scope (SPEC §11) before; the
        user scope's items are committed there, in a commit of its own.

        Raises :class:`BatchError` for an unknown batch, one already committed or
        discarded, or reject names that are not items. Otherwise never raises: a
        refusal is in ``CommitResult.error`` (and, for a store failure, in
        ``last_error``), and the set is unchanged. In commit mode ``off`` every
        commit is refused (a turn run with ``commit_mode="auto"`` still commits).
        """
        return self._commit(
            batch, reject, accept_plan, auto=False, redacted=redacted, scopes=scopes
        )

    def _commit(
        self,
        batch: PendingBatch,
        reject: Collection[str],
        accept_plan: bool,
        *,
        auto: bool,
        redacted: Collection[str] = (),
        scopes: Mapping[str, str] | None = None,
    ) -> CommitResult:
        with self._lock:
            # Mode off stops writing what a turn extracted; an undo/restore was asked
            # for explicitly, like forget, and is applied.
            off = not auto and self.config.commit_mode == "off" and batch.history is None
            result = self.batch_registry.commit(
                self.store,
                batch,
                reject,
                accept_plan,
                refusal="commit mode is 'off': this session never writes memories" if off else None,
                decided_by="auto" if auto else "review",
                redacted=redacted,
                user_store=self.user_store,
                scopes=scopes,
            )
            failed = result.batch is not None and result.batch.status is BatchStatus.FAILED
            if failed and result.error is not None:  # the store refused
                self._fail(LAST_ERROR_COMMIT, result.error, result.exception)
            return result

    def discard(self, batch: PendingBatch) -> None:
        """Drop a pending (or failed) batch; nothing is written."""
        with self._lock:
            self.batch_registry.discard(batch)

    def consolidate_now(self) -> PendingBatch:
        """Ask the consolidator for a plan over the current set; the plan waits for
        review (``commit``) in every mode. On failure the returned batch has status
        ``failed``, no plan and the cause in ``plan_error`` (not kept in ``pending``)."""
        with self._lock:
            self._clear_errors()
            try:
                base = self.store.records()
            except MemoryStoreError as e:
                self._fail(LAST_ERROR_CONSOLIDATE, f"the memory set could not be read: {e}", e)
                return _no_plan((), str(e))
            if not base:
                reason = "the memory set is empty: nothing to consolidate"
                return _no_plan((), reason)
            self._emit("consolidating", f"{len(base)} records")
            try:
                asked_at = self._journal_seq()
                plan, usage = plan_consolidation(
                    self.model, base, side_model=self.config.side_model
                )
                self._record_side("consolidator", usage)
                self._asked(asked_at)
            except SideQueryError as e:
                self._record_side("consolidator", _error_usage(e))
                self._fail(LAST_ERROR_CONSOLIDATE, str(e), e)
                return _no_plan(base, str(e))
            provenance = TurnProvenance(
                self.id,
                via="consolidate",
                caller=self._caller(),
                models={"consolidator": self._side_model_name()},
            )
            # SPEC §7: its records redacted where needed, flagged when they need a person.
            plan, origins, reasons = screen_plan(plan, base, NOTHING_SCREENED, auto=False)
            return self.batch_registry.add(
                PendingBatch(
                    _batch_id(),
                    (),
                    plan,
                    base,
                    provenance=provenance,
                    origins=origins,
                    flags=plan_flags(reasons),
                )
            )

    def propose_history_change(self, change: HistoryChange) -> PendingBatch:
        """Register an undo/restore as a batch awaiting a decision (``commit`` applies
        it whole, ``discard`` drops it); nothing is written now."""
        with self._lock:
            provenance = TurnProvenance(self.id, via=change.op, caller=self._caller())
            return self.batch_registry.add(
                PendingBatch(_batch_id(), (), None, (), provenance=provenance, history=change)
            )

    def record_error(self, message: str, cause: str) -> None:
        """Record a memory failure met outside the session's own code (the notebook's
        memory worker): ``last_error`` and ``last_error_cause``, like its own."""
        with self._lock:
            self._fail(message, cause)

    # --- helpers -------------------------------------------------------------------

    def _saved_dates(self, records: Sequence[MemoryRecord]) -> dict[str, str]:
        """Name -> the local date its file was saved (SPEC §9 age), from one journal
        read; names the journal does not know (or an unreadable journal) get none."""
        out: dict[str, str] = {}
        # Each record's date comes from the journal of its own scope (SPEC §11).
        for scope, stored in (("project", self._scoped.project), ("user", self._scoped.user)):
            files = {entry.record.name: entry.file for entry in stored}
            wanted = {files[r.name]: r.name for r in records if r.name in files}
            if not wanted:
                continue
            try:
                if scope == "project":
                    entries = self._journal_entries.entries(self.store.journal())
                else:
                    user = self.user_store
                    entries = tuple(reversed(user.history())) if user is not None else ()
            except MemoryStoreError:
                continue
            out.update({wanted[f]: day for f, day in saved_dates(entries, wanted).items()})
        return out

    def _select(self, query: str) -> Selection:
        self._scoped = ScopedSet(())
        try:
            scoped = read_scopes(self.store, self.user_store)
        except MemoryStoreError as e:
            self._fail(LAST_ERROR_READ, str(e), e)
            return Selection((), "none", f"the memory set could not be read: {e}")
        if scoped.error is not None:  # the turn goes on with the project's set
            self._fail(LAST_ERROR_READ, scoped.error)
        self._scoped = scoped
        records, catalog = scoped.records, scoped.catalog
        if self.config.max_selected == 0 and records:
            return Selection((), "none", "max_selected is 0")
        selection = select_memories(
            self.model,
            query,
            records,
            catalog,
            side_model=self.config.side_model,
            limit=self.config.max_selected,
        )
        self._record_side("selector", selection.usage)
        if selection.source == "fallback":
            self._fail(LAST_ERROR_SELECT, selection.reason or "unknown cause")
        return selection

    def _source_notes(self, records: Sequence[MemoryRecord]) -> dict[str, list[str]]:
        """SPEC §11: per selected project record, the sources that changed since it
        was saved (best effort: a journal that cannot be read says nothing)."""
        names = [r.name for r in records if r.name not in self._scoped.user_names]
        if not names:
            return {}
        try:
            journal = self._journal_entries.entries(self.store.journal())
            stale = stale_records(self.store, names, journal=journal, current=self._scoped.project)
        except MemoryStoreError:
            return {}
        return {
            name: [f"source changed since saved: {c.path}" for c in changes]
            for name, changes in stale.items()
        }

    def _summarize(self, previous: str | None, dropped: Any, max_tokens: int) -> str:
        self._emit("summarizing", f"{len(dropped)} older messages")
        try:
            text, usage = summarize_history(
                self.model,
                previous,
                dropped,
                max_tokens=max_tokens,
                side_model=self.config.side_model,
            )
        except SideQueryError as e:
            self._record_side("summarizer", _error_usage(e))
            raise
        self._record_side("summarizer", usage)
        return text

    def _caller(self) -> dict[str, Any]:
        """What the front end says about the running cell; {} if unknown or it fails
        (provenance is best effort and must never break a turn)."""
        if self.caller is None:
            return {}
        try:
            return dict(self.caller())
        except Exception:
            return {}

    def _models(self) -> dict[str, str]:
        """Role -> model name of the calls made so far in this turn (or operation)."""
        calls = self._calls if self._calls is not None else []
        return {call.role: call.model for call in calls if call.model}

    def _clear_errors(self) -> None:
        self.last_error = None
        self.last_error_cause = None
        self._errors = []

    def _fail(self, message: str, cause: str, error: Exception | None = None) -> None:
        # A cause may quote a reply or a record: never a credential on screen (SPEC §7).
        cause = redact(cause)
        self.last_error = message
        self.last_error_cause = cause
        self._errors.append(MemoryFailure(message, cause, error))

    def _emit(self, kind: str, detail: str, step: ToolStep | None = None) -> None:
        if self._listener is not None:
            self._listener(TurnEvent(kind, detail, step))

    def _stream_text(self, text: str) -> None:
        self._emit("text", text)

    def _step(self, step: ToolStep) -> None:
        self._emit("step", f"{step.name} {step.summary}", step)

    def _record(self, call: CallUsage) -> None:
        if self._calls is not None:
            self._calls.append(call)
        else:
            self.usage.add_other([call])

    def _record_main(self, reply: ModelReply) -> None:
        name = reply.model or self.config.model or str(getattr(self.model, "model", ""))
        self._record(CallUsage("main", name, reply.usage))

    def _record_side(self, role: Role, usage: Usage | None) -> None:
        if usage is None or usage == Usage():
            return  # no call was made (empty set, no model) or it cost nothing
        self._record(CallUsage(role, self._side_model_name(), usage))

    def _side_model_name(self) -> str:
        return self.config.side_model or str(getattr(self.model, "side_model", "") or "")

    def __repr__(self) -> str:
        return (
            f"AgentSession({str(self.workspace)!r}, model={self.model!r}, "
            f"mode={self.config.commit_mode!r}, messages={len(self._history)}, "
            f"pending={len(self.pending)})"
        )


def _new_scopes(
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
    out = {}
    for item in items:
        target = replaces.get(item.name)
        if target is not None:
            if target not in project:
                out[item.name] = USER_SCOPE
        elif item.type is MemoryType.USER:
            out[item.name] = USER_SCOPE
    return out


def _error_usage(error: SideQueryError) -> Usage | None:
    return error.usage if isinstance(error, SideQueryReplyError) else None


def _batch_id() -> str:
    return uuid.uuid4().hex[:12]


def _no_plan(base: tuple[MemoryRecord, ...], reason: str) -> PendingBatch:
    """The failed, unregistered batch of a consolidation that produced no plan."""
    return PendingBatch(_batch_id(), (), None, base, BatchStatus.FAILED, plan_error=reason)
