"""The ``%memory`` subcommands: one small function each, routed by the first word.

Each function takes the call context and the rest of the line, and returns a
displayable object. Bad arguments raise ``UsageError`` (IPython prints the message,
no traceback); store failures become an :class:`ErrorView` in the magic.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError

from ..config import Settings, describe_model
from ..errors import BatchError, MemoryStoreError
from ..sidequery.select import select_memories
from ..store.maintenance import check
from ..store.names import is_valid_name
from ..turn import AgentSession, PendingBatch
from ..views import (
    BatchView,
    CheckView,
    ErrorView,
    ManifestView,
    ManifestWidget,
    MessageView,
    RecordView,
    SelectionView,
    SelectionWidget,
    StatusView,
)
from ._args import arg, arguments
from .state import NotebookState

__all__ = ["SUBCOMMANDS", "Context", "help_text", "parse"]


@dataclass
class Context:
    """What a subcommand works with: the extension state and resolved settings."""

    state: NotebookState
    settings: Settings
    _session: AgentSession | None = None

    @property
    def session(self) -> AgentSession:
        if self._session is None:
            self._session = self.state.session(self.settings)
        return self._session


Command = Callable[[Context, str], Any]


def parse(func: Any, rest: str) -> argparse.Namespace:
    """Parse ``rest`` with ``func``'s magic_arguments parser; errors → UsageError."""
    parser = func.parser
    try:
        return parser.parse_argstring(rest)  # type: ignore[no-any-return]
    except UsageError as e:  # argparse's message lacks the command and its usage
        # IPython's formatter wraps the usage in a reST literal block: flatten it.
        usage = " ".join(parser.format_usage().replace("::", " ").split())
        raise UsageError(f"%{parser.prog}: {e}\nusage: {usage}") from None
    except ValueError as e:  # unbalanced quotes from the splitter
        raise UsageError(f"%{parser.prog}: cannot split the arguments: {e}") from None


def _known_names(ctx: Context) -> list[str]:
    return [r.name for r in ctx.session.store.records()]


def _check_names(ctx: Context, names: list[str], what: str) -> None:
    """UsageError for invalid or unknown names, listing the known ones."""
    bad = [n for n in names if not is_valid_name(n)]
    if bad:
        raise UsageError(
            f"{what}: {', '.join(map(repr, bad))} is not a memory name "
            "(names are lowercase slugs like 'prefers-tabs')"
        )
    known = _known_names(ctx)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(
            f"{what}: no memory named {', '.join(map(repr, unknown))}; "
            f"known: {', '.join(known) if known else 'none (the set is empty)'}"
        )


# --- reading -------------------------------------------------------------------------


@arguments(name="memory list")
def cmd_list(ctx: Context, rest: str) -> Any:
    """The current set as a table: name, type, description, file."""
    parse(cmd_list, rest)
    return ManifestView.load(ctx.session.store)


@arguments(name="memory manifest")
def cmd_manifest(ctx: Context, rest: str) -> Any:
    """The current set as a widget: expand a row to read its body."""
    parse(cmd_manifest, rest)
    store = ctx.session.store
    return ctx.state.keep(ManifestWidget(ManifestView.load(store), store))


@arguments(name="memory show")
@arg("name", nargs="?", help="the memory's name")
def cmd_show(ctx: Context, rest: str) -> Any:
    """One memory in full: file, type, description and body."""
    args = parse(cmd_show, rest)
    if not args.name:
        raise UsageError("%memory show: missing NAME (see %memory list for the names)")
    _check_names(ctx, [args.name], "%memory show")
    entry = next(e for e in ctx.session.store.entries() if e.record.name == args.name)
    return RecordView(entry)


def cmd_select(ctx: Context, rest: str) -> Any:
    """%memory select QUERY

    Which memories a turn asking QUERY would get, who chose them (the model, or the
    deterministic fallback) and why. QUERY is the rest of the line, taken literally.
    Nothing is written and the session's last error is not changed. (Do not end
    the line with "?": IPython reads that as a help request.)
    """
    query = rest.strip()
    if not query:
        raise UsageError("%memory select: missing QUERY, e.g. %memory select how do I indent")
    session = ctx.session
    records = session.store.records()
    selection = select_memories(
        session.model,
        query,
        records,
        session.store.catalog(),
        side_model=ctx.settings.side_model,
        limit=ctx.settings.max_selected,
    )
    return ctx.state.keep(SelectionWidget(SelectionView.of(query, selection)))


@arguments(name="memory status")
def cmd_status(ctx: Context, rest: str) -> Any:
    """Directory, model (configured or not), pending batches and the last error."""
    parse(cmd_status, rest)
    session = ctx.session
    try:
        count: int | None = len(session.store.records())
        read_error = None
    except MemoryStoreError as e:
        count, read_error = None, str(e)
    origin = ctx.settings.origin
    notes = [
        f"commit mode: {ctx.settings.commit_mode} (from {origin.get('commit_mode', 'default')})",
        f"directory from: {origin.get('directory', 'default')}",
    ]
    if ctx.state.pinned_model is not None:
        notes.append("model: set with ipymemory.notebook.use_model()")
    if read_error:
        notes.append(f"the set could not be read: {read_error}")
    if session.last_error_cause:
        notes.append(f"last error cause: {session.last_error_cause}")
    return StatusView(
        session.store.root,
        model=describe_model(session.model),
        records=count,
        pending=len(session.pending),
        last_error=session.last_error,
        notes=tuple(notes),
    )


@arguments(name="memory check")
def cmd_check(ctx: Context, rest: str) -> Any:
    """Verify .memory/: manifest, every record file, MEMORY.md; report problems."""
    parse(cmd_check, rest)
    store = ctx.session.store
    report = check(
        store.workspace,
        max_index_lines=store.max_index_lines,
        max_index_bytes=store.max_index_bytes,
    )
    return CheckView(store.root, [p.to_json() for p in report])


# --- changing ------------------------------------------------------------------------


@arguments(name="memory consolidate")
def cmd_consolidate(ctx: Context, rest: str) -> Any:
    """Ask the consolidator for a plan over the current set now. The plan (sources →
    new records) waits for review: Commit in the widget, or %memory commit."""
    parse(cmd_consolidate, rest)
    session = ctx.session
    batch = session.consolidate_now()
    if batch.status == "failed":
        return ErrorView(
            batch.plan_error or "unknown cause",
            where="Consolidation",
            hint="Nothing was changed.",
        )
    return ctx.state.review(session, batch)


def _pending(ctx: Context, batch_id: str | None, what: str) -> PendingBatch | None:
    pending = ctx.session.pending
    if batch_id is None:
        return pending[-1] if pending else None
    for batch in pending:
        if batch.id == batch_id:
            return batch
    ids = ", ".join(b.id for b in pending) or "none"
    raise UsageError(f"{what}: no pending batch {batch_id!r} (pending: {ids})")


@arguments(name="memory commit")
@arg("--reject", nargs="+", default=[], metavar="NAME", help="items not to commit")
@arg("--no-plan", action="store_true", help="do not apply the consolidation plan")
@arg("--batch", metavar="ID", help="which pending batch (default: the latest)")
def cmd_commit(ctx: Context, rest: str) -> Any:
    """Commit a pending batch (for frontends without widgets)."""
    args = parse(cmd_commit, rest)
    batch = _pending(ctx, args.batch, "%memory commit")
    if batch is None:
        return MessageView("Nothing to commit: no batch is pending.")
    try:
        result = ctx.session.commit(batch, reject=args.reject, accept_plan=not args.no_plan)
    except BatchError as e:
        raise UsageError(f"%memory commit: {e}") from None
    ctx.state.sync_reviews(result.batch)
    if result.error:
        return ErrorView(
            result.error,
            where="Commit",
            hint="Nothing was written; the batch is still pending "
            "(e.g. %memory commit --no-plan, or %memory discard).",
        )
    return BatchView.of(result.batch) if result.batch is not None else MessageView("Committed.")


@arguments(name="memory discard")
@arg("--batch", metavar="ID", help="which pending batch (default: the latest)")
def cmd_discard(ctx: Context, rest: str) -> Any:
    """Drop a pending batch: nothing is written."""
    args = parse(cmd_discard, rest)
    batch = _pending(ctx, args.batch, "%memory discard")
    if batch is None:
        return MessageView("Nothing to discard: no batch is pending.")
    ctx.session.discard(batch)
    done = next(b for b in ctx.session.batches if b.id == batch.id)
    ctx.state.sync_reviews(done)
    return BatchView.of(done)


@arguments(name="memory forget")
@arg("names", nargs="*", metavar="NAME", help="memories to remove")
def cmd_forget(ctx: Context, rest: str) -> Any:
    """Remove memories in one commit (their files are deleted after the manifest swap)."""
    args = parse(cmd_forget, rest)
    if not args.names:
        raise UsageError("%memory forget: missing NAME (see %memory list for the names)")
    names = list(dict.fromkeys(args.names))
    _check_names(ctx, names, "%memory forget")
    ctx.session.store.forget(names)
    return MessageView(f"Forgot: {', '.join(names)}", kind="forgot", names=names)


def cmd_help(ctx: Context | None, rest: str) -> Any:
    """This help."""
    return MessageView(help_text(), kind="help")


SUBCOMMANDS: dict[str, tuple[Command, str, str]] = {
    # name: (function, synopsis, one-line summary)
    "list": (cmd_list, "list", "the current set: name, type, description, file"),
    "manifest": (cmd_manifest, "manifest", "the set as a widget; expand a row to read it"),
    "show": (cmd_show, "show NAME", "one memory in full"),
    "select": (cmd_select, "select QUERY", "which memories a turn would get for QUERY, and why"),
    "status": (cmd_status, "status", "directory, model, pending batches, last error"),
    "consolidate": (cmd_consolidate, "consolidate", "ask the consolidator now; review the plan"),
    "commit": (
        cmd_commit,
        "commit [--reject NAME …] [--no-plan]",
        "commit the pending batch (--batch ID: another one)",
    ),
    "discard": (cmd_discard, "discard [--batch ID]", "drop the pending batch"),
    "forget": (cmd_forget, "forget NAME …", "remove memories (one commit)"),
    "check": (cmd_check, "check", "verify .memory/ (manifest, records, MEMORY.md)"),
    "help": (cmd_help, "help", "this help"),
}


def help_text() -> str:
    """The ``%memory`` help: usage, every subcommand, examples."""
    width = max(len(synopsis) for _, synopsis, _ in SUBCOMMANDS.values())
    lines = [
        "%memory [--dir DIR] SUBCOMMAND [ARGS]",
        "",
        "Inspect and change the long-term memory in DIR/.memory (default: the",
        "notebook's directory; or %config IPyMemory.directory, or IPYMEMORY_DIR).",
        "",
        "Subcommands:",
    ]
    lines += [
        f"  {synopsis.ljust(width)}  {summary}" for _, synopsis, summary in SUBCOMMANDS.values()
    ]
    lines += [
        "",
        "Examples:",
        "  %memory list",
        "  %memory select where are pipeline bugs tracked",
        "  %memory show prefers-tabs",
        "  %memory commit --reject draft-note",
        "  %memory --dir ../other-project status",
        "",
        "Settings: %config IPyMemory (commit_mode, model, side_model, directory, …).",
        'Note: a line ending in "?" is an IPython help request, not a query.',
    ]
    return "\n".join(lines)
