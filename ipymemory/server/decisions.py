"""Deciding a pending batch in the Lab panel: one batch's review, then commit or discard.

:func:`read_review` is a read like the listing's (nothing written, expired batches left
alone): the batch as ``commit --batch ID`` would find it (reopened as the command layer
reopens it, into a registry of its own), its items and plan, and what screening holds
for a person. :func:`decide` commits or discards it through the command layer -- what
``commit --batch`` and ``discard --batch`` do once they have parsed their options
(:func:`~ipymemory.commands.changing.commit_decided`) -- with the panel's choices as a
:class:`~ipymemory.review.decision.Decision`, decided in the Lab panel
(``decided_by: lab-panel`` in the journal). There is no other commit path here: what
the command layer checks and refuses, the panel gets.

A :class:`PanelRequest` is the panel's request, checked in one place: item names are
values of the decision, never words a parser reads (a name cannot pass for an option).
Every failure is a ``(status, payload)`` with ``error`` set, the store
unchanged: 400 a malformed request, 404 no such batch pending, 409 a batch decided
elsewhere meanwhile or a commit the store refused (a conflict), 500 the server's own
settings or disk.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..commands import Context, static_form
from ..commands.changing import commit_decided, discard_decided
from ..commands.common import pending_batch
from ..config import Settings
from ..errors import CommandError, CommandUsageError, IPyMemoryError, MemoryConfigError
from ..review import BatchRegistry, DecidedBy, Decision, PendingBatch, PlanChoice
from ..review.pending import PendingFiles
from ..review.scopes import read_scopes
from ..store.history import HistoryEntry
from ..store.names import is_valid_name
from ..store.store import MemoryStore
from ..views import BatchView
from ..views.history import describe_actor
from .listing import Refusal, Workspace, escaping_link

__all__ = ["PanelRequest", "decide", "held_items", "read_review"]

_log = logging.getLogger(__name__)

# How far back the journal is searched for a batch committed elsewhere meanwhile.
_JOURNAL_LOOKBACK = 200

Action = Literal["commit", "discard"]


def held_items(batch: PendingBatch) -> tuple[list[str], bool]:
    """(the items screening holds for a person, not redacted; whether the plan is held).

    The panel shows them unticked; a tick is the explicit choice that commits one
    (``accept``), as a redacted item's is (``redacted``)."""
    return [item.name for item in batch.proposed if item.held], batch.plan_held


def _not_found(ws: Workspace, batch_id: str) -> str:
    return (
        f"no batch {batch_id!r} awaits review in {ws.rel_memory}: it was decided or "
        "discarded elsewhere, expired, or never existed; nothing was changed"
    )


def read_review(
    ws: Workspace, batch_id: str, user: MemoryStore | None
) -> tuple[int, dict[str, Any]]:
    """Batch ``batch_id`` of ``ws``'s ``pending/`` for review, as ``(status, payload)``:
    ``batch`` is its batch view (the JSON the notebook's renderer shows), ``held`` the
    items screening holds for a person (``plan_held`` the plan, ``plan_reasons`` why),
    ``change`` an undo or restore proposal's title, ``agent`` who proposed it when
    another agent did. Nothing is written."""
    base: dict[str, Any] = {"directory": ws.rel, "batch": None, "error": None}
    refusal = escaping_link(ws)
    if refusal is not None:
        return refusal.status, {**base, "error": refusal.message}
    files = PendingFiles(ws.memory_dir)
    saved, _problems = files.load(prune=False)
    entry = next((e for e in saved if e.batch.id == batch_id), None)
    if entry is None:
        return 404, {**base, "error": _not_found(ws, batch_id)}
    store = MemoryStore(ws.directory)
    try:
        # Reopened as `commit --batch ID` reopens it (a plan made on records that changed
        # since is dropped), into a registry of its own: nothing follows it to disk.
        current = read_scopes(store, user).records
        batch = files.reopen(entry, current, BatchRegistry(), store)
    except IPyMemoryError as e:
        return 200, {**base, "error": ws.scrub(str(e))}
    held, plan_held = held_items(batch)
    via = None if batch.provenance is None else batch.provenance.via
    return 200, {
        **base,
        "batch": BatchView.of(batch, command_line=True).to_json(),
        "held": held,
        "plan_held": plan_held,
        "plan_reasons": list(batch.plan_flags),
        # An undo or restore proposal: what it does (it has no items).
        "change": None if batch.history is None else batch.history.title,
        "agent": via if via is not None and via.agent else None,
    }


@dataclass(frozen=True)
class PanelRequest:
    """What the panel asks: ``commit`` batch ``batch`` of directory ``path`` as
    ``decision`` says -- minus its ``reject``, with the redacted items and the held
    ones it names (each ticked by the person), the plan unless left out (a held plan
    ticked: accepted) -- or ``discard`` it (``decision`` None). The request's fields are
    ``commit --batch``'s options."""

    action: Action
    path: str
    batch: str
    decision: Decision | None = None

    @classmethod
    def parse(cls, action: Action, body: object) -> PanelRequest | Refusal:
        """The request in a JSON ``body``, or a 400 naming what is wrong."""
        if not isinstance(body, Mapping):
            return Refusal(400, "the request body must be a JSON object")
        known = {"path", "batch"} | (
            {"reject", "redacted", "accept", "no_plan", "accept_plan"}
            if action == "commit"
            else set()
        )
        unknown = sorted(set(body) - known)
        if unknown:
            return Refusal(400, f"unknown field(s) for {action}: {', '.join(unknown)}")
        path, batch = body.get("path", ""), body.get("batch")
        if not isinstance(path, str):
            return Refusal(400, "path must be a string (a directory under the server root)")
        if not isinstance(batch, str) or not batch:
            return Refusal(400, "batch must be the id of a pending batch")
        if action != "commit":
            return cls(action, path, batch)
        decision = _decision(body)
        return decision if isinstance(decision, Refusal) else cls(action, path, batch, decision)


def _decision(body: Mapping[str, Any]) -> Decision | Refusal:
    """The choices of a commit request, or a 400 naming what is wrong."""
    names: dict[str, tuple[str, ...]] = {}
    for key in ("reject", "redacted", "accept"):
        value = body.get(key, [])
        if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
            return Refusal(400, f"{key} must be a list of item names")
        bad = [n for n in value if not is_valid_name(n)]
        if bad:
            return Refusal(400, f"{key}: {', '.join(map(repr, bad))} is not an item name")
        names[key] = tuple(dict.fromkeys(value))
    both = sorted(set(names["reject"]) & {*names["redacted"], *names["accept"]})
    if both:
        return Refusal(400, f"{', '.join(both)}: both rejected and accepted")
    # The panel's wire names (its request is `commit --batch`'s options).
    leave, accept = body.get("no_plan", False), body.get("accept_plan", False)
    if not isinstance(leave, bool) or not isinstance(accept, bool):
        return Refusal(400, "no_plan and accept_plan must be true or false")
    if leave and accept:
        return Refusal(400, "no_plan and accept_plan: choose one")
    plan = PlanChoice.LEAVE if leave else PlanChoice.ACCEPT if accept else PlanChoice.APPLY
    # A held item is committed only when named (issue 28: --accept NAME, --accept-plan):
    # a tick on it is that naming.
    return Decision(
        reject=names["reject"],
        accept=names["accept"],
        redacted=names["redacted"],
        plan=plan,
        decided_by=DecidedBy.LAB_PANEL,
    )


def _committed_meanwhile(store: MemoryStore, batch_id: str) -> HistoryEntry | None:
    """The journal entry of batch ``batch_id``'s commit, when one of the newest has it."""
    try:
        entries = store.history(_JOURNAL_LOOKBACK)
    except IPyMemoryError:
        return None  # the not-found message stands alone
    return next((e for e in entries if e.actor.get("batch") == batch_id), None)


def decide(ws: Workspace, settings: Settings, request: PanelRequest) -> tuple[int, dict[str, Any]]:
    """Run ``request`` through the command layer (see the module docstring): the
    command's view (``view``, its JSON) and, when it failed, ``error``."""
    base: dict[str, Any] = {"directory": ws.rel, "batch": request.batch, "view": None}
    refusal = escaping_link(ws)
    if refusal is not None:
        return refusal.status, {**base, "error": refusal.message}
    ctx = Context(settings)
    if not PendingFiles(ws.memory_dir).holds(request.batch):
        done = _committed_meanwhile(ctx.store, request.batch)
        if done is None:
            return 404, {**base, "error": _not_found(ws, request.batch)}
        return 409, {
            **base,
            "error": f"batch {request.batch} was already committed elsewhere (history "
            f"#{done.seq}, by {describe_actor(done.actor)}); nothing was changed",
        }
    try:
        batch = pending_batch(ctx, request.batch)
        assert batch is not None  # an id was given: found, or a command error
        decided = (
            discard_decided(ctx, batch)
            if request.decision is None
            else commit_decided(ctx, batch, request.decision)
        )
        view = static_form(decided)
    except CommandUsageError as e:
        return 400, {**base, "error": ws.scrub(str(e))}
    except MemoryConfigError as e:
        return 500, {**base, "error": ws.scrub(f"ipymemory's settings: {e}")}
    except (CommandError, IPyMemoryError) as e:
        # Decided elsewhere between the check and the command, or the store refused.
        return 409, {**base, "error": ws.scrub(str(e) or type(e).__name__)}
    except OSError as e:
        return 500, {**base, "error": ws.scrub(f"{request.action} failed: {e}")}
    failure = view.failure()
    payload = {**base, "view": view.to_json(), "error": None if failure is None else failure}
    return (200 if failure is None else 409), payload
