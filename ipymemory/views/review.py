"""The batch review widget: accept or reject each extracted memory, and the plan.

Commit writes the accepted items (and the plan, if accepted) through the session in
one commit; Discard drops the batch. The widget OBSERVES its batch in the session's
:class:`~ipymemory.review.batch.BatchRegistry` (a traitlets ``state`` trait): whoever
decides the batch -- these buttons, ``%memory commit`` / ``discard``, code calling the
session -- the widget then disables its controls and shows the outcome. When it was
displayed through IPython's ``display``, that output is then replaced by the static
outcome, so a notebook saved without widget state still records what happened.

Screening (SPEC §7): an item screening flagged shows why under its label and starts
rejected: accepting it is the explicit choice that commits it (for a redacted item,
shown as redacted -- the credential was never kept -- its redacted text). A flagged
plan starts rejected too. A commit made elsewhere that left held items pending in the
batch (``%memory commit`` without ``--accept``) locks the items it decided.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import ipywidgets as w
from IPython.display import DisplayHandle

from ..errors import BatchError, MemoryStoreError
from ..review import BatchStatus, Decision, PlanChoice
from ..review.commit import commit_effect
from ..review.scopes import PROJECT, USER
from ..screen.rules import Finding
from ..store.record import MemoryRecord
from ._static import StaticView, display_bundle, esc, styled_html, update_bundle
from ._widgetbase import (
    StaticBundleBox,
    block_html,
    body_toggle,
    html_block,
    html_text,
    note_html,
    record_label_html,
)
from .batch import BatchView, ConsolidationPlanView, agent_proposer

if TYPE_CHECKING:
    from ..review import BatchRegistry, CommitResult, PendingBatch
    from ..sidequery.consolidate import ConsolidationPlan
    from ..store.store import MemoryStore

__all__ = ["BatchReview"]

ACCEPT, REJECT = "accept", "reject"

_ROW = w.Layout(align_items="center")

# The controls of an item sit in a column of fixed width that never wraps or shrinks;
# the label takes the rest of the row and wraps inside it (issue 14 #3).
_BUTTON_WIDTH = "6.5em"
# Two buttons with their margins (2 x 2px each) and the empty label's margin, with room
# to spare: any less and the second button wraps under the first.
_TOGGLES_WIDTH = "14.6em"
_BODY_WIDTH = "5.6em"  # "> body" in full, never cut to "b…"
_FIXED = {"flex": "0 0 auto", "flex_flow": "row nowrap"}


def _decision(accept_tip: str, reject_tip: str) -> w.ToggleButtons:
    """An accept/reject toggle (values ``ACCEPT`` / ``REJECT``); the marks in the labels
    keep the choice readable at a glance (ToggleButtons icons would follow the text)."""
    toggle = w.ToggleButtons(
        options=(("\u2713 accept", ACCEPT), ("\u2715 reject", REJECT)),
        value=ACCEPT,
        # (no description: its label would still take 80px of the column)
        style={"button_width": _BUTTON_WIDTH, "description_width": "0px"},
        tooltips=(accept_tip, reject_tip),
        layout=w.Layout(width=_TOGGLES_WIDTH, min_width=_TOGGLES_WIDTH, **_FIXED),
    )
    toggle.add_class("ipymemory-decision")
    return toggle


def _item_row(controls: list[w.Widget], label: w.HTML) -> w.HBox:
    """One item: the fixed control column, then the label wrapping beside it."""
    column = w.HBox(controls, layout=w.Layout(**_FIXED))
    column.add_class("ipymemory-review-controls")
    label.layout = w.Layout(flex="1 1 0%", min_width="0")
    label.add_class("ipymemory-review-label")
    row = w.HBox([column, label], layout=w.Layout(align_items="flex-start", flex_flow="row nowrap"))
    row.add_class("ipymemory-review-row")
    return row


def _wrapping(inner_html: str) -> str:
    # ipywidgets' HTML content does not wrap by itself in a flex row.
    return (
        '<div style="white-space:normal;overflow-wrap:anywhere;line-height:1.45;'
        f'padding-top:4px">{inner_html}</div>'
    )


def _records(n: int) -> str:
    return f"{n} record{'' if n == 1 else 's'}"


def _plan_effect(plan: ConsolidationPlan | ConsolidationPlanView) -> str:
    n = len(plan.source_names)
    if not n and not plan.records:
        return "nothing to merge"
    return f"replaces {n} record{'' if n == 1 else 's'} with {len(plan.records)}"


def _label_parts(record: MemoryRecord) -> tuple[str, str, str]:
    return record.name, record.type.value, record.description


class _Reviewer(Protocol):
    """What the widget needs of a session: its batch registry, its store (to find a
    name another session took meanwhile) and the two decisions."""

    batch_registry: BatchRegistry
    store: MemoryStore

    @property
    def user_store(self) -> MemoryStore | None: ...

    def commit(self, batch: PendingBatch, decision: Decision) -> CommitResult: ...

    def discard(self, batch: PendingBatch) -> None: ...


class BatchReview(StaticBundleBox):
    """Review one batch of ``session``.

    ``decisions[name]`` is the accept/reject toggle of item ``name``; ``plan_decision``
    the plan's (None without a plan); ``commit_button`` / ``discard_button`` act;
    ``result`` shows the outcome. ``batch`` is the batch as the registry last reported
    it (``status``, ``committed``, ``removed`` read from it); ``error`` is the last
    refusal shown.
    """

    def __init__(self, session: _Reviewer, batch: PendingBatch, **kw: Any) -> None:
        super().__init__(**kw)
        self._session = session
        self._registry = session.batch_registry
        self.batch = self._registry.lookup(batch)
        #: The batch as proposed here, and whether these buttons are deciding it now: a
        #: batch a later cell decides (%memory commit) leaves this cell reading as the
        #: proposal, saying what was decided later (issue 43).
        self._proposed = self.batch
        self._deciding = False
        self._decided_elsewhere = False
        self._when_decided: list[Callable[[], None]] = []
        self.error: str | None = None
        self._handles: list[DisplayHandle] = []

        self.decisions: dict[str, w.ToggleButtons] = {}
        #: Per item, where it is committed (SPEC §11): "project" or "user"; shown when
        #: the user scope is on (an update stays where the record it replaces is).
        self.scope_choices: dict[str, w.ToggleButtons] = {}
        #: Per item, what became of it once decided (hidden while pending).
        self.outcomes: dict[str, w.HTML] = {}
        self._labels: dict[str, w.HTML] = {}
        self._records = {record.name: record for record in batch.items}
        parts: list[w.Widget] = [self._heading()]
        for item in batch.proposed:
            record = item.record
            toggle = _decision(f"keep {record.name}", f"drop {record.name}")
            if item.flagged:
                toggle.value = REJECT  # held (or redacted): committed on an explicit choice
            label = w.HTML(value="")
            outcome = w.HTML(
                value="", layout=w.Layout(display="none", width=_TOGGLES_WIDTH, **_FIXED)
            )
            self.decisions[record.name] = toggle
            self.outcomes[record.name] = outcome
            self._labels[record.name] = label
            self._strike(record.name, toggle.value == REJECT)
            toggle.observe(lambda _c, r=record: self._on_decision(r), names="value")
            show, body = body_toggle(record.body)
            show.layout = w.Layout(width=_BODY_WIDTH, min_width=_BODY_WIDTH, **_FIXED)
            show.add_class("ipymemory-body-toggle")
            rows: list[w.Widget] = [_item_row([toggle, outcome, show], label)]
            if session.user_store is not None or item.scope == USER:
                rows.append(self._scope_row(record.name))
            parts.append(w.VBox([*rows, body]))

        self.plan_decision: w.ToggleButtons | None = None
        plan = ConsolidationPlanView.of(batch)
        if plan is not None:
            self.plan_decision = _decision(
                "apply the consolidation", "keep the records as they are"
            )
            if batch.plan_held:  # flagged by screening: applied only on an explicit choice
                self.plan_decision.value = REJECT
                why = "; ".join(batch.plan_flags)
                parts.append(html_text(f"\u26a0 Held for review: {why}", cls="ipm-error"))
                rules = _rules_html(batch.plan_rules)
                if rules:
                    parts.append(html_block(rules))
            self.plan_decision.observe(lambda _c: self._update_summary(), names="value")
            if batch.items:  # (a plan alone is already named by the headline)
                effect = _plan_effect(plan)
                parts.append(html_block(f"<b>Consolidation plan</b>: {esc(effect)}"))
            # The static diff (with its own style block), without its verdict headline:
            # the toggle below is the verdict while the batch is pending.
            parts.append(html_block(styled_html(plan.diff_html(), "consolidation")))
            parts.append(w.HBox([html_text("Apply this plan:"), self.plan_decision], layout=_ROW))

        self.commit_button = w.Button(
            description="Commit",
            button_style="success",
            icon="check",
            tooltip="write the accepted choices",
        )
        # Neutral, so Commit reads as the main action; the icon says what Discard does.
        self.discard_button = w.Button(
            description="Discard", icon="trash", tooltip="drop the whole batch, write nothing"
        )
        self.commit_button.on_click(lambda _b: self.commit())
        self.discard_button.on_click(lambda _b: self.discard())
        # Shown after a refusal because another session took some accepted names.
        self.commit_rest_button = w.Button(
            description="Commit the rest",
            icon="forward",
            tooltip="commit without the names another session took meanwhile",
            layout=w.Layout(display="none", width="auto", **_FIXED),
        )
        self.commit_rest_button.on_click(lambda _b: self.commit_rest())
        self.clashes: tuple[str, ...] = ()
        self.summary = w.HTML(value="", layout=w.Layout(flex="1 1 0%", min_width="0"))
        self.result = w.HTML(value="")
        buttons = w.HBox(
            [self.commit_button, self.discard_button, self.commit_rest_button],
            layout=w.Layout(**_FIXED),
        )
        parts.append(
            w.HBox(
                [buttons, self.summary],
                layout=w.Layout(align_items="center", margin="6px 0 0 0", flex_flow="row nowrap"),
            )
        )
        parts.append(self.result)
        self.children = tuple(parts)
        self._update_summary()
        self._observing = self.batch.open
        if self._observing:
            self._registry.observe(self._on_state, names="state")
        else:
            self._show_outcome()

    def _scope_row(self, name: str) -> w.HBox:
        toggle = w.ToggleButtons(
            options=(("this project", PROJECT), ("user-wide", USER)),
            value=self.batch.scope_of(name),
            style={"button_width": _BUTTON_WIDTH, "description_width": "0px"},
            tooltips=(
                "keep it in this project's .memory",
                "keep it in your own memory, for every project (user_dir)",
            ),
            disabled=self.batch.item(name).replaces is not None,
            layout=w.Layout(width=_TOGGLES_WIDTH, min_width=_TOGGLES_WIDTH, **_FIXED),
        )
        toggle.add_class("ipymemory-scope")
        self.scope_choices[name] = toggle
        return w.HBox([toggle, html_text("where it is kept")], layout=_ROW)

    @property
    def chosen_scopes(self) -> dict[str, str]:
        """Where each item would be committed, as the toggles say."""
        return {name: toggle.value for name, toggle in self.scope_choices.items()}

    # --- the batch, as the registry reports it ----------------------------------------

    @property
    def status(self) -> BatchStatus:
        return self.batch.status

    @property
    def committed(self) -> tuple[str, ...]:
        return self.batch.committed

    @property
    def removed(self) -> tuple[str, ...]:
        return self.batch.removed

    def _on_state(self, change: dict[str, Any]) -> None:
        latest = change["new"].get(self.batch.id)
        if latest is None or latest == self.batch:
            return
        self.batch = latest
        if latest.open:  # a store failure: still decidable, the cause is shown
            self._lock_decided(latest)
            if latest.error:
                self._refused(latest.error)
            return
        self._decided_elsewhere = not self._deciding
        self._stop_observing()
        self._show_outcome()

    def _lock_decided(self, latest: PendingBatch) -> None:
        """Items a commit made elsewhere decided while held ones stayed pending here:
        each says what became of it, its toggle locked."""
        left = set(latest.names)
        for name, toggle in self.decisions.items():
            if name in left or toggle.disabled:
                continue
            decision = "rejected" if name in latest.rejected else "written"
            toggle.disabled = True
            toggle.layout.display = "none"
            self.outcomes[name].value = _wrapping(f"<b>{esc(decision)}</b>")
            self.outcomes[name].layout.display = ""
            self._strike(name, decision == "rejected")
        if self.plan_decision is not None and latest.plan is None:
            self.plan_decision.disabled = True
        self._update_summary()

    # --- the user's choices -------------------------------------------------------------

    def _heading(self) -> w.HTML:
        return html_block(f"<b>{esc(self._headline())}</b> {note_html(f'batch {self.batch.id}')}")

    def _headline(self) -> str:
        n = len(self.batch.items)
        proposer = agent_proposer(self.batch)
        kind = "proposed" if proposer else "extracted"
        what = f"{n} {kind} memor{'y' if n == 1 else 'ies'}"
        if proposer:
            what += f" from another agent ({proposer})"
        if self.batch.plan is not None:
            if n == 0:
                return f"Review a consolidation plan: {_plan_effect(self.batch.plan)}"
            what += " and a consolidation plan"
        return f"Review {what}"

    def _on_decision(self, record: MemoryRecord) -> None:
        self._strike(record.name, self.decisions[record.name].value == REJECT)
        self._update_summary()

    def _strike(self, name: str, struck: bool) -> None:
        label = record_label_html(*_label_parts(self._records[name]), struck=struck)
        self._labels[name].value = _wrapping(label + self._flag_html(name))

    def _flag_html(self, name: str) -> str:
        """Which record item ``name`` updates, and why screening flagged it -- or which
        rule let it through (empty if none of these)."""
        item = self.batch.item(name)
        old = item.replaces
        update = (
            f'<div class="ipm-note">\u21bb updates {esc(old)} (rejecting it keeps {esc(old)})</div>'
            if old is not None
            else ""
        )
        why = item.flags
        if not why:
            # Issue 39 item 3: the rules an item was let through by (none: none needed).
            allowed = _rules_html(item.findings)
            note = '<div class="ipm-note">\u2713 let through by a rule:</div>' if allowed else ""
            return update + note + allowed
        what = "REDACTED (accept commits the redacted text)" if item.redacted else "Held for review"
        rules = _rules_html(item.rules)
        return (
            update
            + f'<div class="ipm-error">\u26a0 {esc(what)}: {esc("; ".join(why))}</div>'
            + rules
        )

    @property
    def redacted_chosen(self) -> tuple[str, ...]:
        """Redacted items the reviewer accepted (their redacted text is committed)."""
        rejected = set(self.rejected)
        return tuple(
            i.name
            for i in self.batch.proposed
            if i.redacted and i.name in self.decisions and i.name not in rejected
        )

    def _update_summary(self) -> None:
        """What Commit would do to the set now, so the choice is visible before
        clicking: the net change of the set, and a plan that no longer fits the
        decisions (it merges an item you rejected) said plainly, Commit disabled."""
        if not self.batch.open:
            self.summary.value = ""
            return
        effect = commit_effect(self.batch, self.decision)
        self.commit_button.disabled = effect.conflict is not None
        if effect.conflict is not None:
            plan = self.batch.plan
            sources = plan.source_names if plan is not None else ()
            consumed = [n for n in sources if n in self.rejected]
            names = ", ".join(consumed)
            self.summary.value = html_text(
                f"The plan merges {names}, which you rejected: applying it would drop "
                f"{'it' if len(consumed) == 1 else 'them'} with the rest. Accept "
                f"{names} again, or reject the plan (its items are then written as they are).",
                cls="ipm-error",
            ).value
            return
        detail = [f"writes {len(effect.added)}"]
        if effect.replaced:
            detail.append(f"replaces {len(effect.replaced)} of the set")
        if effect.merged:
            n = len(effect.merged)
            detail.append(f"merges {n} new item{'' if n == 1 else 's'} into the plan")
        if self.rejected:
            detail.append(f"rejects {len(self.rejected)}")
        if self.plan_decision is not None and not self.plan_accepted:
            detail.append("skips the plan")
        text = f"Commit: {effect.before} → {_records(effect.after)} ({'; '.join(detail)})"
        self.summary.value = block_html(note_html(text))

    @property
    def rejected(self) -> tuple[str, ...]:
        left = set(self.batch.names)
        return tuple(n for n, t in self.decisions.items() if t.value == REJECT and n in left)

    @property
    def plan_accepted(self) -> bool:
        if self.batch.plan is None:
            return self.plan_decision is None
        return self.plan_decision is None or self.plan_decision.value == ACCEPT

    @property
    def accepted_held(self) -> tuple[str, ...]:
        """Held items the reviewer ticked: the explicit choice that commits them."""
        rejected = set(self.rejected)
        return tuple(i.name for i in self.batch.proposed if i.held and i.name not in rejected)

    @property
    def decision(self) -> Decision:
        """The decision the controls say now (what Commit would commit)."""
        return self._decision_rejecting(self.rejected)

    def _decision_rejecting(self, reject: tuple[str, ...]) -> Decision:
        plan = PlanChoice.LEAVE
        if self.plan_accepted:
            plan = PlanChoice.ACCEPT if self.batch.plan_held else PlanChoice.APPLY
        names = set(self.batch.names)
        return Decision(
            reject=reject,
            accept=tuple(n for n in self.accepted_held if n not in reject),
            redacted=tuple(n for n in self.redacted_chosen if n not in reject),
            plan=plan,
            scopes={
                n: v
                for n, v in self.chosen_scopes.items()
                if n in names and self.batch.item(n).replaces is None
            },
        )

    def commit(self) -> None:
        """Commit the accepted items (and the plan if accepted).

        The outcome arrives through the registry. A refused commit writes nothing and
        leaves the controls enabled: change the choices (e.g. reject the plan) and
        commit again, or discard.
        """
        if not self.batch.open:
            return
        self._commit(self.rejected)

    def commit_rest(self) -> None:
        """After a refusal because another session committed some of the accepted
        names: commit the others (those names count as rejected here)."""
        if self.batch.open and self.clashes:
            self._commit(tuple(dict.fromkeys((*self.rejected, *self.clashes))))

    def _commit(self, reject: tuple[str, ...]) -> None:
        self._deciding = True
        try:
            result = self._session.commit(self.batch, self._decision_rejecting(reject))
        except (BatchError, MemoryStoreError) as e:
            self._refused(str(e))
            return
        finally:
            self._deciding = False
        if result.error:
            self._refused(result.error)

    def discard(self) -> None:
        """Drop the batch: nothing is written."""
        if not self.batch.open:
            return
        self._deciding = True
        try:
            self._session.discard(self.batch)
        except (BatchError, MemoryStoreError) as e:
            self._refused(str(e), action="Discard")
        finally:
            self._deciding = False

    # --- showing ------------------------------------------------------------------------

    def _outcome(self) -> str:
        if self.status is BatchStatus.DISCARDED:
            return "Discarded: nothing was written."
        if self.batch.present and not self.committed:
            return BatchView.of(self.batch)._outcome() or "Nothing written."
        msg = "Committed: " + (", ".join(self.committed) if self.committed else "nothing")
        if self.removed:
            msg += "; replaced: " + ", ".join(self.removed)
        return msg

    def _refused(self, message: str, *, action: str = "Commit") -> None:
        self.error = message
        self.clashes = self._taken_names() if action == "Commit" else ()
        advice = "change your choices and commit again, or discard"
        if self.clashes:
            advice = (
                f"another session committed {', '.join(self.clashes)} meanwhile: "
                "Commit the rest writes the others"
            )
        self.commit_rest_button.layout.display = "" if self.clashes else "none"
        self.result.value = html_text(
            f"{action} refused: {message} (nothing was written; {advice})",
            cls="ipm-error",
        ).value

    def _taken_names(self) -> tuple[str, ...]:
        """Accepted names the set now holds (committed by someone else meanwhile)."""
        try:
            current = {record.name for record in self._session.store.records()}
        except MemoryStoreError:
            return ()
        return tuple(n for n in self.decisions if n not in self.rejected and n in current)

    def _show_outcome(self) -> None:
        """The batch was decided: each item says what became of it (written, merged,
        rejected, discarded) in place of its toggle; the controls are locked."""
        view = BatchView.of(self.batch)
        for name, toggle in self.decisions.items():
            toggle.value = REJECT if name in self.batch.rejected else ACCEPT
            decision = view.decision(name)
            toggle.layout.display = "none"
            outcome = self.outcomes[name]
            outcome.value = _wrapping(f"<b>{esc(decision)}</b>")
            outcome.layout.display = ""
            self._strike(name, decision in ("rejected", "discarded"))
        if self.plan_decision is not None:
            self.plan_decision.value = ACCEPT if self.batch.plan_accepted else REJECT
        self.commit_rest_button.layout.display = "none"
        for control in (
            *self.decisions.values(),
            *self.scope_choices.values(),
            self.plan_decision,
            self.commit_button,
            self.discard_button,
            self.commit_rest_button,
        ):
            if control is not None:
                control.disabled = True
        self.error = None
        self.summary.value = ""
        self.result.value = html_text(self._outcome()).value
        bundle = self.static_view().bundle()
        for handle in self._handles:
            update_bundle(handle, bundle, outcome=True)
        for hook in self._when_decided:
            hook()

    def static_view(self) -> StaticView:
        if not self.batch.open and self._decided_elsewhere:
            # Where it was proposed: the proposal, then what a later cell decided.
            view = BatchView.of(self._proposed)
            view.later = BatchView.of(self.batch)._outcome() or str(self.batch.status)
            return view
        if not self.batch.open:
            return BatchView.of(self.batch)
        # Pending: the choices as they stand in the widget.
        return BatchView.of(self.batch, self.decision)

    def _stop_observing(self) -> None:
        if self._observing:
            self._observing = False
            self._registry.unobserve(self._on_state, names="state")

    def close(self) -> None:
        self._stop_observing()
        super().close()

    def _ipython_display_(self) -> None:
        # Keep the handle so the outcome can replace this output (see module docstring).
        handle = display_bundle(self._repr_mimebundle_() or {})
        if handle is not None:
            self.shown_in(handle)

    def on_decided(self, hook: Callable[[], None]) -> None:
        """Call ``hook`` once the batch is decided (here or elsewhere): whoever shows
        this widget among other outputs redraws them with its outcome."""
        self._when_decided.append(hook)

    def shown_in(self, handle: DisplayHandle) -> None:
        """This widget is what ``handle``'s output shows (put there by its owner, e.g. a
        turn's memory work after the cell ended): the outcome replaces it too."""
        self._handles.append(handle)


def _rules_html(findings: Sequence[Finding]) -> str:
    """The rules that fired on an item, each with its evidence (issue 39 item 3)."""
    if not findings:
        return ""
    rows = "".join(
        f"<li><code>{esc(f.rule_id)}</code>{': ' + esc(f.evidence) if f.evidence else ''}</li>"
        for f in findings
    )
    return f'<ul class="ipm-rules">{rows}</ul>'
