"""Checks several handlers share: a required argument, memory names, a pending batch."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

from ..config import parse_int
from ..errors import BatchError, CommandError, CommandUsageError
from ..store.names import is_valid_name
from .context import Context

if TYPE_CHECKING:
    from ..turn import PendingBatch

__all__ = ["check_names", "pending_batch", "positive_int", "require"]

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


def check_names(ctx: Context, names: Sequence[str]) -> None:
    """A usage error for a malformed name; a command error for one not in the set
    (naming the known ones)."""
    bad = [n for n in names if not is_valid_name(n)]
    if bad:
        raise CommandUsageError(
            f"{', '.join(map(repr, bad))} is not a memory name "
            "(names are lowercase slugs like 'prefers-tabs')"
        )
    known = [r.name for r in ctx.store.records()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise CommandError(
            f"no memory named {', '.join(map(repr, unknown))} in {ctx.store.root}; "
            f"known: {', '.join(known) if known else 'none (the set is empty)'}"
        )


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
            ids = ", ".join(entry.batch.id for entry in saved)
            raise CommandUsageError(f"name the batch with --batch ID (pending: {ids})")
        return None
    if batch_id not in live:
        for entry in saved:
            if entry.batch.id == batch_id:
                store = session.store
                return session.pending_files.reopen(entry, store.records(), registry, store)
    try:
        return registry.choose(batch_id)
    except BatchError:
        known = sorted({*live, *(entry.batch.id for entry in saved)})
        raise CommandError(
            f"no pending batch {batch_id!r}; pending: {', '.join(known) or 'none'}"
        ) from None
