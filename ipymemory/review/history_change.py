"""An undo or restore as a proposal: what it would do, before anyone confirms it.

In a notebook ``%memory undo SEQ`` / ``restore SEQ`` do not write: they register a
batch (:class:`~ipymemory.review.batch.PendingBatch` with ``history`` set) that the user
commits like any other (a button, ``%memory commit``); the command line applies it at
once. :func:`plan_history_change` asks the store for its preview (the same planning
as the commit, without the lock or any write); the store plans again under its lock
when the change is committed (a conflict then is a ``MemoryConflictError`` and nothing
is written).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..errors import CommandError
from ..store.history import HistoryEntry
from ..store.store import MemoryStore

__all__ = ["HistoryChange", "HistoryOp", "plan_history_change"]

HistoryOp = Literal["undo", "restore"]


@dataclass(frozen=True)
class HistoryChange:
    """An undo of entry ``seq``, or a restore of the set after it: the names that would
    leave and come back (as of the proposal), and the entry it refers to."""

    op: HistoryOp
    seq: int
    target_op: str
    target_at: str
    leaving: tuple[str, ...]
    returning: tuple[str, ...]
    conflict: str | None = None  # why the store would refuse it now

    @property
    def title(self) -> str:
        if self.op == "undo":
            return f"Undo #{self.seq} ({self.target_op}, {self.target_at[:16].replace('T', ' ')})"
        return f"Restore the set after #{self.seq} ({self.target_op})"

    @property
    def empty(self) -> bool:
        return not self.leaving and not self.returning and self.conflict is None

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "seq": self.seq,
            "target_op": self.target_op,
            "target_at": self.target_at,
            "leaving": list(self.leaving),
            "returning": list(self.returning),
            "conflict": self.conflict,
        }

    def apply(self, store: MemoryStore, actor: dict[str, Any]) -> HistoryEntry:
        """Commit it (one store commit; the store re-checks under its lock)."""
        if self.op == "undo":
            return store.undo(self.seq, actor=actor)
        return store.restore(self.seq, actor=actor)


def plan_history_change(store: MemoryStore, op: HistoryOp, seq: int) -> HistoryChange:
    """What ``op`` of entry ``seq`` would change now (the store's own planning, without
    the lock or any write: :meth:`MemoryStore.preview`); ``conflict`` says why it would
    be refused. :class:`CommandError` if the journal has no such entry."""
    target = next((e for e in store.history() if e.seq == seq), None)
    if target is None:
        last = store.history(1)
        known = f"entries #1 to #{last[0].seq}" if last else "no entries yet"
        raise CommandError(f"no history entry #{seq} in {store.root} ({known})")
    preview = store.preview(op, seq)
    return HistoryChange(
        op, seq, target.op, target.at, preview.leaving, preview.returning, preview.conflict
    )
