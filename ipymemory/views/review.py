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
from ._static import StaticView, display_bundle, update_bundle
from ._widgetbase import StaticBundleBox, body_toggle, html_text
from .batch import BatchView, ConsolidationPlanView

if TYPE_CHECKING:
    from ..turn.batch import CommitResult, PendingBatch

__all__ = ["BatchReview"]

ACCEPT, REJECT = "accept", "reject"


class _Reviewer(Protocol):
    def commit(
        self, batch: PendingBatch, *, reject: Collection[str] = (), accept_plan: bool = True
    ) -> CommitResult: ...

    def discard(self, batch: PendingBatch) -> None: ...


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
        plan = ConsolidationPlanView.of(batch)
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
        if self.status in ("committed", "discarded"):
            self.sync(batch)

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
        """Commit the accepted items (and the plan if accepted); show the outcome.

        A refused commit writes nothing and leaves the controls enabled: change the
        choices (e.g. reject the plan) and commit again, or discard.
        """
        if self.status not in ("pending", "failed"):
            return
        try:
            result = self._session.commit(
                self.batch, reject=self.rejected, accept_plan=self.plan_accepted
            )
        except MemoryStoreError as e:
            self._refused(str(e))
            return
        if result.batch is not None:
            self.batch = result.batch
        if result.error:
            # A refused decision leaves the batch pending; a store failure marks it failed.
            self.status = self.batch.status if result.batch is not None else "failed"
            self._refused(result.error)
            return
        self.status = "committed"
        self.committed, self.removed = tuple(result.committed), tuple(result.removed)
        self._finish(self._outcome())

    def discard(self) -> None:
        """Drop the batch: nothing is written."""
        if self.status not in ("pending", "failed"):
            return
        try:
            self._session.discard(self.batch)
        except MemoryStoreError as e:
            self._refused(str(e), action="Discard")
            return
        self.status = "discarded"
        self._finish(self._outcome())

    def sync(self, batch: PendingBatch) -> None:
        """Show the outcome of ``batch`` when it was committed or discarded elsewhere
        (``%memory commit`` / ``%memory discard``)."""
        if batch.id != self.batch.id or batch.status in ("pending", "failed"):
            return
        self.batch = batch
        for name, toggle in self.decisions.items():
            toggle.value = REJECT if name in batch.rejected else ACCEPT
        if self.plan_decision is not None:
            self.plan_decision.value = ACCEPT if batch.plan_accepted else REJECT
        self.status = batch.status
        self.committed, self.removed = tuple(batch.committed), tuple(batch.removed)
        self._finish(self._outcome())

    def _outcome(self) -> str:
        if self.status == "discarded":
            return "Discarded: nothing was written."
        if self.status != "committed":
            return f"This batch is {self.status}."
        msg = "Committed: " + (", ".join(self.committed) if self.committed else "nothing")
        if self.removed:
            msg += "; replaced: " + ", ".join(self.removed)
        return msg

    def _refused(self, message: str, *, action: str = "Commit") -> None:
        self.error = message
        self.result.value = html_text(
            f"{action} refused: {message} (nothing was written; change your choices "
            "and commit again, or discard)",
            cls="ipm-error",
        ).value

    def _finish(self, message: str) -> None:
        for control in (
            *self.decisions.values(),
            self.plan_decision,
            self.commit_button,
            self.discard_button,
        ):
            if control is not None:
                control.disabled = True
        self.error = None
        self.result.value = html_text(message).value
        bundle = self.static_view().bundle()
        for handle in self._handles:
            update_bundle(handle, bundle)

    def static_view(self) -> StaticView:
        return BatchView(
            self.batch.items,
            status=self.status,
            rejected=self.rejected,
            plan=ConsolidationPlanView.of(self.batch, accepted=self.plan_accepted),
            committed=self.committed,
            error=self.error,
            batch_id=self.batch.id,
        )

    def _ipython_display_(self) -> None:
        # Keep the handle so the outcome can replace this output (see module docstring).
        handle = display_bundle(self._repr_mimebundle_() or {})
        if handle is not None:
            self._handles.append(handle)
