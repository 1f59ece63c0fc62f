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
    "all": every record, the set fits, or "keyword": the keyword ranking by choice).

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
    ) -> None:
        self.query = query
        self.records = tuple(records)
        self.source = source
        self.reason = reason
        self.compact = compact
        self.used = used  # False when the turn ran with --no-memory
        self.model = model if source == "model" else None
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
    ) -> SelectionView:
        return cls(
            query,
            selection.records,
            selection.source,
            selection.reason,
            compact=compact,
            model=model,
            directory=directory,
        )

    @classmethod
    def disabled(cls, query: str) -> SelectionView:
        """The view of a turn that ran without memory."""
        return cls(query, (), "none", "memory disabled for this turn", compact=True, used=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.records)

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "selection",
            "query": self.query,
            "source": self.source,
            "reason": self.reason,
            "records": self._rows(),
            **({"unreadable": self.unreadable} if self.unreadable else {}),
        }

    def _rows(self) -> list[dict[str, str]]:
        # Selection shows what the selector saw (the catalog's view): no bodies.
        return [
            {"name": r.name, "type": r.type.value, "description": r.description}
            for r in self.records
        ]

    def _headline(self) -> str:
        names = ", ".join(self.names) if self.records else "none"
        how = _SOURCE_TEXT.get(self.source, self.source)
        if self.source == "model" and not self.records:
            how = "the model found none relevant"
        if not self.used:
            how = "memory off"
        # Under an answer: what its request carried (issue 44: "used" claimed more).
        said = "Memories injected" if self.compact else "Memories selected"
        return f"{said}: {names} ({how})"

    def to_text(self) -> str:
        lines = [self._headline()]
        if self.reason:
            lines.append(f"Why: {self.reason}")
        if self.unreadable:
            lines.append(f"Warning: {self.unreadable}")
        if not self.compact:
            lines.insert(0, f"Query: {self.query}")
            if self.records:
                rows = [[r.name, r.type.value, r.description] for r in self.records]
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
        elif self.source == "keyword":
            head = f"selected by keyword, no model asked: {self.reason}"
        elif self.reason:
            head = f"nothing selected: {self.reason}"
        else:
            head = f"nothing to select: {self.directory} holds no records"
        lines = [head] + [record_line(r) for r in self.records]
        return "\n".join(lines)

    def cli_json(self) -> dict[str, Any]:
        return {**self.to_json(), "model": self.model}

    def _html_body(self) -> str:
        parts = [f'<div data-source="{esc(self.source)}"><b>{esc(self._headline())}</b></div>']
        if self.reason:
            parts.append(f'<div class="ipm-note">Why: {esc(self.reason)}</div>')
        if self.unreadable:
            parts.append(f'<div class="ipm-error">{esc(self.unreadable)}</div>')
        if not self.compact:
            parts.insert(0, f"<div>Query: {esc(self.query)}</div>")
            if self.records:
                parts.append(record_rows_html(self._rows(), _COLUMNS, body_key=None))
        return "".join(parts)
