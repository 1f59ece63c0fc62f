"""The pending view: batches awaiting review, in this kernel or saved in ``pending/``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..review.door import Door
from ._static import StaticView, esc, plain_table, record_rows_html

__all__ = ["DECIDE_HINT", "LIVE_HINT", "MIXED_HINT", "OPEN_HINT", "PendingEntry", "PendingView"]

_COLUMNS = (
    ("id", "Batch"),
    ("where", "Where"),
    ("what", "Proposes"),
    ("saved", "Saved"),
    ("expires", "Expires"),
)
OPEN_HINT = "Reopen one for review: %memory pending --open ID"
#: When every batch listed is already open in this kernel (issue 44: reopening one is no
#: step to take): decide it under its turn, or by id.
LIVE_HINT = (
    "Decide one in its review under the turn, or: %memory commit --batch ID "
    "[--reject NAME …], %memory discard --batch ID"
)
#: Some are this kernel's, some saved by another or an earlier kernel.
MIXED_HINT = (
    "Saved ones: reopen for review with %memory pending --open ID; this kernel's: decide "
    "in the review under the turn, or %memory commit --batch ID"
)
#: The command line's hint: it decides batches rather than reopening them.
DECIDE_HINT = (
    "Decide one: ipymemory commit --batch ID [--reject NAME …] [--accept NAME …] "
    "[--redacted NAME …], or ipymemory discard --batch ID"
)


@dataclass(frozen=True)
class PendingEntry:
    """One batch awaiting a decision. ``live``: it belongs to this kernel's session
    (``%memory commit --batch ID`` decides it); otherwise it was saved by another or an
    earlier kernel. Times are UNIX seconds (None: not saved)."""

    id: str
    names: tuple[str, ...]
    plan: str | None
    live: bool
    saved_at: float | None = None
    expires_at: float | None = None
    change: str | None = None  # an undo/restore proposal: its title
    via: Door | None = None  # the door it came by (another agent's: "mcp", "memory-tool", …)

    def what(self) -> str:
        parts = [self.change] if self.change else []
        if self.via is not None and self.via.agent:
            parts.append(f"from another agent ({self.via})")
        if self.names:
            parts.append(", ".join(self.names))
        if self.plan:
            parts.append(self.plan)
        return "; ".join(parts) or "nothing"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "names": list(self.names),
            "plan": self.plan,
            "change": self.change,
            "via": self.via,
            "live": self.live,
            "saved_at": _iso(self.saved_at),
            "expires_at": _iso(self.expires_at),
        }

    def row(self) -> dict[str, str]:
        return {
            "id": self.id,
            "name": self.id,
            "where": "this kernel" if self.live else "saved",
            "what": self.what(),
            "saved": _iso(self.saved_at) or "—",
            "expires": _iso(self.expires_at) or "—",
        }


def _iso(when: float | None) -> str | None:
    if when is None:
        return None
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(when))


class PendingView(StaticView):
    """``%memory pending``: what awaits review, and how to reopen it."""

    view_name = "pending"

    def __init__(
        self,
        directory: str,
        entries: Sequence[PendingEntry],
        problems: Sequence[str] = (),
        hint: str = OPEN_HINT,
    ) -> None:
        self.hint = hint
        self.directory = directory
        self.entries = tuple(entries)
        self.problems = tuple(problems)

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "pending",
            "directory": self.directory,
            "batches": [e.to_json() for e in self.entries],
            "problems": list(self.problems),
            "hint": self.hint if self.entries else None,
        }

    def _headline(self) -> str:
        n = len(self.entries)
        if not n:
            return f"No batch awaits review in {self.directory}"
        return f"{n} batch{'' if n == 1 else 'es'} awaiting review in {self.directory}"

    def to_text(self) -> str:
        lines = [self._headline(), *self.problems]
        if self.entries:
            rows = [[r[k] for k, _ in _COLUMNS] for r in (e.row() for e in self.entries)]
            lines.append(plain_table(rows, [label for _, label in _COLUMNS]))
            lines.append(self.hint)
        return "\n".join(lines)

    def _html_body(self) -> str:
        parts = [f"<div><b>{esc(self._headline())}</b></div>"]
        parts.extend(f'<div class="ipm-note">{esc(p)}</div>' for p in self.problems)
        if self.entries:
            rows = [e.row() for e in self.entries]
            parts.append(record_rows_html(rows, _COLUMNS, body_key=None))
            parts.append(f'<div class="ipm-note">{esc(self.hint)}</div>')
        return "".join(parts)
