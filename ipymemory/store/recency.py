"""What the journal says about time (SPEC §9): how many records were added since the
last consolidation, and when each record file was saved.

Both read the journal's entries (oldest first, as :meth:`Journal.read` gives them), so
every kernel and process sharing a ``.memory/`` counts the same way, and a change by
another tool (an ``external`` entry) counts like ours.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .history import HistoryEntry, Journal, replay

__all__ = ["JournalCache", "Spacing", "saved_dates", "spacing"]

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

# Entries whose additions are new records. An undo, restore or recover brings back
# records the set held before; they were counted when they were first added.
_ADDING = ("add", "external")


@dataclass(frozen=True)
class Spacing:
    """``added`` records since the newest consolidation (``since``: its seq; ``None``
    when the journal holds none, so every addition counts); ``last_seq`` is the
    journal's newest entry (0 when empty)."""

    added: int
    since: int | None
    last_seq: int


def spacing(
    entries: Sequence[HistoryEntry], *, after_seq: int = 0, current: Iterable[str] = ()
) -> Spacing:
    """Records added after the newest consolidation entry and after ``after_seq`` (a
    point the caller already counts from, e.g. when it asked for a plan itself).

    An entry that only applied extractor updates swaps records, adding none; records
    added beside them in the same commit count. ``current``: the files of the set now;
    those the journal does not know yet (another tool wrote them after our last entry:
    the next commit records them as ``external``) count as added too."""
    since: int | None = None
    for entry in entries:
        if entry.consolidates:
            since = entry.seq
    floor = max(since or 0, after_seq)
    added = 0
    for entry in entries:
        if entry.seq <= floor:
            continue
        if entry.op in _ADDING:
            added += len(entry.added)
        elif entry.op == "consolidate":  # an update-only swap (not a consolidation)
            added += sum(1 for a in entry.added if a.name not in entry.updates)
    known = replay(entries)
    added += sum(1 for file in current if file not in known)
    last = entries[-1].seq if entries else 0
    return Spacing(added, since, last)


def saved_dates(entries: Iterable[HistoryEntry], files: Iterable[str]) -> dict[str, str]:
    """``{file: "YYYY-MM-DD"}`` for each of ``files`` the journal says was written: the
    local date of the entry that added it (files the journal does not know are left
    out: "unknown", so no date is shown)."""
    wanted = set(files)
    found: dict[str, str] = {}
    for entry in entries:
        for added in entry.added:
            if added.file in wanted:
                day = _local_day(entry.at)
                if day is not None:
                    found[added.file] = day
    return found


def _local_day(at: str) -> str | None:
    try:
        when = _dt.datetime.fromisoformat(at)
    except ValueError:
        return None
    if when.tzinfo is None:  # ours are always UTC with an offset; a bare one is unknown
        return None
    return when.astimezone().date().isoformat()


class JournalCache:
    """The entries of one journal, kept between turns: the journal only grows (one line
    appended per commit), so a later read parses only the lines appended since. It is
    read whole again when it is another file, shorter than what was read, or the last
    line read is no longer where it was (cut by a recover, edited by hand)."""

    _CHECK = 256  # bytes before the offset compared to tell the same file

    def __init__(self) -> None:
        self._path: str | None = None
        self._identity: tuple[int, int] | None = None
        self._end = 0
        self._tail = b""
        self._size = -1
        self._mtime = -1
        self._entries: tuple[HistoryEntry, ...] = ()

    def entries(self, journal: Journal | None) -> tuple[HistoryEntry, ...]:
        """Oldest first; ``()`` without a journal. Raises what :meth:`Journal.read`
        raises (:class:`~ipymemory.errors.MemoryStoreError`)."""
        if journal is None:
            return ()
        try:
            st = os.stat(journal.path)
        except OSError:
            self._path = None
            self._entries = ()
            return ()
        identity = (st.st_dev, st.st_ino)
        known = journal.path == self._path and identity == self._identity
        if known and (st.st_size, st.st_mtime_ns) == (self._size, self._mtime):
            return self._entries
        if known and st.st_size > self._size and self._same_start(journal):
            report = journal.read(self._end)  # only the lines appended since
            entries = self._entries + report.entries
        else:
            report = journal.read()
            entries = report.entries
        self._path, self._identity = journal.path, identity
        self._size, self._mtime = st.st_size, st.st_mtime_ns
        self._end, self._entries = report.end, entries
        self._tail = self._read_tail(journal.path, report.end)
        return entries

    def _same_start(self, journal: Journal) -> bool:
        return self._read_tail(journal.path, self._end) == self._tail

    def _read_tail(self, path: str, end: int) -> bytes:
        start = max(0, end - self._CHECK)
        try:  # never blocking, never through a symlink (as Journal.read opens it)
            fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return b""
        try:
            return os.pread(fd, end - start, start)
        except OSError:
            return b""
        finally:
            os.close(fd)
