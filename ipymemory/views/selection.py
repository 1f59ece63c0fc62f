"""The selection view: which memories a query gets, who chose them, and why."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..store.record import MemoryRecord
from ._static import StaticView, esc, plain_table, record_line, record_rows_html

if TYPE_CHECKING:
    from ..sidequery.select import Selection

__all__ = ["SelectionView"]

_COLUMNS = (("name", "Name"), ("type", "Type"), ("description", "Description"))
_SOURCE_TEXT = {
    "model": "chosen by the model",
    "fallback": "deterministic keyword fallback",
    "none": "no memories stored",
    "all": "the whole set",
    "keyword": "the best by keyword",
}


class SelectionView(StaticView):
    """``records`` selected for ``query`` by ``source`` ("model", "fallback", "none",
    "all": every record, the set fits, or "keyword": the keyword ranking), and what the
    side model's pick adds to them (``added``, issue 40: it joins a later request; a
    ``pick`` that failed says why in ``pick_reason``).

    ``compact`` gives the one-line "memories injected" form shown under an agent answer.
    ``model`` (the side model that chose, if it did) and ``directory`` (where the
    records live) complete the command line's form.
    """

    view_name = "selection"

    def __init__(
        self,
        query: str,
        records: Sequence[MemoryRecord],
        source: str,
        reason: str | None = None,
        *,
        compact: bool = False,
        used: bool = True,
        model: str | None = None,
        directory: str | None = None,
        added: Sequence[MemoryRecord] = (),
        pick: str | None = None,
        pick_reason: str | None = None,
    ) -> None:
        self.query = query
        self.records = tuple(records)
        self.source = source
        self.reason = reason
        self.compact = compact
        self.used = used  # False when the turn ran with --no-memory
        self.pick = pick  # the model's pick: "model", "fallback", or None (not asked)
        self.pick_reason = pick_reason
        self.added = tuple(added)
        self.model = model if "model" in (source, pick) else None
        self.directory = directory
        #: Record files that do not load, left out of the choice (said beside it).
        self.unreadable: str | None = None

    @classmethod
    def of(
        cls,
        query: str,
        selection: Selection,
        *,
        compact: bool = False,
        model: str | None = None,
        directory: str | None = None,
        pick: Selection | None = None,
        added: Sequence[MemoryRecord] = (),
    ) -> SelectionView:
        """The view of ``selection`` and, when the side model was asked, its ``pick``
        and what it ``added`` to the selection."""
        return cls(
            query,
            selection.records,
            selection.source,
            selection.reason,
            compact=compact,
            model=model,
            directory=directory,
            added=added,
            pick=None if pick is None else ("model" if pick.source == "model" else "fallback"),
            pick_reason=None if pick is None else pick.reason,
        )

    @classmethod
    def disabled(cls, query: str) -> SelectionView:
        """The view of a turn that ran without memory."""
        return cls(query, (), "none", "memory disabled for this turn", compact=True, used=False)

    @property
    def names(self) -> tuple[str, ...]:
        """Every record the agent gets: the selection, then what the model added."""
        return tuple(r.name for r in (*self.records, *self.added))

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "selection",
            "query": self.query,
            "source": self.source,
            "reason": self.reason,
            "records": self._rows(self.records),
            "model_pick": self.pick,
            "model_added": self._rows(self.added),
            "model_reason": self.pick_reason,
            **({"unreadable": self.unreadable} if self.unreadable else {}),
        }

    @staticmethod
    def _rows(records: Sequence[MemoryRecord]) -> list[dict[str, str]]:
        # Selection shows what the selector saw (the catalog's view): no bodies.
        return [
            {"name": r.name, "type": r.type.value, "description": r.description} for r in records
        ]

    def _headline(self) -> str:
        names = ", ".join(r.name for r in self.records) if self.records else "none"
        how = _SOURCE_TEXT.get(self.source, self.source)
        if self.source == "model" and not self.records:
            how = "the model found none relevant"
        if not self.used:
            how = "memory off"
        # Under an answer: what its request carried (issue 44: "used" claimed more).
        said = "Memories injected" if self.compact else "Memories selected"
        return f"{said}: {names} ({how})"

    def _pick_line(self) -> str | None:
        """What the side model's pick brought, when it was asked."""
        if self.pick is None:
            return None
        if self.pick == "fallback":
            return f"The model's pick failed ({self.pick_reason}); the keyword ranking stands"
        if not self.added:
            return "The model's pick adds nothing to these"
        return "The model's pick adds: " + ", ".join(r.name for r in self.added)

    def to_text(self) -> str:
        lines = [self._headline()]
        pick = self._pick_line()
        if pick:
            lines.append(pick)
        if self.reason:
            lines.append(f"Why: {self.reason}")
        if self.unreadable:
            lines.append(f"Warning: {self.unreadable}")
        if not self.compact:
            lines.insert(0, f"Query: {self.query}")
            if self.records or self.added:
                rows = [[r.name, r.type.value, r.description] for r in (*self.records, *self.added)]
                lines.append(plain_table(rows, [label for _, label in _COLUMNS]))
        return "\n".join(lines)

    def cli_warnings(self) -> tuple[str, ...]:
        return (self.unreadable,) if self.unreadable else ()

    def cli_text(self) -> str:
        if self.source == "model" and not self.records:
            head = f"nothing selected: the model ({self.model}) found none relevant"
        elif self.source == "model":
            head = f"selected by the model ({self.model})"
        elif self.source == "fallback":
            reason = " ".join((self.reason or "").split())
            head = f"selected by the deterministic fallback; model not used: {reason}"
        elif self.source == "all":
            head = f"no selection needed: {self.reason}"
        elif self.source == "keyword" and self.pick is None:
            head = f"selected by keyword, no model asked: {self.reason}"
        elif self.source == "keyword":
            head = f"selected by keyword at once (the first request): {self.reason}"
        elif self.reason:
            head = f"nothing selected: {self.reason}"
        else:
            head = f"nothing to select: {self.directory} holds no records"
        lines = [head] + [record_line(r) for r in self.records]
        pick = self._pick_line()
        if pick is not None:
            by = f" ({self.model})" if self.model else ""
            lines += [f"{pick}{by}", *(record_line(r) for r in self.added)]
        return "\n".join(lines)

    def cli_json(self) -> dict[str, Any]:
        return {**self.to_json(), "model": self.model}

    def _html_body(self) -> str:
        parts = [f'<div data-source="{esc(self.source)}"><b>{esc(self._headline())}</b></div>']
        pick = self._pick_line()
        if pick:
            parts.append(f'<div data-pick="{esc(self.pick or "")}">{esc(pick)}</div>')
        if self.reason:
            parts.append(f'<div class="ipm-note">Why: {esc(self.reason)}</div>')
        if self.unreadable:
            parts.append(f'<div class="ipm-error">{esc(self.unreadable)}</div>')
        if not self.compact:
            parts.insert(0, f"<div>Query: {esc(self.query)}</div>")
            if self.records or self.added:
                rows = self._rows((*self.records, *self.added))
                parts.append(record_rows_html(rows, _COLUMNS, body_key=None))
        return "".join(parts)
