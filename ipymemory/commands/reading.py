"""Subcommands that read memory: list, manifest, show, select, status, check."""

from __future__ import annotations

import argparse
import os
from dataclasses import replace

from ..config import SELECTION_RULE, describe_model, setting_rows
from ..errors import CommandError, MemoryConfigError, MemoryStoreError
from ..review.scopes import read_user_scope, unreadable_note
from ..store import maintenance
from ..store.sources import stale_records
from ..store.store import MemoryStore
from ..sync.paths import default_prefix
from ..turn.choosing import choose_memories
from ..turn.question import Question
from ..views import (
    CheckView,
    ManifestView,
    ManifestWidget,
    RecordView,
    ScopedView,
    ScopedWidget,
    SelectionView,
    SelectionWidget,
    StatusView,
)
from ..views.history import record_origin
from .common import SCOPE_ALL, check_names, positive_int, require, scope_arg, scoped_stores
from .context import Context, View
from .spec import arg, command
from .sync import sync_status_notes

__all__ = [
    "handle_check",
    "handle_list",
    "handle_manifest",
    "handle_select",
    "handle_show",
    "handle_status",
]


@command(
    "list", "the current set: one record a line (name, type, description)", scope_arg(SCOPE_ALL)
)
def handle_list(ctx: Context, args: argparse.Namespace) -> View:
    """One row per record, in the manifest's order (in a notebook also the short id of
    its file; --json: the file name); with the user scope on, the project's set and then
    the user's (--scope picks one)."""
    parts = [(scope, ManifestView.load(store)) for scope, store in scoped_stores(ctx, args.scope)]
    return parts[0][1] if len(parts) == 1 else ScopedView(parts)


@command(
    "manifest",
    "the set as a widget; expand a row to read it",
    scope_arg(SCOPE_ALL),
    cli=False,
)
def handle_manifest(ctx: Context, args: argparse.Namespace) -> View:
    """The current set as a widget: expand a row to read its body. With the user scope
    on, the project's set and then the user's (--scope picks one: its widget)."""
    parts = [
        (scope, store, ManifestView.load(store)) for scope, store in scoped_stores(ctx, args.scope)
    ]
    if len(parts) > 1:
        return ctx.widget(
            ScopedView([(scope, view) for scope, _, view in parts]),
            lambda: ScopedWidget(
                [(scope, ManifestWidget(view, store)) for scope, store, view in parts]
            ),
        )
    [(_, store, view)] = parts
    return ctx.widget(view, lambda: ManifestWidget(view, store))


@command(
    "show",
    "one memory in full",
    arg("name", nargs="?", metavar="NAME", required=True, help="the memory's name"),
    scope_arg(SCOPE_ALL),
)
def handle_show(ctx: Context, args: argparse.Namespace) -> View:
    """Its file, type, description and body, and where it came from: when it was
    added, from which notebook and cell, the turn's question and its origin (from the
    history journal). A name in both scopes is the project's (as a turn sees it)."""
    name: str = require(args.name, "NAME", "see list for the names")
    stores = scoped_stores(ctx, args.scope)
    for _, store in stores:  # a record that loads is shown beside one that does not
        stored = next((e for e in store.readable().entries if e.record.name == name), None)
        if stored is not None:
            break
    else:
        check_names(ctx, [name], stores[0][1])  # says why: not a name, unknown, unreadable
        raise CommandError(f"no memory named {name!r}")  # (check_names raised already)
    try:
        origin = record_origin(store.history(), stored.file, name)
    except MemoryStoreError:
        origin = None  # an unreadable journal: show the record; check reports the journal
    return RecordView(stored, origin)


@command(
    "select",
    "which memories a turn would get for QUERY, and why",
    arg("query", nargs="+", help="the request the memories are for (the words are joined)"),
    arg(
        "--limit",
        type=positive_int,
        metavar="N",
        help="select at most N records, even from a set that fits memory_budget "
        "(default: as a turn selects: max_selected, 5, or a set within the budget whole)",
    ),
    literal_tail="query",
    before=SELECTION_RULE,
)
def handle_select(ctx: Context, args: argparse.Namespace) -> View:
    """The view says who chose (the whole set, the keyword ranking, the side model, or
    the keyword fallback when the model cannot answer) and why, over both scopes as a
    turn reads them (the project's set, then the user's records it does not shadow).
    Nothing is written, and the session's last error is not changed. In %memory, QUERY
    is the rest of the line, taken literally, a closing "?" included (%memory? alone
    shows this help)."""
    question = Question.of(" ".join(args.query))  # the user's text enters here
    store = ctx.store
    chosen = choose_memories(
        ctx.model, question, store, ctx.user_store, ctx.settings, limit=args.limit
    )
    # A count asked for is the model's pick when it was asked (its fallback's else).
    counted = args.limit is not None and chosen.pick is not None
    selection = chosen.pick if counted and chosen.pick is not None else chosen.selection
    if chosen.scoped.error is not None:  # chosen from the project's set only: say why
        why = "; ".join(t for t in (selection.reason, chosen.scoped.error) if t)
        selection = replace(selection, reason=why)
    view = SelectionView.of(
        question.text,
        selection,
        model=ctx.settings.side_model,
        directory=str(store.root),
        pick=None if counted else chosen.pick,
        added=chosen.added,
    )
    # Chosen from the records that load: the ones that do not are named (issue 43).
    view.unreadable = chosen.scoped.unreadable_note
    return ctx.widget(view, lambda: SelectionWidget(view))


@command("status", "directory, model, pending batches, last error, where each setting came from")
def handle_status(ctx: Context, args: argparse.Namespace) -> View:
    """Where memory lives, the model (configured or not), what waits for review, the
    last memory error, and where each setting came from."""
    session = ctx.session
    try:
        readable = session.store.readable()
        count: int | None = len(readable.entries)
        read_error = None
        if readable.unreadable:  # the others are counted (and used)
            read_error = unreadable_note(readable.unreadable, len(readable.entries))
    except MemoryStoreError as e:
        count, read_error = None, f"the set could not be read: {e}"
    origin = ctx.settings.origin
    notes = [
        f"commit mode: {ctx.settings.commit_mode} (from {origin.get('commit_mode', 'default')})",
        f"directory from: {origin.get('directory', 'default')}",
    ]
    if ctx.model_pinned:
        notes.append("model: set with ipymemory.notebook.use_model()")
    if read_error:
        notes.append(read_error)
    notes.extend(_stale_notes(session.store))
    notes.extend(sync_status_notes(ctx))  # SPEC §13: when each store was last synced
    if session.last_error_cause:
        notes.append(f"last error cause: {session.last_error_cause}")
    live = {batch.id for batch in session.pending}
    saved = [e for e in session.pending_files.load(prune=False)[0] if e.id not in live]
    if saved:  # proposed before a restart (or by another kernel): still reviewable
        n = len(saved)
        notes.append(
            f"{n} of them saved in pending/ by an earlier kernel or another agent: "
            f"{ctx.front} pending"
        )
    user = session.user_store
    user_records: int | None = None
    if user is not None:
        entries, error = read_user_scope(user)
        if error is None:
            user_records = len(entries)
        else:
            notes.append(error)
    return StatusView(
        session.store.root,
        user_directory=None if user is None else user.root,
        user_records=user_records,
        # The context's model: the command line's session asks none (it only decides
        # batches), yet the model it would use is the configured one (issue 43).
        model=describe_model(ctx.model),
        records=count,
        pending=len(session.pending) + len(saved),
        last_error=session.last_error,
        notes=tuple(notes),
        settings=_with_defaults(setting_rows(ctx.settings), ctx),
    )


def _with_defaults(
    rows: tuple[tuple[str, str, str], ...], ctx: Context
) -> tuple[tuple[str, str, str], ...]:
    """``rows`` with the value that applies where a setting is unset and a default is
    worked out from the directory (issue 43: not "not set" where one applies)."""
    out = []
    for name, value, origin in rows:
        if name == "memory_store_prefix" and value == "not set":
            try:
                value = default_prefix("project", ctx.settings.directory)
            except MemoryConfigError:
                value = "none applies: this directory's name cannot be a store path"
            value += f" (user scope: {default_prefix('user', ctx.settings.directory)})"
        out.append((name, value, origin))
    return tuple(out)


def _stale_notes(store: MemoryStore) -> list[str]:
    """One line per record whose source files changed since it was saved (SPEC §11)."""
    try:
        stale = stale_records(store)
    except MemoryStoreError:
        return []  # an unreadable set or journal is said elsewhere
    return [
        f"source changed since saved: {name} ({', '.join(str(c) for c in changes)})"
        for name, changes in stale.items()
    ]


@command("check", "verify .memory/: manifest, record files, MEMORY.md")
def handle_check(ctx: Context, args: argparse.Namespace) -> View:
    """Every problem found, errors first; leftover files of an interrupted commit are
    warnings (gc removes them)."""
    store = ctx.store
    report = maintenance.check(
        store.workspace,
        max_index_lines=store.max_index_lines,
        max_index_bytes=store.max_index_bytes,
    )
    # Where it looked, and that nothing is there (not "ok" for a missing directory).
    exists = os.path.lexists(store.root)
    return CheckView(store.root, [p.to_json() for p in report], exists=exists)
