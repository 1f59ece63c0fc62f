"""The review queue: the one service for a proposed change, from any door to the store.

A change enters by a door -- a turn's extraction, ``%memory consolidate``, an undo or
restore, another agent through MCP or the memory tool, a sync's pull, an import -- and
waits here as a batch until a person (or auto mode) decides it; nothing reaches the
store another way. Modules, in the order a change passes them:

    door            every way a change enters (Door: a turn, consolidate, undo/restore,
                    MCP, the memory tool, a memory store's pull, an import, a command)
    provenance      where a batch came from (TurnProvenance), bounded for the journal
    item            Item: one proposed record and what is known of it (origin, flags,
                    findings, redaction, replaces, scope, evidence, sources)
    scopes          the project's and the user's scope; AgentNames, the one check of
                    an agent's names against the user's
    screened        screening a turn's items and plan before anything is kept (SPEC §7)
    proposals       another agent's proposals, screened and kept as one batch (SPEC §10)
    history_change  an undo or restore as a proposal (SPEC §6)
    batch           PendingBatch (items, plan, base, status) and the checks of a
                    decision against it
    decision        Decision: what a person or auto mode decided (reject, accept,
                    redacted, the plan as its own choice, scopes, who)
    commit          one decided batch in ONE store commit (apply_batch), and the
                    journal's actor and provenance of it (commit_meta)
    registry        BatchRegistry: where each batch of a session stands
    pending         undecided batches kept on disk in ``.memory/pending/`` (SPEC §6)
    failures        a memory failure as it is reported (MemoryFailure)

The turn (:mod:`ipymemory.turn`) proposes and decides through these; so do the MCP
server, the memory tool, sync, the importers, the command layer and the Lab panel.
"""

from __future__ import annotations

from .batch import BatchStatus, CommitResult, PendingBatch
from .decision import AUTO, DecidedBy, Decision, PlanChoice
from .door import Door
from .failures import MemoryFailure
from .item import Item
from .registry import BatchRegistry

__all__ = [
    "AUTO",
    "BatchRegistry",
    "BatchStatus",
    "CommitResult",
    "DecidedBy",
    "Decision",
    "Door",
    "Item",
    "MemoryFailure",
    "PendingBatch",
    "PlanChoice",
]
