"""The batch view (an extracted batch and/or a consolidation plan) and the plan's diff view."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..review import BatchStatus, Decision, Door, Item, PlanChoice
from ..review.commit import commit_effect
from ..review.decision import PLAN_NAME
from ..review.listing import TERMINAL, decide_line, reopen_line
from ..review.scopes import USER
from ..screen.rules import Finding, findings_of_reasons, findings_to_json
from ..store.record import MemoryRecord
from ._static import (
    StaticView,
    esc,
    plain_table,
    record_rows_html,
    table_head_html,
    table_rows_html,
)

if TYPE_CHECKING:
    from ..review.batch import PendingBatch

__all__ = ["NOTHING_TO_MERGE", "BatchView", "ConsolidationPlanView", "Standing", "agent_proposer"]

#: How an empty plan reads (SPEC §9): a successful consolidation that changes nothing.
NOTHING_TO_MERGE = (
    "Nothing to merge: the consolidator found no records to combine. Committing notes "
    "that in the history (the set does not change), so the next consolidation waits "
    "for new records."
)

#: Nothing decided yet: every item as proposed, the plan applied; pending, no id.
_AS_PROPOSED = Decision()

_REVIEW_HINT = "Review it: %memory commit [--reject NAME …] [--no-plan]  or  %memory discard"
# What a saved notebook shows for a batch still pending when it was saved: its kernel
# (and the live widget) may be gone, the batch itself is kept in .memory/pending/.
_RESUME_HINT = (
    "{lead} Decide it with the widget or {review}; after a "
    "kernel restart, %memory pending lists it and {reopen} reopens it."
)
# What a pending batch has written so far: nothing, or (a commit that left the held
# items pending, issue 43) nothing of what is still in it.
_NOTHING_YET = "Pending: nothing was written."
_REST_WAITS = "The held items wait in the same batch: nothing of them was written."

_ITEM_COLUMNS = (
    ("decision", "Decision"),
    ("name", "Name"),
    ("type", "Type"),
    ("description", "Description"),
)
_DIFF_COLUMNS = (
    ("sign", ""),
    ("name", "Name"),
    ("type", "Type"),
    ("description", "Description"),
)


class ConsolidationPlanView(StaticView):
    """A plan as a diff: the source records it replaces (-) and the records it adds (+).

    ``sources`` are the current records named by ``source_names`` when known (a name
    without its record is still listed).
    """

    view_name = "consolidation"

    def __init__(
        self,
        source_names: Sequence[str],
        records: Sequence[MemoryRecord],
        *,
        sources: Sequence[MemoryRecord] = (),
        accepted: bool = True,
        held: tuple[tuple[str, ...], tuple[Finding, ...]] = ((), ()),
    ) -> None:
        #: Why screening holds the plan, and which rules (empty: it does not).
        self.flags, self.findings = held
        self.source_names = tuple(source_names)
        self.records = tuple(records)
        by_name = {r.name: r for r in sources}
        self.sources = tuple(by_name[n] for n in self.source_names if n in by_name)
        self._by_name = by_name
        self.accepted = accepted

    @classmethod
    def of(cls, batch: PendingBatch, *, accepted: bool = True) -> ConsolidationPlanView | None:
        """The diff view of ``batch``'s plan (None without one); sources are looked up
        in the set the plan was made on and the batch's own items."""
        if batch.plan is None:
            return None
        return cls(
            batch.plan.source_names,
            batch.plan.records,
            sources=(*batch.base, *batch.items),
            accepted=accepted,
            held=(batch.plan_flags, batch.plan_findings),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "consolidation",
            "source_names": list(self.source_names),
            "sources": [r.to_json() for r in self.sources],
            "records": [r.to_json() for r in self.records],
            "accepted": self.accepted,
        }

    def plan_json(self) -> dict[str, Any]:
        """The ``consolidation`` member of a batch view."""
        # "sources" (additive) lets a renderer show what each replaced name was, also
        # after the commit, when those records are gone from the set.
        return {
            "source_names": list(self.source_names),
            "sources": [r.to_json() for r in self.sources],
            "records": [r.to_json() for r in self.records],
            "accepted": self.accepted,
        }

    @property
    def empty(self) -> bool:
        """The consolidator's "nothing to merge" (SPEC §9): a plan that changes nothing."""
        return not self.source_names and not self.records

    def diff_lines(self) -> list[str]:
        if self.empty:
            return [NOTHING_TO_MERGE]
        lines = []
        for name in self.source_names:
            known = self._by_name.get(name)
            lines.append(f"- {name}" + (f": {known.description}" if known else ""))
        lines.extend(f"+ {r.name} ({r.type.value}): {r.description}" for r in self.records)
        return lines

    def _headline(self) -> str:
        verdict = "accepted" if self.accepted else "rejected"
        if self.empty:
            return f"Consolidation ({verdict}): nothing to merge"
        return (
            f"Consolidation ({verdict}): replaces {len(self.source_names)} "
            f"record{'' if len(self.source_names) == 1 else 's'} with {len(self.records)}"
        )

    def to_text(self) -> str:
        return "\n".join([self._headline(), *self.diff_lines()])

    def diff_html(self) -> str:
        """The plan as one diff table (shared columns line up): the records it replaces,
        marked with a minus sign, then the records it adds, marked "+"."""
        if self.empty:
            return f'<div class="ipm-note">{esc(NOTHING_TO_MERGE)}</div>'
        removed: list[dict[str, str]] = []
        for name in self.source_names:
            known = self._by_name.get(name)
            row = known.to_json() if known else {"name": name, "type": "", "description": ""}
            removed.append({"sign": "\u2212", **row})
        added = [{"sign": "+", **r.to_json()} for r in self.records]
        span = len(_DIFF_COLUMNS)

        def section(label: str) -> str:
            return f'<tr><td colspan="{span}" class="ipm-section">{esc(label)}</td></tr>'

        return (
            f"<table>{table_head_html(_DIFF_COLUMNS)}<tbody>"
            f"{section(f'Replaces {len(removed)}:')}"
            f"{table_rows_html(removed, _DIFF_COLUMNS, row_class=lambda _r: 'ipm-row-del')}"
            f"{section(f'Adds {len(added)}:')}"
            f"{table_rows_html(added, _DIFF_COLUMNS, row_class=lambda _r: 'ipm-row-add')}"
            "</tbody></table>"
        )

    def _html_body(self) -> str:
        return f"<div><b>{esc(self._headline())}</b></div>{self.diff_html()}"


@dataclass(frozen=True)
class Standing:
    """Where a shown batch stands: its ``status``, what a commit ``committed`` from it,
    the last ``error``, its id (``batch_id``), the set's size before and after a
    commit as chosen (``net``: shown while a plan is open, where "N items" alone would
    hide what the merge does to the set, issue 14 #4), who proposed it when another
    agent did (``proposer``), and whether it is shown on the command line (the hint
    names its commands, not the notebook's)."""

    status: BatchStatus = BatchStatus.PENDING
    committed: tuple[str, ...] = ()
    error: str | None = None
    batch_id: str | None = None
    net: tuple[int, int] | None = None
    proposer: Door | None = None
    command_line: bool = False
    #: Accepted items memory already held as proposed: nothing was written for them.
    present: tuple[str, ...] = ()


_PENDING = Standing()


class BatchView(StaticView):
    """A batch waiting for review, or its outcome: its items (each with what screening
    found: why it needs a person, its rules, whether it is redacted, what it updates,
    its scope), its plan's diff, the ``decision`` so far (what is rejected, the plan
    applied or not) and where it stands (:class:`Standing`). An item held for a person
    that the decision does not name is committed only when accepted by name (issue 28
    item 0).
    """

    view_name = "batch"

    def __init__(
        self,
        items: Sequence[Item | MemoryRecord],
        *,
        plan: ConsolidationPlanView | None = None,
        decision: Decision = _AS_PROPOSED,
        standing: Standing = _PENDING,
    ) -> None:
        self.proposed = tuple(Item.of(item) for item in items)
        self.items = tuple(item.record for item in self.proposed)
        self.plan = plan
        self.standing = standing
        self.status = BatchStatus(standing.status)
        self.committed = standing.committed
        self.error = standing.error
        self.batch_id = standing.batch_id
        self.net = standing.net
        self.proposer = standing.proposer
        self.command_line = standing.command_line
        self.present = standing.present
        #: How a command in a later cell decided this batch ("Committed: …"): where it
        #: was proposed, the view still reads as the proposal, then says so (issue 43).
        self.later: str | None = None
        self.rejected = frozenset(decision.reject)
        named = {*decision.reject, *decision.accept}
        self.held = frozenset(
            i.name for i in self.proposed if i.held and i.name not in named and self.status.open
        )
        #: Why screening wants a person, per item (and the plan, by ``PLAN_NAME``).
        self.flags = {i.name: i.flags for i in self.proposed if i.flags}
        #: Issue 39: per flagged item (or the plan), which rules fired and on what; per
        #: item let through by a rule that allows, that rule.
        self.findings = {i.name: i.rules for i in self.proposed if i.flagged or i.findings}
        self.redacted = frozenset(i.name for i in self.proposed if i.redacted)
        self.replaces = {i.name: i.replaces for i in self.proposed if i.replaces is not None}
        #: The items committed to the user scope (SPEC §11); the others to the project.
        self.user_wide = frozenset(i.name for i in self.proposed if i.scope == USER)
        if plan is not None and plan.flags:
            self.flags[PLAN_NAME] = plan.flags
            self.findings[PLAN_NAME] = plan.findings or findings_of_reasons(plan.flags)
        self.findings = {n: f for n, f in self.findings.items() if f}

    @classmethod
    def of(
        cls, batch: PendingBatch, decision: Decision | None = None, *, command_line: bool = False
    ) -> BatchView:
        """The static view of ``batch`` as the session last recorded it; ``decision``
        stands for its recorded one (a review's choices before Commit)."""
        if decision is None:
            # Open: a redacted item is committed only on an explicit choice (SPEC §7).
            rejected = (*batch.rejected, *batch.redacted) if batch.open else batch.rejected
            choice = PlanChoice.APPLY if batch.plan_accepted else PlanChoice.LEAVE
            decision = Decision(reject=rejected, plan=choice)
        net = None
        if batch.open and batch.plan is not None and batch.history is None:
            effect = commit_effect(batch, decision)
            net = None if effect.conflict else (effect.before, effect.after)
        standing = Standing(
            batch.status,
            batch.committed,
            batch.error or batch.plan_error,
            batch.id,
            net,
            agent_proposer(batch),
            command_line,
            batch.present,
        )
        plan = ConsolidationPlanView.of(batch, accepted=decision.applies_plan)
        return cls(batch.proposed, plan=plan, decision=decision, standing=standing)

    def net_line(self) -> str | None:
        """``Commit as chosen: 4 → 8 records`` while a plan is open (None otherwise)."""
        if self.net is None or not self.status.open:
            return None
        before, after = self.net
        return f"Commit as chosen: {before} → {after} record{'' if after == 1 else 's'}"

    def update_lines(self) -> list[str]:
        """One line per item that updates a current record: which one it replaces."""
        return [
            f"\u21bb {name} updates {old}" + (" (kept: rejected)" if name in self.rejected else "")
            for name, old in self.replaces.items()
        ]

    def scope_lines(self) -> list[str]:
        """The items that go to the user scope (SPEC §11), when there are any."""
        if not self.user_wide:
            return []
        names = ", ".join(r.name for r in self.items if r.name in self.user_wide)
        return [f"↑ user-wide (your own memory, every project): {names}"]

    def allowed_lines(self) -> list[str]:
        """One line per item screening let through only by a rule that allows (issue 39
        item 3): which rules, on what words."""
        return [
            f"\u2713 {name} (let through by a rule): " + "; ".join(f.describe() for f in found)
            for name, found in self.findings.items()
            if name not in self.flags and name != PLAN_NAME and found
        ]

    def flag_lines(self) -> list[str]:
        """One line per item (or the plan) screening flagged: why it needs a person."""
        lines = []
        for name, why in self.flags.items():
            label = "redacted" if name in self.redacted else "held for review"
            lines.append(f"\u26a0 {name} ({label}): {'; '.join(why)}")
            found = self.findings.get(name)
            if found:
                lines.append("    rules: " + "; ".join(f.describe() for f in found))
        front = "ipymemory" if self.command_line else "%memory"
        where = f" --batch {self.batch_id}" if self.command_line and self.batch_id else ""
        if self.redacted and self.status.open:
            lines.append(
                "Redacted items are committed only when chosen: "
                f"{front} commit{where} --redacted NAME (the redacted text, never the credential)"
            )
        if self.held and self.status.open:
            lines.append(
                "Held items are committed only when named: "
                f"{front} commit{where} --accept NAME (a plain commit leaves them pending)"
            )
        return lines

    def decision(self, name: str) -> str:
        """What became of item ``name``: while open the choice so far (``accept`` /
        ``reject``); then ``written``, ``rejected``, ``merged`` (an accepted plan
        replaced it by its records) or ``discarded`` (the whole batch was dropped)."""
        if self.status.open:
            if name in self.rejected:
                return "reject"
            return "held" if name in self.held else "accept"
        if self.status is BatchStatus.DISCARDED:
            return "discarded"
        if name in self.rejected:
            return "rejected"
        if name in self.present:
            return "already there"
        return "written" if name in self.committed else "merged"

    def hint(self) -> str | None:
        """How to decide a batch still pending (None once decided); for a proposal a
        later cell decided, what it decided."""
        if self.later:
            return f"Proposed here; decided later, in another cell: {self.later}"
        if not self.status.open:
            return None
        lead = _REST_WAITS if self.committed or self.present else _NOTHING_YET
        if self.command_line and self.batch_id is not None:
            return f"{lead} Decide it: {decide_line(TERMINAL, self.batch_id)}"
        review = "%memory commit [--reject NAME …] [--no-plan] / %memory discard"
        if self.batch_id is None:
            return _REVIEW_HINT
        return _RESUME_HINT.format(lead=lead, review=review, reopen=reopen_line(self.batch_id))

    def _item_rows(self) -> list[dict[str, str]]:
        return [{"decision": self.decision(r.name), **r.to_json()} for r in self.items]

    def to_json(self) -> dict[str, Any]:
        return {
            "view": "batch",
            "status": self.status,
            "items": [
                {
                    **r.to_json(),
                    "accepted": r.name not in self.rejected
                    and not (self.status.open and r.name in self.held),
                    "decision": self.decision(r.name),
                    # (additive: an update of a current record, SPEC §9)
                    **({"replaces": self.replaces[r.name]} if r.name in self.replaces else {}),
                    # (additive, SPEC §11: only an item that goes to the user scope)
                    **({"scope": "user"} if r.name in self.user_wide else {}),
                }
                for r in self.items
            ],
            # (additive: items held for a person that no decision named yet)
            **({"held": sorted(self.held)} if self.held and self.status.open else {}),
            "consolidation": None if self.plan is None else self.plan.plan_json(),
            # (additive, only when screening flagged something: SPEC §7)
            **({"flags": {n: list(why) for n, why in self.flags.items()}} if self.flags else {}),
            # (additive, issue 39: the rules that fired, with their evidence)
            **(
                {"findings": {n: findings_to_json(f) for n, f in self.findings.items()}}
                if self.findings
                else {}
            ),
            **({"redacted": sorted(self.redacted)} if self.redacted else {}),
            "committed": list(self.committed),
            # (additive, issue 43) what the text and HTML forms say beside the table, as
            # they say it: updates, items kept user-wide, flags; and the outcome.
            "notes": [
                *self.update_lines(),
                *self.scope_lines(),
                *self.allowed_lines(),
                *self.flag_lines(),
            ],
            "outcome": self._outcome(),
            **({"present": list(self.present)} if self.present else {}),
            "error": self.error,
            "id": self.batch_id,
            "hint": self.hint(),
            **(
                {"net": {"before": self.net[0], "after": self.net[1]}}
                if self.net is not None and self.status.open
                else {}
            ),
        }

    def _headline(self) -> str:
        n = len(self.items)
        what = f"{n} {'proposed' if self.proposer else 'extracted'} memor{'y' if n == 1 else 'ies'}"
        if self.proposer:
            what += f" from another agent ({self.proposer})"
        if self.plan is not None:
            # An on-demand consolidation extracts nothing: do not lead with "0 extracted".
            what = f"{what} + a consolidation plan" if n else "a consolidation plan"
        status = "proposed here" if self.later else self.status
        return f"Memory batch ({status}): {what}"

    def _outcome(self) -> str | None:
        already = (
            f"already in memory as proposed, not written again: {', '.join(self.present)}"
            if self.present
            else None
        )
        if self.status is BatchStatus.COMMITTED and already and not self.committed:
            return f"Nothing written: {already}."
        if self.status is BatchStatus.COMMITTED:
            done = "Committed: " + (", ".join(self.committed) if self.committed else "nothing")
            return f"{done}; {already}" if already else done
        if self.status is BatchStatus.DISCARDED:
            return "Discarded: nothing was written."
        if self.committed or already:  # a commit left the held items pending here
            wrote = f"Committed: {', '.join(self.committed)}" if self.committed else None
            said = "; ".join(part for part in (wrote, already) if part)
            said = said[:1].upper() + said[1:]
            return f"{said}; still held for review (pending): " + ", ".join(
                r.name for r in self.items
            )
        return None

    def to_text(self) -> str:
        lines = [self._headline()]
        if self.error:
            lines.append(f"Error: {self.error}")
        if self.items:
            keys = ("decision", "name", "type", "description")
            rows = [[r[k] for k in keys] for r in self._item_rows()]
            lines.append(plain_table(rows, [label for _, label in _ITEM_COLUMNS]))
        lines.extend(self.update_lines())
        lines.extend(self.scope_lines())
        lines.extend(self.allowed_lines())
        lines.extend(self.flag_lines())
        if self.plan is not None:
            lines.append(self.plan.to_text())
        net = self.net_line()
        if net:
            lines.append(net)
        outcome = self._outcome()
        hint = self.hint()
        if outcome:
            lines.append(outcome)
        if hint and (not outcome or self.status.open):
            lines.append(hint)
        return "\n".join(lines)

    def _html_body(self) -> str:
        parts = [f'<div data-status="{esc(self.status)}"><b>{esc(self._headline())}</b></div>']
        if self.error:
            parts.append(f'<div class="ipm-error">{esc(self.error)}</div>')
        if self.items:
            parts.append(
                record_rows_html(
                    self._item_rows(),
                    _ITEM_COLUMNS,
                    row_class=lambda r: (
                        "ipm-rejected"
                        if r["decision"] in ("reject", "rejected", "discarded", "held")
                        else None
                    ),
                )
            )
        parts.extend(f'<div class="ipm-note">{esc(line)}</div>' for line in self.update_lines())
        parts.extend(f'<div class="ipm-note">{esc(line)}</div>' for line in self.scope_lines())
        parts.extend(f'<div class="ipm-note">{esc(line)}</div>' for line in self.allowed_lines())
        parts.extend(f'<div class="ipm-error">{esc(line)}</div>' for line in self.flag_lines())
        if self.plan is not None:
            parts.append(f'<div class="ipm-section">{esc(self.plan._headline())}</div>')
            parts.append(self.plan.diff_html())
        net = self.net_line()
        if net:
            parts.append(f'<div class="ipm-section">{esc(net)}</div>')
        outcome = self._outcome()
        hint = self.hint()
        if outcome:
            parts.append(f"<div>{esc(outcome)}</div>")
        if hint and (not outcome or self.status.open):  # what a frontend without widgets shows
            parts.append(f'<div class="ipm-note">{esc(hint)}</div>')
        return "".join(parts)


def agent_proposer(batch: PendingBatch) -> Door | None:
    """``mcp`` / ``memory-tool`` when another agent proposed ``batch`` (SPEC §10)."""
    via = batch.provenance.via if batch.provenance is not None else None
    return via if via is not None and via.agent else None
