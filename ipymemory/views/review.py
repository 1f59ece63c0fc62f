"""The batch review widget: accept or reject each extracted memory, and the plan.

Commit writes the accepted items (and the plan, if accepted) through the session in
one commit; Discard drops the batch. Afterwards the controls are disabled and the
outcome -- the committed names or the error -- is shown. When the widget was
displayed through IPython's ``display``, that output is then replaced by the static
outcome, so a notebook saved without widget state still records what happened.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, Protocol

import ipywidgets as w
from IPython.display import DisplayHandle

from ..errors import MemoryStoreError
from ._static import StaticView
from ._widgetbase import StaticBundleBox, body_toggle, display_bundle, html_text, update_bundle
from .batch import BatchView, ConsolidationPlanView

if TYPE_CHECKING:
    from ..turn.session import CommitResult, PendingBatch

__all__ = ["BatchReview"]

ACCEPT, REJECT = "accept", "reject"


class _Reviewer(Protocol):
    def commit(
        self, batch: PendingBatch, *, reject: Collection[str] = (), accept_plan: bool = True
    ) -> CommitResult: ...

    def discard(self, batch: PendingBatch) -> None: ...


def plan_view(batch: PendingBatch, *, accepted: bool = True) -> ConsolidationPlanView | None:
    """The diff view of ``batch``'s consolidation plan (sources looked up in its base)."""
    if batch.plan is None:
        return None
    return ConsolidationPlanView(
        batch.plan.source_names,
        batch.plan.records,
        sources=tuple(batch.base) + tuple(batch.items),
        accepted=accepted,
    )


class BatchReview(StaticBundleBox):
    """Review one pending batch of ``session``.

    ``decisions[name]`` is the accept/reject toggle of item ``name``; ``plan_decision``
    the plan's (None without a plan); ``commit_button`` / ``discard_button`` act;
    ``result`` shows the outcome, also kept in ``status``, ``committed`` and ``error``.
    """

    def __init__(self, session: _Reviewer, batch: PendingBatch, **kw: Any) -> None:
        super().__init__(**kw)
        self._session = session
        self.batch = batch
        self.status: str = batch.status
        self.committed: tuple[str, ...] = ()
        self.removed: tuple[str, ...] = ()
        self.error: str | None = None
        self._handles: list[DisplayHandle] = []

        self.decisions: dict[str, w.ToggleButtons] = {}
        rows: list[w.Widget] = []
        for record in batch.items:
            toggle = w.ToggleButtons(
                options=(ACCEPT, REJECT),
                value=ACCEPT,
                style={"button_width": "5.5em"},
                tooltips=(f"keep {record.name}", f"drop {record.name}"),
            )
            self.decisions[record.name] = toggle
            show, body = body_toggle(record.body)
            label = html_text(f"{record.name} ({record.type.value}) — {record.description}")
            rows.append(w.VBox([w.HBox([toggle, show, label]), body]))

        self.plan_decision: w.ToggleButtons | None = None
        parts: list[w.Widget] = [html_text(self._headline())]
        parts.extend(rows)
        plan = plan_view(batch)
        if plan is not None:
            self.plan_decision = w.ToggleButtons(
                options=(ACCEPT, REJECT),
                value=ACCEPT,
                style={"button_width": "5.5em"},
                tooltips=("apply the consolidation", "keep the records as they are"),
            )
            parts.append(html_text("Consolidation plan (sources → new records):"))
            parts.append(w.HTML(value=plan.to_html()))
            parts.append(w.HBox([html_text("plan:"), self.plan_decision]))

        self.commit_button = w.Button(description="Commit", button_style="success", icon="check")
        self.discard_button = w.Button(description="Discard", button_style="warning", icon="trash")
        self.commit_button.on_click(lambda _b: self.commit())
        self.discard_button.on_click(lambda _b: self.discard())
        self.result = w.HTML(value="")
        parts.append(w.HBox([self.commit_button, self.discard_button]))
        parts.append(self.result)
        self.children = tuple(parts)
        if self.status != "pending":
            self._finish(f"This batch is already {self.status}.")

    def _headline(self) -> str:
        n = len(self.batch.items)
        what = f"{n} memor{'y' if n == 1 else 'ies'} extracted"
        if self.batch.plan is not None:
            what = "consolidation plan" if n == 0 else what + " + a consolidation plan"
        return f"Review memory batch {self.batch.id}: {what}"

    @property
    def rejected(self) -> tuple[str, ...]:
        return tuple(name for name, t in self.decisions.items() if t.value == REJECT)

    @property
    def plan_accepted(self) -> bool:
        return self.plan_decision is None or self.plan_decision.value == ACCEPT

    def commit(self) -> None:
        """Commit the accepted items (and the plan if accepted); show the outcome."""
        if self.status != "pending":
            return
        try:
            result = self._session.commit(
                self.batch, reject=self.rejected, accept_plan=self.plan_accepted
            )
        except MemoryStoreError as e:
            self.status, self.error = "failed", str(e)
            self._finish(f"Commit failed: {e}", error=True)
            return
        self.committed, self.removed = tuple(result.committed), tuple(result.removed)
        if result.error:
            self.status, self.error = "failed", result.error
            self._finish(f"Commit failed: {result.error}", error=True)
            return
        self.status = "committed"
        msg = "Committed: " + (", ".join(self.committed) if self.committed else "nothing")
        if self.removed:
            msg += "; replaced: " + ", ".join(self.removed)
        self._finish(msg)

    def discard(self) -> None:
        """Drop the batch: nothing is written."""
        if self.status != "pending":
            return
        try:
            self._session.discard(self.batch)
        except MemoryStoreError as e:
            self.status, self.error = "failed", str(e)
            self._finish(f"Discard failed: {e}", error=True)
            return
        self.status = "discarded"
        self._finish("Discarded: nothing was written.")

    def _finish(self, message: str, *, error: bool = False) -> None:
        for control in (
            *self.decisions.values(),
            self.plan_decision,
            self.commit_button,
            self.discard_button,
        ):
            if control is not None:
                control.disabled = True
        self.result.value = html_text(message, cls="ipm-error" if error else None).value
        bundle = self.static_view().bundle()
        for handle in self._handles:
            update_bundle(handle, bundle)

    def static_view(self) -> StaticView:
        return BatchView(
            self.batch.items,
            status=self.status,
            rejected=self.rejected,
            plan=plan_view(self.batch, accepted=self.plan_accepted),
            committed=self.committed,
            error=self.error,
            batch_id=self.batch.id,
        )

    def _ipython_display_(self) -> None:
        # Keep the handle so the outcome can replace this output (see module docstring).
        handle = display_bundle(self._repr_mimebundle_() or {})
        if handle is not None:
            self._handles.append(handle)
