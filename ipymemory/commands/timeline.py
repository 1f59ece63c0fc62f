"""Subcommands over the history journal (SPEC §6): history, diff, undo, restore.

``undo`` and ``restore`` apply at once on the command line (each is one commit with
its own journal entry, so it can itself be undone); in a notebook they are proposed as
a batch that waits for Commit / ``%memory commit``, like any other change.
"""

from __future__ import annotations

import argparse

from .. import _constants as C
from ..errors import CommandError, CommandUsageError, MemoryStoreError
from ..review.batch import PendingBatch
from ..review.door import Door
from ..review.history_change import HistoryOp, plan_history_change
from ..store.history import actor_info
from ..store.store import MemoryStore
from ..views import MessageView, ScopedView
from ..views.history import HistoryChangeView, HistoryDiffView, HistoryView
from ..views.history_widgets import HistoryChangeReview, HistoryWidget
from .changing import move_records
from .common import SCOPE_ALL, actor, positive_int, require, scope_arg, scoped_stores
from .context import Context, View
from .spec import Arg, arg, command

__all__ = ["handle_diff", "handle_history", "handle_restore", "handle_undo", "history_review"]


def _seq(help_text: str) -> Arg:
    return arg("seq", nargs="?", type=positive_int, metavar="SEQ", required=True, help=help_text)


@command(
    "history",
    "every change to memory: when, what, by which notebook and cell",
    arg("--limit", type=positive_int, metavar="N", help="only the newest N entries"),
    scope_arg(SCOPE_ALL),
)
def handle_history(ctx: Context, args: argparse.Namespace) -> View:
    """The journal in .memory/history/, newest first: each commit's number (SEQ), time
    (UTC), operation, the names it added (+) and removed (-), who made it (notebook and
    cell, or tool) and the turn's question. See one entry with diff SEQ. In a notebook
    the widget shows the newest 50 unless --limit says otherwise. With the user scope on,
    the project's journal and then the user's (each numbered on its own)."""
    stores = scoped_stores(ctx, args.scope)
    if len(stores) > 1 or stores[0][0] == "user":
        limit = args.limit or (C.HISTORY_WIDGET_LIMIT if ctx.proposes else None)
        parts = [(scope, HistoryView.load(store, limit)) for scope, store in stores]
        return parts[0][1] if len(parts) == 1 else ScopedView(parts)
    store = ctx.store
    if not ctx.proposes:
        return HistoryView.load(store, args.limit)
    view = HistoryView.load(store, args.limit or C.HISTORY_WIDGET_LIMIT)
    registry = ctx.session.batch_registry
    return ctx.widget(
        view,
        lambda: HistoryWidget(
            view, store, registry, propose=lambda op, seq: _change(ctx, _op(op), seq)
        ),
    )


def _op(name: str) -> HistoryOp:
    if name == "undo":
        return "undo"
    if name == "restore":
        return "restore"
    raise CommandUsageError(f"not a history change: {name!r}")


@command(
    "diff",
    "one history entry: names added and removed, body diffs",
    _seq("the entry's number (see history)"),
    scope_arg("project"),
)
def handle_diff(ctx: Context, args: argparse.Namespace) -> View:
    """The records entry SEQ added and removed (read from .memory/ or, for records that
    have left the set, history/files/), and the body changes where it replaced records
    (a consolidation: its sources against its replacements)."""
    seq: int = require(args.seq, "SEQ", "see history for the numbers")
    [(_, store)] = scoped_stores(ctx, args.scope)
    entry = next((e for e in store.history() if e.seq == seq), None)
    if entry is None:
        raise CommandError(f"no history entry #{seq} in {store.root} (see history)")
    return HistoryDiffView.load(store, entry)


def history_review(ctx: Context, batch: PendingBatch) -> View:
    """The review of an undo/restore proposal of this session (Commit / Discard)."""
    session = ctx.session
    return ctx.widget(
        HistoryChangeView.of(batch),
        lambda: HistoryChangeReview(session.batch_registry, batch, session.commit, session.discard),
    )


def _change(ctx: Context, op: HistoryOp, seq: int, scope: str = "project") -> View:
    [(_, store)] = scoped_stores(ctx, scope)
    if op == "undo":
        moved = _move_of(store, seq)
        if moved is not None:  # a move is undone as one: both scopes, at once
            names, back = moved
            return move_records(ctx, names, back, undoes=seq)
    change = plan_history_change(store, op, seq)
    if change.conflict is not None:
        # Refused now, as it would be on commit: nothing proposed, nothing written.
        return HistoryChangeView(change, status="failed", error=change.conflict)
    if change.empty:
        return MessageView(
            f"{change.title}: the current set already is that way; nothing to do.",
            data={"op": op, "seq": seq, "changed": False},
        )
    # The user scope's change applies at once everywhere: a session's batches commit
    # to its project (the command is the explicit decision, as on the command line).
    if ctx.proposes and scope == "project":
        return history_review(ctx, ctx.session.propose_history_change(change))
    try:
        entry = change.apply(store, actor_info(actor(ctx)))
    except MemoryStoreError as e:
        # A conflict (nothing written) is the outcome of the command, not a crash.
        return HistoryChangeView(change, status="failed", error=str(e))
    done = HistoryChangeView(change, status="committed")
    return MessageView(
        f"{done.to_text()}\nRecorded as history entry #{entry.seq}.",
        kind=op,
        data={**change.to_json(), "entry": entry.seq},
    )


def _move_of(store: MemoryStore, seq: int) -> tuple[list[str], str] | None:
    """Entry ``seq`` of ``store`` when it is half of a move: the names it moved and the
    scope they go back to; None for any other entry."""
    entry = next((e for e in store.history() if e.seq == seq), None)
    if entry is None or entry.actor.get("via") != Door.MOVE or "undoes_move" in entry.actor:
        return None
    back = entry.actor.get("from_scope")
    if back not in ("project", "user"):
        return None  # journalled before moves said their scopes: undone as an entry
    if entry.op == "add":
        return [a.name for a in entry.added], str(back)
    if entry.op == "forget":
        return [r.name for r in entry.removed], str(back)
    return None


@command(
    "undo",
    "reverse one history entry (one new commit)",
    _seq("the entry to reverse (see history)"),
    scope_arg("project"),
    section="change",
)
def handle_undo(ctx: Context, args: argparse.Namespace) -> View:
    """Records entry SEQ removed come back exactly as they were; records it added
    leave. Refused, with nothing written, when that is not clean (a name now held by
    another record, an added record since replaced). In a notebook the undo is
    proposed first: Commit (or %memory commit) applies it; the command line (and
    --scope user everywhere) applies it at once. Either way it is recorded as a new
    entry, so it can be undone too. Either entry of a move (move NAME --to SCOPE)
    undoes the whole move: the records go back to the scope they came from, at once."""
    seq: int = require(args.seq, "SEQ", "see history for the numbers")
    return _change(ctx, "undo", seq, args.scope)


@command(
    "restore",
    "make the set exactly what it was after a history entry",
    _seq("the entry whose resulting set to restore (see history)"),
    scope_arg("project"),
    section="change",
)
def handle_restore(ctx: Context, args: argparse.Namespace) -> View:
    """Records no longer current come back exactly as they were; records added since
    leave. In a notebook the restore is proposed first (Commit or %memory commit); the
    command line applies it at once, as one new history entry."""
    seq: int = require(args.seq, "SEQ", "see history for the numbers")
    return _change(ctx, "restore", seq, args.scope)
