"""Team subcommands: git setup, import / export of Claude Code's auto memory."""

from __future__ import annotations

import argparse
import uuid

from ..team import claude_code, gitfinish, gitsetup
from ..turn import PendingBatch
from ..turn.scopes import AgentNames
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
    frontmatter. Titles become slugs; invalid files, index links without a file and
    records that screening holds back are reported, not imported. Without --yes the
    records wait for review as a batch in a notebook, and the command line only says
    what it would do; --yes commits them at once, in either."""
    store = ctx.store
    plan = claude_code.plan_import(args.directory, store.records(), AgentNames.of(ctx.user_store))
    report = plan.lines()
    if not plan.records:
        report.append("nothing to import")
        return MessageView("\n".join(report), kind="import", data=plan.to_json())
    if ctx.proposes and not args.yes:
        batch = PendingBatch(
            uuid.uuid4().hex[:12],
            plan.records,
            None,
            store.records(),
            origins={r.name: "manual" for r in plan.records},
        )
        return ctx.review(ctx.session.batch_registry.add(batch))
    if not args.yes:
        report.append(f"nothing written: add --yes to commit these {len(plan.records)} records")
        return MessageView("\n".join(report), kind="import", data=plan.to_json())
    provenance = {
        name: {"origin": "manual", "imported_from": f"claude-code:{file}"}
        for name, file in plan.sources.items()
    }
    store.extend(plan.records, provenance=provenance, actor={"via": "import claude-code"})
    report.append(f"committed {len(plan.records)} records in one commit")
    return MessageView("\n".join(report), kind="import", data=plan.to_json())


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
