"""Static views of the history journal (SPEC §6): the timeline, one entry's diff, where
a record came from, and an undo/restore proposal. The widgets that show them live in
:mod:`.history_widgets`; what the journal names is read through the store's history API
(``MemoryStore.history``, ``MemoryStore.read_history_record``).

* :class:`HistoryView` — the timeline: when, op, names added and removed, by which
  notebook and cell (or tool), the turn's query. ``%memory history`` / ``ipymemory
  history``.
* :class:`HistoryDiffView` — one entry: names added and removed, and body diffs of
  the records it replaced (a consolidation's sources against its replacements).
* :class:`HistoryChangeView` — an undo or restore proposed in a notebook: what it would
  do, did, or why it failed.

Every text that comes from the journal or a record is untrusted: it reaches HTML only
through ``esc``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import MemoryStoreError
from ..review.door import Door
from ..review.listing import reopen_line
from ..store.history import HistoryEntry
from ..store.record import MemoryRecord
from ._static import StaticView, esc, plain_table
from ._widgetbase import note_html

if TYPE_CHECKING:
    from ..review.batch import PendingBatch
    from ..review.history_change import HistoryChange
    from ..store.store import MemoryStore

__all__ = [
    "HistoryChangeView",
    "HistoryDiffView",
    "HistoryView",
    "describe_actor",
    "entry_row",
    "pulled_from",
    "record_origin",
]

_QUERY_CAP = 60


def _when(at: str) -> str:
    """``2026-12-01 05:07`` from the entry's ISO time (as written, UTC)."""
    return at[:16].replace("T", " ")


def _cap(text: str, cap: int = _QUERY_CAP) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= cap else flat[: cap - 1] + "…"


def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def describe_actor(actor: Mapping[str, Any]) -> str:
    """Who made a commit, briefly: ``analysis.ipynb cell [12]``, ``ideas.chat message
    1f2e3d4c`` (a jupyter-ai chat), ``the command line``, ``a notebook`` (a ``%memory``
    line whose cell is not known), ``ipymemory 0.3`` (code calling the store),
    ``another tool`` (never a host or pid: the lab panel shows it)."""
    notebook = actor.get("notebook")
    count = actor.get("execution_count")
    parts = []
    if isinstance(notebook, str) and notebook:
        parts.append(_base(notebook))
    chat, message = actor.get("chat"), actor.get("message_id")
    if isinstance(chat, str) and chat:
        parts.append(_base(chat))
        if isinstance(message, str) and message:
            parts.append(f"message {message[:8]}")
    if type(count) is int:
        parts.append(f"cell [{count}]")
    elif isinstance(actor.get("cell_id"), str):
        parts.append(f"cell {str(actor['cell_id'])[:8]}")
    if parts:
        return " ".join(parts)
    if actor.get("tool") == "unknown":
        return "another tool"
    if actor.get("via") == Door.CLI or actor.get("front") == "ipymemory":
        return "the command line"
    if actor.get("via") == Door.NOTEBOOK or actor.get("front") == "%memory":
        return "a notebook"  # (issue 43: not the version of the tool that wrote it)
    tool = actor.get("tool")
    return tool if isinstance(tool, str) else "unknown"


def pulled_from(actor: Mapping[str, Any], names: Sequence[str]) -> str | None:
    """``memory store X (version Y, by Z)`` when the commit took changes a sync pulled
    from an Anthropic memory store (SPEC §13), for ``names`` of its records; else None."""
    store = actor.get("memory_store")
    pulled = actor.get("pulled")
    if not isinstance(store, str) or not isinstance(pulled, Mapping):
        return None
    items = [pulled[n] for n in names if isinstance(pulled.get(n), Mapping)]
    versions = [str(i["version_id"]) for i in items if isinstance(i.get("version_id"), str)]
    authors = sorted({str(i["by"]) for i in items if isinstance(i.get("by"), str)})
    parts = []
    if len(versions) == 1:
        parts.append(f"version {versions[0]}")
    elif versions:
        parts.append(f"{len(versions)} versions")
    if authors:
        shown = ", ".join(authors[:3]) + (" …" if len(authors) > 3 else "")
        parts.append(f"by {shown}")
    return f"memory store {store}" + (f" ({', '.join(parts)})" if parts else "")


def _query(entry: HistoryEntry) -> str | None:
    for item in entry.provenance.values():
        query = item.get("query")
        if isinstance(query, str) and query.strip():
            return query
    return None


def _by(entry: HistoryEntry) -> str:
    names = [a.name for a in entry.added] + [r.name for r in entry.removed]
    pulled = pulled_from(entry.actor, names)
    return describe_actor(entry.actor) if pulled is None else f"pulled from {pulled}"


def entry_row(entry: HistoryEntry) -> dict[str, Any]:
    """One timeline row as data (the JSON forms and the lab panel use it)."""
    origins = sorted(
        {str(p.get("origin")) for p in entry.provenance.values() if p.get("origin") is not None}
    )
    return {
        "seq": entry.seq,
        "at": entry.at,
        "op": entry.op,
        "added": [a.name for a in entry.added],
        "removed": [r.name for r in entry.removed],
        "source_names": list(entry.source_names),
        "undoes": entry.undoes,
        "restores": entry.restores,
        "updates": dict(entry.updates),
        "by": _by(entry),
        "query": _query(entry),
        "origins": origins,
        "move": _move(entry.actor),
    }


def _move(actor: Mapping[str, Any]) -> dict[str, Any] | None:
    """Half of a move (``move NAME --to SCOPE``): where from, where to, the move it undoes."""
    if actor.get("via") != Door.MOVE:
        return None
    return {
        "from": actor.get("from_scope"),
        "to": actor.get("to_scope"),
        "undoes": actor.get("undoes_move"),
    }


def _op(row: Mapping[str, Any]) -> str:
    """The op column: a move reads as one whichever half of it this entry is."""
    return "move" if row.get("move") else str(row["op"])


def _what(row: Mapping[str, Any]) -> str:
    parts = [f"+{n}" for n in row["added"]] + [f"-{n}" for n in row["removed"]]
    move = row.get("move")
    if move:
        where = f"from {move['from']}" if row["added"] else f"to {move['to']}"
        parts.append(f"({where})" if move["from"] else "(moved)")
        if move.get("undoes") is not None:
            parts.insert(0, f"(undo of move #{move['undoes']})")
    if row["undoes"] is not None:
        parts.insert(0, f"(undo #{row['undoes']})")
    if row["restores"] is not None:
        parts.insert(0, f"(to #{row['restores']})")
    if row["op"] == "consolidate" and not row["added"] and not row["removed"]:
        return "(nothing to merge)"
    if row.get("updates"):
        parts.insert(0, "(update)")
    return " ".join(parts) or "(no change)"


class HistoryView(StaticView):
    """The timeline, newest first (see the module docstring)."""

    view_name = "history"

    def __init__(
        self,
        directory: str,
        entries: Sequence[HistoryEntry],
        *,
        limit: int | None = None,
        error: str | None = None,
        more: bool = False,
    ) -> None:
        self.directory = directory
        self.entries = tuple(entries)
        self.limit = limit
        self.error = error
        self.more = more  # older entries exist beyond ``limit``
        self.rows = [entry_row(e) for e in self.entries]

    @classmethod
    def load(cls, store: MemoryStore, limit: int | None = None) -> HistoryView:
        """The newest ``limit`` entries; a journal that cannot be read is an error shown."""
        try:
            got = store.history(None if limit is None else limit + 1)
            more = limit is not None and len(got) > limit
            return cls(str(store.root), got[:limit], limit=limit, more=more)
        except MemoryStoreError as e:
            return cls(str(store.root), (), limit=limit, error=str(e))

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "history",
            "directory": self.directory,
            "limit": self.limit,
            "error": self.error,
            "more": self.more,
            "entries": self.rows,
        }

    def cli_json(self) -> Any:
        return [e.to_json() for e in self.entries]

    def failure(self) -> str | None:
        return self.error

    def _summary(self) -> str:
        if self.error:
            return f"History of {self.directory} could not be read: {self.error}"
        if not self.entries:
            return f"No history in {self.directory} yet (no commit was recorded)."
        n = len(self.entries)
        newest = " (newest first)" if n > 1 else ""
        what = f"the newest {n}" if self.more else f"{n} entr{'y' if n == 1 else 'ies'}"
        return f"History of {self.directory}: {what}{newest}"

    def row_titles(self) -> tuple[str, ...]:
        """One short line per entry (the history widget's row titles)."""
        return tuple(
            f"#{r['seq']}  {_when(r['at'])}  {_op(r)}  {_cap(_what(r), 50)}  · {r['by']}"
            for r in self.rows
        )

    def to_text(self) -> str:
        if not self.rows:
            return self._summary()
        table = plain_table(
            [
                [
                    f"#{r['seq']}",
                    _when(r["at"]),
                    _op(r),
                    _what(r),
                    r["by"],
                    _cap(r["query"] or ""),
                ]
                for r in self.rows
            ],
            ["seq", "when (UTC)", "op", "what", "by", "turn"],
        )
        older = f"Older entries: history --limit {2 * len(self.rows)}.\n" if self.more else ""
        return f"{self._summary()}\n{table}\n{older}See one entry: diff SEQ; reverse it: undo SEQ."

    def _html_body(self) -> str:
        head = f"<div><b>{esc(self._summary())}</b></div>"
        if not self.rows:
            return head
        rows = "".join(_row_html(r) for r in self.rows)
        columns = ("#", "when (UTC)", "op", "what", "by", "turn")
        heads = "".join(f"<th>{esc(c)}</th>" for c in columns)
        return f"{head}<table><thead><tr>{heads}</tr></thead><tbody>{rows}</tbody></table>"


def _names_html(row: Mapping[str, Any]) -> str:
    added = " ".join(f'<span class="ipm-add">+{esc(n)}</span>' for n in row["added"])
    removed = " ".join(f'<span class="ipm-del">-{esc(n)}</span>' for n in row["removed"])
    extra = []
    if row["undoes"] is not None:
        extra.append(note_html(f"undo #{row['undoes']}"))
    if row["restores"] is not None:
        extra.append(note_html(f"restore to #{row['restores']}"))
    return " ".join(p for p in (*extra, added, removed) if p) or note_html("no change")


def _row_html(row: Mapping[str, Any]) -> str:
    cells = [
        esc(f"#{row['seq']}"),
        esc(_when(row["at"])),
        esc(_op(row)),
        _names_html(row),
        esc(row["by"]),
        esc(_cap(row["query"] or "")),
    ]
    tds = "".join(f"<td>{c}</td>" for c in cells)
    return f'<tr data-seq="{esc(row["seq"])}">{tds}</tr>'


# --- one entry's diff ----------------------------------------------------------------


@dataclass(frozen=True)
class _Side:
    """A record an entry added or removed, as far as its file can still be read."""

    name: str
    file: str
    record: MemoryRecord | None
    note: str | None = None  # why the record is not shown


def _record_text(record: MemoryRecord) -> list[str]:
    return [
        f"{record.name} ({record.type.value}): {record.description}",
        "",
        *record.body.split("\n"),
    ]


def _diff(before: Sequence[_Side], after: Sequence[_Side]) -> list[str]:
    old = [line for s in before if s.record for line in (*_record_text(s.record), "")]
    new = [line for s in after if s.record for line in (*_record_text(s.record), "")]
    label_old = ", ".join(s.name for s in before) or "(nothing)"
    label_new = ", ".join(s.name for s in after) or "(nothing)"
    return list(difflib.unified_diff(old, new, label_old, label_new, lineterm="", n=2))


class HistoryDiffView(StaticView):
    """One entry: names added and removed, and body diffs where records were replaced
    (same name: that record before and after; otherwise the records it removed against
    the ones it added, e.g. a consolidation's sources against its replacements)."""

    view_name = "history-diff"

    def __init__(
        self, entry: HistoryEntry, added: Sequence[_Side], removed: Sequence[_Side]
    ) -> None:
        self.entry = entry
        self.added = tuple(added)
        self.removed = tuple(removed)
        self.diffs = self._pair()

    @classmethod
    def load(cls, store: MemoryStore, entry: HistoryEntry) -> HistoryDiffView:
        """Read the records ``entry`` names from ``.memory/`` or ``history/files/``."""
        return cls(
            entry,
            [_side(store, a.name, a.file) for a in entry.added],
            [_side(store, r.name, r.file) for r in entry.removed],
        )

    def _pair(self) -> list[tuple[str, list[str]]]:
        if not self.added or not self.removed:
            return []
        by_name = {s.name: s for s in self.removed}
        out = []
        rest_new = []
        for side in self.added:
            old = by_name.pop(side.name, None)
            if old is None:
                rest_new.append(side)
            else:
                out.append((side.name, _diff([old], [side])))
        if rest_new and by_name:
            out.append(("replaced", _diff(list(by_name.values()), rest_new)))
        return [(label, lines) for label, lines in out if lines]

    def to_json(self) -> dict[str, Any]:
        def side(s: _Side) -> dict[str, Any]:
            return {
                "name": s.name,
                "file": s.file,
                "record": s.record.to_json() if s.record else None,
                "note": s.note,
            }

        return {
            "view": "history-diff",
            "entry": self.entry.to_json(),
            "row": entry_row(self.entry),
            "added": [side(s) for s in self.added],
            "removed": [side(s) for s in self.removed],
            "diffs": [{"label": label, "lines": lines} for label, lines in self.diffs],
        }

    def _headline(self) -> str:
        row = entry_row(self.entry)
        line = f"#{self.entry.seq} {self.entry.op} at {_when(self.entry.at)} UTC by {row['by']}"
        if row["query"]:
            line += f", turn {_cap(row['query'])!r}"
        updates = self.entry.updates
        merged = [n for n in self.entry.source_names if n not in set(updates.values())]
        if merged:
            line += f"; merged {', '.join(merged)}"
        if updates:
            line += "; updated " + ", ".join(
                old if new == old else f"{old} (now {new})" for new, old in updates.items()
            )
        return line

    def _side_line(self, mark: str, s: _Side) -> str:
        desc = f" — {s.record.description}" if s.record else ""
        note = f" ({s.note})" if s.note else ""
        return f"{mark} {s.name}{desc}{note}"

    def to_text(self) -> str:
        lines = [self._headline()]
        lines += [self._side_line("+", s) for s in self.added]
        lines += [self._side_line("-", s) for s in self.removed]
        if not self.added and not self.removed:
            lines.append("(no records added or removed)")
        for label, diff in self.diffs:
            lines += ["", f"body diff ({label}):", *diff]
        return "\n".join(lines)

    def _html_body(self) -> str:
        parts = [f"<div><b>{esc(self._headline())}</b></div>"]
        for mark, cls, sides in (("+", "ipm-add", self.added), ("-", "ipm-del", self.removed)):
            for s in sides:
                desc = f" — {esc(s.record.description)}" if s.record else ""
                note = f" {note_html(f'({s.note})')}" if s.note else ""
                parts.append(
                    f'<div class="{cls}" data-name="{esc(s.name)}">{mark} '
                    f'<span class="ipm-name">{esc(s.name)}</span>{desc}{note}</div>'
                )
        for label, diff in self.diffs:
            parts.append(f'<div class="ipm-section">body diff ({esc(label)})</div>')
            parts.append(f"<pre>{_diff_html(diff)}</pre>")
        return "".join(parts)


def _diff_html(lines: Sequence[str]) -> str:
    out = []
    for line in lines:
        if line.startswith("+") and not line.startswith("+++"):
            out.append(f'<span class="ipm-add">{esc(line)}</span>')
        elif line.startswith("-") and not line.startswith("---"):
            out.append(f'<span class="ipm-del">{esc(line)}</span>')
        else:
            out.append(esc(line))
    return "\n".join(out)


def _side(store: MemoryStore, name: str, file: str) -> _Side:
    """The record in ``file``: in the set's directory, else kept in history/files/."""
    if store.directory() is None:
        return _Side(name, file, None, "no memory directory")
    try:
        record = store.read_history_record(file)
    except MemoryStoreError as e:
        return _Side(name, file, None, f"unreadable: {e}")
    return _Side(name, file, record, None if record is not None else "file no longer kept")


# --- where a record came from --------------------------------------------------------


def record_origin(entries: Sequence[HistoryEntry], file: str, name: str) -> dict[str, Any] | None:
    """What the journal says about the commit that put ``file`` into the set (entries
    newest first): ``{"seq", "at", "op", "by", "query", "origin", "text"}``; None when
    no entry added it (older than the journal, or written by hand)."""
    for entry in entries:
        if not any(a.file == file for a in entry.added):
            continue
        prov = entry.provenance.get(name, {})
        query = prov.get("query") if isinstance(prov.get("query"), str) else None
        origin = prov.get("origin") if isinstance(prov.get("origin"), str) else None
        by = describe_actor(entry.actor)
        verb = {
            "add": "added",
            "consolidate": "updated" if name in entry.updates else "added by a consolidation",
            "undo": f"brought back by undo of #{entry.undoes}",
            "restore": f"brought back by restore to #{entry.restores}",
            "recover": "recovered",
            "external": "added by another tool",
        }.get(entry.op, entry.op)
        text = f"{verb} {entry.at[:10]}"
        pulled = pulled_from(entry.actor, [name])
        if pulled is not None:
            by = f"pulled from {pulled}"
            text = f"{'updated' if name in entry.updates else 'added'} {entry.at[:10]}, {by}"
        elif entry.op != "external":
            text += f" from {by}"
        if query:
            text += f", turn {_cap(query)!r}"
        if origin:
            text += f", origin: {origin}"
        text += f" (history #{entry.seq})"
        files_read = prov.get("files_read")
        return {
            "seq": entry.seq,
            "at": entry.at,
            "op": entry.op,
            "by": by,
            "query": query,
            "origin": origin,
            "files_read": list(files_read) if isinstance(files_read, list) else [],
            "text": text,
        }
    return None


# --- an undo/restore proposal --------------------------------------------------------


class HistoryChangeView(StaticView):
    """An undo or restore: what it would do (pending), did, or why it failed."""

    view_name = "history-change"

    def __init__(
        self,
        change: HistoryChange,
        *,
        batch_id: str | None = None,
        status: str = "pending",
        error: str | None = None,
        applied: bool = False,
        later: str | None = None,
    ) -> None:
        self.change = change
        self.batch_id = batch_id
        self.status = status
        self.error = error
        self.applied = applied
        #: How a command in a later cell decided this proposal ("Done …"); shown where it
        #: was proposed, which then still reads as a proposal (issue 43).
        self.later = later

    @classmethod
    def of(cls, batch: PendingBatch) -> HistoryChangeView:
        assert batch.history is not None
        return cls(batch.history, batch_id=batch.id, status=str(batch.status), error=batch.error)

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "history-change",
            "batch": self.batch_id,
            "status": self.status,
            "error": self.error,
            **({"later": self.later} if self.later else {}),
            **self.change.to_json(),
        }

    def cli_json(self) -> Any:
        return self.to_json()

    def failure(self) -> str | None:
        return self.error if self.status == "failed" else None

    def _effect(self) -> list[str]:
        lines = []
        if self.change.returning:
            lines.append(f"brings back: {', '.join(self.change.returning)}")
        if self.change.leaving:
            lines.append(f"removes: {', '.join(self.change.leaving)}")
        return lines or ["changes nothing in the current set"]

    def _state(self) -> str:
        if self.later:
            return f"Proposed here; decided later, in another cell: {self.later}"
        if self.status == "committed":
            return "Done (a new history entry records it; it can be undone too)."
        if self.status == "discarded":
            return "Discarded: nothing was written."
        if self.status == "failed":
            return f"Refused, nothing was written: {self.error}"
        return (
            "Pending: nothing is written until you commit it (Commit, or %memory commit"
            + (f" --batch {self.batch_id}" if self.batch_id else "")
            + "; %memory discard to drop it). It is kept in .memory/pending/: after a "
            + f"restart, %memory pending lists it and {reopen_line(self.batch_id or 'ID')} "
            + "reopens it."
        )

    def to_text(self) -> str:
        return "\n".join([self.change.title, *(f"  {x}" for x in self._effect()), self._state()])

    def _html_body(self) -> str:
        effect = "".join(f"<div>{esc(x)}</div>" for x in self._effect())
        cls = "ipm-error" if self.status == "failed" else "ipm-note"
        return (
            f"<div><b>{esc(self.change.title)}</b></div>{effect}"
            f'<div class="{cls}">{esc(self._state())}</div>'
        )
