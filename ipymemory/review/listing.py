"""One listing of the batches awaiting a decision, and one way of saying how a person
decides one, for every front end (issue 42): ``%memory pending`` and ``ipymemory
pending``, the Lab panel's list, and what the MCP server, Jupyter AI, an import and a
sync say of a batch they leave waiting.

:func:`listing` reads ``pending/`` without screening anything again (reopening a batch
screens it) and puts a session's own open batches first; :class:`Listed` says what one
batch proposes in the same words wherever it is shown. The hints name the commands:
:func:`decide_line` (commit or discard by id, with the options of ``commit``),
:func:`reopen_line` (open a saved batch for review) and :func:`where_to_decide` (every
place a person can decide a batch another door left waiting).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .batch import PendingBatch
from .door import Door
from .pending import PendingFiles
from .provenance import batch_source

__all__ = [
    "COMMIT_OPTIONS",
    "Listed",
    "decide_line",
    "listing",
    "reopen_line",
    "where_to_decide",
]

#: The options of ``commit --batch ID`` a person deciding a batch may need.
COMMIT_OPTIONS = (
    "[--reject NAME …] [--accept NAME …] [--redacted NAME …] [--no-plan | --accept-plan]"
)

#: How a subcommand is called: in a notebook, in a terminal.
NOTEBOOK, TERMINAL = "%memory", "ipymemory"


def decide_line(front: str = TERMINAL, batch_id: str = "ID") -> str:
    """``{front} commit --batch ID [options], or {front} discard --batch ID``."""
    return (
        f"{front} commit --batch {batch_id} {COMMIT_OPTIONS}, or {front} discard --batch {batch_id}"
    )


def reopen_line(batch_id: str = "ID", front: str = NOTEBOOK) -> str:
    """``%memory pending --open ID``: a saved batch opened for review."""
    return f"{front} pending --open {batch_id}"


def where_to_decide(batch_id: str = "ID") -> str:
    """Every place a person decides a batch: the Lab panel, a notebook, a terminal."""
    return (
        f"in the Lab's Memory panel, in a notebook ({reopen_line(batch_id)}) or in a "
        f"terminal ({TERMINAL} commit --batch {batch_id} / {TERMINAL} discard --batch "
        f"{batch_id})"
    )


def plan_words(replaced: int, added: int) -> str:
    """What a plan does, in the listing's words."""
    if not replaced and not added:
        return "a plan: nothing to merge"
    return f"a plan: {replaced} → {added} record{'' if added == 1 else 's'}"


@dataclass(frozen=True)
class Listed:
    """One batch awaiting a decision, as every listing shows it. ``live``: a session
    here holds it open (decided by id or under its turn); else it was saved by another
    or an earlier kernel, or another agent. Times are UNIX seconds (None: not saved)."""

    id: str
    names: tuple[str, ...]
    #: (records the plan replaces, records it adds), or None without a plan.
    plan: tuple[int, int] | None
    live: bool = False
    saved_at: float | None = None
    expires_at: float | None = None
    #: An undo or restore proposal: its title (as proposed; reopening plans it again).
    change: str | None = None
    via: Door | None = None
    #: Where it came from when not a notebook's turn (:func:`~.provenance.batch_source`).
    source: str | None = None

    @property
    def plan_text(self) -> str | None:
        return None if self.plan is None else plan_words(*self.plan)

    @property
    def agent(self) -> Door | None:
        """The door of the other agent that proposed it (SPEC §10, §13), else None."""
        return self.via if self.via is not None and self.via.agent else None

    @classmethod
    def of(cls, batch: PendingBatch, live: bool = True) -> Listed:
        """How ``batch`` is listed."""
        plan = batch.plan
        provenance = batch.provenance
        return cls(
            batch.id,
            batch.names,
            None if plan is None else (len(plan.source_names), len(plan.records)),
            live,
            change=None if batch.history is None else batch.history.title,
            via=None if provenance is None else provenance.via,
            source=batch_source(provenance),
        )


def listing(
    files: PendingFiles, live: Sequence[PendingBatch] = (), *, prune: bool = True
) -> tuple[list[Listed], list[str]]:
    """The batches awaiting a decision: ``live`` ones first (a session's open batches,
    with their saved times when they are on disk), then those saved in ``files``, oldest
    first; and the problems met reading them. ``prune=False``: a read-only reader (the
    Jupyter server) leaves expired files alone."""
    saved, problems = files.load(prune=prune)
    on_disk = {entry.id: entry for entry in saved}
    out: list[Listed] = []
    for batch in live:
        kept = on_disk.get(batch.id)
        listed = Listed.of(batch)
        if kept is not None:
            expires = kept.expires_at(files.expiry_days)
            listed = replace(listed, saved_at=kept.saved_at, expires_at=expires)
        out.append(listed)
    shown = {batch.id for batch in live}
    for entry in saved:  # listed without screening them again (that is for reopening)
        if entry.id in shown:
            continue
        out.append(
            Listed(
                entry.id,
                entry.names,
                entry.plan,
                False,
                entry.saved_at,
                entry.expires_at(files.expiry_days),
                None if entry.history is None else entry.history.title,
                entry.via,
                entry.source,
            )
        )
    return out, problems
