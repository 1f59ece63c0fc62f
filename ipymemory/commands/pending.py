"""``pending``: the batches awaiting review, this kernel's and those saved in pending/."""

from __future__ import annotations

import argparse

from ..review.batch import PendingBatch
from ..review.listing import Listed, listing
from ..views.pending import DECIDE_HINT, LIVE_HINT, MIXED_HINT, OPEN_HINT, PendingView
from .common import pending_batch
from .context import Context, View
from .spec import arg, command
from .timeline import history_review

__all__ = ["handle_pending"]


def _review(ctx: Context, batch: PendingBatch) -> View:
    return history_review(ctx, batch) if batch.history is not None else ctx.review(batch)


@command(
    "pending",
    "batches awaiting review (also from earlier kernels); --open ID reopens one",
    arg("--open", metavar="ID", help="reopen this saved batch here for review"),
    section="change",
)
def handle_pending(ctx: Context, args: argparse.Namespace) -> View:
    """Undecided batches are kept in .memory/pending/ until committed, discarded or
    expired (the pending_expiry_days setting), so a batch proposed before a kernel
    restart can still be reviewed. Reopening one shows its review widget; a plan
    whose records changed since is dropped (its items stay reviewable). An undo or
    restore proposal is planned again on reopening: one no longer clean shows why
    and cannot be committed. On the command line, decide one with commit --batch ID or
    discard --batch ID."""
    session = ctx.session
    files = session.pending_files
    if args.open is not None:
        batch = pending_batch(ctx, args.open)  # this kernel's, or reopened from pending/
        assert batch is not None  # an id was given: found, or a command error
        return _review(ctx, batch)
    entries, problems = listing(files, session.pending)
    if files.last_error:  # a batch of this kernel could not be kept on disk
        problems = [*problems, files.last_error]
    return PendingView(str(files.directory), entries, problems, _hint(ctx, entries))


def _hint(ctx: Context, entries: list[Listed]) -> str:
    """How to go on: the command line decides; the notebook reopens a saved batch, and
    never suggests reopening one this kernel already has open (issue 44)."""
    if not ctx.proposes:
        return DECIDE_HINT
    live = sum(entry.live for entry in entries)
    if live and live == len(entries):
        return LIVE_HINT
    return MIXED_HINT if live else OPEN_HINT
