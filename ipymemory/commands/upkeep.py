"""Maintenance subcommands: gc, reindex, recover."""

from __future__ import annotations

import argparse

from ..store import maintenance
from ..store.lock import STALE_SECONDS
from ..views import MessageView
from .context import Context, View
from .spec import arg, command

__all__ = ["handle_gc", "handle_recover", "handle_reindex"]


@command(
    "gc",
    "clear out files no manifest references",
    arg(
        "--stale-seconds",
        type=float,
        default=STALE_SECONDS,
        metavar="S",
        help=f"only remove files older than this (default {STALE_SECONDS:g}, "
        "the lock's stale window)",
    ),
    section="maintain",
)
def handle_gc(ctx: Context, args: argparse.Namespace) -> View:
    """Temp files and unreadable record files of interrupted commits, stale lock
    directories; a valid record file no manifest lists is moved into history/files/,
    never deleted. Under the lock, and only when the current set loads."""
    store = ctx.store
    removed = maintenance.gc(
        store.workspace,
        args.stale_seconds,
        max_index_lines=store.max_index_lines,
        max_index_bytes=store.max_index_bytes,
        lock_timeout=store.lock_timeout,
        retention_days=ctx.settings.history_retention_days,
        retention_bytes=ctx.settings.history_retention_bytes,
    )
    kept = removed.kept
    lines = [f"removed {name}" for name in removed]
    lines += [f"kept {name} in history/files/ (a valid record no manifest lists)" for name in kept]
    lines.append(f"{len(removed)} file(s) removed" + (f", {len(kept)} kept" if kept else ""))
    data = {"removed": list(removed), "kept": list(kept)}
    return MessageView("\n".join(lines), kind="gc", data=data)


@command("reindex", "rebuild MEMORY.md from the manifest", section="maintain")
def handle_reindex(ctx: Context, args: argparse.Namespace) -> View:
    """Atomically, under the lock; MEMORY.md is left as it was if the set does not load."""
    store = ctx.store
    count = maintenance.reindex(
        store.workspace,
        max_index_lines=store.max_index_lines,
        max_index_bytes=store.max_index_bytes,
        lock_timeout=store.lock_timeout,
    )
    return MessageView(
        f"{store.root / 'MEMORY.md'}: rebuilt ({count} records)",
        kind="reindex",
        data={"records": count},
    )


@command(
    "recover",
    "rebuild a missing or unreadable manifest",
    arg("--dry-run", action="store_true", help="only show the plan; write nothing"),
    section="maintain",
)
def handle_recover(ctx: Context, args: argparse.Namespace) -> View:
    """From the history journal's last known set where its files exist, else from the
    valid record files present (the newest file of each name). Nothing is deleted:
    invalid files and older duplicates are listed and left where they are."""
    plan = ctx.store.recover(dry_run=args.dry_run)
    return MessageView(str(plan), kind="recover", data=plan.to_json())
