"""The pending view: batches awaiting review, in this kernel or saved in ``pending/``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..review.listing import NOTEBOOK, TERMINAL, Listed, decide_line, reopen_line
from ._static import StaticView, esc, plain_table, record_rows_html

__all__ = [
    "DECIDE_HINT",
    "LIVE_HINT",
    "MIXED_HINT",
    "OPEN_HINT",
    "PendingEntry",
    "PendingView",
]

_COLUMNS = (
    ("id", "Batch"),
    ("where", "Where"),
    ("what", "Proposes"),
    ("saved", "Saved"),
    ("expires", "Expires"),
)
OPEN_HINT = f"Reopen one for review: {reopen_line()}"
#: When every batch listed is already open in this kernel (issue 44: reopening one is no
#: step to take): decide it under its turn, or by id.
LIVE_HINT = f"Decide one in its review under the turn, or: {decide_line(NOTEBOOK)}"
#: Some are this kernel's, some saved by another or an earlier kernel.
MIXED_HINT = (
    f"Saved ones: reopen for review with {reopen_line()}; this kernel's: decide in the "
    f"review under the turn, or {decide_line(NOTEBOOK)}"
)
#: The command line's hint: it decides batches rather than reopening them.
DECIDE_HINT = f"Decide one: {decide_line(TERMINAL)}"


@dataclass(frozen=True)
class PendingEntry(Listed):
    """A listed batch (:class:`~ipymemory.review.listing.Listed`) as the pending view
    shows it."""

    @classmethod
    def shown(cls, listed: Listed) -> PendingEntry:
        return cls(**{f.name: getattr(listed, f.name) for f in fields(Listed)})

    def what(self) -> str:
        """What the batch proposes, in a few words."""
        parts = [self.change] if self.change else []
        if self.source:
            parts.append(self.source)
        if self.names:
            parts.append(", ".join(self.names))
        if self.plan_text:
            parts.append(self.plan_text)
        return "; ".join(parts) or "nothing"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "names": list(self.names),
            "plan": self.plan_text,
            "change": self.change,
            "via": self.via,
            "source": self.source,
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
        entries: Sequence[Listed],
        problems: Sequence[str] = (),
        hint: str = OPEN_HINT,
    ) -> None:
        self.hint = hint
        self.directory = directory
        self.entries = tuple(PendingEntry.shown(e) for e in entries)
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
