"""ipywidgets forms of the manifest and the selection: a row per record, expand to read.

Rows are an :class:`ipywidgets.Accordion`: the title is the record's name, type and
description (rendered as text by the frontend), the panel its file and body.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from ..store.record import MemoryRecord
from ._static import StaticView, esc
from ._widgetbase import StaticBundleBox, html_block, html_text, note_html
from .manifest import ManifestView
from .scoped import ScopedView
from .selection import SelectionView

if TYPE_CHECKING:
    from ..store.store import MemoryStore

__all__ = ["ManifestWidget", "ScopedWidget", "SelectionWidget", "records_accordion"]

_TITLE_CAP = 120


def _full_title(record: MemoryRecord) -> str:
    return f"{record.name} ({record.type.value}) — {record.description}"


def _title(record: MemoryRecord) -> str:
    title = _full_title(record)
    return title if len(title) <= _TITLE_CAP else title[: _TITLE_CAP - 1] + "…"


def records_accordion(
    records: Sequence[MemoryRecord], files: Sequence[str | None] | None = None
) -> w.Accordion:
    """One collapsed row per record; expanding a row shows its file and body."""
    files = list(files) if files is not None else [None] * len(records)
    children = []
    for record, file in zip(records, files, strict=True):
        parts = []
        if _title(record) != _full_title(record):  # the title cut it: show it whole
            parts.append(html_block(esc(record.description)))
        if file:
            parts.append(html_block(note_html(f"file: {file}")))
        parts.append(html_text(record.body, tag="pre"))
        children.append(w.VBox(parts))
    return w.Accordion(children=children, titles=tuple(_title(r) for r in records))


def _manifest_heading(view: ManifestView) -> str:
    """The summary in bold, the directory muted (it is long and secondary)."""
    if view.error:
        return f"<b>{esc(view._summary())}</b>"
    n = len(view.entries)
    return f"<b>Memory: {n} record{'' if n == 1 else 's'}</b> {note_html(f'in {view.directory}')}"


class ManifestWidget(StaticBundleBox):
    """The manifest as a widget: header, one expandable row per record, a Refresh button.

    ``rows`` is the Accordion (set ``rows.selected_index = i`` to open row ``i``).
    """

    def __init__(self, view: ManifestView, store: MemoryStore | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self._store = store
        self.refresh_button = w.Button(
            description="Refresh",
            icon="refresh",
            disabled=store is None,
            tooltip="re-read the manifest",
        )
        self.refresh_button.on_click(lambda _b: self.refresh())
        self._show(view)

    def _show(self, view: ManifestView) -> None:
        self.view = view
        self.header = html_block(_manifest_heading(view))
        parts: list[w.Widget] = [
            w.HBox([self.header, self.refresh_button], layout=w.Layout(align_items="center"))
        ]
        if view.error:
            parts.append(html_text(view.error, cls="ipm-error"))
        self.rows = records_accordion(
            [e.record for e in view.entries], [e.file for e in view.entries]
        )
        parts.append(self.rows if view.entries else html_text("No memories stored."))
        self.children = tuple(parts)

    def refresh(self) -> None:
        """Re-read the store (errors are shown, not raised)."""
        if self._store is not None:
            self._show(ManifestView.load(self._store))

    def static_view(self) -> StaticView:
        return self.view


class SelectionWidget(StaticBundleBox):
    """The selection as a widget: who chose, why, and the chosen records (expandable)."""

    def __init__(self, view: SelectionView, **kw: Any) -> None:
        super().__init__(**kw)
        self.view = view
        # One block: separate HTML widgets would each take a control row's height.
        lines = [f"<b>{esc(view._headline())}</b>", note_html(f"Query: {view.query}")]
        if view.reason:
            lines.append(note_html(f"Why: {view.reason}"))
        parts: list[w.Widget] = [html_block("<br>".join(lines))]
        self.rows = records_accordion(view.records)
        if view.records:
            parts.append(self.rows)
        self.children = tuple(parts)

    def static_view(self) -> StaticView:
        return self.view


class ScopedWidget(StaticBundleBox):
    """One scope's widget after another, each under its label (``project``, ``user``);
    its static form is the :class:`~ipymemory.views.ScopedView` of theirs."""

    def __init__(self, parts: Sequence[tuple[str, StaticBundleBox]], **kw: Any) -> None:
        super().__init__(**kw)
        self.parts = tuple(parts)
        self.children = tuple(
            child
            for scope, widget in self.parts
            for child in (html_block(f"<b>{esc(scope)}</b>"), widget)
        )

    def static_view(self) -> StaticView:
        return ScopedView([(scope, widget.static_view()) for scope, widget in self.parts])
