"""``AgentSession``: one agent conversation with long-term memory (SPEC §2).

One session per notebook kernel. It holds the settings, the conversation (the canonical
history and the request history sent of it), the batches and what ties turns together
(the extraction cursor, the consolidation spacing, the journal's cache), and runs a
turn's phases in order, each a module of its own that takes a
:class:`~ipymemory.turn.context.TurnContext` (the model, the settings, both scopes'
stores, the :class:`~ipymemory.turn.turnlog.TurnLog` it reports into)::

    question        Question.asked: the user's text, made encodable once (turn/question.py)
    1. choosing     choose_for_turn + sections_for (turn/choosing.py): read both
                    scopes, select at once (the whole set, or the keyword ranking
                    filling the budget); with selector "model" the side model's pick
                    starts on a thread beside the main call (turn/beside.py); what the
                    turn's user message adds to the blocks the conversation carries
                    (turn/carried.py) -- begin_turn shows the selection alone
    2. answering    answer_question (turn/answering.py): request = system prompt +
                    request history (compressed canonical history) + the turn's
                    messages, each memory block where it was first given (SPEC §8, §13);
                    the tool loop (turn/loop.py) grows the canonical history, and the
                    model's pick joins the first request after it arrives
                    (turn/memory_feed.py) -- answer() ends here
    3. memory work  MemoryWork.run (turn/memory_work.py): extract from the canonical
                    history since the cursor (SPEC §8), screen, scope, consolidate when
                    due (turn/consolidation.py: SPEC §9 spacing), then review / auto
                    commit / off -- AnsweredTurn.finish(), maybe on another thread

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import _constants as C
from ..config import default_model
from ..errors import BatchError, TurnError
from ..model import ModelClient
from ..review import BatchRegistry, CommitResult, Decision, PendingBatch
from ..review.door import Door
from ..review.failures import MemoryFailure
from ..review.history_change import HistoryChange
from ..review.pending import PendingFiles
from ..review.proposals import Proposal, new_batch_id
from ..review.provenance import TurnProvenance
from ..review.scopes import ScopedSet, user_store_for
from ..sidequery import LAST_ERROR_SELECT, Selection
from ..store.recency import JournalCache
from ..store.record import MemoryRecord
from ..store.store import MemoryStore
from .answering import OfferedMemoryTool, ToolChoices, answer_question, summarize, tool_box
from .beside import BesidePick
from .carried import CarriedMemory
from .choosing import (
    LAST_ERROR_READ,
    Chosen,
    ask_model,
    choose_for_turn,
    sections_for,
    took_pick,
)
from .config import COMMIT_MODES, SessionConfig
from .consolidation import SessionSpacing, consolidate_now
from .context import TurnContext
from .followed import FollowReport, FollowTracker, FollowTurn
from .history import RequestHistory
from .injection import render_block
from .loop import LoopOutcome, ToolStep
from .memory_feed import TurnMemory
from .memory_work import LAST_ERROR_COMMIT, MemoryWork, WorkOutcome, commit_batch, skipped
from .question import Question
from .trace import SelectionTrace
from .turnlog import Listener, TurnEvent, TurnLog
from .usage import TurnUsage, UsageLedger

__all__ = [
    "LAST_ERROR_COMMIT",
    "LAST_ERROR_READ",
    "LAST_ERROR_TURN",
    "AgentSession",
    "AnsweredTurn",
    "OfferedMemoryTool",
    "TurnEvent",
    "TurnResult",
]

#: A turn that failed before its answer (the model call, a tool): %memory status says it.
LAST_ERROR_TURN = "The agent turn failed"


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
    #: SPEC §14: the verdicts on the injected feedback/user memories (None: not checked).
    followed: FollowReport | None = None
    #: SPEC §13: what each request carried and the model's pick (None: memory not used).
    trace: SelectionTrace | None = None

    @property
    def held_reasons(self) -> dict[str, tuple[str, ...]]:
        return dict(self.held.flags) if self.held is not None else {}


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
    #: What each request carried so far (the model's pick is known after ``finish``).
    trace: SelectionTrace | None = None

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
        self.usage = UsageLedger()
        self._log = TurnLog(self.usage)  # events, calls and failures of the turn
        #: SPEC §14: each answer against its injected memories; counts per memory.
        self.followed = FollowTracker()
        self._chosen_scoped = ScopedSet(())  # the sets this turn's selection read
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
        self._read_hashes: dict[str, str] = {}  # path -> sha256 as the session last read it
        self._memory_tool: OfferedMemoryTool | None = None  # offered during a turn only
        self._memory_block = ""
        # Issue 40: the memory blocks the conversation's requests carry, where they were
        # given; what a late model pick brings to the next turn; each turn's trace.
        self._carried = CarriedMemory()
        self._carry_over: tuple[str, ...] = ()
        #: (turn number, its memory trace) of the last turns that used memory.
        self.traces: list[tuple[int, SelectionTrace]] = []
        # SPEC §8: canonical messages before this index were read by a successful
        # extraction (or belong to turns that opted out of it).
        self._extracted_upto = 0
        # Issue 31: where the extractor's append-only request starts (its turns since
        # then are its cached prefix).
        self._extract_anchor = 0
        # The project journal's entries, read once per change: the saved dates and the
        # source notes of phase 1, the consolidation spacing of phase 3 (SPEC §9).
        self._journal = JournalCache()
        self._spacing = SessionSpacing(self._journal)
        self._lock = threading.RLock()
        self._user_store: MemoryStore | None = None

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
        """The ``<relevant_memories>`` block the turn in progress added at its user message
        (``""`` if none: what it wants the conversation's requests carry already)."""
        return self._memory_block

    def clear_history(self) -> None:
        """Start a fresh conversation (memories and pending batches are kept)."""
        with self._lock:
            self._history.clear()
            self._request_history.reset()
            self._carried.reset()
            self._carry_over = ()
            self._extracted_upto = 0
            self._extract_anchor = 0

    @property
    def last_error(self) -> str | None:
        """The fixed text of the latest memory failure (cleared when a turn starts)."""
        return self._log.last_error

    @property
    def last_error_cause(self) -> str | None:
        """The exact cause of ``last_error``, credentials redacted."""
        return self._log.last_error_cause

    # --- the turn ------------------------------------------------------------------

    def begin_turn(self, query: str) -> Selection:
        """Select the memories for ``query`` as a turn's first request would, at once,
        and build their block (:attr:`memory_block`); no model is asked and nothing the
        conversation carries changes."""
        question = Question.of(query)  # the user's text enters here
        with self._lock:
            self._log.clear_errors()
            ctx = self._context()
            chosen = choose_for_turn(ctx, question)
            self._chosen(chosen)
            self._memory_block = render_block(
                [text for _, text in self._sections(ctx, chosen, chosen.selection.records)]
            )
            return chosen.selection

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
        question = Question.asked(query)  # the user's text enters here
        with self._lock:
            self._log.begin(on_event)
            self._memory_tool = memory_tool
            try:
                tools = ToolChoices(
                    allow_python=allow_python,
                    namespace=namespace if namespace is not None else self.namespace,
                    allow_hidden=self.config.allow_hidden if allow_hidden is None else allow_hidden,
                    memory_tool=memory_tool,
                )
                return self._answer(question, mode, use_memory, tools)
            except BaseException as e:
                if isinstance(e, Exception):  # %memory status says it (an interrupt is not one)
                    self._log.fail(LAST_ERROR_TURN, str(e), e)
                self._end_turn()
                raise

    def _answer(
        self, question: Question, mode: str, use_memory: bool, choices: ToolChoices
    ) -> AnsweredTurn:
        """Phases 1 and 2; phase 3 waits in the returned turn's ``finish``."""
        started = time.monotonic()
        turn = TurnProvenance(self.id, query=question.text, caller=self.caller_context())
        self._provenance = turn
        ctx = self._context()
        self._log.clear_errors()
        feed: TurnMemory | None = None
        if use_memory:
            selection, feed = self._choose(ctx, question, started)
        else:
            selection = Selection((), "none", "memory was not used for this turn")
            self.selection, self.selected, self._memory_block = selection, (), ""
        tools = tool_box(self.workspace, ctx, choices)
        outcome = answer_question(
            ctx,
            question,
            feed,
            history=self._history,
            request_history=self._request_history,
            tools=tools,
        )
        answered = time.monotonic()
        self._provenance = replace(
            turn, files_read=tuple(tools.files_read), files_sha256=dict(tools.files_sha256)
        )
        # SPEC §11: what the session read, as last read -- a record may be about a file
        # an earlier turn read.
        for path in tools.files_read:
            self._read_hashes.pop(path, None)
        self._read_hashes.update(tools.files_sha256)
        finished = threading.Event()

        def finish() -> TurnResult:
            if finished.is_set():
                raise TurnError("this turn's memory work already ran")
            finished.set()
            with self._lock:
                try:
                    trace = self._traced(feed)
                    return self._finish(
                        mode, use_memory, selection, outcome, started, answered, trace
                    )
                finally:
                    self._end_turn()

        so_far = SelectionTrace(feed.requests) if feed is not None else None
        return AnsweredTurn(
            outcome.answer,
            selection,
            outcome.steps,
            outcome.tool_calls,
            answered - started,
            finish,
            so_far,
        )

    def _chosen(self, chosen: Chosen) -> None:
        self.selection = chosen.selection
        self.selected = chosen.selection.records
        self._chosen_scoped = chosen.scoped

    def _sections(
        self, ctx: TurnContext, chosen: Chosen, records: Sequence[MemoryRecord]
    ) -> list[tuple[str, str]]:
        # SPEC §14: a memory the previous answer did not follow is marked in the block.
        mark = self.config.mark_missed
        return sections_for(
            ctx,
            records,
            chosen.scoped,
            self._journal,
            notes=lambda r, n: self.followed.notes(r, n, mark),
        )

    def _choose(
        self, ctx: TurnContext, question: Question, started: float
    ) -> tuple[Selection, TurnMemory]:
        """Phase 1: the selection made at once, the model's pick started beside the main
        call (selector ``model``), and what the turn's user message adds to the blocks
        the conversation carries."""
        ctx.log.emit("selecting", "choosing relevant memories")
        chosen = choose_for_turn(ctx, question)
        self._chosen(chosen)
        ask = chosen.ask
        if ask is not None:  # the model is told all the agent has: this turn's and before
            agent_has = (*self._carried.names, *self._carry_over, *ask.given)
            ask = replace(ask, given=tuple(dict.fromkeys(agent_has)))
        pick = (
            BesidePick(lambda: ask_model(ctx.model, ask), started=started)
            if ask is not None
            else None
        )
        by_name = {r.name: r for r in chosen.scoped.records}
        have = set(chosen.selection.names)
        # A pick that arrived after the last request of the turn before comes first.
        carried_in = tuple(n for n in self._carry_over if n in by_name and n not in have)
        self._carry_over = ()
        wanted = [*(by_name[n] for n in carried_in), *chosen.selection.records]
        carried = self._carried.names
        now: dict[str, str | None] = dict.fromkeys(carried)
        others = [by_name[n] for n in carried if n in by_name and n not in have]
        sections = dict(self._sections(ctx, chosen, [*wanted, *others]))
        now.update({n: sections[n] for n in carried if n in sections})
        given = self._carried.give(
            len(self._history),
            [(r.name, sections[r.name]) for r in wanted],
            now,
            cap=C.CARRIED_BUDGET_FACTOR * self.config.memory_budget,
        )
        self._memory_block = given.block
        feed = TurnMemory(
            self._carried,
            given,
            pick=pick,
            render=lambda records: self._sections(ctx, chosen, records),
            taken=lambda selection: took_pick(ctx, selection),
            carried_in=carried_in,
        )
        return chosen.selection, feed

    def _traced(self, feed: TurnMemory | None) -> SelectionTrace | None:
        """The turn's trace once its pick is in (waited for), kept in :attr:`traces`;
        a late pick's records are carried into the next turn."""
        if feed is None:
            return None
        trace, self._carry_over = feed.finish()
        self.traces.append((len(self.usage.turns) + 1, trace))  # the turn ends after this
        del self.traces[: -C.TRACES_KEPT]
        if self._provenance is not None:
            self._provenance = replace(self._provenance, memories=trace.to_json())
        return trace

    def _finish(
        self,
        mode: str,
        use_memory: bool,
        selection: Selection,
        outcome: LoopOutcome,
        started: float,
        answered: float,
        trace: SelectionTrace | None = None,
    ) -> TurnResult:
        """Phase 3, and the turn's result."""
        # What the memory tool proposed this turn joins the extracted batch.
        tool = self._memory_tool
        proposals = tool.take() if tool else ()
        if use_memory:
            work = self._memory_work(mode, proposals, tool.name if tool else None)
        else:  # the cursor moves past a turn that opted out: no extraction reads it
            work = self._moved(skipped(self._history))
        batch, held = work.batch, work.held
        followed = self._follow_up(mode, use_memory, self._seen(selection, trace), outcome)
        said = f"{len(batch.items)} memory item(s) {batch.status}" if batch else "no new memories"
        failed = [f.message for f in self._log.failures if f.message != LAST_ERROR_SELECT]
        if batch is None and failed:  # not "no new memories": none could be looked for
            said = f"memory work failed: {failed[-1]}"
        if held is not None:
            said += f"; {len(held.items) or 'a plan'} held for review (see held_reasons)"
        self._log.emit("done", f"{outcome.tool_calls} tool call(s); {said}")
        return TurnResult(
            answer=outcome.answer,
            selection=selection,
            batch=batch,
            committed=batch.committed if batch is not None else (),
            usage=self._log.turn_usage(),
            last_error=self.last_error,
            tool_calls=outcome.tool_calls,
            last_error_cause=self.last_error_cause,
            memory_errors=tuple(self._log.failures),
            stopped_at_limit=outcome.stopped_at_limit,
            answer_seconds=answered - started,
            memory_seconds=time.monotonic() - answered,
            steps=outcome.steps,
            held=held,
            followed=followed,
            trace=trace,
        )

    def _seen(self, selection: Selection, trace: SelectionTrace | None) -> tuple[MemoryRecord, ...]:
        """The records this turn's requests added: its selection, then what the
        model's pick added to a later request (SPEC §13)."""
        joined = trace.pick.added if trace and trace.pick and trace.pick.joined else ()
        by_name = {r.name: r for r in self._chosen_scoped.records}
        return (*selection.records, *(by_name[n] for n in joined if n in by_name))

    def _follow_up(
        self, mode: str, use_memory: bool, records: Sequence[MemoryRecord], outcome: LoopOutcome
    ) -> FollowReport | None:
        """SPEC §14: the answer against the feedback/user memories its requests added
        (off the answer's path: it runs with the memory work)."""
        ctx = self._context()
        provenance = self._provenance
        return self.followed.after_answer(
            FollowTurn(
                ctx.model,
                tuple(records),
                outcome.answer,
                (provenance.query if provenance else None) or "",
                self._chosen_scoped,
                self.store,
                self.id,
                len(self.usage.turns) + 1,
                side_model=self.config.side_model,
                user_store=self.user_store,
                caller=provenance.caller if provenance else {},
                enabled=use_memory and self.config.follow_check,
                persist=mode != "off",
            ),
            record=ctx.record_side,
            fail=self._log.fail,
            emit=lambda kind, detail: self._log.emit(kind, detail),
        )

    def _end_turn(self) -> None:
        self._log.end()
        self._memory_block = ""
        self._memory_tool = None

    def complete(self) -> PendingBatch | None:
        """Extract from a copy of the canonical history (after the final answer).

        Returns the new batch -- pending in ``review`` mode, already committed (or
        failed) in ``auto`` mode -- or ``None`` (nothing new, extraction failed, or
        mode ``off``). A failed consolidation does not hold back the clean items (SPEC §9).
        """
        with self._lock:
            return self._memory_work(self.config.commit_mode).batch

    def _memory_work(
        self, mode: str, proposals: Sequence[Proposal] = (), tool_name: str | None = None
    ) -> WorkOutcome:
        provenance = self._provenance or TurnProvenance(self.id, caller=self.caller_context())
        work = MemoryWork(
            self._context(),
            self.batch_registry,
            self._spacing,
            provenance,
            proposals,
            reads=self._read_hashes,
            memory_tool_name=tool_name,
        )
        return self._moved(
            work.run(mode, self._history, self._extracted_upto, self._extract_anchor)
        )

    def _moved(self, work: WorkOutcome) -> WorkOutcome:
        if work.extracted_upto is not None:
            self._extracted_upto = work.extracted_upto
        if work.anchor is not None:
            self._extract_anchor = work.anchor
        return work

    # --- batches -------------------------------------------------------------------

    def commit(
        self, batch: PendingBatch, decision: Decision | None = None, **choices: Any
    ) -> CommitResult:
        """Commit ``batch`` as ``decision`` says (default: everything screening let
        through, with its plan), in one store commit (see :mod:`ipymemory.review`):
        items it rejects are left out, redacted items are committed only when it chooses
        them, items held for review (flagged by screening) only when it accepts them --
        the others stay pending in the batch (``CommitResult.held``) -- and a flagged
        plan only when it accepts the plan. Its ``scopes`` move items between the
        project and the user scope (SPEC §11) first; the user scope's items are
        committed there, in a commit of its own. The keywords of earlier versions
        (``reject=``, ``accept_plan=``, ``redacted=``, ``scopes=``, ``accept=``,
        ``decided_by=``) still say the same (:meth:`Decision.from_keywords`).

        Raises :class:`BatchError` for an unknown batch, one already committed or
        discarded, or a decision naming what the batch does not have. Otherwise never
        raises: a refusal is in ``CommitResult.error`` (and, for a store failure, in
        ``last_error``), and the set is unchanged. In commit mode ``off`` every commit
        made by a person is refused (a turn run with ``commit_mode="auto"`` still
        commits).
        """
        if decision is None:
            decision = Decision.from_keywords(choices)
        elif choices:
            raise TypeError("give a Decision or its keywords, not both")
        with self._lock:
            return commit_batch(self._context(), self.batch_registry, batch, decision)

    def discard(self, batch: PendingBatch) -> None:
        """Drop a pending (or failed) batch; nothing is written."""
        with self._lock:
            self.batch_registry.discard(batch)

    def consolidate_now(self) -> PendingBatch:
        """Ask the consolidator for a plan over the current set; the plan waits for
        review (``commit``) in every mode. On failure the returned batch has status
        ``failed``, no plan and the cause in ``plan_error`` (not kept in ``pending``)."""
        with self._lock:
            self._log.clear_errors()
            ctx = self._context()
            provenance = TurnProvenance(
                self.id,
                via=Door.CONSOLIDATE,
                caller=self.caller_context(),
                models={"consolidator": ctx.side_model_name},
            )
            return consolidate_now(ctx, self.batch_registry, self._spacing, provenance)

    def propose_history_change(self, change: HistoryChange) -> PendingBatch:
        """Register an undo/restore as a batch awaiting a decision (``commit`` applies
        it whole, ``discard`` drops it); nothing is written now."""
        with self._lock:
            provenance = TurnProvenance(self.id, via=Door(change.op), caller=self.caller_context())
            return self.batch_registry.add(
                PendingBatch(new_batch_id(), (), None, (), provenance=provenance, history=change)
            )

    def record_error(self, message: str, cause: str) -> None:
        """Record a memory failure met outside the session's own code (the notebook's
        memory worker): ``last_error`` and ``last_error_cause``, like its own."""
        with self._lock:
            self._log.fail(message, cause)

    # --- helpers -------------------------------------------------------------------

    def _context(self) -> TurnContext:
        """What a phase is given: the settings as they are now (see turn/context.py)."""
        return TurnContext(self.model, self.config, self.store, self.user_store, self._log)

    def _summarize(self, previous: str | None, dropped: Any, max_tokens: int) -> str:
        return summarize(self._context(), previous, dropped, max_tokens)

    def caller_context(self) -> dict[str, Any]:
        """What the front end says about the running cell; {} if unknown or it fails
        (provenance is best effort and must never break a turn)."""
        if self.caller is None:
            return {}
        try:
            return dict(self.caller())
        except Exception:
            return {}

    def __repr__(self) -> str:
        return (
            f"AgentSession({str(self.workspace)!r}, model={self.model!r}, "
            f"mode={self.config.commit_mode!r}, messages={len(self._history)}, "
            f"pending={len(self.pending)})"
        )
