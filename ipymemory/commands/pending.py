"""``pending``: the batches awaiting review, this kernel's and those saved in pending/."""

from __future__ import annotations

import argparse

from ..review.batch import PendingBatch
from ..review.door import Door
from ..views.pending import (
    DECIDE_HINT,
    LIVE_HINT,
    MIXED_HINT,
    OPEN_HINT,
    PendingEntry,
    PendingView,
)
from .common import pending_batch
from .context import Context, View
from .spec import arg, command
from .timeline import history_review

__all__ = ["handle_pending"]


def _plan_text(n_sources: int, n_records: int) -> str:
    if not n_sources and not n_records:
        return "a plan: nothing to merge"
    return f"a plan: {n_sources} record{'' if n_sources == 1 else 's'} → {n_records}"


def _change_text(batch: PendingBatch) -> str | None:
    """An undo/restore proposal's title (as proposed; reopening plans it again)."""
    return None if batch.history is None else batch.history.title


def _via(batch: PendingBatch) -> Door | None:
    return None if batch.provenance is None else batch.provenance.via


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
    saved, problems = files.load()
    if files.last_error:  # a batch of this kernel could not be kept on disk
        problems = [*problems, files.last_error]
    if args.open is not None:
        batch = pending_batch(ctx, args.open)  # this kernel's, or reopened from pending/
        assert batch is not None  # an id was given: found, or a command error
        return _review(ctx, batch)
    entries: list[PendingEntry] = []
    live_ids = set()
    on_disk = {entry.id: entry for entry in saved}
    for batch in session.pending:
        live_ids.add(batch.id)
        plan = batch.plan
        kept = on_disk.get(batch.id)  # this kernel's batches are saved too
        entries.append(
            PendingEntry(
                batch.id,
                batch.names,
                None if plan is None else _plan_text(len(plan.source_names), len(plan.records)),
                live=True,
                saved_at=None if kept is None else kept.saved_at,
                expires_at=None if kept is None else kept.expires_at(files.expiry_days),
                change=_change_text(batch),
                via=_via(batch),
            )
        )
    for entry in saved:  # listed without screening them again (that is for reopening)
        if entry.id in live_ids:
            continue
        sizes = entry.plan
        entries.append(
            PendingEntry(
                entry.id,
                entry.names,
                None if sizes is None else _plan_text(*sizes),
                live=False,
                saved_at=entry.saved_at,
                expires_at=entry.expires_at(files.expiry_days),
                change=None if entry.history is None else entry.history.title,
                via=entry.via,
            )
        )
    return PendingView(str(files.directory), entries, problems, _hint(ctx, entries))


def _hint(ctx: Context, entries: list[PendingEntry]) -> str:
    """How to go on: the command line decides; the notebook reopens a saved batch, and
    never suggests reopening one this kernel already has open (issue 44)."""
    if not ctx.proposes:
        return DECIDE_HINT
    live = sum(entry.live for entry in entries)
    if live and live == len(entries):
        return LIVE_HINT
    return MIXED_HINT if live else OPEN_HINT
