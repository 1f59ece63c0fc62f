"""Another agent's proposals, screened like an extracted batch and kept as a pending batch.

Both doors other agents use -- the MCP server's ``memory_propose`` and the memory tool --
describe what they want as :class:`Proposal` values: a new record, an updated one
(``replaces`` its current name, possibly under a new name: a rename), or forgetting one.
:func:`keep_proposals` then does what SPEC §10 asks, the same way for both:

1. check them against the current set and the user scope's names
   (:class:`~ipymemory.review.scopes.AgentNames`, the one check every door asks: an agent
   neither adds a record named like a user-wide one -- the project's would shadow the
   user's -- nor changes one; when the user scope cannot be read, each item waits for a
   person), and, where an agent's proposal enters (:func:`parse_items`,
   the memory tool), their size (:func:`check_size`: at most ``MAX_PROPOSAL_ITEMS``
   items and ``MAX_PROPOSAL_BYTES`` of text): :class:`~ipymemory.errors.ProposalError`
   naming the item and the field; nothing kept;
2. screen each as origin ``agent`` (SPEC §7, §10, §13): a credential is redacted at once
   (the credential is never kept) and waits for an explicit choice; an instruction to
   the assistant waits for a person; so does an item the agent rules hold
   (:mod:`~ipymemory.screen.agent`: a destination in any spelling, a command, a package,
   a secret, the system prompt, environment files, a rule about answers, a transfer, a
   language the screen does not read) -- another agent's conversation is unseen,
   nothing can vouch for those (issues 28 and 39). Each screened item carries the
   :class:`~ipymemory.screen.rules.Finding` values of the rules that fired (the reply's
   ``findings``, the batch's). A proposal made inside a turn (the memory tool under
   ``%%agent``) is judged against that turn's history by the rules of an extracted
   item too (``sources``): its origin is decided there -- text taken from tool output
   is origin ``tool``, held like the extractor's -- and what the user wrote in that turn
   does not count against it (neither for the agent rules nor as planted). Forgetting
   a record always waits for a person (an agent cannot delete memories on its own),
   and so do updates replacing more than half the set or more
   than five records -- counted with what auto commits of other agents' proposals
   replaced in the last ``AGENT_UPDATE_WINDOW_SECONDS`` (:func:`recent_agent_updates`),
   so one update per call is held as soon as the calls together pass the line;
3. make ONE :class:`~ipymemory.review.batch.PendingBatch` of them -- new, updated and
   renamed records as its items (an update or rename names the record it ``replaces``:
   one swap when committed, undoable, decided item by item like any), forgets as its
   plan (sources only) -- with only the replaced records of the current set as its
   base, so only those must be unchanged when it is committed -- and keep it
   in ``.memory/pending/`` (:class:`~ipymemory.review.pending.PendingFiles`), where
   ``%memory pending``, the Lab panel and ``ipymemory pending`` find it;
4. in ``auto`` mode commit at once what needs nobody (one store commit, journalled as
   decided ``auto``), and keep only the rest pending. A commit the store refuses (the set
   changed meanwhile) keeps everything pending instead: nothing is lost.
"""

from __future__ import annotations

import datetime as _dt
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .. import _constants as C
from ..errors import BatchTooLarge, MemoryFormatError, MemoryStoreError, ProposalError
from ..screen import (
    Origin,
    Screening,
    Sources,
    Verdict,
    consolidation_needs_review,
    least_trusted,
    screen_batch,
    screen_record,
)
from ..screen.evidence import plantable_from
from ..screen.rules import Finding, findings_of_reasons, findings_to_json
from ..sidequery.consolidate import ConsolidationPlan
from ..sidequery.replies import ITEM_OPTIONAL_KEYS
from ..store.names import is_valid_name
from ..store.record import RECORD_FIELDS, MemoryRecord
from ..store.store import MemoryStore
from .batch import PendingBatch
from .commit import apply_batch
from .decision import AUTO
from .item import Item
from .pending import PendingFiles, oversized
from .provenance import TurnProvenance
from .scopes import AgentNames
from .screened import keep_screened

__all__ = [
    "COMMIT_CHOICES",
    "Intake",
    "ItemVerdict",
    "Proposal",
    "ProposalOutcome",
    "ProposalScreen",
    "assemble_batch",
    "check_size",
    "join_batches",
    "keep_proposals",
    "parse_items",
    "recent_agent_updates",
    "screen_proposals",
]

CommitChoice = Literal["review", "auto"]
#: How another agent's proposals are decided: by a person, or at once when clean.
COMMIT_CHOICES: tuple[CommitChoice, ...] = ("review", "auto")

_ITEM_KEYS = frozenset(RECORD_FIELDS)
_OPTIONAL_KEYS = frozenset(ITEM_OPTIONAL_KEYS)
_MAX_EVIDENCE = C.MAX_EVIDENCE_ITEMS
_MAX_EVIDENCE_CHARS = C.MAX_EVIDENCE_CHARS
_FORGET_REASON = "forgets a record: an agent's removal waits for a person"
_MAX_ITEMS = C.MAX_PROPOSAL_ITEMS
_MAX_BYTES = C.MAX_PROPOSAL_BYTES


@dataclass(frozen=True)
class Proposal:
    """One change an agent proposes: ``record`` to write (``None``: forget) replacing the
    current record ``replaces`` (``None``: a new record). ``evidence`` is what the agent
    quotes in support (never trusted: origin stays ``agent``)."""

    record: MemoryRecord | None
    replaces: str | None = None
    evidence: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.record is None and self.replaces is None:
            raise ProposalError("a proposal must write a record or name the one it forgets")

    @property
    def kind(self) -> Literal["add", "update", "rename", "forget"]:
        if self.record is None:
            return "forget"
        if self.replaces is None:
            return "add"
        return "update" if self.record.name == self.replaces else "rename"

    @property
    def name(self) -> str:
        """The name this proposal is about (the record written, or the one forgotten)."""
        return self.record.name if self.record is not None else str(self.replaces)


@dataclass(frozen=True)
class ItemVerdict:
    """What screening made of one proposal: ``verdict`` ``commit`` / ``hold`` /
    ``redact`` (SPEC §7) and why; ``status`` ``pending`` or ``committed``."""

    name: str
    kind: str
    verdict: str
    reasons: tuple[str, ...]
    status: str = "pending"
    replaces: str | None = None
    #: Which rules fired, on what (issue 39 item 3): the reasons, by rule id.
    findings: tuple[Finding, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "replaces": self.replaces,
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "findings": findings_to_json(self.findings),
            "status": self.status,
        }


@dataclass(frozen=True)
class Screened:
    """One proposal after screening: ``proposal.record`` is the redacted form when
    ``redacted``; ``reasons`` empty means nobody needs to look at it."""

    proposal: Proposal
    verdict: Verdict
    reasons: tuple[str, ...]
    redacted: bool = False
    #: ``agent``, or ``tool`` for a turn's proposal its history shows copied from
    #: tool output (see :func:`screen_proposals`).
    origin: Origin = Origin.AGENT
    #: Which rules fired, on what (issue 39 item 3).
    findings: tuple[Finding, ...] = ()

    @property
    def held(self) -> bool:
        return bool(self.reasons)


@dataclass(frozen=True)
class ProposalOutcome:
    """What :func:`keep_proposals` did: ``batch_id`` the pending batch holding what waits
    (``None``: nothing waits), ``committed`` / ``removed`` what an ``auto`` commit wrote,
    each item's verdict, and ``error`` when an ``auto`` commit was refused (everything
    then waits) or the batch could not be kept on disk."""

    batch_id: str | None
    committed: tuple[str, ...]
    removed: tuple[str, ...]
    items: tuple[ItemVerdict, ...]
    mode: str
    error: str | None = None
    committed_batch: str | None = None


# --- reading items -------------------------------------------------------------------


def parse_items(items: Sequence[Mapping[str, Any]], where: str = "records") -> list[Proposal]:
    """Proposals from extractor-shaped items (SPEC §9: the four record keys, optional
    ``evidence`` and ``replaces``, nothing else). Raises :class:`ProposalError` naming
    ``where[i].field``."""
    if not items:
        raise ProposalError(f"{where}: empty; propose at least one record")
    if len(items) > _MAX_ITEMS:
        raise ProposalError(
            f"{where}: {len(items)} items; a proposal holds at most {_MAX_ITEMS} "
            "(propose them in several calls)"
        )
    out = []
    for index, item in enumerate(items):
        at = f"{where}[{index}]"
        keys = set(item)
        missing = sorted(_ITEM_KEYS - keys)
        extra = sorted(keys - _ITEM_KEYS - _OPTIONAL_KEYS)
        if missing or extra:
            raise ProposalError(
                f"{at}: an item has exactly {', '.join(RECORD_FIELDS)} (and optionally "
                f"{', '.join(ITEM_OPTIONAL_KEYS)})"
                + (f"; missing: {', '.join(missing)}" if missing else "")
                + (f"; unknown: {', '.join(extra)}" if extra else "")
            )
        record = _record(item, at)
        replaces = item.get("replaces")
        if replaces is not None and not (isinstance(replaces, str) and is_valid_name(replaces)):
            raise ProposalError(f"{at}.replaces: {replaces!r} is not a record name")
        out.append(Proposal(record, replaces, _evidence(item.get("evidence"), f"{at}.evidence")))
    check_size(out)
    return out


def _record(item: Mapping[str, Any], at: str) -> MemoryRecord:
    for key in RECORD_FIELDS:
        if not isinstance(item[key], str):
            raise ProposalError(f"{at}.{key}: expected a string, got {type(item[key]).__name__}")
    if not is_valid_name(item["name"]):
        raise ProposalError(
            f"{at}.name: {item['name']!r} is not a record name "
            "(a lowercase slug like 'prefers-tabs')"
        )
    try:
        return MemoryRecord(**{key: item[key] for key in RECORD_FIELDS})
    except MemoryFormatError as e:
        raise ProposalError(f"{at}: {e}") from None


def _evidence(value: Any, at: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if (
        not isinstance(value, list)
        or not 1 <= len(value) <= _MAX_EVIDENCE
        or not all(isinstance(v, str) and 0 < len(v) <= _MAX_EVIDENCE_CHARS for v in value)
    ):
        raise ProposalError(
            f"{at}: 1-{_MAX_EVIDENCE} quoted excerpts, each 1-{_MAX_EVIDENCE_CHARS} characters"
        )
    return tuple(value)


# --- checking and screening ----------------------------------------------------------


def check_size(proposals: Sequence[Proposal]) -> None:
    """Refuse an agent's proposal too large to be kept and read back as one batch
    (where it enters: ``memory_propose``, the memory tool); a sync's pull is bounded by
    ``pending/``'s own read bound instead."""
    if len(proposals) > _MAX_ITEMS:
        raise ProposalError(
            f"records: {len(proposals)} proposals; one batch holds at most {_MAX_ITEMS}"
        )
    size = 0
    for index, proposal in enumerate(proposals):
        record = proposal.record
        if record is not None:
            size += sum(len(v.encode("utf-8")) for v in record.to_json().values())
        if size > _MAX_BYTES:
            raise ProposalError(
                f"records[{index}]: the proposal's text passes {_MAX_BYTES:,} bytes; "
                "propose the rest in another call"
            )


def _check_against(
    proposals: Sequence[Proposal], current: Sequence[MemoryRecord], names: AgentNames
) -> None:
    """Refuse proposals that do not fit the current set (names taken or unknown) or
    touch a user-wide record (``names``, the one check of both scopes)."""
    taken = {record.name for record in current}
    writes: dict[str, int] = {}
    replaced: dict[str, int] = {}
    for index, proposal in enumerate(proposals):
        at = f"records[{index}]"
        if proposal.replaces is not None:
            refused = names.replace_refusal(proposal.replaces, taken)
            if refused is not None:
                raise ProposalError(f"{at}.replaces: {refused}")
        if proposal.record is not None:
            refused = names.refusal(proposal.record.name, taken)
            if refused is not None:
                raise ProposalError(f"{at}.name: {refused}")
        if proposal.replaces is not None:
            if proposal.replaces not in taken:
                raise ProposalError(
                    f"{at}.replaces: no current record named {proposal.replaces!r}" + _known(taken)
                )
            if proposal.replaces in replaced:
                raise ProposalError(
                    f"{at}.replaces: {proposal.replaces!r} is already changed by "
                    f"records[{replaced[proposal.replaces]}]"
                )
            replaced[proposal.replaces] = index
        if proposal.record is None:
            continue
        name = proposal.record.name
        if name in taken and name != proposal.replaces:
            raise ProposalError(
                f"{at}.name: {name!r} is already a record; to change it, name it in "
                "replaces (an update may keep the name)"
            )
        if name in writes:
            raise ProposalError(f"{at}.name: {name!r} is proposed twice (records[{writes[name]}])")
        writes[name] = index


def _known(names: set[str]) -> str:
    shown = sorted(names)[:20]
    more = " …" if len(names) > len(shown) else ""
    return f" (known: {', '.join(shown)}{more})" if shown else " (the set is empty)"


@dataclass(frozen=True)
class ProposalScreen:
    """How :func:`screen_proposals` screens a door's proposals: in ``auto`` mode or for a
    person; ``names``, the user scope's (:meth:`AgentNames.of`: every door asks);
    ``held``, the caller's reasons for a person to look at an item (by its name);
    ``sources``, the turn the proposals were made in (None: another agent's
    conversation, unseen); ``recent_updates``, the records other agents' auto commits
    replaced lately (:func:`recent_agent_updates`), counted by the update guard."""

    auto: bool = False
    names: AgentNames = field(default_factory=AgentNames)
    held: Mapping[str, Sequence[str]] = field(default_factory=dict)
    sources: Sources | None = None
    recent_updates: frozenset[str] = frozenset()


def screen_proposals(
    proposals: Sequence[Proposal], current: Sequence[MemoryRecord], screen: ProposalScreen
) -> list[Screened]:
    """Check ``proposals`` against ``current`` and the user scope's names and screen
    each (see the module docstring) as ``screen`` says: as origin ``agent``, or, given
    the ``sources`` of the turn it was made in, as an extracted item of that turn would
    be."""
    auto, names, sources, recent_updates = (
        screen.auto,
        screen.names,
        screen.sources,
        screen.recent_updates,
    )
    _check_against(proposals, current, names)
    held = _with_unchecked(screen.held, proposals, names)
    taken = {record.name for record in current} | {p.name for p in proposals}
    out: list[Screened] = []
    for index, proposal in enumerate(proposals):
        if proposal.record is None:
            out.append(
                Screened(
                    proposal,
                    Verdict.HOLD,
                    (_FORGET_REASON,),
                    findings=(Finding("proposal.forget", proposal.name),),
                )
            )
            continue
        screening, planted = _screened_agent(proposal, sources)
        kept = keep_screened([screening], taken - {proposal.record.name})
        if kept.dropped or not kept.items:
            why = "; ".join(kept.dropped) or "its redacted form is not a valid record"
            raise ProposalError(f"records[{index}]: holds a credential and {why}; nothing kept")
        record = kept.items[0]
        reasons = kept.flags.get(record.name, ())
        findings = screening.findings()
        verdict = screening.verdict
        if planted and auto:  # in review a person looks at every item anyway
            why = _planted_reason(planted, sources)
            reasons, findings = (*reasons, why), (*findings, *findings_of_reasons([why]))
            verdict = Verdict.REDACT if verdict is Verdict.REDACT else Verdict.HOLD
        out.append(
            Screened(
                replace(proposal, record=record),
                verdict,
                reasons,
                redacted=record.name in kept.redacted,
                origin=screening.origin,
                findings=findings,
            )
        )
    replacing = {p.replaces for p in proposals if p.replaces is not None}
    counted = len(replacing | set(recent_updates))
    if auto and replacing and consolidation_needs_review(len(current), counted):
        lately = len(set(recent_updates) - replacing)
        why = (
            f"with the others it would replace {counted} of the {len(current)} records "
            + (f"({lately} replaced by other agents' auto commits lately) " if lately else "")
            + "(more than half the set, or more than five)"
        )
        out = [_with_reasons(s, [why]) if s.proposal.replaces else s for s in out]
    if held:
        out = [_with_reasons(s, held.get(s.proposal.name, ())) for s in out]
    return out


def _with_unchecked(
    held: Mapping[str, Sequence[str]] | None, proposals: Sequence[Proposal], names: AgentNames
) -> Mapping[str, Sequence[str]] | None:
    """``held`` and, when the user's names are unknown now, that reason for each item
    written (a person looks before it can hide a user-wide record)."""
    if names.hold is None:
        return held
    out = {name: tuple(why) for name, why in (held or {}).items()}
    for proposal in proposals:
        if proposal.record is not None:
            out[proposal.name] = (*out.get(proposal.name, ()), names.hold)
    return out


def _with_reasons(screened: Screened, reasons: Sequence[str]) -> Screened:
    """``screened`` with the caller's ``reasons`` for a person to look, and their rules."""
    return replace(
        screened,
        reasons=(*screened.reasons, *reasons),
        findings=(*screened.findings, *findings_of_reasons(reasons)),
    )


def _screened_agent(proposal: Proposal, sources: Sources | None) -> tuple[Screening, list[str]]:
    """The screening of a written proposal and what it carries that nobody vouches for
    (see the module docstring)."""
    record = proposal.record
    assert record is not None
    text = f"{record.description}\n{record.body}"
    if sources is None:  # another agent's conversation: unseen (the agent rules decide)
        return screen_record(record, Origin.AGENT), []
    evidence = {record.name: proposal.evidence} if proposal.evidence else None
    (screening,) = screen_batch([record], sources, evidence=evidence)
    # Decided on the turn's history, never more trusted than another agent's item; the
    # agent rules apply, less what the user wrote themselves.
    origin = least_trusted((screening.origin, Origin.AGENT))
    screening = screen_record(
        record, origin, screening.decision, from_agent=True, said=sources.user
    )
    planted = [] if origin is Origin.TOOL else plantable_from(text, sources)
    return screening, planted


def _planted_reason(planted: Sequence[str], sources: Sources | None) -> str:
    shown = ", ".join(repr(token) for token in planted[:3]) + (" …" if len(planted) > 3 else "")
    nobody = "nobody in the conversation wrote" if sources is not None else "no one can vouch for"
    return (
        f"carries {shown}, which {nobody}: an agent's link, address, command or flag "
        "waits for a person"
    )


def recent_agent_updates(
    store: MemoryStore,
    *,
    now: _dt.datetime | None = None,
    window: float = C.AGENT_UPDATE_WINDOW_SECONDS,
) -> set[str]:
    """The records that auto commits of other agents' items (origin ``agent`` or
    ``tool`` in the journal's provenance) replaced in the last ``window`` seconds."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    out: set[str] = set()
    for entry in store.history(C.AGENT_JOURNAL_LOOKBACK):
        try:
            at = _dt.datetime.fromisoformat(entry.at)
        except ValueError:
            continue
        if at.tzinfo is None or (now - at).total_seconds() > window:
            break  # newest first: the rest is older
        if entry.actor.get("decided_by") != "auto" or not entry.removed:
            continue
        origins = {str(p.get("origin")) for p in entry.provenance.values() if isinstance(p, dict)}
        if origins & {Origin.AGENT.value, Origin.TOOL.value}:
            out.update(r.name for r in entry.removed)
    return out


def assemble_batch(
    screened: Sequence[Screened],
    current: Sequence[MemoryRecord],
    *,
    batch_id: str,
    provenance: TurnProvenance,
) -> PendingBatch:
    """ONE batch of ``screened`` proposals (see the module docstring)."""
    forgets = [s for s in screened if s.proposal.record is None]
    by_name = {record.name: record for record in current}
    plan = None
    if forgets:
        plan = ConsolidationPlan(tuple(str(s.proposal.replaces) for s in forgets), ())
    replaced = [s for s in screened if s.proposal.replaces is not None]
    return PendingBatch(
        batch_id,
        tuple(_item(s) for s in screened if s.proposal.record is not None),
        plan,
        tuple(by_name[str(s.proposal.replaces)] for s in replaced),
        provenance=provenance,
        plan_flags=tuple(
            f"forgetting {s.proposal.replaces!r}: {why}" for s in forgets for why in s.reasons
        ),
        plan_findings=tuple(f for s in forgets for f in s.findings),
    )


def _item(screened: Screened) -> Item:
    """A written proposal as an item of its batch."""
    proposal = screened.proposal
    assert proposal.record is not None
    return Item(
        proposal.record,
        screened.origin,
        flags=screened.reasons,
        findings=screened.findings,  # a committed item's: the rules that allowed it
        redacted=screened.redacted,
        replaces=proposal.replaces,
        evidence=proposal.evidence,
    )


def verdicts(screened: Sequence[Screened], status: str) -> list[ItemVerdict]:
    return [
        ItemVerdict(
            s.proposal.name,
            s.proposal.kind,
            s.verdict.value,
            s.reasons,
            status,
            s.proposal.replaces,
            s.findings,
        )
        for s in screened
    ]


# --- keeping -------------------------------------------------------------------------


def new_batch_id() -> str:
    return uuid.uuid4().hex[:12]


@dataclass(frozen=True)
class Intake:
    """How :func:`keep_proposals` takes a door's proposals in: ``provenance`` (its
    ``via`` is the door), ``user_store`` the user scope, whose names an agent's items
    may not take (None: off, or the items go to the user scope itself; every door says
    which), ``commit`` the mode, ``batch_id`` the batch they are kept as (default a new
    one; the same id replaces that batch's file), ``files`` the ``pending/`` they are
    kept in (default the store's), ``held`` the caller's reasons, per item name, for a
    person to decide it (e.g. a sync's conflict): such an item waits in any mode."""

    provenance: TurnProvenance
    user_store: MemoryStore | None
    commit: CommitChoice = "review"
    batch_id: str | None = None
    files: PendingFiles | None = None
    held: Mapping[str, Sequence[str]] = field(default_factory=dict)


def keep_proposals(
    store: MemoryStore, proposals: Sequence[Proposal], intake: Intake
) -> ProposalOutcome:
    """Screen ``proposals`` and keep them as one pending batch, as ``intake`` says; in
    ``auto`` mode commit the clean ones first. Raises :class:`ProposalError` for
    proposals that do not fit (nothing kept) and the store's errors when the set cannot
    be read; :class:`BatchTooLarge` (nothing kept) when they would not fit one file of
    ``pending/``."""
    commit, provenance = intake.commit, intake.provenance
    if commit not in COMMIT_CHOICES:
        raise ProposalError(f"commit must be one of {', '.join(COMMIT_CHOICES)}, got {commit!r}")
    files = intake.files if intake.files is not None else PendingFiles(store.root)
    current = store.records()
    auto = commit == "auto"
    screened = screen_proposals(
        proposals,
        current,
        ProposalScreen(
            auto=auto,
            names=AgentNames.of(intake.user_store),
            held=intake.held,
            recent_updates=frozenset(recent_agent_updates(store)) if auto else frozenset(),
        ),
    )
    batch_id = intake.batch_id or new_batch_id()
    now = [s for s in screened if not s.held] if auto else []
    later = [s for s in screened if s not in now]
    if now and later:  # what waits must fit pending/ before anything is committed
        too_large = oversized(
            assemble_batch(later, current, batch_id=batch_id, provenance=provenance)
        )
        if too_large is not None:
            raise BatchTooLarge(f"{too_large}; propose fewer at a time")
    committed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    error = None
    done_id = None
    if now:
        done_id = new_batch_id()
        batch = assemble_batch(now, current, batch_id=done_id, provenance=provenance)
        try:
            committed, removed = apply_batch(store, batch, AUTO)
        except MemoryStoreError as e:  # the set changed meanwhile: a person decides
            error = f"not committed at once ({e}); kept for review"
            later, now, done_id = list(screened), [], None
    order = {s.proposal.name: i for i, s in enumerate(screened)}
    items = sorted(
        verdicts(now, "committed") + verdicts(later, "pending"), key=lambda v: order[v.name]
    )
    if not later:
        files.remove(batch_id)  # a batch of the same id from before is decided now
        return ProposalOutcome(None, committed, removed, tuple(items), commit, error, done_id)
    pending = assemble_batch(later, current, batch_id=batch_id, provenance=provenance)
    if not files.save(pending):
        cause = None if files.last_failure is None else files.last_failure.error
        # Too large: nothing was committed (what waits was checked first, or the
        # commit was refused and all of it waits).
        refusal = BatchTooLarge if isinstance(cause, BatchTooLarge) else ProposalError
        raise refusal(files.last_error or f"batch {batch_id} could not be kept") from cause
    return ProposalOutcome(batch_id, committed, removed, tuple(items), commit, error, done_id)


def join_batches(
    batch: PendingBatch, agent: PendingBatch
) -> tuple[PendingBatch, PendingBatch | None]:
    """``batch`` (a turn's extraction) with ``agent``'s proposals (the memory tool's in
    that turn) joined, for one review; and ``agent`` itself when the two cannot share
    one batch (both carry a plan, or the agent changes what the extraction updates).
    An extracted item named like one the agent wrote explicitly is left out: the
    agent's is the one proposed."""
    written = set(agent.names) | set(agent.replaces.values())
    written |= set(agent.plan.source_names if agent.plan else ())
    both_plans = batch.plan is not None and agent.plan is not None
    sources = set(batch.plan.source_names) if batch.plan is not None else set()
    # What the agent writes must not also be what the extraction's plan or updates use.
    if both_plans or written & (sources | set(batch.replaces.values())):
        return batch, agent
    items = tuple(item for item in batch.proposed if item.name not in written)
    base = {record.name: record for record in (*batch.base, *agent.base)}
    planned = batch if batch.plan is not None else agent
    joined = replace(
        batch,
        proposed=(*items, *agent.proposed),
        plan=planned.plan,
        base=tuple(base.values()),
        plan_origin=planned.plan_origin,
        plan_flags=planned.plan_flags,
        plan_findings=planned.plan_findings,
    )
    return joined, None
