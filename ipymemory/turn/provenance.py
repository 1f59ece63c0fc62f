"""Where a proposed memory came from, carried by its batch into the store's journal.

A turn (or ``%memory consolidate``) records a :class:`TurnProvenance`: the query, the
session, the caller (notebook, cell id, execution count when known), the models that
answered and the files the agent read. When the batch is committed,
:func:`commit_meta` turns it, with the decision (accepted and rejected names, by a
person or automatically) and each item's ``origin``, into the journal entry's
``actor`` and per-name ``provenance`` (SPEC §6).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEFAULT_ORIGIN", "TurnProvenance", "commit_meta"]

#: The origin of an item extracted from a turn until screening decides one (SPEC §7).
DEFAULT_ORIGIN = "user"


@dataclass(frozen=True)
class TurnProvenance:
    """What is known about the turn that proposed a batch.

    ``via`` is ``turn`` (extracted after an agent turn) or ``consolidate`` (a plan asked
    for directly). ``caller`` holds what the front end knows: ``notebook`` (its path),
    ``cell_id``, ``execution_count``. ``models``: role -> model name of the calls made.
    """

    session: str
    via: str = "turn"
    query: str | None = None
    models: Mapping[str, str] = field(default_factory=dict)
    files_read: tuple[str, ...] = ()
    caller: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "via": self.via,
            "query": self.query,
            "models": dict(self.models),
            "files_read": list(self.files_read),
            "caller": dict(self.caller),
        }


def commit_meta(
    provenance: TurnProvenance | None,
    added: Sequence[str],
    *,
    batch_id: str,
    accepted: Collection[str],
    rejected: Collection[str],
    plan_accepted: bool,
    decided_by: str,
    origins: Mapping[str, str],
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The journal's ``actor`` and per-added-name ``provenance`` for one batch commit.

    ``decided_by`` is ``review`` (a person chose) or ``auto`` (commit mode auto).
    """
    turn = provenance.to_json() if provenance is not None else {}
    caller = turn.pop("caller", {})
    actor: dict[str, Any] = {**caller}
    if "session" in turn:
        actor["session"] = turn["session"]
    decision = {
        "batch": batch_id,
        "decided_by": decided_by,
        "accepted": sorted(accepted),
        "rejected": sorted(rejected),
        "plan_accepted": plan_accepted,
    }
    per_name = {
        name: {
            **turn,
            "origin": origins.get(name, DEFAULT_ORIGIN),
            "review": decision,
        }
        for name in added
    }
    return actor, per_name
