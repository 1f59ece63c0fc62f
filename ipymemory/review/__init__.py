"""The review queue: the one service for a proposed change, from any door to the store.

A change enters by a door -- a turn's extraction, ``%memory consolidate``, an undo or
restore, another agent through MCP or the memory tool, a sync's pull, an import -- and
waits here as a batch until a person (or auto mode) decides it; nothing reaches the
store another way. Modules, in the order a change passes them:

    provenance      where a batch came from (TurnProvenance), and the journal's
                    actor/provenance of its commit (commit_meta)
    scopes          the project's and the user's scope; AgentNames, the one check of
                    an agent's names against the user's
    screened        screening a turn's items and plan before anything is kept (SPEC §7)
    proposals       another agent's proposals, screened and kept as one batch (SPEC §10)
    history_change  an undo or restore as a proposal (SPEC §6)
    batch           PendingBatch, its decision's checks, and committing it: apply_batch
                    (one store commit), BatchRegistry (where each batch stands)
    pending         undecided batches kept on disk in ``.memory/pending/`` (SPEC §6)
    failures        a memory failure as it is reported (MemoryFailure)

The turn (:mod:`ipymemory.turn`) proposes and decides through these; so do the MCP
server, the memory tool, sync, the importers, the command layer and the Lab panel.
"""

from __future__ import annotations

from .batch import BatchRegistry, BatchStatus, CommitResult, PendingBatch
from .failures import MemoryFailure

__all__ = ["BatchRegistry", "BatchStatus", "CommitResult", "MemoryFailure", "PendingBatch"]
