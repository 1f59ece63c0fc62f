"""Where a proposed memory came from, carried by its batch into the store's journal.

A turn (or ``%memory consolidate``) records a :class:`TurnProvenance`: the query, the
session, the caller (notebook, cell id, execution count when known), the models that
answered and the files the agent read. When the batch is committed,
:func:`commit_meta` turns it, with the decision (accepted and rejected names, by a
person or automatically) and each item's ``origin``, into the journal entry's
``actor`` and per-name ``provenance`` (SPEC §6), within a byte budget.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from .. import _constants as C
from .._encodable import encodable_data
from .._secrets import redact, redact_data
from ..screen.rules import Finding

__all__ = ["AGENT_VIAS", "DEFAULT_ORIGIN", "TurnProvenance", "commit_meta", "fit_provenance"]

#: ``via`` of the batches other agents propose (SPEC §10): the MCP server, the memory
#: tool used on its own (under ``%%agent`` its proposals join the turn's batch), and
#: what a sync pulled from an Anthropic memory store (SPEC §13).
AGENT_VIAS = ("mcp", "memory-tool", "memory-store")

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
    #: sha256 of each file read, as read (SPEC §11 staleness); paths as in files_read.
    files_sha256: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # What the journal and pending/ store of a turn enters here (ipymemory._encodable).
        for name in ("query", "models", "files_read", "caller"):
            object.__setattr__(self, name, encodable_data(getattr(self, name)))

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "via": self.via,
            "query": self.query,
            "models": dict(self.models),
            "files_read": list(self.files_read),
            "files_sha256": dict(self.files_sha256),
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
    evidence: Mapping[str, Sequence[str]] | None = None,
    sources: Mapping[str, Mapping[str, str]] | None = None,
    findings: Mapping[str, Sequence[Finding]] | None = None,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The journal's ``actor`` and per-added-name ``provenance`` for one batch commit.

    The actor holds what concerns the whole commit once: who (the caller's notebook and
    cell, the session) and the decision (``batch``, ``decided_by`` ``review``,
    ``lab-panel`` -- a person, in a review or a command, or in the Lab's Memory panel --
    or ``auto``, the ``accepted`` and ``rejected`` item names, ``plan_accepted``). Each
    added name gets the turn's query, models, files read and its ``origin``, bounded
    (see :func:`fit_provenance`), the extractor's ``evidence`` for it when it gave
    some (SPEC §9: redacted, in the journal only, never in the record file), and the
    files it depends on with their sha256 as read (``files_sha256``, SPEC §11; from
    ``sources``, absent when unknown -- not every file the turn read), and the screening
    rules that fired on it, with their evidence (``findings``, issue 39: an item a
    person accepted although screening held it says why it was held).
    """
    # A question may hold a credential: it never reaches the journal (SPEC §7).
    turn = dict(cast("dict[str, Any]", redact_data(provenance.to_json()))) if provenance else {}
    caller = turn.pop("caller", {})
    actor: dict[str, Any] = {
        **caller,
        "batch": batch_id,
        "decided_by": decided_by,
        "accepted": sorted(accepted),
        "rejected": sorted(rejected),
        "plan_accepted": plan_accepted,
    }
    if "session" in turn:
        actor["session"] = turn["session"]
    turn.pop("files_sha256", None)
    out = fit_provenance(turn, added, origins)
    for name, excerpts in (evidence or {}).items():
        if name in out and excerpts:
            out[name]["evidence"] = [redact(text) for text in excerpts]
    for name, hashes in (sources or {}).items():
        kept = _bounded_hashes(hashes)
        if name in out and kept:
            out[name]["files_sha256"] = kept
    for name, fired in (findings or {}).items():
        if name in out and fired:
            out[name]["findings"] = [f.to_json() for f in fired[: C.PROVENANCE_FINDINGS]]
    return actor, out


def _bounded_hashes(hashes: Mapping[str, str]) -> dict[str, str]:
    """At most ``PROVENANCE_FILES`` of an item's source hashes, whole paths only (a cut
    path names no file to compare)."""
    kept = [(p, h) for p, h in hashes.items() if len(p) <= C.PROVENANCE_PATH_CHARS]
    return dict(kept[: C.PROVENANCE_FILES])


def fit_provenance(
    turn: Mapping[str, Any],
    names: Sequence[str],
    origins: Mapping[str, str],
    budget: int = C.PROVENANCE_BUDGET_BYTES,
) -> dict[str, dict[str, Any]]:
    """``turn`` (query, models, files read, …) plus an origin for each of ``names``, in
    at most ``budget`` bytes of JSON: the query and the list of files are cut (their full
    size recorded as ``query_chars`` / ``files_read_count``), and cut further while the
    whole is over the budget, so a long pasted question never makes a commit fail."""
    query_cap, files_cap = C.PROVENANCE_QUERY_CHARS, C.PROVENANCE_FILES
    while True:
        item = _bounded(turn, query_cap, files_cap)
        out = {name: {**item, "origin": origins.get(name, DEFAULT_ORIGIN)} for name in names}
        size = len(json.dumps(out, ensure_ascii=False).encode("utf-8"))
        if size <= budget or (query_cap == 0 and files_cap == 0):
            return out
        query_cap, files_cap = query_cap // 2, files_cap // 2


def _bounded(turn: Mapping[str, Any], query_cap: int, files_cap: int) -> dict[str, Any]:
    out = dict(turn)
    query = out.get("query")
    if isinstance(query, str) and len(query) > query_cap:
        out["query"] = query[:query_cap] + "…" if query_cap else ""
        out["query_chars"] = len(query)
    files = list(out.get("files_read") or ())
    cap = C.PROVENANCE_PATH_CHARS
    out["files_read"] = [f if len(f) <= cap else f[:cap] + "…" for f in files[:files_cap]]
    # A hash is kept only beside its whole path: a cut path names no file to compare.
    hashes = out.pop("files_sha256", None)
    if isinstance(hashes, dict):
        kept = {f: hashes[f] for f in out["files_read"] if f in hashes}
        if kept:
            out["files_sha256"] = kept
    if len(files) > files_cap:
        out["files_read_count"] = len(files)
    return out
