"""The local side of the sync for ``%memory status``: when each store was last synced,
what changed here since, which pulled batches wait. Reads ``.memory/`` only."""

from __future__ import annotations

from collections import Counter

from ..errors import MemoryStoreError, SyncStateError
from ..review.listing import reopen_line
from ..review.pending import PendingFiles
from ..store.store import MemoryStore
from .plan import LocalRecord, local_changes, local_records
from .state import reconcile, saved_states

__all__ = ["sync_lines"]


def sync_lines(store: MemoryStore, files: PendingFiles | None = None) -> list[str]:
    """One line per (memory store, prefix) this ``.memory/`` was synced with."""
    files = files if files is not None else PendingFiles(store.root)
    out: list[str] = []
    local: dict[str, LocalRecord] | None = None
    refused: dict[str, str] = {}
    for _path, got in saved_states(store.root):
        if isinstance(got, SyncStateError):
            out.append(f"sync state: {got}")
            continue
        state = reconcile(got, files.holds)
        parts = [
            f"synced with memory store {state.memory_store} at {state.prefix}: "
            f"last push {state.last_push or 'never'}, last pull {state.last_pull or 'never'}"
        ]
        if local is None:
            try:
                local, refused = local_records(store.entries())
            except MemoryStoreError:
                local = {}
        changed = local_changes(local, state, refused)
        if changed:
            n = len(changed)
            parts.append(f"{n} change{'' if n == 1 else 's'} here to push")
        for batch, n in sorted(Counter(p.batch for p in state.pulled.values()).items()):
            parts.append(
                f"pulled batch {batch} waits ({n} change{'' if n == 1 else 's'}): "
                f"{reopen_line(batch)}"
            )
        if state.skipped:
            parts.append(f"{len(state.skipped)} memories there not imported (sync status)")
        out.append("; ".join(parts))
    return out
