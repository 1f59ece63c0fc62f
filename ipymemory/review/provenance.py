"""Where a proposed memory came from, carried by its batch into the store's journal.

A turn (or ``%memory consolidate``) records a :class:`TurnProvenance`: the query, the
session, the caller (notebook, cell id, execution count when known), the models that
answered and the files the agent read. When the batch is committed,
:func:`~ipymemory.review.commit.commit_meta` turns it, with the decision (accepted and
rejected names, by a person or automatically) and each item's ``origin``, into the
journal entry's ``actor`` and per-name ``provenance`` (SPEC §6), within the byte budget
:func:`fit_provenance` keeps.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import _constants as C
from .._encodable import encodable_data
from .door import Door

__all__ = ["DEFAULT_ORIGIN", "TurnProvenance", "batch_source", "fit_provenance"]

#: The origin of an item extracted from a turn until screening decides one (SPEC §7).
DEFAULT_ORIGIN = "user"


@dataclass(frozen=True)
class TurnProvenance:
    """What is known about the turn that proposed a batch.

    ``via`` is the :class:`~ipymemory.review.door.Door` it came by (a turn's
    extraction, ``consolidate``, another agent, …; its value is accepted too).
    ``caller`` holds what the front end knows: ``notebook`` (its path), ``cell_id``,
    ``execution_count``. ``models``: role -> model name of the calls made.
    """

    session: str
    via: Door = Door.TURN
    query: str | None = None
    models: Mapping[str, str] = field(default_factory=dict)
    files_read: tuple[str, ...] = ()
    caller: Mapping[str, Any] = field(default_factory=dict)
    #: sha256 of each file read, as read (SPEC §11 staleness); paths as in files_read.
    files_sha256: Mapping[str, str] = field(default_factory=dict)
    #: SPEC §13: what each request of the turn carried and the model's pick
    #: (``SelectionTrace.to_json``); empty when unknown.
    memories: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "via", Door(self.via))
        # What the journal and pending/ store of a turn enters here (ipymemory._encodable).
        for name in ("query", "models", "files_read", "caller", "memories"):
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
            **({"memories": dict(self.memories)} if self.memories else {}),
        }


def batch_source(provenance: TurnProvenance | None) -> str | None:
    """Where a batch came from, as listings say it, when not from a notebook's turn:
    ``from another agent (mcp)`` (SPEC §10), ``from the chat ideas.chat`` (the
    ``@ipymemory`` persona's turn names its chat); None otherwise."""
    if provenance is None:
        return None
    if provenance.via.agent:
        return f"from another agent ({provenance.via})"
    chat = provenance.caller.get("chat")
    return f"from the chat {chat}" if isinstance(chat, str) and chat else None


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
