"""Whether a turn's answer followed the memories injected into it (SPEC §14).

:func:`judge` puts the two halves together: the exact checks of
:mod:`ipymemory.follow` first, then one side-query (:func:`~ipymemory.sidequery.
followed.judge_followed`) for every ``feedback``/``user`` memory they left undecided.
A failed side-query leaves those memories without a verdict and says why; the exact
verdicts stand.

:class:`FollowTracker` is a session's part: it runs the check in the turn's memory work
(after the answer, so on the notebook's worker when that is on), counts the verdicts per
memory, appends them to each scope's follow log (:mod:`ipymemory.store.follow_log`) and
marks, in the next turn's block, a memory the previous answer did not follow. Nothing
here writes a record or changes the set; a failure is reported like every memory
failure and never breaks the turn.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._secrets import redact
from ..errors import MemoryStoreError, ModelNotConfigured, SideQueryError, SideQueryReplyError
from ..follow import Verdict, as_verdict, check_answer, checked
from ..model import ModelClient, Usage
from ..model.usage import Role
from ..review.scopes import PROJECT, USER, Scope, ScopedSet
from ..sidequery.followed import judge_followed
from ..store.follow_log import FollowEntry, FollowLog, JudgedRecord
from ..store.history import actor_info
from ..store.record import MemoryRecord
from ..store.store import MemoryStore

__all__ = [
    "LAST_ERROR_FOLLOW",
    "MISSED_NOTE",
    "FollowReport",
    "FollowTally",
    "FollowTracker",
    "FollowTurn",
    "FollowedMemory",
    "Judgment",
    "judge",
]

# The last_error of a follow-up check whose side-query failed (SPEC §2: never the turn's).
LAST_ERROR_FOLLOW = "Memory follow-up check failed"


@dataclass(frozen=True)
class Judgment:
    """The verdicts on one answer, in the order the memories were injected; the names
    left without one (the side-query failed: ``error`` says why) and its usage."""

    verdicts: tuple[Verdict, ...]
    unjudged: tuple[str, ...] = ()
    usage: Usage = field(default_factory=Usage)
    error: SideQueryError | None = None
    asked_model: tuple[str, ...] = ()  # the names sent to the side model

    @property
    def missed(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.missed)


def judge(
    model: ModelClient,
    records: Sequence[MemoryRecord],
    answer: str,
    query: str,
    *,
    side_model: str | None = None,
) -> Judgment:
    """Judge ``answer`` (to ``query``) against the checked ones of ``records``; never
    raises a memory error (a failed side-query is in :attr:`Judgment.error`)."""
    decided, undecided = check_answer(records, answer, query)
    usage = Usage()
    error: SideQueryError | None = None
    if undecided:
        try:
            triples, usage = judge_followed(model, undecided, answer, query, side_model=side_model)
        except SideQueryError as e:
            error = e
            if isinstance(e, SideQueryReplyError) and e.usage is not None:
                usage = e.usage
        else:
            for name, verdict, reason in triples:
                decided[name] = Verdict(name, as_verdict(verdict), reason, "model")
    order = [record.name for record in checked(records)]
    return Judgment(
        tuple(decided[name] for name in order if name in decided),
        tuple(name for name in order if name not in decided),
        usage,
        error,
        tuple(record.name for record in undecided),
    )


# --- a session's follow-up checks ----------------------------------------------------

Record = Callable[[Role, Usage | None], None]
Fail = Callable[[str, str, Exception | None], None]
Emit = Callable[[str, str], None]


@dataclass(frozen=True)
class FollowedMemory:
    """One injected memory's verdict in a turn, with where the record lives."""

    record: MemoryRecord
    verdict: Verdict
    scope: Scope = PROJECT
    file: str | None = None

    @property
    def name(self) -> str:
        return self.record.name

    def judged(self) -> JudgedRecord:
        v = self.verdict
        return JudgedRecord(v.name, self.file, v.verdict, redact(v.reason), v.by)


@dataclass(frozen=True)
class FollowReport:
    """What a turn's follow-up check found: a verdict per judged memory, in injection
    order, and the names left without one (the side-query failed)."""

    memories: tuple[FollowedMemory, ...]
    unjudged: tuple[str, ...] = ()

    @property
    def missed(self) -> tuple[FollowedMemory, ...]:
        """The memories the answer did not follow (verdict ``contradicts``)."""
        return tuple(m for m in self.memories if m.verdict.missed)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdicts": [{**m.verdict.to_json(), "scope": m.scope} for m in self.memories],
            "unjudged": list(self.unjudged),
        }


@dataclass(frozen=True)
class FollowTurn:
    """What a turn's check needs from its session (SPEC §14): the models, the injected
    records and where they came from, the answer and its query, who the turn was, and
    whether the verdicts go to the follow log (not in commit mode ``off``)."""

    model: ModelClient
    records: Sequence[MemoryRecord]
    answer: str
    query: str
    scoped: ScopedSet
    store: MemoryStore
    session: str
    turn: int
    side_model: str | None = None
    user_store: MemoryStore | None = None
    caller: Mapping[str, Any] = field(default_factory=dict)
    enabled: bool = True
    persist: bool = True


@dataclass
class FollowTally:
    """This session's verdicts on one memory."""

    follows: int = 0
    contradicts: int = 0
    untouched: int = 0
    unjudged: int = 0
    last_miss: str | None = None  # the reason of the newest "contradicts"

    def to_json(self) -> dict[str, Any]:
        return {
            "follows": self.follows,
            "contradicts": self.contradicts,
            "untouched": self.untouched,
            "unjudged": self.unjudged,
            "last_miss": self.last_miss,
        }


class FollowTracker:
    """A session's follow-up checks: each turn's (:meth:`after_answer`), the counts per
    memory (``%memory session``) and the marks the next turn's block carries for the
    memories the previous answer did not follow (:meth:`notes`)."""

    def __init__(self) -> None:
        self.tally: dict[str, FollowTally] = {}
        self._missed: dict[str, FollowedMemory] = {}
        self._lock = threading.Lock()

    def after_answer(
        self, turn: FollowTurn, *, record: Record, fail: Fail, emit: Emit
    ) -> FollowReport | None:
        """Judge the turn's answer (if the check is on and a checked memory was
        injected), count the verdicts and keep them in each scope's follow log. Every
        failure is reported through ``fail``; none is raised (SPEC §2)."""
        with self._lock:
            self._missed = {}
        records = checked(turn.records)
        if not turn.enabled or not records:
            return None
        emit("checking", f"{len(records)} feedback/user memor{'y' if len(records) == 1 else 'ies'}")
        try:
            judgment = judge(
                turn.model, records, turn.answer, turn.query, side_model=turn.side_model
            )
        except Exception as e:  # a bug of the check must not break the turn either
            fail(LAST_ERROR_FOLLOW, f"{type(e).__name__}: {e}", e)
            return None
        record("checker", judgment.usage)
        # No side model to ask (none configured, none scripted): the memories it would
        # have judged stay unjudged; that is a state, not a failure of the turn.
        unasked = judgment.error is not None and isinstance(
            judgment.error.__cause__, ModelNotConfigured
        )
        if judgment.error is not None and not unasked:
            fail(LAST_ERROR_FOLLOW, str(judgment.error), judgment.error)
        report = _report(judgment, records, turn.scoped)
        with self._lock:
            self._count(report)
            self._missed = {m.name: m for m in report.missed}
        if turn.persist:
            self._keep(report, turn, fail)
        return report

    def notes(
        self,
        records: Sequence[MemoryRecord],
        notes: Mapping[str, Sequence[str]],
        mark: bool = True,
    ) -> dict[str, list[str]]:
        """``notes`` for the next turn's block (SPEC §11's), plus -- with ``mark`` -- a
        line on each record the previous answer did not follow, as it was then."""
        out = {name: list(lines) for name, lines in notes.items()}
        if not mark:
            return out
        with self._lock:
            missed = dict(self._missed)
        for rec in records:
            m = missed.get(rec.name)
            if m is not None and m.record == rec:
                line = f"{MISSED_NOTE}: it {m.verdict.reason}"
                out.setdefault(rec.name, []).append(line)
        return out

    def counts(self) -> dict[str, FollowTally]:
        with self._lock:
            return {name: FollowTally(**vars(t)) for name, t in self.tally.items()}

    def _count(self, report: FollowReport) -> None:
        for m in report.memories:
            tally = self.tally.setdefault(m.name, FollowTally())
            setattr(tally, m.verdict.verdict, getattr(tally, m.verdict.verdict) + 1)
            if m.verdict.missed:
                tally.last_miss = m.verdict.reason
        for name in report.unjudged:
            self.tally.setdefault(name, FollowTally()).unjudged += 1

    def _keep(self, report: FollowReport, turn: FollowTurn, fail: Fail) -> None:
        """Each scope's verdicts, and the memories left unjudged, in that scope's log."""
        by_name = {r.name: r for r in turn.records}
        unjudged = [_place(by_name[n], turn.scoped) for n in report.unjudged if n in by_name]
        for scope, store in ((PROJECT, turn.store), (USER, turn.user_store)):
            judged = tuple(m.judged() for m in report.memories if m.scope == scope)
            left = tuple((name, file) for name, where, file in unjudged if where == scope)
            if not (judged or left) or store is None:
                continue
            try:
                journal = store.journal()
                if journal is None:
                    continue
                last = journal.last()
                FollowLog(journal).append(
                    FollowEntry(
                        session=turn.session,
                        turn=turn.turn,
                        verdicts=judged,
                        journal_seq=last.seq if last is not None else None,
                        actor=actor_info({"session": turn.session, **turn.caller}),
                        unjudged=left,
                    )
                )
            except MemoryStoreError as e:
                fail(LAST_ERROR_FOLLOW, f"the verdicts were not kept: {e}", e)


# What the next turn's block says of a memory the previous answer did not follow.
MISSED_NOTE = "The previous answer did not follow this memory"


def _report(judgment: Judgment, records: Sequence[MemoryRecord], scoped: ScopedSet) -> FollowReport:
    by_name = {r.name: r for r in records}
    memories = []
    for verdict in judgment.verdicts:
        rec = by_name[verdict.name]
        _, scope, file = _place(rec, scoped)
        memories.append(FollowedMemory(rec, verdict, scope, file))
    return FollowReport(tuple(memories), judgment.unjudged)


def _place(record: MemoryRecord, scoped: ScopedSet) -> tuple[str, Scope, str | None]:
    """The record's name, the scope it was injected from, and its file there."""
    if record.name in scoped.user_names:
        files = {e.record.name: e.file for e in scoped.user}
        return record.name, USER, files.get(record.name)
    files = {e.record.name: e.file for e in scoped.project}
    return record.name, PROJECT, files.get(record.name)
