"""The history widgets (SPEC §6): the timeline with each entry's diff, and the review of
an undo/restore proposal. What they show is the static views of :mod:`.history`; a saved
notebook keeps those.

* :class:`HistoryWidget` — the timeline as a widget: a row per entry, expand it to
  read its diff. It observes its :class:`HistoryState` (a traitlets object) and, in a
  notebook, the session's batch registry: a commit made there refreshes it.
* :class:`HistoryChangeReview` — an undo or restore proposed in a notebook, waiting for
  Commit (or ``%memory commit``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import ipywidgets as w
from IPython.display import DisplayHandle
from traitlets import Bool, HasTraits, Tuple, Unicode

from ..errors import IPyMemoryError
from ..review.batch import BatchStatus
from ._static import StaticView, display_bundle, esc, update_bundle
from ._widgetbase import StaticBundleBox, block_html, html_block, html_text
from .history import HistoryChangeView, HistoryDiffView, HistoryView

if TYPE_CHECKING:
    from ..review import BatchRegistry, PendingBatch
    from ..store.store import MemoryStore

__all__ = ["HistoryChangeReview", "HistoryState", "HistoryWidget"]


class HistoryState(HasTraits):
    """What the history widget shows: the timeline rows and the error, if any.
    ``refresh()`` re-reads the journal; the widget observes ``rows`` and ``error``."""

    rows = Tuple(help="the timeline's HistoryEntry objects, newest first")
    error = Unicode(None, allow_none=True)
    more = Bool(False, help="older entries exist beyond the limit")

    def __init__(self, store: MemoryStore | None, limit: int | None, **kw: Any) -> None:
        super().__init__(**kw)
        self.store = store
        self.limit = limit

    def refresh(self) -> None:
        if self.store is None:
            return
        view = HistoryView.load(self.store, self.limit)
        with self.hold_trait_notifications():
            self.error = view.error
            self.more = view.more
            self.rows = view.entries


#: Proposes an undo or restore of an entry (``op``, ``seq``) and returns what to show.
Propose = Callable[[str, int], "StaticView | StaticBundleBox"]


class HistoryWidget(StaticBundleBox):
    """The timeline as a widget (see the module docstring). ``rows`` is the Accordion;
    opening row ``i`` loads that entry's diff and, with ``propose`` (a notebook), its
    "Undo #n" and "Restore to #n" buttons, which propose the change for review below."""

    def __init__(
        self,
        view: HistoryView,
        store: MemoryStore | None = None,
        registry: BatchRegistry | None = None,
        propose: Propose | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self.view = view
        self._store = store
        self._propose = propose
        self.state = HistoryState(
            store, view.limit, rows=view.entries, error=view.error, more=view.more
        )
        self.refresh_button = w.Button(
            description="Refresh", icon="refresh", disabled=store is None, tooltip="re-read"
        )
        self.refresh_button.on_click(lambda _b: self.state.refresh())
        self.state.observe(self._on_state, names=["rows", "error"])
        self._registry = registry
        if registry is not None:
            registry.observe(self._on_batches, names="state")
        self._by_seq: dict[int, w.VBox] = {}
        self._open_seq: int | None = None
        self._show()

    def _on_batches(self, change: Mapping[str, Any]) -> None:
        # A batch just committed in this session wrote a journal entry: show it.
        old, new = change["old"], change["new"]
        if any(
            b.status is BatchStatus.COMMITTED and getattr(old.get(k), "status", None) != b.status
            for k, b in new.items()
        ):
            self.state.refresh()

    def _on_state(self, _change: Mapping[str, Any]) -> None:
        self.view = HistoryView(
            self.view.directory,
            self.state.rows,
            limit=self.view.limit,
            error=self.state.error,
            more=self.state.more,
        )
        self._show()

    def _show(self) -> None:
        view = self.view
        self.header = html_block(f"<b>{esc(view._summary())}</b>")
        parts: list[w.Widget] = [
            w.HBox([self.header, self.refresh_button], layout=w.Layout(align_items="center"))
        ]
        if view.error:
            parts.append(html_text(view.error, cls="ipm-error"))
        # A refresh (e.g. after a commit made from an open row) keeps each entry's
        # panel, with its diff and any proposal's outcome, and the open row open.
        seqs = [e.seq for e in view.entries]
        self._by_seq = {seq: self._by_seq.get(seq) or w.VBox() for seq in seqs}
        self._panels = [self._by_seq[seq] for seq in seqs]
        self.rows = w.Accordion(
            children=self._panels,
            titles=view.row_titles(),
        )
        if self._open_seq in self._by_seq:
            self.rows.selected_index = seqs.index(self._open_seq)
        self.rows.observe(self._open, names="selected_index")
        if view.entries:
            parts.append(self.rows)
        self.children = tuple(parts)

    def _open(self, change: Mapping[str, Any]) -> None:
        index = change["new"]
        self._open_seq = None if index is None else self.view.entries[index].seq
        if index is None or self._panels[index].children:
            return
        entry = self.view.entries[index]
        diff = (
            HistoryDiffView.load(self._store, entry)
            if self._store is not None
            else HistoryDiffView(entry, (), ())
        )
        parts: list[w.Widget] = [w.HTML(value=diff.to_html())]
        if self._propose is not None:
            panel = self._panels[index]
            buttons = []
            for op, label, tip in (
                ("undo", f"Undo #{entry.seq}", "propose reversing this entry"),
                ("restore", f"Restore to #{entry.seq}", "propose the set as it was after it"),
            ):
                button = w.Button(description=label, tooltip=tip, layout=w.Layout(width="auto"))
                button.on_click(functools.partial(self._ask, op, entry.seq, panel))
                buttons.append(button)
            parts.append(w.HBox(buttons))
        self._panels[index].children = tuple(parts)

    def _ask(self, op: str, seq: int, panel: w.VBox, _button: object = None) -> None:
        """Show the proposal (or why there is none) under the entry's buttons."""
        assert self._propose is not None
        try:
            shown: w.Widget = self._as_widget(self._propose(op, seq))
        except IPyMemoryError as e:  # a button has no caller to raise to: show it
            shown = html_text(str(e), cls="ipm-error")
        panel.children = (*panel.children[:2], shown)

    @staticmethod
    def _as_widget(view: StaticView | StaticBundleBox) -> w.Widget:
        return view if isinstance(view, w.Widget) else w.HTML(value=view.to_html())

    def close(self) -> None:
        if self._registry is not None:
            self._registry.unobserve(self._on_batches, names="state")
            self._registry = None
        super().close()

    def static_view(self) -> StaticView:
        return self.view


class HistoryChangeReview(StaticBundleBox):
    """Commit or discard an undo/restore proposal. Observes its batch in the registry,
    so ``%memory commit`` / ``discard`` show here too; once decided, the output it was
    displayed in is replaced by the static outcome (what a saved notebook keeps)."""

    def __init__(
        self,
        registry: BatchRegistry,
        batch: PendingBatch,
        commit: Callable[[PendingBatch], object],
        discard: Callable[[PendingBatch], object],
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self._registry = registry
        self.batch = batch
        # As proposed here; decided by a later cell, this cell still reads as the
        # proposal and says what was decided (issue 43).
        self._proposed = batch
        self._deciding = False
        self._decided_elsewhere = False
        self.commit_button = w.Button(description="Commit", button_style="primary", icon="check")
        self.discard_button = w.Button(description="Discard", icon="times")
        self.commit_button.on_click(lambda _b: self._decide(commit))
        self.discard_button.on_click(lambda _b: self._decide(discard))
        self.body = html_block("")
        self.children = (self.body, w.HBox([self.commit_button, self.discard_button]))
        registry.observe(self._on_state, names="state")
        self._observing = True
        self._handles: list[DisplayHandle] = []
        self._show()

    @property
    def status(self) -> str:
        return str(self.batch.status)

    def _decide(self, action: Callable[[PendingBatch], object]) -> None:
        """Commit or discard with this widget's own buttons."""
        self._deciding = True
        try:
            action(self._registry.lookup(self.batch))
        finally:
            self._deciding = False

    def _on_state(self, change: Mapping[str, Any]) -> None:
        latest = change["new"].get(self.batch.id)
        if latest is not None and latest is not self.batch:
            self.batch = latest
            if not latest.open:
                self._decided_elsewhere = not self._deciding
            self._show()

    def _show(self) -> None:
        view = HistoryChangeView.of(self.batch)
        self.body.value = block_html(view._html_body())
        done = not self.batch.open
        self.commit_button.disabled = done
        self.discard_button.disabled = done
        if self.batch.status is BatchStatus.FAILED:
            self.commit_button.description = "Retry"
        if done:
            bundle = self.static_view().bundle()
            for handle in self._handles:
                update_bundle(handle, bundle, outcome=True)

    def _ipython_display_(self) -> None:
        handle = display_bundle(self._repr_mimebundle_() or {})
        if handle is not None:
            self._handles.append(handle)

    def close(self) -> None:
        if self._observing:
            self._registry.unobserve(self._on_state, names="state")
            self._observing = False
        super().close()

    def static_view(self) -> StaticView:
        if not self.batch.open and self._decided_elsewhere:
            view = HistoryChangeView.of(self._proposed)
            view.later = HistoryChangeView.of(self.batch)._state()
            return view
        return HistoryChangeView.of(self.batch)
