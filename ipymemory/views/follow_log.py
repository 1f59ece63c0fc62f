"""The follow log as a table (``ipymemory followed``, ``%memory followed``; SPEC §14).

Per memory, over every checked turn the log keeps: how many answers followed it, did not,
did not touch it or could not be judged (the check's side-query failed), and the newest
miss's reason. A memory whose answers never followed it
but missed it at least twice is flagged: worth rewording (or forgetting).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._static import StaticView, cell, esc

__all__ = ["FollowLogRow", "FollowLogView"]

REWORD_AFTER = 2  # misses with no answer following it: the memory is flagged


@dataclass(frozen=True)
class FollowLogRow:
    """One memory's verdicts in one scope's follow log."""

    scope: str
    name: str
    follows: int
    contradicts: int
    untouched: int
    last_miss: str | None
    current: bool  # the record is in the set now
    unjudged: int = 0  # turns whose check could not judge it (its side-query failed)

    @property
    def reword(self) -> bool:
        return self.follows == 0 and self.contradicts >= REWORD_AFTER

    def to_json(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "name": self.name,
            "follows": self.follows,
            "contradicts": self.contradicts,
            "untouched": self.untouched,
            "unjudged": self.unjudged,
            "last_miss": self.last_miss,
            "current": self.current,
            "reword": self.reword,
        }


class FollowLogView(StaticView):
    """Per memory, how the answers followed it (see the module docstring)."""

    view_name = "followed"

    def __init__(
        self, rows: Sequence[FollowLogRow], turns: Mapping[str, int], skipped: int = 0
    ) -> None:
        self.rows = tuple(rows)
        self.turns = dict(turns)  # judged turns per scope
        self.skipped = skipped

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "followed",
            "turns": self.turns,
            "memories": [row.to_json() for row in self.rows],
            "skipped_lines": self.skipped,
        }

    def _said(self, row: FollowLogRow) -> str:
        said = f"followed {row.follows}, not followed {row.contradicts}, untouched {row.untouched}"
        if row.unjudged:
            said += f", not judged {row.unjudged}"
        if row.last_miss:
            said += f" (last miss: it {row.last_miss})"
        if not row.current:
            said += " [no longer in the set]"
        if row.reword:
            said += " -- never followed: reword or forget it"
        return said

    def _headline(self) -> str:
        judged = ", ".join(f"{n} in the {scope} scope" for scope, n in self.turns.items())
        return f"Answers judged against their memories: {judged or 'none yet'}"

    def to_text(self) -> str:
        lines = [self._headline()]
        lines.extend(f"  {row.name} ({row.scope}): {self._said(row)}" for row in self.rows)
        if self.skipped:
            lines.append(f"({self.skipped} unreadable line(s) of the log skipped)")
        return "\n".join(lines)

    def found_problem(self) -> bool:
        return any(row.reword and row.current for row in self.rows)

    def _html_body(self) -> str:
        rows = "".join(
            f"<tr>{cell(f'<code>{esc(row.name)}</code>', header=True)}{cell(esc(row.scope))}"
            f"{cell(esc(self._said(row)))}</tr>"
            for row in self.rows
        )
        return f"<div><b>{esc(self._headline())}</b></div><table>{rows}</table>"
