"""The view of ``sync push`` / ``pull`` / ``status`` (SPEC §13): what moved each way, what
was refused, what waits for a person, and each conflict with both versions side by side.

Built from the run's report as data (``SyncReport.to_json()``: the sync unit sits beside
the views). Record text from either side is untrusted: it reaches HTML only through
``esc`` and a terminal only through ``plain_text``'s escaping.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from .._text import counted
from ..review.listing import where_to_decide
from ._static import StaticView, esc

__all__ = ["SyncView", "side_by_side"]

_WIDTH = 38  # each column of a conflict in a terminal
_MARKS = {"create": "+", "add": "+", "update": "~", "rename": "~", "delete": "-", "forget": "-"}
_PAST = {"create": "created", "update": "updated", "delete": "deleted"}


def _batches(ids: Sequence[str]) -> str:
    if len(ids) == 1:
        return f"batch {ids[0]}"
    return f"batches {ids[0]} and {ids[1]} (the deletions)"


def _side_lines(side: Mapping[str, Any] | None, gone: str) -> list[str]:
    """One side of a conflict as lines: the record, the raw text, or why there is none."""
    if side is None:
        return ["(not fetched: sync status shows it)"]
    record = side.get("record")
    if isinstance(record, Mapping):
        return [
            f"{record.get('name')} ({record.get('type')})",
            str(record.get("description", "")),
            "",
            *str(record.get("body", "")).split("\n"),
        ]
    text = side.get("text")
    if isinstance(text, str):
        return ["(not a valid record file)", "", *text.split("\n")]
    return [gone]


def _wrapped(lines: Sequence[str], width: int) -> list[str]:
    out: list[str] = []
    for line in lines:
        out.extend(textwrap.wrap(line, width, replace_whitespace=False) or [""])
    return out


def _there_title(side: Mapping[str, Any] | None) -> str:
    if side is None:
        return "there"
    parts = [p for p in (side.get("version"), side.get("by") and f"by {side['by']}") if p]
    return f"there ({', '.join(parts)})" if parts else "there"


def side_by_side(conflict: Mapping[str, Any], width: int = _WIDTH) -> list[str]:
    """A conflict's two versions in two columns, for a terminal."""
    here = _wrapped(_side_lines(conflict.get("here"), "(forgotten here)"), width)
    there_side = conflict.get("there")
    there = _wrapped(_side_lines(there_side, "(deleted there)"), width)
    rows = [("here", _there_title(there_side)), ("-" * width, "-" * width)]
    rows += [
        (here[i] if i < len(here) else "", there[i] if i < len(there) else "")
        for i in range(max(len(here), len(there)))
    ]
    return [f"  {left[:width].ljust(width)} │ {right}".rstrip() for left, right in rows]


class SyncView(StaticView):
    """See the module docstring; ``data`` is the report's JSON."""

    view_name = "sync"

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = dict(data)

    def to_json(self) -> dict[str, Any]:
        # ``shown``: the words as the other forms say them, for the Lab's renderer.
        conflicts = [
            {
                "name": c.get("name"),
                "title": self._conflict_title(c),
                "here": _side_lines(c.get("here"), "(forgotten here)"),
                "there": _side_lines(c.get("there"), "(deleted there)"),
                "there_title": _there_title(c.get("there")),
            }
            for c in self.data.get("conflicts", ())
        ]
        shown = {
            "headline": self.headline(),
            "lines": [*self._move_lines(), *self._other_lines()],
            "conflicts": conflicts,
            "hint": self._decide_hint(),
        }
        return {**self.data, "view": "sync", "shown": shown}

    def cli_json(self) -> Any:
        return self.to_json()

    def failure(self) -> str | None:
        stopped = self.data.get("stopped")
        return str(stopped) if stopped else None

    def found_problem(self) -> bool:
        """A push refused a record, or ``status`` found conflicts (exit status 1)."""
        if self.data.get("failed"):
            return True
        return self.data.get("action") != "pull" and bool(self.data.get("conflicts"))

    # --- the parts ------------------------------------------------------------------

    def _where(self) -> str:
        d = self.data
        return f"memory store {d['memory_store']} at {d['prefix']} ({d['scope']} scope)"

    def headline(self) -> str:
        d = self.data
        action, dry = d["action"], d.get("dry_run")
        cost = f"{counted(int(d.get('requests', 0)), 'request')}, {d.get('seconds', 0):.2f} s"
        if action == "status":
            moves = (
                f"{len(d['pushed'])} to push, {len(d['pulled'])} to pull "
                f"({len(d['conflicts'])} conflicts), {d['in_sync']} in sync"
            )
            return f"Sync with {self._where()}: {moves}. {cost}."
        if action == "push":
            verb = "Would push to" if dry else "Pushed to"
            done = f"{len(d['pushed'])} {'to write' if dry else 'written'}"
            refused = f", {len(d['failed'])} refused" if d.get("failed") else ""
        else:
            verb = "Would pull from" if dry else "Pulled from"
            done = counted(len(d["pulled"]), "change")
            if d.get("batches"):
                done += f" waiting in {_batches(d['batches'])}"
            if d.get("committed"):
                done += f", {len(d['committed'])} committed at once (auto)"
            refused = ""
        note = f" ({d['note']})" if d.get("note") else ""
        return f"{verb} {self._where()}: {done}{refused}{note}. {cost}."

    def _move_lines(self) -> list[str]:
        d, out = self.data, []
        for row in d.get("pushed", ()):
            kind = row["kind"]
            shown = kind if d.get("dry_run") else _PAST.get(kind, kind)
            out.append(f"  {_MARKS.get(kind, '?')} {shown:8} {row['name']}  {row.get('path', '')}")
        for row in d.get("pulled", ()):
            kind = row["kind"]
            what = f"{row['name']}"
            if row.get("replaces") and row["replaces"] != row["name"]:
                what += f" (was {row['replaces']})"
            origin = ", ".join(
                p for p in (row.get("version"), row.get("by") and f"by {row['by']}") if p
            )
            flag = "  CONFLICT" if row.get("conflict") else ""
            if row.get("status") == "committed":
                flag += "  committed (auto)"
            out.append(
                f"  {_MARKS.get(kind, '?')} {kind:8} {what}"
                + (f"  ({origin})" if origin else "")
                + flag
            )
            out += [f"      held: {why}" for why in row.get("reasons") or ()]
        return out

    def _other_lines(self) -> list[str]:
        d, out = self.data, []
        if d.get("failed"):
            out.append("Refused (nothing of these was written):")
            out += [f"  {f['name']}: {f['error']}" for f in d["failed"]]
        if d.get("to_pull"):
            out.append(f"Changed there (pull brings them): {', '.join(d['to_pull'])}")
        if d.get("to_push"):
            out.append(f"Changed here (push sends them): {', '.join(d['to_push'])}")
        for batch, names in d.get("waiting", {}).items():
            out.append(
                f"Waiting for your decision in pulled batch {batch}: {', '.join(names)} "
                f"(decide it {where_to_decide(batch)})"
            )
        for item in d.get("not_imported", ()):
            out.append(f"Not imported: {item['path']}: {item['reason']}")
        for item in d.get("cannot_push", ()):
            out.append(f"Cannot be pushed: {item['name']}: {item['reason']}")
        return out

    def _decide_hint(self) -> str | None:
        batches = self.data.get("batches") or ()
        if not batches or self.data.get("dry_run"):
            return None
        ids = " / ".join(batches)
        return (
            f"Nothing pulled is in the set until decided {where_to_decide()}, with ID "
            f"{ids}. A change you decline goes back there with the next push."
        )

    def _conflict_title(self, c: Mapping[str, Any]) -> str:
        action = self.data["action"]
        then = (
            "held in the pulled batch for you: committing it takes theirs, rejecting it keeps "
            "yours (sent by the next push)"
            if action == "pull" and not self.data.get("dry_run")
            else "pull proposes it for you to decide"
        )
        return f"Conflict: {c['name']} — {c['why']}; {then}"

    # --- forms --------------------------------------------------------------------------

    def to_text(self) -> str:
        lines = [self.headline(), *self._move_lines(), *self._other_lines()]
        for c in self.data.get("conflicts", ()):
            lines += ["", self._conflict_title(c), *side_by_side(c)]
        if self.data.get("stopped"):
            lines.append(f"Stopped: {self.data['stopped']}")
        hint = self._decide_hint()
        if hint:
            lines.append(hint)
        return "\n".join(lines)

    def _html_body(self) -> str:
        parts = [f"<div><b>{esc(self.headline())}</b></div>"]
        moves = self._move_lines()
        if moves:
            parts.append(f"<pre>{esc(chr(10).join(line.strip() for line in moves))}</pre>")
        parts += [f'<div class="ipm-note">{esc(line)}</div>' for line in self._other_lines()]
        for c in self.data.get("conflicts", ()):
            parts.append(f'<div class="ipm-section">{esc(self._conflict_title(c))}</div>')
            parts.append(_conflict_html(c))
        if self.data.get("stopped"):
            parts.append(f'<div class="ipm-error">Stopped: {esc(self.data["stopped"])}</div>')
        hint = self._decide_hint()
        if hint:
            parts.append(f'<div class="ipm-note">{esc(hint)}</div>')
        return "".join(parts)


def _conflict_html(conflict: Mapping[str, Any]) -> str:
    here = _side_lines(conflict.get("here"), "(forgotten here)")
    there_side = conflict.get("there")
    there = _side_lines(there_side, "(deleted there)")
    cells = "".join(
        f'<td style="vertical-align:top"><pre>{esc(chr(10).join(lines))}</pre></td>'
        for lines in (here, there)
    )
    heads = f"<th>here</th><th>{esc(_there_title(there_side))}</th>"
    return (
        f'<table data-conflict="{esc(conflict.get("name"))}"><thead><tr>{heads}</tr></thead>'
        f"<tbody><tr>{cells}</tr></tbody></table>"
    )
