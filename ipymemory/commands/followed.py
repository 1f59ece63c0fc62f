"""``followed``: how often answers followed each feedback/user memory (SPEC §14)."""

from __future__ import annotations

import argparse

from ..store.follow_log import FollowLog, verdict_counts
from ..views.follow_log import FollowLogRow, FollowLogView
from .common import SCOPE_ALL, scope_arg, scoped_stores
from .context import Context, View
from .spec import command

__all__ = ["handle_followed"]


@command(
    "followed",
    "how often the answers followed each feedback or user memory, over every session",
    scope_arg(SCOPE_ALL),
)
def handle_followed(ctx: Context, args: argparse.Namespace) -> View:
    """The follow log in .memory/history/followed.jsonl: per memory injected into a turn,
    how many answers followed it, did not follow it, did not touch it or were not judged
    (the check's side-query failed), and why the last one did not. A memory never
    followed but missed twice or more is flagged, to reword or forget (exit 1 on the
    command line while it is in the set). %memory session counts this kernel's turns
    only."""
    rows: list[FollowLogRow] = []
    turns: dict[str, int] = {}
    skipped = 0
    for scope, store in scoped_stores(ctx, args.scope):
        journal = store.journal()
        if journal is None:
            continue
        entries, bad = FollowLog(journal).read()
        skipped += bad
        turns[scope] = len(entries)
        current = {record.name for record in store.records()}
        last_miss: dict[str, str] = {}
        for entry in entries:
            for judged in entry.verdicts:
                if judged.verdict == "contradicts":
                    last_miss[judged.name] = judged.reason
        for name, counts in sorted(verdict_counts(entries).items()):
            rows.append(
                FollowLogRow(
                    scope,
                    name,
                    counts["follows"],
                    counts["contradicts"],
                    counts["untouched"],
                    last_miss.get(name),
                    name in current,
                    counts["unjudged"],
                )
            )
    return FollowLogView(rows, turns, skipped)
