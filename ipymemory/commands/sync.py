"""``sync push|pull|status``: a scope's memory and an Anthropic memory store (SPEC §13)."""

from __future__ import annotations

import argparse

from ..errors import CommandUsageError, MemoryConfigError
from ..store.store import MemoryStore
from ..sync.paths import check_prefix, default_prefix
from ..sync.remote import RemoteStore
from ..sync.run import Sync
from ..sync.summary import sync_lines
from ..views.sync import SyncView
from .common import scope_arg, scoped_stores
from .context import Context, View
from .spec import arg, command

__all__ = ["handle_sync", "sync_status_notes"]


def _prefix(ctx: Context, scope: str, store: MemoryStore, given: str | None) -> str:
    """``--prefix``, else (for the project) the setting, else the scope's default. The
    setting is the project's: a user scope shared by every project keeps its own."""
    try:
        if given is not None:
            return check_prefix(given, "--prefix")
        setting = ctx.settings.memory_store_prefix
        if scope == "project" and setting is not None:
            return check_prefix(setting, "memory_store_prefix")
        return default_prefix(scope, store.workspace)
    except MemoryConfigError as e:
        raise CommandUsageError(str(e)) from None


@command(
    "sync",
    "push to / pull from an Anthropic memory store, reviewed both ways",
    arg(
        "action",
        choices=["push", "pull", "status"],
        metavar="ACTION",
        help="push: send what changed here; pull: bring what changed there as a pending "
        "batch; status: what would move each way, conflicts side by side",
    ),
    arg("--store", metavar="MEMSTORE_ID", help="the memory store (default: memory_store)"),
    arg(
        "--prefix",
        metavar="PATH",
        help="where this scope's memories live there (default: memory_store_prefix, else "
        "/ipymemory/<project directory name>/; the user scope's /ipymemory-user/)",
    ),
    arg("--dry-run", action="store_true", help="say what would move; write nothing"),
    arg(
        "--commit",
        choices=["review", "auto"],
        default="review",
        metavar="MODE",
        help="pull: review (a person decides every change; default) or auto (what "
        "screening passes is committed at once, the rest waits)",
    ),
    scope_arg("project"),
    section="change",
)
def handle_sync(ctx: Context, args: argparse.Namespace) -> View:
    """One record is one memory <prefix><name>.md holding the record file's text. push
    sends each change made here since the last sync as a create, or an update or delete
    that applies only if the memory is as the last sync saw it (a 409 refuses that record
    alone; it is never retried). pull proposes each change made there -- new, changed and
    deleted memories, with who made them -- as one pending batch, screened like another
    agent's (origin agent); a deletion is a proposal to forget, a conflict (changed on both
    sides) waits for you with both versions shown, a memory that is not a valid record is
    reported. Decide the batch like any: the widget, the Lab panel, commit --batch ID /
    discard --batch ID. The key and endpoint are the model's (ANTHROPIC_API_KEY,
    ANTHROPIC_BASE_URL); what was last seen is kept in .memory/sync/."""
    store_id = args.store or ctx.settings.memory_store
    if not store_id:
        raise CommandUsageError(
            "no memory store: give --store MEMSTORE_ID or set memory_store "
            "(%config IPyMemory.memory_store, IPYMEMORY_MEMORY_STORE)"
        )
    ((scope, store),) = scoped_stores(ctx, args.scope)
    prefix = _prefix(ctx, scope, store, args.prefix)
    settings = ctx.settings
    remote = RemoteStore.connect(
        store_id,
        base_url=settings.base_url,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
    )
    # A pulled memory may not take a user-wide name in a project (review/scopes.py).
    user = ctx.user_store if scope == "project" else None
    sync = Sync(store, remote, prefix, user_store=user, scope=scope)
    if args.action == "push":
        report = sync.push(dry_run=args.dry_run)
    elif args.action == "pull":
        report = sync.pull(dry_run=args.dry_run, commit=args.commit)
    else:
        report = sync.status()
    return SyncView(report.to_json())


def sync_status_notes(ctx: Context) -> list[str]:
    """``%memory status``'s lines about syncs (no network): per store, the last push and
    pull, the changes here not pushed yet, the pulled batches that wait."""
    out = []
    for scope, store in scoped_stores(ctx, "all"):
        label = "" if scope == "project" else "user scope: "
        out += [label + line for line in sync_lines(store)]
    return out
