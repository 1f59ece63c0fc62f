"""Checks several handlers share: a required argument, memory names, a pending batch."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

from ..config import parse_int
from ..errors import BatchError, CommandError, CommandUsageError, MemoryStoreError
from ..review.door import Door
from ..review.scopes import read_scopes
from ..store.names import is_valid_name
from ..store.store import MemoryStore
from .context import Context
from .spec import Arg, arg

if TYPE_CHECKING:
    from ..review import PendingBatch

__all__ = [
    "SCOPE_ALL",
    "check_names",
    "pending_batch",
    "positive_int",
    "require",
    "scope_arg",
    "scoped_stores",
]

#: ``--scope all``: both scopes (the reading commands' default, SPEC §11).
SCOPE_ALL = "all"

T = TypeVar("T")


def require(value: T | None, metavar: str, hint: str) -> T:
    """``value`` if it was given; else a usage error "missing METAVAR (hint)"."""
    if value is None or value == [] or value == "":
        raise CommandUsageError(f"missing {metavar} ({hint})")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1, with the settings' wording for a bad one."""
    try:
        return parse_int(text, 1)
    except ValueError as e:  # argparse would only say "invalid positive_int value"
        raise argparse.ArgumentTypeError(str(e)) from None


def scope_arg(default: str) -> Arg:
    """``--scope project|user|all`` of a command whose default is ``default``."""
    choices = ("project", "user", SCOPE_ALL) if default == SCOPE_ALL else ("project", "user")
    return arg(
        "--scope",
        choices=choices,
        default=default,
        metavar="SCOPE",
        help=f"{'|'.join(choices)}: the project's .memory, the user's (user_dir), "
        + ("or both " if default == SCOPE_ALL else "")
        + f"(default: {default})",
    )


def scoped_stores(ctx: Context, scope: str) -> list[tuple[str, MemoryStore]]:
    """The (scope, store) pairs ``scope`` names; ``all`` is the project alone when the
    user scope is off or empty. A command error for ``user`` when it is off."""
    user = ctx.user_store
    if scope == "user" and user is None:
        raise CommandError(
            "the user scope is off (user_dir is 'off'); set IPYMEMORY_USER_DIR or "
            "%config IPyMemory.user_dir to use it"
        )
    out: list[tuple[str, MemoryStore]] = []
    if scope in ("project", SCOPE_ALL):
        out.append(("project", ctx.store))
    # "all" leaves out a user scope that holds nothing yet (no .memory/ there).
    shown = scope == "user" or (
        scope == SCOPE_ALL and user is not None and os.path.lexists(user.root)
    )
    if user is not None and shown:
        out.append(("user", user))
    return out


def check_names(ctx: Context, names: Sequence[str], store: MemoryStore | None = None) -> None:
    """A usage error for a malformed name; a command error for one not in the set
    (of ``store``, default the project's), naming the known ones."""
    bad = [n for n in names if not is_valid_name(n)]
    if bad:
        raise CommandUsageError(
            f"{', '.join(map(repr, bad))} is not a memory name "
            "(names are lowercase slugs like 'prefers-tabs')"
        )
    store = store if store is not None else ctx.store
    known = [r.name for r in store.records()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise CommandError(
            f"no memory named {', '.join(map(repr, unknown))} in {store.root}; "
            f"known: {', '.join(known) if known else 'none (the set is empty)'}"
            + _elsewhere(ctx, unknown, store)
        )


def _elsewhere(ctx: Context, names: Sequence[str], searched: MemoryStore) -> str:
    """Where the other scope holds ``names``: the option that reaches them."""
    user = ctx.user_store
    if user is None:
        return ""
    other, option = (ctx.store, "--scope project") if searched is user else (user, "--scope user")
    try:
        there = {r.name for r in other.records()} if os.path.lexists(other.root) else set()
    except MemoryStoreError:
        return ""  # an unreadable other scope: the error above stands alone
    found = [n for n in names if n in there]
    if not found:
        return ""
    scope = "user-wide" if option == "--scope user" else "in the project"
    verb = "is" if len(found) == 1 else "are"
    return f" ({', '.join(map(repr, found))} {verb} {scope}: add {option})"


def actor(ctx: Context, **extra: object) -> dict[str, object]:
    """Who a command's commit is by, for the journal: the command line, or the notebook
    and the cell that ran it (as a turn's commit says it)."""
    return {"via": Door.NOTEBOOK if ctx.proposes else Door.CLI, **ctx.caller(), **extra}


def pending_batch(ctx: Context, batch_id: str | None) -> PendingBatch | None:
    """The pending batch ``batch_id`` (default: the latest of this session), None if
    none is pending; a batch saved in pending/ (by another kernel, the command line or
    another agent) is reopened into the session by its id. A command error for an id
    that is not pending; a usage error when no id is given and only saved batches wait
    (which one is meant is not clear)."""
    session = ctx.session
    registry = session.batch_registry
    live = {batch.id for batch in registry.pending}
    if batch_id is None and live:
        return registry.choose(None)
    saved, _problems = session.pending_files.load()
    if batch_id is None:
        if saved:
            ids = ", ".join(entry.id for entry in saved)
            raise CommandUsageError(f"name the batch with --batch ID (pending: {ids})")
        return None
    if batch_id not in live:
        for entry in saved:
            if entry.id == batch_id:
                store = session.store
                # Both scopes: an update of a user-wide record is checked against it.
                current = read_scopes(store, session.user_store).records
                return session.pending_files.reopen(entry, current, registry, store)
    try:
        return registry.choose(batch_id)
    except BatchError:
        known = sorted({*live, *(entry.id for entry in saved)})
        raise CommandError(
            f"no pending batch {batch_id!r}; pending: {', '.join(known) or 'none'}"
        ) from None
