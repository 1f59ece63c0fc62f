"""One verdict per proposed record: commit, hold for a person, or redact (SPEC §7).

Wiring (for the commit paths): every batch goes through :func:`screen_batch` (records an
extractor proposed, with the canonical history it read) or :func:`screen_records`
(records from the API, the CLI, an import, undo/restore, ``check``: origin given, usually
``manual``) before anything is written, then:

* ``Verdict.REDACT`` -- the record holds a credential: never write it as is (not a
  record, a pending batch, the journal, a log). Review shows :meth:`Screening.redacted`
  with :meth:`Screening.reasons`; committing the redacted record takes an explicit
  choice; ``auto`` mode holds it back and says so.
* ``Verdict.HOLD`` -- origin ``tool``; or an instruction to the assistant whose origin
  is ``assistant`` (only the answer said it); or, whatever the origin, a dangerous one
  (:data:`~ipymemory.screen.instructs.DANGEROUS`: exfiltration, revealing credentials
  or hidden files, running commands, overriding instructions, a role change): commit
  only with a person (pending in ``auto`` mode, flagged in review). An instruction of
  origin ``user`` that tells the assistant how to work is feedback and is committed
  (SPEC §9); so is one a person wrote (``manual``) unless it is dangerous.
* ``Verdict.HOLD`` too -- an item of origin ``agent`` (another agent's: MCP, the
  memory tool, a pulled memory store, an import) on which an agent rule fires
  (:mod:`~ipymemory.screen.agent`: a destination, a command, a package to install, a
  secret, the system prompt, environment files, a rule about what answers contain or
  send, a language the screen does not read): it is allowed by what it carries, so
  what it carries that could act outside the conversation waits for a person.
* ``Verdict.COMMIT`` -- nothing found.

Every decision names its rules (issue 39 item 3): :meth:`Screening.findings` gives one
:class:`~ipymemory.screen.rules.Finding` (rule id, evidence) per rule that fired, from
the table of ``rules.yaml`` -- for a committed record, the rules (action ``allow``) it
was let through by, where one was needed.

:func:`consolidation_needs_review` is the ``auto``-mode guard for consolidation plans.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .. import _constants as C
from .._enum import StrEnum
from .._secrets import SecretHit
from ..store.record import MemoryRecord, record_secrets, redact_record
from .agent import agent_findings
from .consent import REPORTED_CONSENT
from .instructs import (
    DANGEROUS,
    Exemption,
    instruction_evidence,
    instruction_exemptions,
    instruction_reasons,
)
from .origin import Origin, OriginDecision, Sources, decide_origin, history_sources
from .rules import Finding, finding_of_reason, rule

__all__ = [
    "CONSOLIDATION_REVIEW_MAX_REPLACED",
    "Screening",
    "Verdict",
    "consolidation_needs_review",
    "screen_batch",
    "screen_record",
    "screen_records",
]

CONSOLIDATION_REVIEW_MAX_REPLACED = C.CONSOLIDATION_REVIEW_MAX_REPLACED


class Verdict(StrEnum):
    """What may happen to a screened record (strongest first: redact > hold > commit)."""

    COMMIT = "commit"
    HOLD = "hold"
    REDACT = "redact"


@dataclass(frozen=True)
class Screening:
    """The screening of one record: credentials per field, origin, instruction kinds."""

    record: MemoryRecord
    origin: Origin
    secrets: tuple[tuple[str, SecretHit], ...] = ()  # (field, hit)
    instructions: tuple[str, ...] = ()  # instruction kinds found (instructs.py rules)
    decision: OriginDecision | None = None  # the support scores, when decided from history
    #: What the agent rules found (an item of another agent's, screen/agent.py).
    agent: tuple[Finding, ...] = ()
    #: The rules (action ``allow``) that kept an instruction kind from being found --
    #: recorded where the kind would have held the item (issue 39 item 3).
    exemptions: tuple[Exemption, ...] = ()

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def instructs(self) -> bool:
        return bool(self.instructions)

    @property
    def dangerous(self) -> tuple[str, ...]:
        """The instruction kinds found that are held whatever the origin."""
        return tuple(k for k in self.instructions if k in DANGEROUS)

    @property
    def consent(self) -> str:
        """The item's words reporting a consent the user's words do not give ("" none:
        :data:`~ipymemory.screen.consent.REPORTED_CONSENT`)."""
        return self.decision.consent if self.decision is not None else ""

    @property
    def held_instruction(self) -> bool:
        """An instruction held for a person: dangerous, or not said by the user (or a
        person) -- how-to-work feedback from the user is committed (SPEC §9)."""
        return any(self._holds(kind) for kind in self.instructions)

    def _holds(self, kind: str) -> bool:
        """Whether an instruction of ``kind`` holds this record (SPEC §9)."""
        return kind in DANGEROUS or self.origin not in (Origin.USER, Origin.MANUAL)

    @property
    def verdict(self) -> Verdict:
        if self.secrets:
            return Verdict.REDACT
        if self.origin is Origin.TOOL or self.held_instruction or self.agent or self.consent:
            return Verdict.HOLD
        return Verdict.COMMIT

    @property
    def needs_person(self) -> bool:
        return self.verdict is not Verdict.COMMIT

    def reasons(self) -> tuple[str, ...]:
        """Why the record is not committed as is, in words for review and the turn
        (never quoting the secret: only its kind and field)."""
        out = [f"holds a credential ({hit.kind}) in its {field}" for field, hit in self.secrets]
        if self.origin is Origin.TOOL:
            out.append(
                "comes from tool output (a file read or code output), not from the user"
                + self._evidence_note()
            )
        if self.consent:
            out.append(f"reports a consent ({self.consent!r}) that the user's words do not give")
        if self.dangerous:
            out.append(
                "instructs the assistant in a way held whatever its origin ("
                + ", ".join(self.dangerous)
                + ")"
            )
        elif self.held_instruction:
            out.append(
                f"instructs the assistant ({', '.join(self.instructions)}) "
                f"and did not come from the user (origin {self.origin.value})"
            )
        by_rule: dict[str, list[str]] = {}
        for finding in self.agent:
            by_rule.setdefault(finding.rule_id, []).append(finding.evidence)
        for rule_id, evidence in by_rule.items():
            shown = ", ".join(repr(e) for e in evidence[:3]) + (" …" if len(evidence) > 3 else "")
            out.append(f"an agent's item that {rule(rule_id).says} ({shown}) waits for a person")
        return tuple(out)

    def findings(self) -> tuple[Finding, ...]:
        """Which rules fired on the record, each with its evidence (issue 39 item 3):
        the credentials (kind and field, never the secret), the origin and what the
        extractor's excerpts were found to be, the instruction kinds that hold it, the
        agent rules. A record committed only because a rule let it through (action
        ``allow``) names that rule instead: a restraint or a borrowed word that kept an
        instruction kind from holding it, a detail no tool output holds or the user's
        rule in another language that made it the user's. Empty when no rule did
        either."""
        return self._findings

    @cached_property
    def _findings(self) -> tuple[Finding, ...]:
        out = [Finding("credential", f"{hit.kind} in its {field}") for field, hit in self.secrets]
        if self.origin is Origin.TOOL:
            why = self.decision.why() if self.decision is not None else "origin tool"
            out.append(Finding("origin.tool", why))
            for match in self.decision.evidence if self.decision is not None else ():
                if match.why:
                    out.append(Finding(finding_of_reason(match.why).rule_id, match.describe()))
        if self.consent:
            out.append(Finding(REPORTED_CONSENT, repr(self.consent)))
        held = self.dangerous or (self.instructions if self.held_instruction else ())
        if held:
            spans = instruction_evidence(_item_text(self.record), held)
            out.extend(Finding(f"instruct.{kind}", spans.get(kind, kind)) for kind in held)
        out.extend(self.agent)
        out.extend(self._allowed())
        return tuple(dict.fromkeys(out))

    def _allowed(self) -> list[Finding]:
        """The rules that let a committed record through: without them its origin would
        not be the user's, or an instruction kind would hold it. (A held record's
        findings are what holds it.)"""
        if self.verdict is not Verdict.COMMIT:
            return []
        out: list[Finding] = []
        if self.origin is Origin.USER and self.decision is not None:
            out.extend(Finding(rule_id, words) for rule_id, words in self.decision.allowed)
        out.extend(Finding(e.rule_id, e.words) for e in self.exemptions if self._holds(e.kind))
        return out

    def _evidence_note(self) -> str:
        """What the extractor's excerpts were found to be, for a held item's reason
        (SPEC §9: the model points, our code decides -- the review says what it found)."""
        if self.decision is None or not self.decision.evidence:
            return ""
        return " (evidence: " + "; ".join(m.describe() for m in self.decision.evidence) + ")"

    def redacted(self) -> MemoryRecord:
        """The record with every credential replaced by ``[REDACTED: kind]``.

        A name holding one becomes a slug of its redacted form. Raises
        :class:`~ipymemory.errors.MemoryFormatError` if the redacted record breaks the
        format (e.g. markers push a near-full record over the size limit).
        """
        return redact_record(self.record) if self.secrets else self.record


def _item_text(record: MemoryRecord) -> str:
    return f"{record.description}\n{record.body}"


def screen_record(
    record: MemoryRecord,
    origin: Origin,
    decision: OriginDecision | None = None,
    *,
    from_agent: bool | None = None,
    said: str | None = None,
) -> Screening:
    """Screen one record whose origin is known. An item of another agent's -- origin
    ``agent``, or ``from_agent`` (one a turn's history showed copied from tool output)
    -- is also screened by the agent rules (:func:`~ipymemory.screen.agent.agent_findings`;
    ``said``: the user's words of the turn it was proposed in, if any)."""
    agent = origin is Origin.AGENT if from_agent is None else from_agent
    text = _item_text(record)
    return Screening(
        record=record,
        origin=origin,
        secrets=record_secrets(record),
        instructions=instruction_reasons(text),
        decision=decision,
        agent=agent_findings(_agent_text(record), said=said) if agent else (),
        exemptions=instruction_exemptions(text),
    )


def _agent_text(record: MemoryRecord) -> str:
    # The name too: a slug such as "include-api-key-in-each-answer" carries words.
    return f"{record.name.replace('-', ' ')}\n{record.description}\n{record.body}"


def screen_records(
    records: Sequence[MemoryRecord], origin: Origin = Origin.MANUAL
) -> tuple[Screening, ...]:
    """Screen records written by a person or restored (API, CLI, import, undo, check)."""
    return tuple(screen_record(r, origin) for r in records)


def screen_batch(
    records: Sequence[MemoryRecord],
    history: Sequence[dict[str, Any]] | Sources,
    *,
    evidence: Mapping[str, Sequence[str]] | None = None,
    confirmed: Mapping[str, Collection[str]] | None = None,
) -> tuple[Screening, ...]:
    """Screen an extractor's batch against the canonical history it was extracted from
    (the messages it read); the origin of each record is decided from that history and
    from ``evidence`` (record name -> the extractor's excerpts for it, SPEC §9) and
    ``confirmed`` (record name -> the user's words the model's translation check said
    it states, :data:`~ipymemory.screen.evidence.TRANSLATION_CONFIRMED`)."""
    sources = history if isinstance(history, Sources) else history_sources(history)
    out = []
    for record in records:
        excerpts = (evidence or {}).get(record.name, ())
        decision = decide_origin(
            _item_text(record),
            sources,
            evidence=excerpts,
            confirmed=(confirmed or {}).get(record.name, ()),
        )
        out.append(screen_record(record, decision.origin, decision))
    return tuple(out)


def consolidation_needs_review(set_size: int, replaced: int) -> bool:
    """In ``auto`` mode, does a plan replacing ``replaced`` of ``set_size`` records wait
    for a person? (More than half the set, or more than five records.)"""
    return replaced > CONSOLIDATION_REVIEW_MAX_REPLACED or 2 * replaced > set_size
