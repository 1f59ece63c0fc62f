"""Subcommands that change memory: forget, move, consolidate, commit, discard."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import BatchError, CommandError, CommandUsageError, MemoryStoreError
from ..review import Decision, PlanChoice
from ..review.door import Door
from ..review.scopes import PROJECT, USER, prepare_user_scope
from ..views import BatchView, ErrorView, HistoryChangeView, MessageView
from .common import actor, check_names, pending_batch, require, scope_arg, scoped_stores
from .context import Context, View
from .spec import arg, command

if TYPE_CHECKING:
    from ..review import PendingBatch

__all__ = [
    "commit_decided",
    "discard_decided",
    "handle_commit",
    "handle_consolidate",
    "handle_discard",
    "handle_forget",
    "handle_move",
    "move_records",
]

# Only a notebook has a batch of its own to default to: one saved in pending/ (every one,
# on the command line) is named (common.pending_batch; issue 43).
_BATCH = arg(
    "--batch",
    metavar="ID",
    help="which pending batch (`pending` lists them); required for a batch saved in "
    "pending/, so always on the command line; in a notebook the default is this kernel's "
    "latest",
)


@command(
    "forget",
    "remove memories (one commit)",
    arg("names", nargs="*", metavar="NAME", required=True, help="memories to remove"),
    scope_arg("project"),
    section="change",
)
def handle_forget(ctx: Context, args: argparse.Namespace) -> View:
    """Their files leave the set in one commit (kept in history/ for undo); nothing
    changes if a name is unknown. --scope user forgets from the user's own memory."""
    names = list(dict.fromkeys(require(args.names, "NAME", "see list for the names")))
    [(scope, store)] = scoped_stores(ctx, args.scope)
    check_names(ctx, names, store)
    store.forget(names, actor=actor(ctx))
    return MessageView(
        f"Forgot: {', '.join(names)}" + (" (user scope)" if scope == "user" else ""),
        kind="forgot",
        data={"forgotten": names, "scope": scope},
    )


@command(
    "move",
    "move memories to the other scope (project <-> user; one commit in each)",
    arg("names", nargs="*", metavar="NAME", required=True, help="memories to move"),
    arg("--to", choices=("project", "user"), metavar="SCOPE", help="project or user: where to"),
    section="change",
)
def handle_move(ctx: Context, args: argparse.Namespace) -> View:
    """SPEC §11: the records are added to the other scope as they are (one commit
    there), then forgotten here (one commit here), each journalled in its own scope as
    a move; undo of either entry moves them back. Nothing changes if a name is unknown
    or taken in the target. If the second commit fails, the first is taken back."""
    names = list(dict.fromkeys(require(args.names, "NAME", "see list for the names")))
    target: str = require(args.to, "--to SCOPE", "project or user")
    return move_records(ctx, names, target)


def move_records(ctx: Context, names: list[str], target: str, undoes: int | None = None) -> View:
    """Move ``names`` to the ``target`` scope (see :func:`handle_move`); ``undoes``: the
    move entry this one takes back."""
    source = "user" if target == "project" else "project"
    [(_, src)] = scoped_stores(ctx, source)
    [(_, dst)] = scoped_stores(ctx, target)
    check_names(ctx, names, src)
    taken = sorted(set(names) & {r.name for r in dst.records()})
    if taken:
        raise CommandError(
            f"{', '.join(map(repr, taken))} already in the {target} scope ({dst.root}); "
            "nothing was moved"
        )
    records = [src.get(name) for name in names]
    if target == "user":
        prepare_user_scope(dst)
    moved = actor(
        ctx, via=Door.MOVE, front=ctx.front, **{"from": str(src.root), "to": str(dst.root)}
    )
    moved.update(from_scope=source, to_scope=target)
    if undoes is not None:
        moved["undoes_move"] = undoes
    dst.extend(
        records,
        actor=moved,
        provenance={n: {"origin": "manual", "moved_from": str(src.root)} for n in names},
    )
    try:
        src.forget(names, actor=moved)
    except MemoryStoreError as e:
        dst.forget(names, actor={**moved, "why": "the move was taken back"})
        raise CommandError(f"{e}; the move was taken back, nothing changed") from e
    said = f"Moved to the {target} scope: {', '.join(names)}"
    if undoes is not None:
        said = f"Undid the move #{undoes}: {', '.join(names)} back in the {target} scope"
    return MessageView(
        said,
        kind="moved",
        data={"moved": names, "to": target, "directory": str(dst.root), "undoes": undoes},
    )


@command(
    "consolidate",
    "ask the consolidator now; review the plan",
    section="change",
    cli=False,
)
def handle_consolidate(ctx: Context, args: argparse.Namespace) -> View:
    """The plan over the current set (sources → new records) waits for review:
    Commit in the widget, or %memory commit."""
    batch = ctx.session.consolidate_now()
    if batch.plan is None:  # it failed: nothing to review
        return ErrorView(
            batch.plan_error or "unknown cause", where="Consolidation", hint="Nothing was changed."
        )
    return ctx.review(batch)


@command(
    "commit",
    "commit a pending batch (--batch ID; in a notebook, default: this kernel's latest)",
    arg("--reject", nargs="+", default=[], metavar="NAME", help="items not to commit"),
    arg(
        "--accept",
        nargs="+",
        default=[],
        metavar="NAME",
        help="also commit these items held for review (a plain commit leaves them pending)",
    ),
    arg("--no-plan", action="store_true", help="do not apply the consolidation plan"),
    arg(
        "--accept-plan",
        dest="accept_held_plan",
        action="store_true",
        help="apply a consolidation plan held for review",
    ),
    arg(
        "--redacted",
        nargs="+",
        default=[],
        metavar="NAME",
        help="also commit these redacted items (their redacted text; never the credential)",
    ),
    arg(
        "--to-user",
        nargs="+",
        default=[],
        metavar="NAME",
        help="commit these items to the user scope (your own memory, every project)",
    ),
    arg(
        "--to-project",
        nargs="+",
        default=[],
        metavar="NAME",
        help="commit these items to this project (new user-type items go to the user scope)",
    ),
    _BATCH,
    section="change",
)
def handle_commit(ctx: Context, args: argparse.Namespace) -> View:
    """Commit a pending batch without the review widget (e.g. in a frontend without
    widgets, or from a terminal: ipymemory commit --batch ID). A batch saved in
    pending/ -- by an earlier kernel or another agent (MCP, the memory tool) -- is
    decided by its id, as here."""
    batch = pending_batch(ctx, args.batch)
    if batch is None:
        return MessageView("Nothing to commit: no batch is pending.")
    both = sorted(set(args.to_user) & set(args.to_project))
    if both:
        raise CommandUsageError(f"{', '.join(both)}: named in both --to-user and --to-project")
    if args.accept_held_plan and args.no_plan:
        raise CommandUsageError("--accept-plan and --no-plan: choose one")
    plan = PlanChoice.APPLY
    if args.accept_held_plan or args.no_plan:
        plan = PlanChoice.ACCEPT if args.accept_held_plan else PlanChoice.LEAVE
    decision = Decision(
        reject=args.reject,
        accept=args.accept,
        redacted=args.redacted,
        plan=plan,
        scopes={**dict.fromkeys(args.to_user, USER), **dict.fromkeys(args.to_project, PROJECT)},
    )
    return commit_decided(ctx, batch, decision)


def commit_decided(ctx: Context, batch: PendingBatch, decision: Decision) -> View:
    """Commit ``batch`` as ``decision`` says, as ``commit`` does, and the view of what
    happened (a refusal: an error view saying how to go on). The Lab panel decides
    through here too, its decision as a value."""
    try:
        result = ctx.session.commit(batch, decision)
    except BatchError as e:
        raise CommandError(str(e)) from None
    if result.error:
        how = _retry(ctx, batch, result.held, decision)
        hint = f"Nothing was written; the batch is still pending ({how})."
        return ErrorView(result.error, where="Commit", hint=hint)
    if result.batch is not None and result.batch.history is not None:
        # An undo/restore: what it did to the set, not "0 extracted memories".
        done = replace(result.batch.history, leaving=result.removed, returning=result.committed)
        return HistoryChangeView(done, batch_id=result.batch.id, status="committed")
    if result.batch is None:
        return MessageView("Committed.")
    return BatchView.of(result.batch, command_line=not ctx.proposes)


def _retry(ctx: Context, batch: PendingBatch, held: tuple[str, ...], decision: Decision) -> str:
    """How to go on after a refused commit of ``batch``."""
    if held:
        names = " ".join(held)
        hint = (
            f"commit them: {ctx.front} commit --batch {batch.id} --accept {names}, "
            f"or reject them: --reject {names}"
        )
    elif batch.plan_held:
        hint = (
            f"{ctx.front} commit --batch {batch.id} --accept-plan to apply it, or "
            "--no-plan to commit without it"
        )
    else:
        hint = f"e.g. {ctx.front} commit --no-plan, or {ctx.front} discard"
    taken = _taken_names(ctx, batch, list(decision.reject))
    if taken:  # another session committed these names meanwhile
        rest = " ".join([*decision.reject, *taken])
        hint = f"commit the rest: {ctx.front} commit --batch {batch.id} --reject {rest}"
    return hint


def _taken_names(ctx: Context, batch: PendingBatch, reject: list[str]) -> list[str]:
    """Accepted names of ``batch`` the set they go to holds now (committed elsewhere
    meanwhile), in either scope."""
    try:
        project = {record.name for record in ctx.store.records()}
        user = ctx.user_store
        theirs = {record.name for record in user.records()} if user is not None else set()
    except MemoryStoreError:
        return []
    return [
        item.name
        for item in batch.proposed
        if item.name not in reject and item.name in (theirs if item.scope == USER else project)
    ]


@command(
    "discard",
    "drop a pending batch (--batch ID; in a notebook, default: this kernel's latest)",
    _BATCH,
    section="change",
)
def handle_discard(ctx: Context, args: argparse.Namespace) -> View:
    """Nothing is written."""
    batch = pending_batch(ctx, args.batch)
    if batch is None:
        return MessageView("Nothing to discard: no batch is pending.")
    return discard_decided(ctx, batch)


def discard_decided(ctx: Context, batch: PendingBatch) -> View:
    """Discard ``batch``, as ``discard`` does, and its view."""
    ctx.session.discard(batch)
    decided = ctx.session.batch_registry.lookup(batch)
    return HistoryChangeView.of(decided) if decided.history is not None else BatchView.of(decided)
