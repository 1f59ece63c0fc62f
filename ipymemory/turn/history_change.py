"""An undo or restore as a proposal: what it would do, before anyone confirms it.

In a notebook ``%memory undo SEQ`` / ``restore SEQ`` do not write: they register a
batch (:class:`~ipymemory.turn.batch.PendingBatch` with ``history`` set) that the user
commits like any other (a button, ``%memory commit``); the command line applies it at
once. :func:`plan_history_change` computes the preview from the journal and the current
set without writing; the store checks everything again under its lock when the change
is committed (a conflict then is a ``MemoryConflictError`` and nothing is written).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..errors import CommandError
from ..store.history import HistoryEntry, replay, sha256_hex
from ..store.record import MAX_RECORD_BYTES
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

    @property
    def title(self) -> str:
        if self.op == "undo":
            return f"Undo #{self.seq} ({self.target_op}, {self.target_at[:16].replace('T', ' ')})"
        return f"Restore the set after #{self.seq} ({self.target_op})"

    @property
    def empty(self) -> bool:
        return not self.leaving and not self.returning

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "seq": self.seq,
            "target_op": self.target_op,
            "target_at": self.target_at,
            "leaving": list(self.leaving),
            "returning": list(self.returning),
        }

    def apply(self, store: MemoryStore, actor: dict[str, Any]) -> HistoryEntry:
        """Commit it (one store commit; the store re-checks under its lock)."""
        if self.op == "undo":
            return store.undo(self.seq, actor=actor)
        return store.restore(self.seq, actor=actor)


def plan_history_change(store: MemoryStore, op: HistoryOp, seq: int) -> HistoryChange:
    """What ``op`` of entry ``seq`` would change now; :class:`CommandError` if the
    journal has no such entry."""
    entries = store.history()[::-1]  # oldest first
    target = next((e for e in entries if e.seq == seq), None)
    if target is None:
        last = entries[-1].seq if entries else None
        known = f"entries #1 to #{last}" if last else "no entries yet"
        raise CommandError(f"no history entry #{seq} in {store.root} ({known})")
    # A record is the same if its file is, or a byte-identical copy under another id
    # (undo and restore bring records back under new ids), as the store decides.
    current = {e.file: (e.record.name, _digest(store, e.file)) for e in store.entries()}
    present = set(current.values())
    if op == "undo":
        leaving = [a.name for a in target.added if (a.name, a.sha256) in present]
        returning = [r.name for r in target.removed]
    else:
        added = {a.file: (a.name, a.sha256) for e in entries for a in e.added}
        after = [added[f] for f in replay(e for e in entries if e.seq <= seq) if f in added]
        wanted = set(after)
        leaving = [name for name, digest in current.values() if (name, digest) not in wanted]
        returning = [name for name, digest in after if (name, digest) not in present]
    return HistoryChange(op, seq, target.op, target.at, tuple(leaving), tuple(returning))


def _digest(store: MemoryStore, file: str) -> str | None:
    real = store.directory()
    got = None if real is None else store.dir.read(real, file, MAX_RECORD_BYTES)
    return sha256_hex(got[0]) if got else None
