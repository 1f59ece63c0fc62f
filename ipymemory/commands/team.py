"""Team subcommands: git setup, import / export of Claude Code's auto memory."""

from __future__ import annotations

import argparse
import hashlib
import uuid
from dataclasses import replace
from pathlib import Path

from ..errors import CommandError
from ..review import Item, PendingBatch
from ..review.door import Door
from ..review.listing import reopen_line
from ..review.pending import PendingFiles
from ..review.provenance import TurnProvenance
from ..review.scopes import AgentNames
from ..review.screened import ScreenedItems
from ..screen import Origin
from ..store.record import MemoryRecord
from ..team import claude_code, gitfinish, gitsetup
from ..views import MessageView
from .context import Context, View
from .spec import arg, command

__all__ = ["handle_export", "handle_git", "handle_import"]

_FORMAT = arg(
    "format", choices=["claude-code"], metavar="FORMAT", help="the other tool: claude-code"
)
_DIRECTORY = arg("directory", metavar="DIR", help="its memory directory")


@command(
    "git",
    "set up the enclosing git repository to merge .memory/ as sets",
    arg(
        "action",
        choices=["setup", "finish"],
        metavar="ACTION",
        help="setup: register the merge drivers; finish: conclude a merge they stopped",
    ),
    section="maintain",
)
def handle_git(ctx: Context, args: argparse.Namespace) -> View:
    """setup adds the merge drivers of manifest.json and MEMORY.md to .gitattributes and
    the local state (lock, history/, pending/) to .gitignore — commit both — and sets
    the driver commands in the local git config (each teammate runs this once); running
    it again changes nothing. finish concludes a merge the drivers stopped (two records
    with one name): it takes the replaced originals out of .memory/, records the merged
    set in the history journal and stages .memory; then commit."""
    if args.action == "finish":
        done = gitfinish.finish(ctx.settings.directory)
        return MessageView(done.text(), kind="git-finish", data=done.to_json())
    report = gitsetup.setup(ctx.settings.directory)
    return MessageView(report.text(), kind="git-setup", data=report.to_json())


@command(
    "import",
    "import another tool's memory directory (one commit)",
    _FORMAT,
    _DIRECTORY,
    arg("--yes", action="store_true", help="commit at once, without a review"),
    section="change",
)
def handle_import(ctx: Context, args: argparse.Namespace) -> View:
    """Claude Code's auto memory: topic files with name, description and type in their
    frontmatter. Titles become slugs; invalid files and index links without a file are
    reported, not imported. The records are another agent's: what screening holds (a
    credential, a destination, a command, a secret, a rule about answers …) waits for a
    person with its reasons. Without --yes the records wait for review as a batch in a
    notebook, and the command line only says what it would do; --yes commits the clean
    ones at once and keeps the held ones pending (ipymemory pending)."""
    store = ctx.store
    plan = claude_code.plan_import(args.directory, store.records(), AgentNames.of(ctx.user_store))
    report = plan.lines()
    waiting = plan.waiting
    if not plan.records and not waiting.items:
        report.append("nothing to import")
        return MessageView("\n".join(report), kind="import", data=plan.to_json())
    if ctx.proposes and not args.yes:
        batch = _import_batch(plan.records, waiting, store.records())
        return ctx.review(ctx.session.batch_registry.add(batch))
    if not args.yes:
        count = len(plan.records) + len(waiting.items)
        report.append(f"nothing written: add --yes to commit these {count} records")
        return MessageView("\n".join(report), kind="import", data=plan.to_json())
    if plan.records:
        provenance = {
            name: {"origin": "agent", "imported_from": f"claude-code:{file}"}
            for name, file in plan.sources.items()
        }
        store.extend(plan.records, provenance=provenance, actor={"via": Door.IMPORT_CLAUDE_CODE})
        report.append(f"committed {len(plan.records)} records in one commit")
    else:
        report.append("nothing to import")
    if waiting.items:
        # One batch per directory: importing again replaces it rather than adding another.
        where = str(Path(args.directory).resolve()).encode("utf-8")
        batch_id = "import" + hashlib.sha256(where).hexdigest()[:10]
        batch = replace(_import_batch((), waiting, store.records()), id=batch_id)
        files = PendingFiles(store.root)
        if not files.save(batch):
            raise CommandError(files.last_error or f"batch {batch.id} could not be kept")
        report.append(
            f"{len(waiting.items)} held for a person in batch {batch.id}: "
            f"{reopen_line(batch.id, 'ipymemory')}"
        )
    data = {**plan.to_json(), "waiting": [r.name for r in waiting.items]}
    return MessageView("\n".join(report), kind="import", data=data)


def _import_batch(
    clean: tuple[MemoryRecord, ...], waiting: ScreenedItems, base: tuple[MemoryRecord, ...]
) -> PendingBatch:
    """One batch of imported records: the ``clean`` ones, then those screening holds
    (``waiting``), flagged with their rules. Every one is another agent's."""
    return PendingBatch(
        uuid.uuid4().hex[:12],
        (*(Item(r, Origin.AGENT) for r in clean), *waiting.kept),
        None,
        base,
        provenance=TurnProvenance(f"import-{uuid.uuid4().hex[:8]}", via=Door.IMPORT),
    )


@command(
    "export",
    "write the current set in another tool's layout",
    _FORMAT,
    _DIRECTORY,
    arg("--force", action="store_true", help="overwrite files export did not write"),
    section="maintain",
)
def handle_export(ctx: Context, args: argparse.Namespace) -> View:
    """Claude Code's layout: MEMORY.md and one topic file per record. Files export did
    not write itself (or that changed since) are never overwritten without --force."""
    report = claude_code.export_directory(args.directory, ctx.store.records(), force=args.force)
    lines = [f"wrote {f}" for f in report.written] + [f"removed {f}" for f in report.removed]
    lines.append(f"{report.directory}: the current set exported")
    return MessageView("\n".join(lines), kind="export", data=report.to_json())
