"""The screening rules as a table, and what fired on an item (SPEC §13, issue 39 item 3).

Every rule that can make an item wait (or be redacted), and every rule that keeps
another from holding it (action ``allow``), has an id and an entry in ``rules.yaml``
beside this file: its family (what applies it), its action, the words review shows,
and examples that ``tests/test_screen_rules.py`` checks -- which also checks that every
rule id the screening code names has its row. A screened item
carries :class:`Finding` values -- which rule fired and on what evidence (never a
credential: redacted, cut to ``FINDING_EVIDENCE_CHARS``) -- shown wherever the item is
reviewed (the widget, the Lab panel, ``ipymemory pending --open``, the MCP reply) and
kept in the journal's provenance of the commit.

Rules applied by this package's own checks produce findings directly (credentials,
instruction kinds, the agent screen, the origin). A reason given in words by a commit
path (another agent's removal, an update guard, a sync conflict, what the origin
module's evidence check says) is given its rule by :func:`finding_of_reason`: each
rule's ``reason`` pattern, in the table too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from .. import _constants as C
from .._secrets import redact

__all__ = [
    "Finding",
    "Rule",
    "finding_of_reason",
    "findings_from_json",
    "findings_of_reasons",
    "findings_to_json",
    "rule",
    "rules",
]

_DATA = "rules.yaml"
_FAMILIES = frozenset({"credential", "instruction", "agent", "origin", "proposal"})
_ACTIONS = frozenset({"redact", "hold", "allow"})
#: The rule of a reason no other rule's pattern finds.
OTHER = "screen.other"


@dataclass(frozen=True)
class Rule:
    """One row of the table (see ``rules.yaml``)."""

    id: str
    family: str
    action: str
    says: str
    reason: re.Pattern[str] | None
    fires: tuple[Any, ...]
    passes: tuple[Any, ...]


@dataclass(frozen=True)
class Finding:
    """A rule that fired on an item, and on what (a short excerpt, a token, a kind)."""

    rule_id: str
    evidence: str = ""

    def __post_init__(self) -> None:
        text = redact(" ".join(self.evidence.split()))
        limit = C.FINDING_EVIDENCE_CHARS
        object.__setattr__(
            self, "evidence", text if len(text) <= limit else text[: limit - 1] + "…"
        )

    def describe(self) -> str:
        """``rule-id: evidence`` for review and the turn."""
        return f"{self.rule_id}: {self.evidence}" if self.evidence else self.rule_id

    def to_json(self) -> dict[str, str]:
        return {"rule": self.rule_id, "evidence": self.evidence}


@cache
def rules() -> Mapping[str, Rule]:
    """The table, by id (loaded once; a malformed table raises ``ValueError``)."""
    text = resources.files(__package__).joinpath(_DATA).read_text("utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    rows = yaml.load(text, Loader=loader)
    out: dict[str, Rule] = {}
    for row in rows:
        rid = row.get("id")
        if not isinstance(rid, str) or rid in out:
            raise ValueError(f"{_DATA}: a rule without an id, or one given twice ({rid!r})")
        if row.get("family") not in _FAMILIES or row.get("action") not in _ACTIONS:
            raise ValueError(f"{_DATA}: {rid}: family or action unknown")
        reason = row.get("reason")
        out[rid] = Rule(
            rid,
            row["family"],
            row["action"],
            str(row["says"]),
            re.compile(reason) if isinstance(reason, str) else None,
            tuple(row.get("fires") or ()),
            tuple(row.get("passes") or ()),
        )
    return out


def rule(rule_id: str) -> Rule:
    """The rule ``rule_id`` (``KeyError`` naming it when the table has none)."""
    try:
        return rules()[rule_id]
    except KeyError:
        raise KeyError(f"no screening rule {rule_id!r} in {_DATA}") from None


def finding_of_reason(reason: str) -> Finding:
    """The finding a reason in words stands for: the first rule whose ``reason``
    pattern it matches (:data:`OTHER` when none does), the reason as evidence."""
    for row in rules().values():
        if row.reason is not None and row.reason.search(reason):
            return Finding(row.id, reason)
    return Finding(OTHER, reason)


def findings_of_reasons(reasons: Iterable[str]) -> tuple[Finding, ...]:
    return tuple(finding_of_reason(why) for why in reasons)


def findings_to_json(findings: Sequence[Finding]) -> list[dict[str, str]]:
    return [f.to_json() for f in findings]


def findings_from_json(value: Any) -> tuple[Finding, ...]:
    """Findings read back from a file (``pending/``): only well-formed ones, with a
    rule id the table knows (an unknown one is kept as :data:`OTHER`)."""
    if not isinstance(value, list):
        return ()
    out = []
    for item in value:
        if isinstance(item, dict) and isinstance(item.get("rule"), str):
            rid = item["rule"] if item["rule"] in rules() else OTHER
            evidence = item.get("evidence")
            out.append(Finding(rid, evidence if isinstance(evidence, str) else ""))
    return tuple(out)
